// Microsoft's DebugClient drives what only a predicting debugger offers (issue #37), as VS Code asks
// for it: Break on Value Change (dataBreakpointInfo, setDataBreakpoints, continue), the History scope
// and `?history x`, and the program's file edited between two requests.
//
// Run: node --test tests/js/beyond.test.js  (pytest runs it: tests/test_adapter_debugclient.py)
// The oracle backend replays the real run, so its stops are exact; the edit scenario needs a model
// (NEURAL_MODEL: a checkpoint folder, e.g. the tests' tiny random one) and is skipped without one.
// Environment: see client.js.
'use strict';

const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { test, afterEach } = require('node:test');
const client = require('./client');

const WORDS = [
  'def bump(counts, key):', //                      1
  '    counts[key] = counts.get(key, 0) + 1', //    2
  '    return counts[key]', //                      3
  '', //                                            4
  'total = 0', //                                   5
  'counts = {}', //                                 6
  'for word in ["a", "b", "a", "c", "a"]:', //      7
  '    n = bump(counts, word)', //                  8
  '    if n > 1:', //                               9
  '        total += n', //                          10
  'print(total)', //                                11
];

let dc;

afterEach(async () => {
  if (dc) {
    await dc.stop();
    dc = null;
  }
});

async function oracleAt(program, line, extra = {}) {
  dc = await client.startClient();
  await dc.hitBreakpoint({ program, backend: 'oracle', stopOnEntry: false, ...extra }, { path: program, line });
  await dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [] }); // only the data breakpoints now
  return client.topFrame(dc);
}

const where = async () => {
  const frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  return frames.map((f) => [f.name, f.line]);
};

test('Break on Value Change on a local, then on an item of a dict: stops where the real run changes them', async () => {
  const program = client.writeProgram('words.py', WORDS);
  let frame = await oracleAt(program, 8); // first pass of the loop: total = 0, counts = {}
  let vars = await client.scopeVariables(dc, frame.id);
  assert.equal(vars.total.value, '0');

  const info = await dc.dataBreakpointInfoRequest({ variablesReference: vars.ref, name: 'total' });
  assert.ok(info.body.dataId, info.body.description);
  assert.deepEqual(info.body.accessTypes, ['write']);
  assert.match(info.body.description, /total/);
  const set = await dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: info.body.dataId, accessType: 'write' }] });
  assert.equal(set.body.breakpoints.length, 1);
  assert.ok(set.body.breakpoints[0].verified);

  // total first changes on `total += n` (line 10) of the third word ("a" again); the stop after it is the loop line
  let event = await client.stepAndStop(dc, (a) => dc.continueRequest(a), 'data breakpoint');
  assert.match(event.description, /total: 0 -> 2/);
  assert.deepEqual(event.hitBreakpointIds, [set.body.breakpoints[0].id]);
  assert.deepEqual(await where(), [['<module>', 7]]);
  vars = await client.scopeVariables(dc, (await client.topFrame(dc)).id);
  assert.deepEqual([vars.total.value, vars.n.value, vars.word.value], ['2', '2', "'a'"]);

  // exactly there: the stop before still shows the old value, on the line that changed it
  await client.stepAndStop(dc, (a) => dc.stepBackRequest(a));
  assert.deepEqual(await where(), [['<module>', 10]]);
  frame = await client.topFrame(dc);
  vars = await client.scopeVariables(dc, frame.id);
  assert.equal(vars.total.value, '0');

  // an item inside a container: counts['a'] (a child row of counts), watched instead of total
  assert.equal(vars.counts.value, "{'a': 2, 'b': 1}");
  const items = await dc.variablesRequest({ variablesReference: vars.counts.variablesReference });
  const a = items.body.variables.find((v) => v.name === "'a'");
  assert.ok(a, items.body.variables.map((v) => v.name).join(', '));
  const item = await dc.dataBreakpointInfoRequest({ variablesReference: vars.counts.variablesReference, name: a.name });
  assert.ok(item.body.dataId, item.body.description);
  await dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: item.body.dataId, accessType: 'write' }] });
  // "c" passes; the fifth word "a" writes counts['a'] on line 2 of bump: the next stop is line 3
  event = await client.stepAndStop(dc, (a) => dc.continueRequest(a), 'data breakpoint');
  assert.match(event.description, /counts\['a'\]: 2 -> 3/);
  assert.deepEqual(await where(), [['bump', 3], ['<module>', 8]]);
  const module = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[1];
  vars = await client.scopeVariables(dc, module.id);
  assert.equal(vars.counts.value, "{'a': 3, 'b': 1, 'c': 1}");

  // a read cannot be watched: unverified, with the reason
  const read = await dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: item.body.dataId, accessType: 'read' }] });
  assert.equal(read.body.breakpoints[0].verified, false);
  assert.match(read.body.breakpoints[0].message, /write/);
});

