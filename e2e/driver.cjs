// Drives a debug session in code-server (VS Code in headless Chromium) and records what VS Code shows.
//
// Usage: node driver.cjs SCENARIO.json OBSERVATIONS.json
// SCENARIO: {url, tapLog, outDir, program, breakpoints: [line], steps: [{action, hover?, console?}],
//            chromium, timeouts: {page, stop, settle}}; action is start | stepIn | next | stepOut |
//            stepBack | continue. After each action the driver waits for the adapter's next `stopped`
//            (or `terminated`) event in the DAP tap log, lets the views settle, then reads the Call
//            Stack and Variables views, takes a screenshot, hovers the asked words and types the
//            asked expressions in the Debug Console.
// OBSERVATIONS: {ok, error, phase, stops: [{action, event, stack, variables, hovers, console,
//                screenshot}], console: [rows], notifications: [text]}. Written even on failure.
// Every wait has a timeout; a failure names what was awaited.
'use strict';

const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-dev-shm-usage'];

class Timeout extends Error {}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(what, timeoutMs, probe, intervalMs = 200) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Timeout(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
    }
    await sleep(intervalMs);
  }
}

function tapEvents(tapLog) {
  // Counts of the adapter's stopped / terminated events so far.
  let text = '';
  try {
    text = fs.readFileSync(tapLog, 'utf8');
  } catch (err) {
    return { stopped: 0, terminated: 0 };
  }
  const counts = { stopped: 0, terminated: 0 };
  for (const line of text.split('\n')) {
    if (!line.includes('"event"')) {
      continue;
    }
    try {
      const entry = JSON.parse(line);
      if (entry.dir === 'out' && entry.msg.type === 'event' && entry.msg.event in counts) {
        counts[entry.msg.event] += 1;
      }
    } catch (err) {
      // a line being written
    }
  }
  return counts;
}

async function tapQuiet(tapLog, quietMs, timeoutMs) {
  // Until the tap log has not grown for quietMs (or timeoutMs has passed).
  const size = () => {
    try {
      return fs.statSync(tapLog).size;
    } catch (err) {
      return -1;
    }
  };
  let last = size();
  let since = Date.now();
  const deadline = Date.now() + timeoutMs;
  while (Date.now() - since < quietMs && Date.now() < deadline) {
    await sleep(100);
    const now = size();
    if (now !== last) {
      last = now;
      since = Date.now();
    }
  }
}

function adapterStack(tapLog) {
  // The call stack the adapter sent for its latest stop ("name line" per frame, from the stackTrace
  // replies after the last stopped event) and its totalFrames; null before any reply.
  let text = '';
  try {
    text = fs.readFileSync(tapLog, 'utf8');
  } catch (err) {
    return null;
  }
  const entries = [];
  for (const line of text.split('\n')) {
    try {
      entries.push(JSON.parse(line));
    } catch (err) {
      // a line being written
    }
  }
  const requests = new Map();
  for (const e of entries) {
    if (e.dir === 'in' && e.msg.type === 'request') {
      requests.set(e.msg.seq, e.msg);
    }
  }
  let stack = null;
  let total = null;
  for (const e of entries) {
    if (e.dir !== 'out') {
      continue;
    }
    if (e.msg.type === 'event' && e.msg.event === 'stopped') {
      stack = null;
      total = null;
    } else if (e.msg.type === 'response' && e.msg.command === 'stackTrace' && e.msg.success && e.msg.body) {
      const request = requests.get(e.msg.request_seq) || {};
      const start = (request.arguments && request.arguments.startFrame) || 0;
      const frames = (e.msg.body.stackFrames || []).map((f) => `${f.name} ${f.line}`);
      stack = (stack || []).slice(0, start).concat(frames);
      total = e.msg.body.totalFrames;
    }
  }
  return stack === null ? null : { stack, total };
}

