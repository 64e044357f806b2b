"""cdsbias: measure and mitigate social bias (gender, race, religion, or attribute words of
your own) in masked language models."""

__version__ = "0.1.0"
