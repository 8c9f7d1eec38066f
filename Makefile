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

test: setup js-deps
	$(BIN)/python -m pytest

test-all: setup
	$(BIN)/python -m pytest -m ''

demo: setup
	$(BIN)/neural-debugger demo

clean:
	rm -rf $(VENV) build *.egg-info

# --- adapter: JavaScript test client and the VS Code extension package ---------------------------
.PHONY: js-deps vsix
JS_STAMP := tests/js/node_modules/.installed
VSCE := .cache/vsce/node_modules/.bin/vsce

js-deps: $(JS_STAMP)

$(JS_STAMP): tests/js/package.json tests/js/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd tests/js && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm not found: the DebugClient tests will be skipped"; fi

$(VSCE):
	mkdir -p .cache/vsce && cd .cache/vsce && npm install --no-audit --no-fund --loglevel=error @vscode/vsce@3

vsix: $(VSCE)
	mkdir -p build
	cd editors/vscode && ../../$(VSCE) package --no-dependencies --allow-missing-repository -o ../../build/neural-debugger.vsix

# Parity goldens: record the corpus under real debugpy (slow: a few stops/s; resumable).
.PHONY: golden bench-tracegen
golden: setup
	nice -n 10 $(BIN)/python -m tests.regen_golden

bench-tracegen: setup
	nice -n 10 $(BIN)/python bench/bench_tracegen.py

# --- e2e: the neural debugger in a real VS Code (code-server + headless Chromium); see docs/e2e.md ---
# Tools are cached in .cache/e2e (Node 24, code-server, playwright-core); Debian's chromium and
# libkrb5-dev are apt-get installed when missing. E2E_ARGS: e.g. --keep, --docs-screenshot, --model off.
.PHONY: e2e
e2e: setup vsix
	sh e2e/install.sh
	nice -n 10 $(BIN)/python -m e2e.run $(E2E_ARGS)