function adapterDescription(tapLog) {
  // The description of the adapter's latest stopped event (what VS Code shows as the Call Stack's state label).
  let description = null;
  let text = '';
  try {
    text = fs.readFileSync(tapLog, 'utf8');
  } catch (err) {
    return null;
  }
  for (const line of text.split('\n')) {
    if (!line.includes('"stopped"')) {
      continue;
    }
    try {
      const entry = JSON.parse(line);
      if (entry.dir === 'out' && entry.msg.type === 'event' && entry.msg.event === 'stopped') {
        description = (entry.msg.body && entry.msg.body.description) || null;
      }
    } catch (err) {
      // a line being written
    }
  }
  return description;
}

function shownStack(views) {
  // "name line" of each frame row of the Call Stack view (other rows, e.g. "Load More Stack Frames", skipped).
  const frames = [];
  for (const row of views.stack) {
    const m = /^(.+?) (\S+) (\d+):(\d+)$/.exec(row.text);
    if (m) {
      frames.push(`${m[1]} ${m[3]}`);
    }
  }
  return frames;
}

async function readViews(page) {
  return page.evaluate(() => {
    const squash = (t) => (t || '').replace(/\s+/g, ' ').trim();
    const rows = (selector) => Array.from(document.querySelectorAll(selector)).map((row) => {
      // The parts VS Code renders: "name =" (or "name: " then "type =" with debug.showVariableTypes) and the value.
      const part = (sel) => {
        const el = row.querySelector(sel);
        return el ? squash(el.textContent) : null;
      };
      const nameEl = row.querySelector('.expression .name');
      return { text: squash(row.innerText), aria: row.getAttribute('aria-label') || '',
        level: Number(row.getAttribute('aria-level') || 0), name: part('.expression .name'),
        type: part('.expression .type'), value: part('.expression .value'),
        title: nameEl ? (nameEl.getAttribute('title') || '') : '' };
    });
    const stack = Array.from(document.querySelectorAll('.debug-call-stack .monaco-list-row')).map((row) => {
      const part = (sel) => {
        const el = row.querySelector(sel);
        return el ? el.textContent.trim() : '';
      };
      return { text: row.innerText.replace(/\s+/g, ' ').trim(), aria: row.getAttribute('aria-label') || '',
        name: part('.stack-frame .label, .stack-frame .expression'), file: part('.file-name'),
        position: part('.line-number'), state: part('.state.label') };
    });
    // With one thread VS Code shows the stopped event's description in the Call Stack's title bar.
    const state = document.querySelector('.call-stack-state-message');
    const stackState = state && !state.hidden ? squash(state.textContent) : '';
    return { stack, stackState, variables: rows('.debug-variables .monaco-list-row') };
  });
}

async function settledViews(page, timeoutMs) {
  // The views once two reads 400 ms apart agree (and the Call Stack shows something).
  let last = JSON.stringify(await readViews(page));
  let stableSince = Date.now();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await sleep(200);
    const views = await readViews(page);
    const now = JSON.stringify(views);
    if (now !== last) {
      last = now;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= 600 && views.stack.length > 0) {
      return views;
    }
    if (Date.now() > deadline) {
      return views;
    }
  }
}

async function runCommand(page, label, timeoutMs) {
  // Run a command through the Command Palette by its label.
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: timeoutMs });
  await input.fill('>' + label);
  await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: timeoutMs });
  await sleep(300);
  await page.keyboard.press('Enter');
}

async function openFile(page, name, timeoutMs) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: timeoutMs });
  await input.fill(name);
  await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: timeoutMs });
  await sleep(300);
  await page.keyboard.press('Enter');
  await page.locator(`.tab[aria-label*="${name}"]`).first().waitFor({ timeout: timeoutMs });
  await page.locator('.editor-instance .monaco-editor .view-lines').first().waitFor({ timeout: timeoutMs });
}

