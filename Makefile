# Quick start on a fresh machine:
#   make demo   install into .venv, scan the bundled CUDA example, migrate it (copy + HTML report)
#   make test   install the test dependencies (torch CPU, onnx, ...) and run the whole test suite
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
CORE   := $(VENV)/.ascendify-core
FULL   := $(VENV)/.ascendify-full
EXAMPLE := examples/cuda_project

.PHONY: demo test install bench clean

$(CORE): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $(CORE)

$(FULL): $(CORE)
	# torch CPU build first, so nothing pulls a CUDA build in
	$(PY) -m pip install -q "torch==2.13.0"
	$(PY) -m pip install -q -e ".[test,ml]"
	touch $(FULL)

install: $(CORE)

demo: $(CORE)
	@echo "== ascendify scan $(EXAMPLE)"
	-$(VENV)/bin/ascendify scan $(EXAMPLE)
	@echo
	@echo "== ascendify migrate $(EXAMPLE) -o build/demo   (fix --output + report)"
	$(VENV)/bin/ascendify migrate $(EXAMPLE) -o build/demo

test: $(FULL)
	$(PY) -m pytest -n 2 -q

bench: $(FULL)
	$(PY) bench/scan_bench.py

clean:
	rm -rf build .pytest_cache
