# Quick start on a fresh machine:
#   make demo   install into .venv, scan the bundled CUDA example, run it on an emulated Ascend host
#               (it fails where a card fails), migrate it (copy + HTML report) and run the copy (it runs),
#               then profile and diagnose the bundled profiler run and logs
#   make test   install the test dependencies (torch CPU, onnx, ...) and run the whole test suite
#   make test-compat   the torch-free tests on the oldest and newest supported Pythons (pyenv), if installed
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
CORE   := $(VENV)/.ascendify-core
FULL   := $(VENV)/.ascendify-full
EXAMPLE := examples/cuda_project

.PHONY: demo test test-compat install bench clean

$(CORE): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $(CORE)

# torch, CPU build.  PyPI's Linux x86-64 torch is the CUDA build (GBs of nvidia-* wheels), so torch
# comes from TORCH_INDEX (PyTorch's CPU wheel index) unless pip's find-links already has the wheel
# (an offline wheelhouse); its dependencies then come from pip's configured index.
# `make test TORCH_INDEX=` uses pip's configured index for torch too.  torch 2.13 needs Python 3.10+.
TORCH_VERSION ?= 2.13.0
TORCH_INDEX   ?= https://download.pytorch.org/whl/cpu
define install_torch
	@$(PY) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { echo "make: torch $(TORCH_VERSION) needs Python 3.10+ ($(PY) is $$($(PY) --version 2>&1)); the core install (pip install .) works on 3.9: PYTHON=python3.10 make ..."; exit 1; }
	$(PY) -c 'import importlib.metadata as m, sys; sys.exit(m.version("torch").split("+")[0] != "$(TORCH_VERSION)")' 2>/dev/null \
	  || $(PY) -m pip install -q --no-index --no-deps "torch==$(TORCH_VERSION)" 2>/dev/null \
	  || $(PY) -m pip install -q "torch==$(TORCH_VERSION)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PY) -m pip install -q "torch==$(TORCH_VERSION)"
endef

$(FULL): $(CORE)
	# torch CPU build first, so nothing pulls a CUDA build in
	$(install_torch)
	$(PY) -m pip install -q -e ".[test,ml]"
	touch $(FULL)

install: $(CORE)

# torch (CPU build) for `ascendify run` in the demo; the test extras are not needed for it
TORCH  := $(VENV)/.ascendify-torch
$(TORCH): $(CORE)
	$(install_torch)
	$(PY) -m pip install -q "numpy>=1.24"   # the bundled example's trainer imports numpy
	touch $(TORCH)

demo: $(CORE) $(TORCH)
	@echo "== ascendify scan $(EXAMPLE)"
	$(VENV)/bin/ascendify scan $(EXAMPLE) --fail-on never
	@echo
	@echo "== ascendify run: the original example on an emulated Ascend host (this CPU); it fails where a card fails"
	@cd $(EXAMPLE) && $(CURDIR)/$(VENV)/bin/ascendify run -- python train.py --steps 2 --workers 0 \
	  --output-dir $(CURDIR)/build/demo-original-run || echo "(exit $$?: the original needs CUDA, as on an Ascend host)"
	@echo
	@echo "== ascendify migrate $(EXAMPLE) --out-dir build/demo --verify ...   (fix --out-dir + report; the copy runs under ascendify run)"
	$(VENV)/bin/ascendify migrate $(EXAMPLE) --out-dir build/demo --fail-on never --verify "python train.py --steps 2 --workers 0"
	@echo
	@echo "== ascendify profile examples/profile_sample   (a torch_npu profiler run: slow ops, AI_CPU, step time)"
	$(VENV)/bin/ascendify profile examples/profile_sample
	@echo
	@echo "== ascendify diagnose examples/logs/hccl_timeout   (2 ranks: root cause first)"
	$(VENV)/bin/ascendify diagnose examples/logs/hccl_timeout --fail-on never
	@echo
	@echo "== ascendify diagnose examples/logs/aicore_error.log"
	$(VENV)/bin/ascendify diagnose examples/logs/aicore_error.log --fail-on never --max 3

test: $(FULL)
	$(PY) -m pytest -n 2 -q

# Python 3.9 and 3.13 (requires-python's ends): a venv each in build/ with only the
# torch-free test dependencies (torch is installed for the main Python only), then the
# tests that need no torch, onnx or browser (tools/build_kb.py runs on the main Python
# only).  A Python missing from ~/.pyenv/versions is skipped with a note.
# `make test-compat COMPAT_PYTHONS="3.10 3.12"` for others.
COMPAT_PYTHONS ?= 3.9 3.13
COMPAT_DEPS  := "pytest>=7.4" "pytest-xdist>=3.5" "hypothesis>=6.90" "jsonschema>=4.19"
COMPAT_TESTS := tests/rules tests/test_cli_scan.py tests/test_cli_fix.py tests/test_bad_input.py \
                tests/test_engine.py tests/test_fix_properties.py tests/doctor tests/diagnose \
                tests/report tests/profile tests/kb tests/test_py_compat.py
COMPAT_SKIP  := -m "not browser" --deselect tests/rules/test_amp_cpu_equivalence.py \
                --ignore tests/kb/test_classifier_dispatcher.py \
                --deselect tests/kb/test_build.py::test_add_release_from_wheel_in_one_command \
                --deselect tests/kb/test_build.py::test_package_data_is_up_to_date

test-compat:
	@failed=""; for v in $(COMPAT_PYTHONS); do \
	  py=$$(ls -d $$HOME/.pyenv/versions/$$v.*/bin/python 2>/dev/null | sort -V | tail -n 1); \
	  if [ -z "$$py" ]; then echo "== test-compat: no Python $$v in ~/.pyenv/versions; skipped"; continue; fi; \
	  venv=build/compat-$$v; echo "== test-compat: $$($$py --version) in $$venv"; \
	  { test -x $$venv/bin/python || $$py -m venv $$venv; } \
	  && $$venv/bin/python -m pip install -q --disable-pip-version-check -e . $(COMPAT_DEPS) \
	  && $$venv/bin/python -m pytest -n 2 -q -p no:cacheprovider $(COMPAT_SKIP) $(COMPAT_TESTS) \
	  || failed="$$failed $$v"; \
	done; \
	if [ -n "$$failed" ]; then echo "== test-compat: FAILED on Python$$failed"; exit 1; fi

bench: $(FULL)
	$(PY) bench/scan_bench.py

clean:
	rm -rf build .pytest_cache