async function setBreakpoint(page, line, timeoutMs) {
  const before = await page.locator('.monaco-editor .codicon-debug-breakpoint').count();
  await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: timeoutMs });
  await input.fill(':' + String(line)); // Go to Line's own prefix
  await sleep(200);
  await page.keyboard.press('Enter');
  await sleep(300);
  await page.keyboard.press('F9');
  await waitFor(`the breakpoint glyph on line ${line}`, timeoutMs,
    async () => (await page.locator('.monaco-editor .codicon-debug-breakpoint').count()) > before);
}

async function wordPosition(page, lineText, word) {
  // Centre of `word` on the visible editor line whose text is `lineText` (null if not visible).
  return page.evaluate(({ lineText, word }) => {
    const norm = (s) => s.replace(/\u00a0/g, ' ');
    for (const line of document.querySelectorAll('.editor-instance .monaco-editor .view-line')) {
      const text = norm(line.textContent);
      if (lineText !== null && text.trimEnd() !== lineText.trimEnd()) {
        continue;
      }
      const re = new RegExp(`\\b${word}\\b`);
      const match = re.exec(text);
      if (!match) {
        if (lineText === null) {
          continue; // any visible line that has the word
        }
        return null;
      }
      const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
      let offset = 0;
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const len = node.textContent.length;
        if (match.index >= offset && match.index < offset + len) {
          const range = document.createRange();
          const start = match.index - offset;
          range.setStart(node, start);
          range.setEnd(node, Math.min(len, start + word.length));
          const rect = range.getBoundingClientRect();
          return { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 };
        }
        offset += len;
      }
    }
    return null;
  }, { lineText, word });
}

async function readHover(page, spec, timeoutMs) {
  // The text of the debug hover widget once it shows a value (throws on timeout).
  const widget = page.locator('.debug-hover-widget');
  await widget.first().waitFor({ state: 'visible', timeout: timeoutMs });
  return waitFor(`the debug hover of ${spec.word} to show a value`, timeoutMs, async () => {
    const t = (await widget.first().innerText()).replace(/\s+/g, ' ').trim();
    return t.length > 0 ? t : null;
  });
}

async function hover(page, spec, timeoutMs) {
  // First as a user does, with the mouse: one move onto the word. VS Code drops a hover now and
  // then (a second mouse move while its evaluate is in flight cancels it and nothing shows), so
  // the later tries put the cursor on the word and run "Debug: Show Hover", the keyboard route
  // to the same widget and the same `evaluate` request with context "hover".
  let lastError = null;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    await page.keyboard.press('Escape');
    await page.mouse.move(5, 5);
    await sleep(400 + 600 * attempt);
    const where = spec.lineText === null ? 'a visible editor line' : `the editor line "${spec.lineText.trim()}"`;
    const pos = await waitFor(`the word ${spec.word} on ${where}`, timeoutMs,
      () => wordPosition(page, spec.lineText, spec.word));
    try {
      if (attempt === 0) {
        await page.mouse.move(pos.x, pos.y);
      } else {
        await page.mouse.click(pos.x, pos.y);
        await page.mouse.move(5, 5);
        await runCommand(page, 'Debug: Show Hover', timeoutMs);
      }
      const text = await readHover(page, spec, timeoutMs / 2);
      return { word: spec.word, line: spec.line, text, attempts: attempt + 1, route: attempt === 0 ? 'mouse' : 'command' };
    } catch (err) {
      lastError = err;
    }
  }
  throw new Timeout(`no debug hover for ${spec.word} after 3 tries (${lastError.message.split('\n')[0]})`);
}

function lowConfidenceLocals(variables) {
  // Names of the Locals rows VS Code shows marked as low confidence (their type ends "NN% sure").
  const names = [];
  let inLocals = false;
  for (const row of variables) {
    if (row.level === 1) {
      inLocals = row.text.split(' ')[0] === 'Locals';
    } else if (inLocals && row.level === 2 && row.type && /% sure/.test(row.type) && row.name) {
      const name = row.name.replace(/(:| =)$/, '').trim();
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        names.push(name);
      }
    }
  }
  return names;
}

