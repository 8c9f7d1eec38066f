// What the DebugClient test files share: how to start `neural-debugger dap`, and small readers of a stop.
//
// Environment: NEURAL_DEBUGGER_CMD (the adapter executable; default: the repo's .venv/bin/neural-debugger),
//              NEURAL_BACKEND (default "oracle"), NEURAL_MODEL (checkpoint folder for a model backend),
//              NEURAL_TIMEOUT_MS (each wait; default 30000), NEURAL_STDERR (show the adapter's stderr).
'use strict';

const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const REPO = path.resolve(__dirname, '..', '..');
const COMMAND = process.env.NEURAL_DEBUGGER_CMD || path.join(REPO, '.venv', 'bin', 'neural-debugger');
const BACKEND = process.env.NEURAL_BACKEND || 'oracle';
const TIMEOUT = Number(process.env.NEURAL_TIMEOUT_MS || 30000);

/** A started DebugClient on a new adapter process (stdio), as VS Code runs it. */
async function startClient() {
  const dc = new DebugClient(COMMAND, 'dap', 'neural', { cwd: REPO }, !!process.env.NEURAL_STDERR);
  dc.defaultTimeout = TIMEOUT;
  await dc.start();
  return dc;
}

/** Write `lines` (joined with newlines) as `name` in a new temporary folder; its path. */
function writeProgram(name, lines) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'neural-dc-')), name);
  fs.writeFileSync(file, [...lines, ''].join('\n'));
  return file;
}

async function topFrame(dc) {
  const st = await dc.stackTraceRequest({ threadId: 1 });
  return st.body.stackFrames[0];
}

/** The variables of scope `name` of a frame, by name (the scope's variablesReference as `.ref`). */
async function scopeVariables(dc, frameId, name = 'Locals') {
  const scopes = await dc.scopesRequest({ frameId });
  const scope = scopes.body.scopes.find((s) => s.name === name);
  assert.ok(scope, `a ${name} scope among ${scopes.body.scopes.map((s) => s.name)}`);
  const vars = await dc.variablesRequest({ variablesReference: scope.variablesReference });
  const byName = Object.fromEntries(vars.body.variables.map((v) => [v.name, v]));
  Object.defineProperty(byName, 'ref', { value: scope.variablesReference });
  return byName;
}

/** Send a step request, wait for its `stopped` event (of `reason`, when given); the event's body. */
async function stepAndStop(dc, request, reason = 'step') {
  const stopped = dc.waitForEvent('stopped');
  await request({ threadId: 1 });
  const event = await stopped;
  if (reason) assert.equal(event.body.reason, reason);
  return event.body;
}

/** Resolve with the Debug Console text (output events of category console) once it holds `wanted`. */
function waitForConsole(dc, wanted, timeout = TIMEOUT) {
  return new Promise((resolve, reject) => {
    let text = '';
    const listen = (event) => {
      if (event.body.category !== 'console') return;
      text += event.body.output;
      if (text.includes(wanted)) {
        clearTimeout(timer);
        dc.removeListener('output', listen);
        resolve(text);
      }
    };
    const timer = setTimeout(() => {
      dc.removeListener('output', listen);
      reject(new Error(`the Debug Console never said ${JSON.stringify(wanted)} within ${timeout} ms; it said: ${JSON.stringify(text)}`));
    }, timeout);
    dc.on('output', listen);
  });
}

/** The first of the events `names` (e.g. stopped or terminated), with no timer left behind for the others. */
function waitForAny(dc, names, timeout = TIMEOUT) {
  return new Promise((resolve, reject) => {
    const listeners = names.map((name) => [name, (event) => { done(); resolve(event); }]);
    const done = () => {
      clearTimeout(timer);
      for (const [name, listen] of listeners) dc.removeListener(name, listen);
    };
    const timer = setTimeout(() => { done(); reject(new Error(`none of the events ${names} within ${timeout} ms`)); }, timeout);
    for (const [name, listen] of listeners) dc.once(name, listen);
  });
}

module.exports = {
  REPO, COMMAND, BACKEND, TIMEOUT, startClient, writeProgram, topFrame, scopeVariables, stepAndStop, waitForConsole, waitForAny,
};
