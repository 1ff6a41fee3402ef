PY ?= python3.11
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: setup test suite coverage lint mutation

# torch first, pinned to the CPU build, so the `local` extra does not pull a multi-GB GPU build;
# the browser tests drive Debian's chromium (Playwright's own browser download is not reachable),
# installed here when it is missing and we may (root); elsewhere install it yourself
setup:
	@if ! command -v chromium >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
		else echo "make setup: chromium is missing: install it (apt-get install chromium) for the browser tests"; fi; \
	fi
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev,local,hf,ray,anthropic,convert]'
	# byte-compiled once, as pip does an installed wheel's modules (an editable install under
	# PYTHONDONTWRITEBYTECODE=1 would compile them again in every process it starts)
	$(BIN)/python -m compileall -q synth

# the gates (lint, format, types) and the whole suite at once: the suite waits on its servers and
# subprocesses for about a third of its time, which the type check and a third worker fill; each
# file stays on one worker, so a module fixture is made once per file (docs/testing.md, "How long
# the suite takes"); the exit status is the gates' or the suite's failure
test:
	@$(MAKE) --no-print-directory -j2 lint suite

suite:
	$(BIN)/python -m pytest -n 3 --dist loadfile

# the same suite measured for line coverage (10 to 50% more processor time on the tests that run
# synth in-process; no gate reads it, so `test` leaves it out)
coverage:
	$(BIN)/python -m pytest -n 2 --dist loadfile --cov=synth --cov-report=term:skip-covered

lint:
	$(BIN)/ruff check synth tests bench mutation
	$(BIN)/ruff format --check synth tests bench mutation
	# one type check: the run machinery and the context stages are held to --strict's checks by
	# pyproject.toml's per-module overrides, in the same pass
	$(BIN)/mypy synth

# mutation testing, not part of `test` (tens of minutes): every module in mutation/targets.toml,
# or the ones named, e.g. `make mutation MODULE=synth/evaluate/stats.py`; see docs/testing.md
MODULE ?=
mutation:
	$(BIN)/python mutation/run.py $(MODULE)