async function goToLine(page, line, timeoutMs) {
  await focusEditor(page, timeoutMs);
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: timeoutMs });
  await input.fill(':' + String(line));
  await sleep(200);
  await page.keyboard.press('Enter');
  await sleep(300);
}

async function hoverLowConfidence(page, names, blankLine, timeoutMs, shot) {
  // Hover the first low-confidence local visible in the editor; wait for the model's alternatives
  // (the hover's children, generated on demand) to show. When the program shows none of the names
  // (the model predicted a local the code does not name where it is visible), type the first one on
  // a blank line of the program (not saved), hover it there, and revert the file. Null when there is no name.
  let typed = null;
  let word = null;
  for (const name of names) {
    if (await wordPosition(page, null, name)) {
      word = name;
      break;
    }
  }
  if (word === null && names.length > 0 && blankLine) {
    word = names[0];
    await goToLine(page, blankLine, timeoutMs);
    await page.keyboard.type(word);
    await sleep(300);
    await page.keyboard.press('Escape'); // a word suggestion, if one opened
    typed = word;
    if ((await page.locator('.tab.dirty').count()) === 0) {
      throw new Error(`typing ${word} on line ${blankLine} did not mark the program edited (saved? files.autoSave must be off)`);
    }
  }
  if (word === null) {
    return null;
  }
  try {
    const seen = await hover(page, { word, line: typed ? blankLine : 0, lineText: typed }, timeoutMs);
    const widget = page.locator('.debug-hover-widget').first();
    await waitFor(`the alternatives in the hover of ${word}`, timeoutMs,
      async () => /alternative \d/.test(await widget.innerText())).catch(() => {});
    await sleep(500);
    seen.text = (await widget.innerText()).replace(/\s+/g, ' ').trim();
    seen.low = true;
    seen.typed = typed !== null;
    await page.screenshot({ path: shot(word) });
    return seen;
  } finally {
    if (typed !== null) {
      await page.keyboard.press('Escape');
      await focusEditor(page, timeoutMs);
      await runCommand(page, 'File: Revert File', timeoutMs); // back to the program on disk, not edited
      await waitFor(`the program to be reverted after typing ${typed}`, timeoutMs,
        async () => (await page.locator('.tab.dirty').count()) === 0);
      await focusEditor(page, timeoutMs);
    }
  }
}

async function expandLocal(page, name, timeoutMs) {
  // Expand the Locals row of `name` (its twistie) and wait for the model's alternatives under it.
  const clicked = await page.evaluate((name) => {
    for (const row of document.querySelectorAll('.debug-variables .monaco-list-row[aria-level="2"]')) {
      const el = row.querySelector('.expression .name');
      if (el && el.textContent.trim().replace(/(:| =)$/, '').trim() === name) {
        const twistie = row.querySelector('.monaco-tl-twistie');
        (twistie || row).dispatchEvent(new MouseEvent('click', { bubbles: true }));
        return true;
      }
    }
    return false;
  }, name);
  if (!clicked) {
    return null;
  }
  await waitFor(`the alternatives under ${name} in the Variables view`, timeoutMs, async () => {
    const rows = (await readViews(page)).variables;
    return rows.some((row) => row.level === 3 && /^alternative \d/.test(row.text));
  }).catch(() => {});
  return (await settledViews(page, 3000)).variables;
}

function tapCount(tapLog, command) {
  // How many successful responses to `command` the adapter has sent so far.
  let text = '';
  try {
    text = fs.readFileSync(tapLog, 'utf8');
  } catch (err) {
    return 0;
  }
  let count = 0;
  for (const line of text.split('\n')) {
    if (!line.includes(`"${command}"`)) {
      continue;
    }
    try {
      const entry = JSON.parse(line);
      count += entry.dir === 'out' && entry.msg.type === 'response' && entry.msg.command === command && entry.msg.success ? 1 : 0;
    } catch (err) {
      // a line being written
    }
  }
  return count;
}

