# Two commands from a fresh clone: `make test` and `make demo` (see README.md).
# Each bootstraps .venv on first use; nothing here needs an activated environment.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.cdsbias-installed
# The CPU wheel: an unpinned torch makes pip pull a multi-GB CUDA build.
TORCH_SPEC ?= torch==2.13.0
PYTEST_ARGS ?=

.PHONY: setup demo demo-de demo-da demo-downstream demo-neutral demo-religion demo-age methods methods-posthoc methods-seeds test test-slow test-integration test-all lint format clean

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
		--out $(DEMO_DIR)/gap-development-cds.tsv --overwrite
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

# The German and Danish demos (docs/demo.md): a demo model pre-trained on the language's
# occupational text, fine-tuned with the language's CDS, scored with its benchmarks. The
# pre-training budget is the English integration test's (2,000 steps, 40,000 sentences,
# lr 1.5e-3): 22 min for the model and 5-7 min for the fine-tuning on the loaded 2-core machine;
# with 5-7 other jobs on it, 38 min for the German model and 9-25 min per fine-tuning.
LANG_DEMO_MODEL = --steps 2000 --sentences 40000 --learning-rate 1.5e-3 \
	$(if $(DATA_MIRROR),--data-dir $(DATA_MIRROR),)
LANG_DEMO_TRAIN = WANDB_MODE=$${WANDB_MODE:-offline} $(VENV)/bin/accelerate launch --cpu \
	--num_processes 1 --num_machines 1 --mixed_precision no --dynamo_backend no train.py
LANG_BIAS_DATA = $(if $(DATA_MIRROR),bias_data_dir=$(DATA_MIRROR),)
# Steps 2 and 3 of a language demo: $(call LANG_DEMO_RUN,code,Language,its benchmarks).
define LANG_DEMO_RUN
	@echo "== 2/4 $(2) demo model (cached in $(DEMO_DIR)-$(1)/base)"
	$(CDSBIAS) demo-model --language $(1) $(LANG_DEMO_MODEL) --out $(DEMO_DIR)-$(1)/base
	@echo "== 3/4 $(2) CDS fine-tuning, $(3) at every checkpoint"
	$(LANG_DEMO_TRAIN) recipes/demo_$(1).yaml output_dir=$(DEMO_DIR)-$(1)/run \
		model_name_or_path=$(DEMO_DIR)-$(1)/base overwrite_output_dir=true $(LANG_BIAS_DATA)
	$(CDSBIAS) report $(DEMO_DIR)-$(1)/run
endef

# Known-answer demo of `cdsbias downstream` (docs/demo.md, "Downstream: does the debiasing
# carry?"): template biographies of 12 demo occupations whose gender cues follow the share of
# women in training; the demo's base model and its CDS fine-tuning (make demo's step 4, built
# here if missing) each fine-tuned with 3 seeds, unscrubbed, scrubbed and on gender-balanced
# training bios. The 18 small fine-tunings run on one thread (as measured, about 8.5 min);
# on a loaded shared machine export OMP_NUM_THREADS=1 for the model builds too: there two
# threads trained the demo model 30x slower than one (docs/demo.md).
DEMO_THREADS = OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1}
demo-downstream: $(DEMO_DIR)/base/config.json $(DEMO_DIR)/run/trainer_state.json
	$(DEMO_THREADS) $(PY) scripts/demo_downstream.py --base $(DEMO_DIR)/base \
		--cds $(DEMO_DIR)/run --out $(DEMO_DIR)/downstream

# make demo's step 4 (CDS fine-tuning of the demo model) as a file, for demo-downstream.
$(DEMO_DIR)/run/trainer_state.json: $(DEMO_DIR)/base/config.json
	WANDB_MODE=$${WANDB_MODE:-offline} $(VENV)/bin/accelerate launch --cpu \
		--num_processes 1 --num_machines 1 --mixed_precision no --dynamo_backend no train.py \
		recipes/demo.yaml output_dir=$(@D) model_name_or_path=$(DEMO_DIR)/base \
		overwrite_output_dir=true $(LANG_BIAS_DATA)

demo-de: $(STAMP)
	@echo "== 1/4 data: BEC-Pro (German)$(if $(DATA_MIRROR), from $(DATA_MIRROR),)"
	$(if $(DATA_MIRROR),,$(CDSBIAS) data fetch becpro)
	$(call LANG_DEMO_RUN,de,German,BEC-Pro DE)
	@echo "== 4/4 the measure that sees the German bias: BEC-Pro DE, target=profession"
	$(CDSBIAS) evaluate $(DEMO_DIR)-de/base -b becpro --language de --option target=profession \
		$(if $(DATA_MIRROR),--data-dir $(DATA_MIRROR),) --out $(DEMO_DIR)-de/profession-before --overwrite
	$(CDSBIAS) evaluate $(DEMO_DIR)-de/run -b becpro --language de --option target=profession \
		$(if $(DATA_MIRROR),--data-dir $(DATA_MIRROR),) --out $(DEMO_DIR)-de/profession-after --overwrite