test('a data breakpoint Continue is bounded by dataBreakpointSteps and says so', async () => {
  const program = client.writeProgram('words.py', WORDS);
  const frame = await oracleAt(program, 8, { dataBreakpointSteps: 3 });
  const vars = await client.scopeVariables(dc, frame.id);
  const info = await dc.dataBreakpointInfoRequest({ variablesReference: vars.ref, name: 'total' });
  await dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: info.body.dataId }] });
  const said = client.waitForConsole(dc, 'no watched value changed in 3 predicted steps');
  await client.stepAndStop(dc, (a) => dc.continueRequest(a), 'step');
  await said;
  assert.deepEqual(await where(), [['<module>', 8]]); // three stepIn stops: bump 2, bump 3, back on the calling line 8
});

test('the History scope and ?history show the values of the earlier stops', async () => {
  const program = client.writeProgram('words.py', WORDS);
  dc = await client.startClient();
  await Promise.all([
    dc.configurationSequence(),
    dc.launch({ program, backend: 'oracle', stopOnEntry: true }),
    dc.assertStoppedLocation('entry', { line: 1 }),
  ]);
  const first = await client.topFrame(dc);
  const scopes = await dc.scopesRequest({ frameId: first.id });
  assert.deepEqual(scopes.body.scopes.map((s) => s.name), ['Locals'], 'no History before a second stop');

  const seen = []; // what the client was shown at each stop: [line, locals]
  const look = async () => {
    const frame = await client.topFrame(dc);
    const vars = await client.scopeVariables(dc, frame.id);
    seen.push([frame.line, Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, v.value]))]);
    return frame;
  };
  await look();
  let frame;
  for (let i = 0; i < 12; i += 1) {
    await client.stepAndStop(dc, (a) => dc.nextRequest(a));
    frame = await look();
  }
  assert.equal(frame.line, 10); // the third word, "a" again: total += n

  const history = await client.scopeVariables(dc, frame.id, 'History');
  for (const name of ['total', 'counts', 'word', 'n']) {
    const values = seen.filter(([, locals]) => name in locals).map(([, locals]) => locals[name]);
    const runs = values.filter((v, i) => i === 0 || values[i - 1] !== v); // word: 'a' → 'b' → 'a'
    assert.equal(history[name].value, runs.join(' → '), name);
    const rows = await dc.variablesRequest({ variablesReference: history[name].variablesReference });
    assert.deepEqual(rows.body.variables.map((r) => r.value), runs, name);
  }

  const asked = await dc.evaluateRequest({ expression: '?history word', frameId: frame.id, context: 'repl' });
  const expected = seen.map(([line, locals], i) => ({ stop: i + 1, line, value: locals.word })).filter((r) => r.value !== undefined);
  assert.deepEqual(asked.body.neuralHistory.map(({ stop, line, value }) => ({ stop, line, value })), expected);
  assert.match(asked.body.result, new RegExp(`^history of word \\(${expected.length} stops\\)`));
  await assert.rejects(dc.evaluateRequest({ expression: '?history nothing_here', frameId: frame.id, context: 'repl' }));
  assert.equal((await client.topFrame(dc)).line, 10, 'the session goes on after a refused ?history');
});