async function breakOnValueChange(page, name, tapLog, timeoutMs) {
  // Right-click the Locals row of `name` -> "Break on Value Change" (VS Code shows the item when the
  // adapter's dataBreakpointInfo gives a dataId), then wait for VS Code's setDataBreakpoints to be answered.
  const before = tapCount(tapLog, 'setDataBreakpoints');
  const row = page.locator('.debug-variables .monaco-list-row[aria-level="2"]')
    .filter({ has: page.locator('.expression .name', { hasText: new RegExp(`^\\s*${name}\\s*(:|=)?\\s*$`) }) }).first();
  await row.click({ button: 'right', timeout: timeoutMs });
  const item = page.getByRole('menuitem', { name: 'Break on Value Change' }).first();
  await item.waitFor({ state: 'visible', timeout: timeoutMs });
  await item.click();
  // A click that lands while the menu is still settling can be dropped (the menu stays open, the item
  // highlighted): while the menu is open and nothing was sent, choose the item again every 2 s, by
  // keyboard (Enter) and by mouse in turn.
  let lastClick = Date.now();
  let retries = 0;
  await waitFor(`the adapter's answer to setDataBreakpoints after Break on Value Change on ${name}`, timeoutMs,
    async () => {
      if (tapCount(tapLog, 'setDataBreakpoints') > before) {
        return true;
      }
      if (Date.now() - lastClick > 2000 && (await item.isVisible())) {
        retries += 1;
        const choose = retries % 2 ? item.press('Enter', { timeout: 2000 }) : item.click({ timeout: 2000 });
        await choose.catch(() => {});
        lastClick = Date.now();
      }
      return false;
    });
  return name;
}

async function expandScope(page, scope, timeoutMs) {
  // Expand the Variables view's scope row `scope` (unless it is) and return the view's rows once its variables show.
  const row = page.locator('.debug-variables .monaco-list-row[aria-level="1"]', { hasText: scope }).first();
  await row.waitFor({ state: 'visible', timeout: timeoutMs });
  if ((await row.getAttribute('aria-expanded')) !== 'true') {
    await row.locator('.monaco-tl-twistie').first().click();
  }
  await waitFor(`the variables of the ${scope} scope`, timeoutMs, async () => {
    const rows = (await readViews(page)).variables;
    const at = rows.findIndex((r) => r.level === 1 && r.text.split(' ')[0] === scope);
    return at >= 0 && rows[at + 1] && rows[at + 1].level === 2;
  });
  return (await settledViews(page, 3000)).variables;
}

async function replRows(page) {
  return page.evaluate(() => Array.from(document.querySelectorAll('.repl .monaco-list-row'))
    .map((row) => row.innerText.replace(/\s+/g, ' ').trim()));
}

async function typeInConsole(page, expression, timeoutMs) {
  await runCommand(page, 'Debug Console: Focus on Debug Console View', timeoutMs);
  const input = page.locator('.repl-input-wrapper .monaco-editor').first();
  await input.waitFor({ state: 'visible', timeout: timeoutMs });
  await input.click();
  const before = (await replRows(page)).length;
  await page.keyboard.type(expression);
  await page.keyboard.press('Enter');
  // The echo of the expression and its result: two new rows.
  const rows = await waitFor(`the Debug Console to answer ${expression}`, timeoutMs, async () => {
    const now = await replRows(page);
    return now.length >= before + 2 ? now : null;
  });
  await sleep(300);
  const after = await replRows(page);
  return { expression, rows: after.slice(before), all: after.length > rows.length ? after : rows };
}

async function notifications(page) {
  return page.evaluate(() => Array.from(document.querySelectorAll('.notifications-toasts .notification-list-item-message, .notifications-center .notification-list-item-message'))
    .map((el) => el.innerText.trim()));
}

async function focusEditor(page, timeoutMs) {
  await page.locator('.editor-instance .monaco-editor textarea').first().focus({ timeout: timeoutMs });
}

