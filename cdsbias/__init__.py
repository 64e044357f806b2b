"""cdsbias: measure and mitigate gender bias in masked language models."""

__version__ = "0.1.0"
