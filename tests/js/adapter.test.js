// Microsoft's DebugClient (@vscode/debugadapter-testsupport) drives `neural-debugger dap` on stdio,
// the way VS Code does: entry stop, breakpoint hit, next, stepIn, stepOut, stepBack, variables,
// evaluate, continue to the end, disconnect.
//
// Run: node --test tests/js/  (pytest runs it: tests/test_adapter_debugclient.py)
// Environment: see client.js.
'use strict';

const assert = require('node:assert');
const { test, beforeEach, afterEach } = require('node:test');
const client = require('./client');

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
];

const PROGRAM = client.writeProgram('prog.py', PROGRAM_TEXT);

function launchArgs(extra) {
  const args = { program: PROGRAM, backend: client.BACKEND, stopOnEntry: false, ...extra };
  if (process.env.NEURAL_MODEL) args.model = process.env.NEURAL_MODEL;
  return args;
}

let dc;

beforeEach(async () => {
  dc = await client.startClient();
});

afterEach(async () => {
  if (dc) {
    await dc.stop(); // sends disconnect, then ends the adapter process
  }
});

const topFrame = () => client.topFrame(dc);
const locals = (frameId) => client.scopeVariables(dc, frameId);

async function stepAndStop(request, reason = 'step') {
  await client.stepAndStop(dc, request, reason);
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
