# `make demo` and `make test` work on a fresh machine: each creates .venv and installs
# what it needs the first time (and again whenever pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCOMO ?= ../shared/data/locomo/locomo-dev.json

.PHONY: demo test test-slow bwrap claude-cli lint format typecheck bench evals realaudit docs progress-picture docs-check clean

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
test: $(STAMP) bwrap
	$(BIN)/python -m pytest -q -m "not slow" $(PYTEST_ARGS)

# the real-process matrices (sandboxed destructive commands, secrets on every path, the
# crash matrix, the demo): minutes on a 2-core machine, so a step of their own in CI
test-slow: $(STAMP) bwrap
	$(BIN)/python -m pytest -q -m slow $(PYTEST_ARGS)

# the agent's commands run under bubblewrap and the tests exercise it: installed here when
# missing (as root, with apt-get), else one line saying how
bwrap:
	@command -v bwrap >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null; \
	  else echo "make test needs bubblewrap (bwrap): sudo apt-get install bubblewrap" >&2; exit 1; fi; }

# Claude Code's CLI (the npm package @anthropic-ai/claude-code) at the version orch is
# tested with, installed once per version beside orch in .venv (git-ignored, nothing in
# the home folder); the claude-code executor and model find it there
# (docs/integrations.md). Tests that need it skip, saying so, when it is not installed.
CLAUDE_CODE_VERSION := 2.1.332
CLAUDE_CODE_DIR := $(CURDIR)/$(VENV)/claude-code/$(CLAUDE_CODE_VERSION)
claude-cli:
	@test -x $(CLAUDE_CODE_DIR)/node_modules/.bin/claude || { \
	  command -v npm >/dev/null || { echo "make claude-cli needs npm (Node.js 20 or later)" >&2; exit 1; }; \
	  npm install --silent --no-audit --no-fund --prefix $(CLAUDE_CODE_DIR) \
	    @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION); }
	@$(CLAUDE_CODE_DIR)/node_modules/.bin/claude --version

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: $(STAMP)
	$(BIN)/mypy

# speed benchmarks (medians; run them on a quiet machine), then the context suite's figures
bench: $(STAMP)
	$(BIN)/python -m evals.bench_store
	$(BIN)/python -m evals.bench_memory
	$(BIN)/python -m evals.bench_verify
	$(BIN)/python -m evals.bench_retrieval
	$(BIN)/python -m evals.context

# every evaluation suite, each `python -m evals.<suite>`; LoCoMo when its data is there
evals: $(STAMP)
	$(BIN)/python -m evals.prompts
	$(BIN)/python -m evals.hygiene
	$(BIN)/python -m evals.context
	$(BIN)/python -m evals.resume
	$(BIN)/python -m evals.aging
	@if [ -f $(LOCOMO) ]; then \
		echo "$(BIN)/python -m evals.locomo --data $(LOCOMO)"; \
		$(BIN)/python -m evals.locomo --data $(LOCOMO); \
	else echo "evals.locomo skipped: no LoCoMo file at $(LOCOMO) (make evals LOCOMO=PATH)"; fi

# the memory audit on agent memory public projects committed (needs the fetched mirrors
# under /work/.mirror, or MIRRORS=DIR; not part of CI): evals/realaudit/README.md
MIRRORS ?= /work/.mirror
realaudit: $(STAMP)
	$(BIN)/python -m evals.realaudit --mirrors $(MIRRORS)

docs: $(STAMP)
	$(BIN)/python -m evals.docs_cli --write
	$(BIN)/python -m evals.docs_scripted --write
	$(BIN)/python -m evals.schemas

# docs/progress.svg, the README's picture of the live progress, from a real run of the demo's
# task (its durations differ each time, so it is redrawn by hand, not checked)
progress-picture: $(STAMP)
	$(BIN)/python -m evals.docs_progress --write

docs-check: $(STAMP)
	$(BIN)/python -m evals.docs_cli --check
	$(BIN)/python -m evals.docs_scripted --check

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