async function editAndSave(page, edit, timeoutMs) {
  // As a user edits: Go to Line, End, Enter (VS Code indents the new line), type the text, save (Ctrl+S).
  // Below the line the session stands on when the scenario names none (a model's stop is its prediction).
  await goToLine(page, edit.after, timeoutMs);
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await page.keyboard.type(edit.text);
  await sleep(300);
  await page.keyboard.press('Escape'); // a word suggestion, if one opened
  await waitFor('the edited program to show as unsaved', timeoutMs, async () => (await page.locator('.tab.dirty').count()) > 0);
  await page.keyboard.press('Control+S');
  await waitFor('the edited program to be saved', timeoutMs, async () => (await page.locator('.tab.dirty').count()) === 0);
}

async function pressAction(page, action, timeoutMs) {
  const keys = { start: 'F5', continue: 'F5', next: 'F10', stepIn: 'F11', stepOut: 'Shift+F11' };
  if (action === 'stepBack') {
    const button = page.locator('.debug-toolbar .codicon-debug-step-back').first();
    await button.waitFor({ state: 'visible', timeout: timeoutMs });
    await button.click();
    return;
  }
  if (!(action in keys)) {
    throw new Error(`unknown action ${action}`);
  }
  if (action !== 'start') {
    // Keys go to the workbench; the editor is the safest focus (the console input would take F-keys too).
    // Focus its input rather than click: a click lands wherever the editor has scrolled to.
    await focusEditor(page, timeoutMs);
  }
  await page.keyboard.press(keys[action]);
}