demo-da: $(STAMP)
	@echo "== 1/4 data: GenDa Lens (DaWinoBias, ABC)$(if $(DATA_MIRROR), from $(DATA_MIRROR),)"
	$(if $(DATA_MIRROR),,$(CDSBIAS) data fetch genda_lens)
	$(call LANG_DEMO_RUN,da,Danish,DaWinoBias and ABC)
	@echo "== 4/4 the measure that sees the Danish bias: ln P(han)/P(hun) by occupation"
	$(PY) scripts/danish_pronoun_probe.py $(DEMO_DIR)-da/base $(DEMO_DIR)-da/run

# Gender-neutral rewriting's known-answer demo (docs/demo.md): the demo model with the
# language demos' budget, fine-tuned with binary+neutral CDA on occupational text (each
# sentence, its he<->she swap and its rewrite to singular they) and, for comparison, with
# binary CDS alone; pronoun_fidelity and BEC-Pro at every checkpoint.
NEUTRAL_DIR = $(DEMO_DIR)-neutral
NEUTRAL_TRAIN = $(LANG_DEMO_TRAIN) recipes/demo_neutral.yaml model_name_or_path=$(NEUTRAL_DIR)/base \
	overwrite_output_dir=true $(LANG_BIAS_DATA)
demo-neutral: $(STAMP)
	@echo "== 1/4 demo model (cached in $(NEUTRAL_DIR)/base)"
	$(CDSBIAS) demo-model $(LANG_DEMO_MODEL) --out $(NEUTRAL_DIR)/base
	@echo "== 2/4 binary+neutral CDA fine-tuning (he<->she and he/she -> they), pronoun_fidelity at every checkpoint"
	$(NEUTRAL_TRAIN) output_dir=$(NEUTRAL_DIR)/run
	@echo "== 3/4 binary CDS alone (he<->she), for comparison"
	$(NEUTRAL_TRAIN) output_dir=$(NEUTRAL_DIR)/binary gender_forms=binary cds_mode=cds \
		cds_probability=1.0
	@echo "== 4/4 before / after: they up, misgendering down, xe/ze/ey unchanged; binary CDS beside it"
	$(CDSBIAS) report $(NEUTRAL_DIR)/run
	$(CDSBIAS) compare $(NEUTRAL_DIR)/run $(NEUTRAL_DIR)/binary --out $(NEUTRAL_DIR)/compare \
		--overwrite

# The known-answer demo on the religion axis (docs/demo.md): a demo model whose corpus also
# pairs each religion group with an invented game at 80/10/10 (`demo-model --axis religion`),
# fine-tuned with n-ary CDA on the religion axis; the religion probe's gap (planted 2.08
# nats, 0.49 left in the CDA text), the held-out loss, BEC-Pro (gender) and CrowS-Pairs'
# religion slice before and after. One thread each (DEMO_THREADS): see demo-downstream.
# Measured on the loaded 2-core machine: 18.6 min for the model (load 6-9), 3.5 min for the
# rest (load 2.4-4); 8.3 min of single-thread CPU in all.
RELIGION_DIR = $(DEMO_DIR)-religion
RELIGION_DEMO_MODEL = --axis religion --steps 1500 --sentences 20000 --learning-rate 1.5e-3
demo-religion: $(STAMP)
	@echo "== 1/4 religion demo model (cached in $(RELIGION_DIR)/base)"
	$(if $(DATA_MIRROR),,$(CDSBIAS) data fetch crows_pairs)
	$(DEMO_THREADS) $(CDSBIAS) demo-model $(RELIGION_DEMO_MODEL) --out $(RELIGION_DIR)/base
	@echo "== 2/4 fine-tuning text: new occupational sentences and planted religion sentences"
	$(PY) scripts/demo_religion.py corpus --out $(RELIGION_DIR)/corpus.jsonl
	@echo "== 3/4 n-ary CDA on the religion axis; BEC-Pro and CrowS-Pairs religion at every checkpoint"
	$(DEMO_THREADS) $(LANG_DEMO_TRAIN) recipes/demo_religion.yaml output_dir=$(RELIGION_DIR)/run \
		model_name_or_path=$(RELIGION_DIR)/base data_files=$(RELIGION_DIR)/corpus.jsonl \
		overwrite_output_dir=true $(LANG_BIAS_DATA)
	@echo "== 4/4 before / after: the planted association, its loss cost, gender beside it"
	$(DEMO_THREADS) $(PY) scripts/demo_religion.py report --base $(RELIGION_DIR)/base \
		--run $(RELIGION_DIR)/run --json $(RELIGION_DIR)/report.json