const BEFORE = ['a = 1', 'b = 2', 'c = a + b', 'print(c)'];
const AFTER = ['z = 10', 'w = z * 3', '', 'a = 1', 'b = 2', 'c = a + b + z', 'print(c)']; // old line 1 is line 4

async function startEdited(extra) {
  const program = client.writeProgram('prog.py', BEFORE);
  dc = await client.startClient();
  await dc.launch({ program, stopOnEntry: true, ...extra });
  await dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line: 3 }, { line: 4 }] });
  const entry = dc.waitForEvent('stopped');
  await dc.configurationDoneRequest();
  assert.equal((await entry).body.reason, 'entry');
  return program;
}

test('the program edited and saved while stopped: the next stop is predicted from the edited source',
  { skip: !process.env.NEURAL_MODEL && 'needs a model (NEURAL_MODEL)' }, async () => {
    const program = await startEdited({ backend: 'transformers', model: process.env.NEURAL_MODEL });
    fs.writeFileSync(program, [...AFTER, ''].join('\n')); // the user edits and saves
    const said = client.waitForConsole(dc, 'the next steps are predicted from the edited source');
    const redraw = dc.waitForEvent('stopped');
    const stack = await dc.stackTraceRequest({ threadId: 1 }); // the next request notices the edit
    assert.deepEqual(stack.body.stackFrames.map((f) => [f.name, f.line]), [['<module>', 4]]);
    const text = await said;
    assert.match(text, /prog\.py changed on disk: line 1 is now line 4/);
    assert.match(text, /breakpoints checked again: 6, 7\)/);
    assert.equal((await redraw).body.reason, 'step'); // VS Code redraws on the moved line
    const source = await dc.sourceRequest({ source: { path: program }, sourceReference: 0 });
    assert.equal(source.body.content, [...AFTER, ''].join('\n'));

    const next = client.waitForAny(dc, ['stopped', 'terminated']);
    await dc.nextRequest({ threadId: 1 });
    if ((await next).event === 'stopped') { // an untrained model may also predict the end
      const line = (await client.topFrame(dc)).line;
      assert.ok([5, 6, 7].includes(line), `line ${line}: only the edited program has lines past 4`);
    }
  });

test('an edit the oracle cannot follow (code that already ran): it says why and offers a restart; the session goes on', async () => {
  const program = await startEdited({ backend: 'oracle' });
  fs.writeFileSync(program, 'a = (\n'); // saved half-written
  const broken = client.waitForConsole(dc, 'does not compile');
  await dc.threadsRequest();
  await broken;
  fs.writeFileSync(program, [...AFTER, ''].join('\n'));
  const said = client.waitForConsole(dc, 'Restart');
  await client.stepAndStop(dc, (a) => dc.nextRequest(a));
  assert.match(await said, /does not reach this stop with the same values/);
  assert.equal((await client.topFrame(dc)).line, 2, 'the old run goes on');
});

// The same features on any program, named by a parameter: NEURAL_BEYOND_TARGET=PATH:LINE:NAME:BREAKPOINT (PATH
// relative to the repository or absolute; LINE a module-level line where a line is inserted; NAME a module-level
// local; BREAKPOINT a line below LINE). Default: WORDS above. The file is copied, then edited in the copy.
function beyondTarget() {
  const spec = process.env.NEURAL_BEYOND_TARGET;
  if (!spec) return { lines: WORDS, name: 'words.py', line: 7, watch: 'total', breakpoint: 11 };
  const m = /^(.+):(\d+):([A-Za-z_]\w*):(\d+)$/.exec(spec);
  assert.ok(m, `NEURAL_BEYOND_TARGET must be PATH:LINE:NAME:BREAKPOINT, not ${spec}`);
  const file = path.resolve(client.REPO, m[1]);
  return { lines: fs.readFileSync(file, 'utf8').replace(/\n$/, '').split('\n'), name: path.basename(file),
    line: Number(m[2]), watch: m[3], breakpoint: Number(m[4]) };
}

