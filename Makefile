# Two entry points for a newcomer: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# What the whole test suite uses beyond Python (see test-needs)
CHROMIUM ?= /usr/bin/chromium
MOSQUITTO ?= /usr/sbin/mosquitto
SHARED ?= ../shared
# setuptools' note on every editable install (folders named as the package may take
# precedence when importing): the checkout's tablesight/ is that package, nothing to heed
EDITABLE_QUIET := PYTHONWARNINGS="ignore:Editable installation"

.PHONY: demo test test-needs test-fast lint clean

demo: $(VENV)/.installed
	$(BIN)/tablesight demo $(ARGS)

test: test-needs $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict $(foreach p,rules calibration vision match tournament setup,-p tablesight.$(p))
	$(BIN)/pytest

# Said before `make test` starts, in one line: how long it takes, and what it needs beyond
# Python that is missing here (Debian's packages; .ci/run installs them) with what that does.
test-needs:
	@missing=""; packages=""; \
	[ -x $(CHROMIUM) ] || { missing="$$missing, chromium (the browser tests skip)"; packages="$$packages chromium"; }; \
	command -v mosquitto >/dev/null 2>&1 || [ -x $(MOSQUITTO) ] || { missing="$$missing, mosquitto (the broker tests fail)"; packages="$$packages mosquitto"; }; \
	command -v ffmpeg >/dev/null 2>&1 || { missing="$$missing, ffmpeg (the network camera tests skip)"; packages="$$packages ffmpeg"; }; \
	{ command -v pdftoppm && command -v pdftotext && command -v pdfinfo; } >/dev/null 2>&1 || { missing="$$missing, poppler-utils (the printed-marker tests skip)"; packages="$$packages poppler-utils"; }; \
	[ -d $(SHARED) ] || missing="$$missing, $(SHARED) (the real-photo tests skip)"; \
	if [ -z "$$missing" ]; then \
	  echo "make test: about 12-15 minutes on two cores (make test-fast: under a minute); Chromium, Mosquitto, FFmpeg, poppler-utils and $(SHARED) are all here."; \
	else \
	  echo "make test: about 12-15 minutes on two cores (make test-fast: under a minute). Missing: $${missing#, }$${packages:+; install with: sudo apt-get install$$packages}."; \
	fi

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
	$(EDITABLE_QUIET) $(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(EDITABLE_QUIET) $(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

clean:
	rm -rf $(VENV) *.egg-info build .pytest_cache .mypy_cache .ruff_cache
