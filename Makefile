PY ?= python3.11
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: setup test lint

setup:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev,local]'

test:
	$(BIN)/python -m pytest

lint:
	$(BIN)/ruff check synth tests bench
	$(BIN)/mypy synth
