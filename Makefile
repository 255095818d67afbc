# Quick start:  make demo   (scan + fix the bundled example)
#               make test   (the whole test suite; what CI runs)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.ascendify-installed

.PHONY: demo test install bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch CPU build (the ML-facing tests and `probe`/`export` need it)
	$(PY) -m pip install -q "torch==2.13.0"
	$(PY) -m pip install -q -e ".[test,ml]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	@echo "== ascendify scan examples/cuda_project"
	-$(VENV)/bin/ascendify scan examples/cuda_project
	@echo
	@echo "== ascendify fix examples/cuda_project --output build/demo/migrated"
	$(VENV)/bin/ascendify fix examples/cuda_project --output build/demo/migrated

test: $(STAMP)
	$(PY) -m pytest -n 2 -q

bench: $(STAMP)
	$(PY) bench/scan_bench.py

clean:
	rm -rf build .pytest_cache
