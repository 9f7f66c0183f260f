# boost — developer entry points. `make demo` and `make check` work on a fresh clone.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_HOME ?= $(CURDIR)/.venv/demo-home

.PHONY: demo check test test-slow test-browser lint typecheck mutation venv dev clean dist-check

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

venv: $(BIN)/python
	@$(BIN)/python -m pip install -q -e . > $(VENV)/install.log 2>&1 || (cat $(VENV)/install.log; exit 1)

dev: $(BIN)/python
	@$(BIN)/python -m pip install -q -e '.[dev]' > $(VENV)/install.log 2>&1 || (cat $(VENV)/install.log; exit 1)

demo: venv
	@bash scripts/demo.sh "$(BIN)/boost" "$(DEMO_HOME)"

lint: dev
	$(BIN)/ruff check boost_cli tests scripts
	$(BIN)/ruff format --check boost_cli tests scripts

typecheck: dev
	$(BIN)/mypy

test: dev
	$(BIN)/pytest --cov=boost_cli --cov-report=term --cov-fail-under=85

test-slow: dev  # the tests make check skips: real host CLIs and the conformance suite (npm), corpus round trips, long crash soaks
	$(BIN)/pytest -m slow

test-browser: dev  # the team page in headless Chromium (installs chromium and axe-core where it can; skips otherwise)
	$(BIN)/pytest -m slow tests/test_web_browser.py

check: lint typecheck test

dist-check:  # build with no warning, install sdist and wheel in fresh venvs, test from the sdist (needs PyPI)
	@bash scripts/check_dist.sh "$(PY)"

mutation: dev
	@bash scripts/mutation.sh "$(BIN)"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .coverage mutants
