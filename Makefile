# neural-debugger: see README.md
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export PIP_DISABLE_PIP_VERSION_CHECK=1

.PHONY: setup test test-all demo bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	@touch $(STAMP)

test: setup
	$(BIN)/python -m pytest

test-all: setup
	$(BIN)/python -m pytest -m ''

demo: setup
	$(BIN)/neural-debugger demo

clean:
	rm -rf $(VENV) build *.egg-info