async function main() {
  const [scenarioPath, outPath] = process.argv.slice(2);
  const scenario = JSON.parse(fs.readFileSync(scenarioPath, 'utf8'));
  const t = Object.assign({ page: 120000, stop: 60000, settle: 8000, ui: 15000 }, scenario.timeouts || {});
  const result = { ok: false, error: null, phase: 'launch chromium', stops: [], console: [], notifications: [] };
  const save = () => fs.writeFileSync(outPath, JSON.stringify(result, null, 2));
  let browser = null;
  let page = null;
  try {
    browser = await chromium.launch({ executablePath: scenario.chromium, args: CHROMIUM_ARGS, timeout: 60000 });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    page.setDefaultTimeout(t.ui);
    result.phase = 'open the workspace in code-server';
    await page.goto(scenario.url, { timeout: t.page });
    await page.locator('.monaco-workbench').waitFor({ timeout: t.page });
    await page.locator('.explorer-folders-view, .explorer-viewlet').first().waitFor({ timeout: t.page });
    await sleep(1500);

    result.phase = `open ${scenario.program}`;
    await openFile(page, scenario.program, t.ui);
    for (const line of scenario.breakpoints || []) {
      result.phase = `set a breakpoint on line ${line}`;
      await setBreakpoint(page, line, t.ui);
    }
    result.phase = 'open Run and Debug';
    await page.keyboard.press('Control+Shift+D');
    await page.locator('.debug-view-content, .debug-pane, .debug-viewlet').first().waitFor({ timeout: t.ui }).catch(() => {});
    if (scenario.consoleOpen) {
      result.phase = 'open the Debug Console';
      await runCommand(page, 'Debug Console: Focus on Debug Console View', t.ui);
      await page.locator('.repl').first().waitFor({ timeout: t.ui });
      await focusEditor(page, t.ui);
    }

    if (scenario.expectNotification) {
      // No session should start: F5, then VS Code must show the extension's error notification.
      result.phase = 'F5, waiting for the error notification';
      await pressAction(page, 'start', t.ui);
      await waitFor(`a notification saying "${scenario.expectNotification}"`, t.stop,
        async () => (await notifications(page)).some((text) => text.includes(scenario.expectNotification)));
      await sleep(1000);
      result.notifications = await notifications(page);
      result.sessionStarted = await page.locator('.debug-toolbar').first().isVisible().catch(() => false);
      result.sessionStarted = result.sessionStarted || tapEvents(scenario.tapLog).stopped > 0;
      await page.screenshot({ path: path.join(scenario.outDir, 'notification.png') });
      result.ok = true;
      result.phase = 'done';
      return;
    }

    for (const [index, step] of scenario.steps.entries()) {
      result.phase = `step ${index} (${step.action})`;
      const before = tapEvents(scenario.tapLog);
      let editedAfter = null;
      if (step.action === 'edit') {
        // Saving sends the breakpoints VS Code moved with the edit; the adapter sees the file changed and redraws the stop.
        const here = (adapterStack(scenario.tapLog) || { stack: [] }).stack;
        const after = step.edit.after || Number((/ (\d+)$/.exec(here[0] || '') || [])[1]);
        editedAfter = after;
        await editAndSave(page, { ...step.edit, after }, t.ui);
      } else {
        await pressAction(page, step.action, t.ui);
      }
      const what = step.action === 'start'
        ? 'the debug session to stop on entry (the neural adapter\'s first stopped event)'
        : `the adapter's answer to ${step.action} (a stopped or terminated event)`;
      const after = await waitFor(what, step.action === 'start' ? t.page : t.stop, async () => {
        const now = tapEvents(scenario.tapLog);
        return (now.stopped > before.stopped || now.terminated > before.terminated) ? now : null;
      });
      const event = after.stopped > before.stopped ? 'stopped' : 'terminated';
      const stop = { action: step.action, event, stack: [], variables: [], hovers: [], console: [], screenshot: null };
      if (editedAfter !== null) {
        stop.editedAfter = editedAfter; // the line the edit went below
      }
      result.stops.push(stop);
      if (event === 'stopped') {
        // VS Code asks for the stack in parts and re-renders later: wait until it has stopped asking
        // (the tap log is quiet), then until the Call Stack shows what the adapter sent (VS Code
        // first shows the new top frame over the previous stop's rows), then until the views are stable.
        await tapQuiet(scenario.tapLog, 1000, t.settle);
        const sent = adapterStack(scenario.tapLog);
        if (sent) {
          await waitFor('the Call Stack view to show the adapter\'s frames', t.settle,
            async () => JSON.stringify(shownStack(await readViews(page))) === JSON.stringify(sent.stack)).catch(() => {});
        }
        const label = adapterDescription(scenario.tapLog);
        if (label) { // a stop on the same line as the one before shows the same rows: wait for its new state label too
          await waitFor('the Call Stack\'s state label to show the adapter\'s description', t.settle,
            async () => (await readViews(page)).stackState === label.replace(/\s+/g, ' ').trim()).catch(() => {});
        }
        const views = await settledViews(page, t.settle);
        stop.stack = views.stack;
        stop.stackState = views.stackState;
        stop.variables = views.variables;
      } else {
        // The session ended: VS Code drops its Call Stack rows once it has disconnected.
        await waitFor('the Call Stack view to empty after the session ended', t.settle,
          async () => shownStack(await readViews(page)).length === 0).catch(() => {});
        const views = await readViews(page);
        stop.stack = views.stack;
        stop.variables = views.variables;
      }
      if (scenario.consoleOpen) {
        // The Debug Console draws only the rows in view: keep every row seen at any stop.
        const seen = new Set(result.consoleSeen || []);
        (await replRows(page)).forEach((row) => seen.add(row));
        result.consoleSeen = [...seen];
      }
      stop.screenshot = path.join(scenario.outDir, `stop-${String(index).padStart(2, '0')}-${step.action}.png`);
      await page.screenshot({ path: stop.screenshot });
      for (const spec of step.hover || []) {
        result.phase = `hover ${spec.word} at step ${index}`;
        stop.hovers.push(await hover(page, spec, t.ui));
        await page.screenshot({ path: path.join(scenario.outDir, `stop-${String(index).padStart(2, '0')}-hover-${spec.word}.png`) });
      }
      await page.mouse.move(5, 5);
      for (const name of event === 'stopped' ? step.watch || [] : []) {
        result.phase = `Break on Value Change on ${name} at step ${index}`;
        stop.watched = (stop.watched || []).concat([await breakOnValueChange(page, name, scenario.tapLog, t.ui)]);
        await page.keyboard.press('Escape');
      }
      if (event === 'stopped' && step.history) {
        result.phase = `expand the History scope at step ${index}`;
        stop.history = await expandScope(page, 'History', t.ui);
        await page.screenshot({ path: path.join(scenario.outDir, `stop-${String(index).padStart(2, '0')}-history.png`) });
      }
      const low = event === 'stopped' && scenario.expandLow && !result.expandedLow ? lowConfidenceLocals(stop.variables) : [];
      if (low.length > 0) {
        // The first low-confidence local: `?name` in the Debug Console, then its row expanded (the model's
        // alternatives; after the console, whose evaluation makes VS Code ask for the variables again).
        result.phase = `type ?${low[0]} in the Debug Console at step ${index}`;
        result.expandedLow = low[0];
        stop.console.push(await typeInConsole(page, '?' + low[0], t.ui));
        await focusEditor(page, t.ui);
        await tapQuiet(scenario.tapLog, 1000, t.settle);
        await settledViews(page, t.settle);
        result.phase = `expand the low-confidence ${low[0]} at step ${index}`;
        const rows = await expandLocal(page, low[0], t.ui);
        if (rows) {
          stop.expanded = { name: low[0], variables: rows };
          await page.mouse.move(5, 5);
          await page.screenshot({ path: path.join(scenario.outDir, `stop-${String(index).padStart(2, '0')}-alternatives.png`) });
        }
      }
      if (event === 'stopped' && (result.lowHovers || 0) < (scenario.hoverLow || 0)) {
        result.phase = `hover a low-confidence local at step ${index}`;
        const seen = await hoverLowConfidence(page, lowConfidenceLocals(stop.variables), scenario.blankLine, t.ui,
          (word) => path.join(scenario.outDir, `stop-${String(index).padStart(2, '0')}-hover-${word}.png`));
        if (seen) {
          stop.hovers.push(seen);
          result.lowHovers = (result.lowHovers || 0) + 1;
        }
      }
      await page.mouse.move(5, 5);
      for (const expression of step.console || []) {
        result.phase = `type ${expression} in the Debug Console at step ${index}`;
        stop.console.push(await typeInConsole(page, expression, t.ui));
        await page.screenshot({ path: path.join(scenario.outDir, `stop-${String(index).padStart(2, '0')}-console.png`) });
      }
      save();
      if (event === 'terminated' && index < scenario.steps.length - 1) {
        result.endedEarly = `the session ended after step ${index} (${step.action}); ${scenario.steps.length - 1 - index} steps not run`;
        break;
      }
    }
    result.phase = 'read the Debug Console';
    if (scenario.readConsoleAtEnd) {
      await runCommand(page, 'Debug Console: Focus on Debug Console View', t.ui);
      await sleep(1000);
      await page.screenshot({ path: path.join(scenario.outDir, 'console-at-end.png') });
    }
    result.console = await replRows(page);
    result.notifications = await notifications(page);
    result.ok = true;
    result.phase = 'done';
  } catch (err) {
    result.error = `${err.name === 'TimeoutError' || err instanceof Timeout ? 'timeout' : 'error'} during ${result.phase}: ${err.message.split('\n')[0]}`;
    if (page) {
      try {
        await page.screenshot({ path: path.join(scenario.outDir, 'failure.png'), timeout: 10000 });
        result.console = await replRows(page);
        result.notifications = await notifications(page);
      } catch (err2) {
        // the page is gone
      }
    }
  } finally {
    save();
    if (browser) {
      await browser.close().catch(() => {});
    }
  }
  process.exit(result.ok ? 0 : 1);
}

main().catch((err) => {
  console.error(`driver: ${err.stack || err}`);
  process.exit(2);
});
