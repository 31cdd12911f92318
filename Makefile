# Two entry points for a newcomer: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test test-fast lint clean

demo: $(VENV)/.installed
	$(BIN)/tablesight demo $(ARGS)

test: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict $(foreach p,rules calibration vision match tournament setup,-p tablesight.$(p))
	$(BIN)/pytest

# Everything but the slow tests (whole clips, new processes, many random cases) and the
# browser: under a minute, for a developer between two edits. `make test` runs it all.
test-fast: $(VENV)/.installed-test
	$(BIN)/pytest -m "not slow and not browser"

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict $(foreach p,rules calibration vision match tournament setup,-p tablesight.$(p))

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "TableSight needs Python >= 3.11; this is " + sys.version.split()[0] + ". Run: make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

clean:
	rm -rf $(VENV) *.egg-info build .pytest_cache .mypy_cache .ruff_cache
