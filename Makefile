# Two commands from a fresh clone: `make test` and `make demo` (see README.md).
# Each bootstraps .venv on first use; nothing here needs an activated environment.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.cdsbias-installed
# The CPU wheel: an unpinned torch makes pip pull a multi-GB CUDA build.
TORCH_SPEC ?= torch==2.13.0
PYTEST_ARGS ?=

.PHONY: setup test test-integration test-all lint format clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --upgrade pip
	@$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

# Multi-process (gloo) training and other end-to-end jobs; CI runs these too.
test-integration: $(STAMP)
	$(PY) -m pytest -m integration $(PYTEST_ARGS)

# Slow and integration tests too (multi-process, long benchmarks).
test-all: $(STAMP)
	$(PY) -m pytest -m "" $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info runs wandb