# The known-answer demo on the age axis (docs/demo.md): the religion demo's design with the
# age axis's two groups (young, old) and two invented games at 80/20 (`demo-model --axis
# age`), fine-tuned with CDA on the age axis (with two groups, one counterfactual is the full
# swap: the known answer in the fine-tuning text is 0 of the planted 1.39 nats); the age
# probe, the held-out loss, BEC-Pro (gender) and CrowS-Pairs' age, gender and religion slices.
AGE_DIR = $(DEMO_DIR)-age
AGE_DEMO_MODEL = --axis age --steps 1500 --sentences 20000 --learning-rate 1.5e-3
demo-age: $(STAMP)
	@echo "== 1/4 age demo model (cached in $(AGE_DIR)/base)"
	$(if $(DATA_MIRROR),,$(CDSBIAS) data fetch crows_pairs)
	$(DEMO_THREADS) $(CDSBIAS) demo-model $(AGE_DEMO_MODEL) --out $(AGE_DIR)/base
	@echo "== 2/4 fine-tuning text: new occupational sentences and planted age sentences"
	$(PY) scripts/demo_religion.py corpus --axis age --out $(AGE_DIR)/corpus.jsonl
	@echo "== 3/4 CDA on the age axis; BEC-Pro and CrowS-Pairs age, gender, religion at every checkpoint"
	$(DEMO_THREADS) $(LANG_DEMO_TRAIN) recipes/demo_age.yaml output_dir=$(AGE_DIR)/run \
		model_name_or_path=$(AGE_DIR)/base data_files=$(AGE_DIR)/corpus.jsonl \
		overwrite_output_dir=true $(LANG_BIAS_DATA)
	@echo "== 4/4 before / after: the planted association, its loss cost, the other axes beside it"
	$(DEMO_THREADS) $(PY) scripts/demo_religion.py report --base $(AGE_DIR)/base \
		--run $(AGE_DIR)/run --json $(AGE_DIR)/report.json

# docs/methods.md: every debiasing method through its own recipe, on the demo's biased base
# model with the demo's budget: one study (studies/methods_demo.yaml, seed 0), two cells at
# once with one thread each; then `cdsbias compare` of each table's cells and both tables of
# the page (scripts/methods_page.py). A rerun starts only unfinished or failed cells.
METHODS_DIR ?= $(DEMO_DIR)/methods
METHOD_JOBS ?= 2
METHOD_RUNS = full-cds last-layer-cds lora-cds adapter-cda dropout full-cda \
	last-layer-cds-5e-4 lora-cds-5e-4 adapter-cda-5e-4
POSTHOC_RUNS = sentence-debias inlp inlp-10 leace self-debias full-cds-inlp context-debias \
	context-debias-lora

methods: $(DEMO_DIR)/base/config.json
	OMP_NUM_THREADS=1 $(CDSBIAS) study run studies/methods_demo.yaml $(LANG_BIAS_DATA) \
		--model demo=$(DEMO_DIR)/base --out $(METHODS_DIR) --jobs $(METHOD_JOBS)
	$(CDSBIAS) study table $(METHODS_DIR) > /dev/null
	$(PY) scripts/methods_page.py --study $(METHODS_DIR) $(METHOD_RUNS) \
		--compare-out $(METHODS_DIR)/comparison
	$(PY) scripts/methods_page.py --study $(METHODS_DIR) --block compare-posthoc $(POSTHOC_RUNS) \
		--compare-out $(METHODS_DIR)/comparison-posthoc

# Both tables come from the one study.
methods-posthoc: methods

# docs/methods.md's seeds table: the same study with seeds 0 to METHOD_SEEDS - 1 (seed 0's
# cells are the ones `make methods` ran: not run again), then each method's mean, seed SD
# and interval, and which methods the seeds can tell apart.
METHOD_SEEDS ?= 3
methods-seeds: methods
	OMP_NUM_THREADS=1 $(CDSBIAS) study run studies/methods_demo.yaml $(LANG_BIAS_DATA) \
		--model demo=$(DEMO_DIR)/base --out $(METHODS_DIR) --jobs $(METHOD_JOBS) \
		--set seeds=$(METHOD_SEEDS)
	$(CDSBIAS) study table $(METHODS_DIR) > /dev/null
	$(PY) scripts/methods_page.py --study $(METHODS_DIR) --block seeds --seeds \
		$(METHOD_RUNS) $(POSTHOC_RUNS)

$(DEMO_DIR)/base/config.json: | $(STAMP)
	$(CDSBIAS) demo-model --out $(DEMO_DIR)/base

# The default set runs on every core, one torch thread per worker (pytest-xdist): two
# workers of one thread each beat one process of two threads, whose tiny models spend
# their time in Python (1,588 tests: 446 s in one process, 249 s in two, fresh clone).
TEST_WORKERS ?= auto
test: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

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
