// The shipped model (transformers backend) under Microsoft's DebugClient: Continue from the entry stop to a
// breakpoint inside a called function arrives there (Continue runs as predicted fine steps until one arrives).
// The breakpoint is check()'s first line: one on `return v * 2` needs the model to decide `1 < 0`, which no model
// here gets right (each steps to the raise); session 31's run reached it only through a second call of check() from
// one call, which the grammar no longer allows (docs/speed.md, session 32).
//
// Run: node --test tests/js/model_continue.test.js  (pytest runs it: tests/test_adapter_debugclient.py)
// Environment: NEURAL_DEBUGGER_CMD (the adapter executable), NEURAL_MODEL (default: the shipped checkpoints/default).
'use strict';

const assert = require('node:assert');
const { test } = require('node:test');
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

test('continue from the entry arrives at a breakpoint inside a called function', { timeout: client.TIMEOUT * 3 }, async () => {
  const program = client.writeProgram('prog.py', PROGRAM_TEXT);
  const dc = await client.startClient();
  try {
    // a generous step budget: this checks where Continue arrives, not how fast (bench/bench_session.py times it)
    const args = { program, backend: 'transformers', stopOnEntry: true, stepSeconds: 120 };
    if (process.env.NEURAL_MODEL) args.model = process.env.NEURAL_MODEL;
    await Promise.all([
      dc.waitForEvent('initialized').then(async () => {
        await dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line: 2 }] });
        await dc.configurationDoneRequest();
      }),
      dc.launch(args),
      dc.assertStoppedLocation('entry', { line: 1 }),
    ]);
    // the first of a stop and the end of the session: a prediction that runs to the end must fail here, not time out
    const arrived = client.waitForAny(dc, ['stopped', 'terminated']);
    await dc.continueRequest({ threadId: 1 });
    const event = await arrived;
    assert.equal(event.event, 'stopped', `the predicted run ended before the breakpoint: ${JSON.stringify(event)}`);
    assert.equal(event.body.reason, 'breakpoint', JSON.stringify(event.body));
    const stack = await dc.stackTraceRequest({ threadId: 1 });
    assert.deepEqual(stack.body.stackFrames.map((f) => [f.name, f.line]), [['check', 2], ['run', 9], ['<module>', 12]]);
  } finally {
    await dc.stop();
  }
});
