// Microsoft's DebugClient (@vscode/debugadapter-testsupport) drives `neural-debugger dap` on stdio,
// the way VS Code does: entry stop, breakpoint hit, next, stepIn, stepOut, stepBack, variables,
// evaluate, continue to the end, disconnect.
//
// Run: node --test tests/js/  (pytest runs it: tests/test_adapter_debugclient.py)
// Environment: NEURAL_DEBUGGER_CMD (the adapter executable; default: the repo's .venv/bin/neural-debugger),
//              NEURAL_BACKEND (default "oracle"), NEURAL_MODEL (checkpoint folder for a model backend).
'use strict';

const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test, beforeEach, afterEach } = require('node:test');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const REPO = path.resolve(__dirname, '..', '..');
const COMMAND = process.env.NEURAL_DEBUGGER_CMD || path.join(REPO, '.venv', 'bin', 'neural-debugger');
const BACKEND = process.env.NEURAL_BACKEND || 'oracle';
const TIMEOUT = Number(process.env.NEURAL_TIMEOUT_MS || 30000);

const PROGRAM_TEXT = [
  'def check(v):', //             1
  '    if v < 0:', //             2
  '        raise ValueError("neg")', // 3
  '    return v * 2', //          4
  '', //                          5
  'def run(items):', //           6
  '    out = []', //              7
  '    for it in items:', //      8
  '        out.append(check(it))', // 9
  '    return out', //            10
  '', //                          11
  'res = run([1, 2])', //         12
  'print(res)', //                13
  '',
].join('\n');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neural-dc-'));
const PROGRAM = path.join(dir, 'prog.py');
fs.writeFileSync(PROGRAM, PROGRAM_TEXT);

function launchArgs(extra) {
  const args = { program: PROGRAM, backend: BACKEND, stopOnEntry: false, ...extra };
  if (process.env.NEURAL_MODEL) args.model = process.env.NEURAL_MODEL;
  return args;
}

let dc;

beforeEach(async () => {
  dc = new DebugClient(COMMAND, 'dap', 'neural', { cwd: REPO }, !!process.env.NEURAL_STDERR);
  dc.defaultTimeout = TIMEOUT;
  await dc.start();
});

afterEach(async () => {
  if (dc) {
    await dc.stop(); // sends disconnect, then ends the adapter process
  }
});

async function topFrame() {
  const st = await dc.stackTraceRequest({ threadId: 1 });
  return st.body.stackFrames[0];
}

async function locals(frameId) {
  const scopes = await dc.scopesRequest({ frameId });
  const scope = scopes.body.scopes.find((s) => s.name === 'Locals');
  assert.ok(scope, 'a Locals scope');
  const vars = await dc.variablesRequest({ variablesReference: scope.variablesReference });
  return Object.fromEntries(vars.body.variables.map((v) => [v.name, v]));
}

async function stepAndStop(request, reason = 'step') {
  const stopped = dc.waitForEvent('stopped');
  await request({ threadId: 1 });
  const event = await stopped;
  assert.equal(event.body.reason, reason);
  return topFrame();
}

test('stops on entry', async () => {
  await Promise.all([
    dc.configurationSequence(),
    dc.launch(launchArgs({ stopOnEntry: true })),
    dc.assertStoppedLocation('entry', { path: PROGRAM, line: 1 }),
  ]);
});

test('unverified breakpoint on a blank line', async () => {
  await dc.launch(launchArgs({ stopOnEntry: true }));
  const reply = await dc.setBreakpointsRequest({ source: { path: PROGRAM }, breakpoints: [{ line: 5 }, { line: 9 }] });
  assert.deepEqual(reply.body.breakpoints.map((b) => b.verified), [false, true]);
  assert.match(reply.body.breakpoints[0].message, /no code/);
});

test('breakpoint, stepIn, next, stepOut, stepBack, variables, evaluate, continue to the end', async () => {
  await dc.hitBreakpoint(launchArgs(), { path: PROGRAM, line: 9 });

  let vars = await locals((await topFrame()).id);
  assert.equal(vars.it.value, '1');
  assert.equal(vars.out.value, '[]');
  assert.equal(vars.items.value, '[1, 2]');
  assert.ok(vars.items.variablesReference > 0, 'a list is expandable');
  const children = await dc.variablesRequest({ variablesReference: vars.items.variablesReference });
  assert.deepEqual(children.body.variables.map((v) => [v.name, v.value]), [['0', '1'], ['1', '2']]);

  let frame = await stepAndStop((a) => dc.stepInRequest(a));
  assert.deepEqual([frame.name, frame.line], ['check', 2]);
  const stack = await dc.stackTraceRequest({ threadId: 1 });
  assert.deepEqual(stack.body.stackFrames.map((f) => [f.name, f.line]), [['check', 2], ['run', 9], ['<module>', 12]]);
  assert.equal(stack.body.stackFrames[0].source.path, PROGRAM);
  assert.equal(stack.body.stackFrames[0].column, 1);
  const delayed = await dc.stackTraceRequest({ threadId: 1, startFrame: 1, levels: 1 });
  assert.deepEqual(delayed.body.stackFrames.map((f) => f.name), ['run']);
  assert.equal(delayed.body.totalFrames, 3);

  frame = await stepAndStop((a) => dc.nextRequest(a));
  assert.deepEqual([frame.name, frame.line], ['check', 4]);
  const hover = await dc.evaluateRequest({ expression: 'v', frameId: frame.id, context: 'hover' });
  assert.equal(hover.body.result, '1');

  frame = await stepAndStop((a) => dc.stepOutRequest(a));
  assert.deepEqual([frame.name, frame.line], ['run', 9]);
  vars = await locals(frame.id);
  assert.equal(vars['(return) check'].value, '2');

  const watch = await dc.evaluateRequest({ expression: 'items[1]', frameId: frame.id, context: 'watch' });
  assert.equal(watch.body.result, '2');
  await assert.rejects(dc.evaluateRequest({ expression: 'len(items)', frameId: frame.id, context: 'repl' }), /never runs code/);

  frame = await stepAndStop((a) => dc.stepBackRequest(a));
  assert.deepEqual([frame.name, frame.line], ['check', 4]);

  frame = await stepAndStop((a) => dc.continueRequest(a), 'breakpoint');
  assert.deepEqual([frame.name, frame.line], ['run', 9]);
  vars = await locals(frame.id);
  assert.equal(vars.it.value, '2');
  assert.equal(vars.out.value, '[2]');

  await dc.setBreakpointsRequest({ source: { path: PROGRAM }, breakpoints: [] });
  const output = dc.assertOutput('stdout', '[2, 4]\n');
  const exited = dc.waitForEvent('exited');
  const terminated = dc.waitForEvent('terminated');
  await dc.continueRequest({ threadId: 1 });
  await output;
  assert.equal((await exited).body.exitCode, 0);
  await terminated;
  await dc.disconnectRequest({});
  dc = null; // the adapter ends its stdio session after disconnect: nothing left to stop
});

test('an unknown request fails and the session goes on', async () => {
  await Promise.all([
    dc.configurationSequence(),
    dc.launch(launchArgs({ stopOnEntry: true })),
    dc.assertStoppedLocation('entry', { line: 1 }),
  ]);
  await assert.rejects(dc.customRequest('frobnicate', {}), /frobnicate/);
  const threads = await dc.threadsRequest();
  assert.equal(threads.body.threads.length, 1);
});
