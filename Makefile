# `make demo` and `make test` work on a fresh machine: each creates .venv and installs
# what it needs the first time (and again whenever pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format typecheck bench docs docs-check clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# `orch demo` once the workflow exists; until then a walk through the store and the log
demo: $(STAMP)
	@if $(BIN)/orch demo --help >/dev/null 2>&1; then $(BIN)/orch demo; \
	else $(BIN)/python -m evals.demo_store; fi

# PYTEST_ARGS narrows a run, e.g. `make test PYTEST_ARGS=tests/foundation`; a run that
# collects no test exits 5, which fails `make test` and so CI
test: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m evals.bench_store

docs: $(STAMP)
	$(BIN)/python -m evals.docs_cli --write

docs-check: $(STAMP)
	$(BIN)/python -m evals.docs_cli --check

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
