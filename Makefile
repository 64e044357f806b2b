# Two commands from a fresh clone: `make test` and `make demo` (see README.md).
# Each bootstraps .venv on first use; nothing here needs an activated environment.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.cdsbias-installed
# The CPU wheel: an unpinned torch makes pip pull a multi-GB CUDA build.
TORCH_SPEC ?= torch==2.13.0
PYTEST_ARGS ?=

.PHONY: setup demo test test-slow test-integration test-all lint format clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --upgrade pip
	@$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# The whole job offline on a CPU: data, a biased base model, CDS fine-tuning with bias
# evaluation at every checkpoint, a dry-run publish, and the before/after numbers.
DEMO_DIR ?= runs/demo
# A local data mirror (offline installs, CI); without one, data is downloaded.
DATA_MIRROR ?= $(firstword $(wildcard ../shared/data))
CDSBIAS := $(VENV)/bin/cdsbias

demo: $(STAMP)
	@echo "== 1/6 data: GAP and BEC-Pro$(if $(DATA_MIRROR), from $(DATA_MIRROR),)"
	$(CDSBIAS) data fetch gap becpro $(if $(DATA_MIRROR),--data-dir $(DATA_MIRROR),) --out $(DEMO_DIR)/data
	@echo "== 2/6 counterfactual GAP corpus (every document gender-swapped, offsets re-derived)"
	$(CDSBIAS) cds $(DEMO_DIR)/data/gap-coreference/gap-development.tsv --probability 1.0 \
		--out $(DEMO_DIR)/gap-development-cds.tsv
	@echo "== 3/6 demo base model (cached in $(DEMO_DIR)/base)"
	$(CDSBIAS) demo-model --out $(DEMO_DIR)/base
	@echo "== 4/6 CDS fine-tuning with bias evaluation at every checkpoint"
	WANDB_MODE=$${WANDB_MODE:-offline} $(VENV)/bin/accelerate launch --cpu --num_processes 1 \
		--num_machines 1 --mixed_precision no --dynamo_backend no train.py recipes/demo.yaml \
		output_dir=$(DEMO_DIR)/run model_name_or_path=$(DEMO_DIR)/base overwrite_output_dir=true
	@echo "== 5/6 model card and upload folder (dry run)"
	$(CDSBIAS) publish $(DEMO_DIR)/run --repo-id cdsbias-demo/bert-occupations-cds --dry-run
	@echo "== 6/6 before / after"
	$(CDSBIAS) report $(DEMO_DIR)/run

test: $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

# What the default run leaves out: slow tests (resume after SIGKILL, ...) and
# integration jobs (make demo, multi-process gloo training). CI runs these too.
test-slow: $(STAMP)
	$(PY) -m pytest -m "slow or integration" $(PYTEST_ARGS)

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
