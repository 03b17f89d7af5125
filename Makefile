# `make demo` and `make test` work on a fresh machine: each creates .venv and installs
# what it needs the first time (and again whenever pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format typecheck bench evals realaudit docs docs-check clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# the whole workflow on the bundled sample repository, with the scripted model
demo: $(STAMP)
	$(BIN)/orch demo

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

# speed benchmarks (medians; run them on a quiet machine) and the evaluation suites
bench: $(STAMP)
	$(BIN)/python -m evals.bench_store
	$(BIN)/python -m evals.bench_memory
	$(BIN)/python -m evals.bench_retrieval
	$(BIN)/orch eval context

evals: $(STAMP)
	$(BIN)/orch eval prompts
	$(BIN)/orch eval hygiene
	$(BIN)/orch eval context
	$(BIN)/orch eval resume
	@if [ -f ../shared/data/locomo/locomo-dev.json ]; then \
		$(BIN)/orch eval locomo --data ../shared/data/locomo/locomo-dev.json; \
	else echo "orch eval locomo: no LoCoMo file at ../shared/data/locomo/ (pass --data PATH)"; fi

# the memory audit on agent memory public projects committed (needs the fetched mirrors
# under /work/.mirror, or MIRRORS=DIR; not part of CI): evals/realaudit/README.md
MIRRORS ?= /work/.mirror
realaudit: $(STAMP)
	$(BIN)/python -m evals.realaudit --mirrors $(MIRRORS)

docs: $(STAMP)
	$(BIN)/python -m evals.docs_cli --write

docs-check: $(STAMP)
	$(BIN)/python -m evals.docs_cli --check

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