/** An oracle session of `program` stopped on entry with one breakpoint; Step Over until module line `line`. */
async function overTo(program, breakpoint, line) {
  dc = await client.startClient();
  await dc.launch({ program, backend: 'oracle', stopOnEntry: true });
  await dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line: breakpoint }] });
  const entry = dc.waitForEvent('stopped');
  await dc.configurationDoneRequest();
  await entry;
  for (let i = 0; i < 200 && (await client.topFrame(dc)).line !== line; i += 1) {
    await client.stepAndStop(dc, (a) => dc.nextRequest(a), null);
  }
  assert.deepEqual(await where(), [['<module>', line]], `Step Over reaches module line ${line}`);
}

/** The watched name's value in the module frame (the bottom of the stack), undefined where it is not set. */
async function moduleValue(name) {
  const frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  const vars = await client.scopeVariables(dc, frames[frames.length - 1].id);
  return vars[name] && vars[name].value;
}

test('on a program given as a parameter: edit and save below the stop, Step Over onto the new line, Break on Value '
  + 'Change where the real run changes the value, History', async () => {
  const target = beyondTarget();
  const program = client.writeProgram(target.name, target.lines);
  await overTo(program, target.breakpoint, target.line);

  // the user inserts a line below the stop and saves (VS Code indents it one level deeper after a ":")
  const above = target.lines[target.line - 1];
  const indent = /^\s*/.exec(above)[0] + (above.trimEnd().endsWith(':') ? '    ' : '');
  const edited = [...target.lines.slice(0, target.line), `${indent}edited = 10`, ...target.lines.slice(target.line)];
  fs.writeFileSync(program, [...edited, ''].join('\n'));
  const said = client.waitForConsole(dc, 'predicted from the edited source');
  const redraw = dc.waitForEvent('stopped');
  await dc.threadsRequest(); // the next request notices the edit
  const text = await said;
  assert.match(text, new RegExp(`${target.name} changed on disk: the stop stays on line ${target.line}`));
  assert.match(text, new RegExp(`breakpoints checked again: ${target.breakpoint + 1}\\)`), 'the breakpoint moved with its line');
  await redraw;
  await client.stepAndStop(dc, (a) => dc.nextRequest(a));
  assert.deepEqual(await where(), [['<module>', target.line + 1]], 'Step Over stops on the inserted line');
  await client.stepAndStop(dc, (a) => dc.nextRequest(a));
  assert.equal((await client.scopeVariables(dc, (await client.topFrame(dc)).id)).edited.value, '10');

  // Break on Value Change on the watched local, then Continue
  const seen = [await moduleValue(target.watch)];
  const frame = await client.topFrame(dc);
  const vars = await client.scopeVariables(dc, frame.id);
  const info = await dc.dataBreakpointInfoRequest({ variablesReference: vars.ref, name: target.watch });
  assert.ok(info.body.dataId, info.body.description);
  await dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: info.body.dataId, accessType: 'write' }] });
  const event = await client.stepAndStop(dc, (a) => dc.continueRequest(a), 'data breakpoint');
  const stop = await where();
  const now = await moduleValue(target.watch);
  assert.match(event.description, new RegExp(`${target.watch}: .+ -> ${now.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  const history = await client.scopeVariables(dc, (await client.topFrame(dc)).id, 'History');
  assert.ok(history[target.watch].value.endsWith(`→ ${now}`), history[target.watch].value);
  await dc.stop();

  // the real run (the edited program from the start, same steps): stepIn until the value changes, there and nowhere earlier
  await overTo(program, target.breakpoint + 1, target.line);
  await client.stepAndStop(dc, (a) => dc.nextRequest(a), null);
  await client.stepAndStop(dc, (a) => dc.nextRequest(a), null);
  assert.equal(await moduleValue(target.watch), seen[0]);
  for (let i = 0; i < 500 && (await moduleValue(target.watch)) === seen[0]; i += 1) {
    await client.stepAndStop(dc, (a) => dc.stepInRequest(a), null);
  }
  assert.deepEqual([await where(), await moduleValue(target.watch)], [stop, now], 'the data breakpoint stopped where the real run changes it');
});
