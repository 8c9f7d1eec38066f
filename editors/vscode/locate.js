// Where the neural debugger's adapter is: the command line that runs `neural-debugger dap`.
//
// `locateAdapter(inputs)` tries, in order, and stops at the first that works:
//   1. the `neuralDebugger.command` setting (a path, or a name on PATH); when set, it is the only
//      candidate: a setting that names nothing is reported, not silently replaced;
//   2. the Python interpreter the user chose (the Python extension's active environment, else
//      `python.defaultInterpreterPath`), run as `<python> -m neural_debugger_cli dap`, but only if
//      that interpreter has the package (checked once per interpreter by importing it);
//   3. the workspace's `.venv` (`.venv/bin/neural-debugger`), and the `.venv` of the repository this
//      extension sits in when it runs from source;
//   4. `neural-debugger` on the PATH the extension host sees.
// It returns `{adapter: {command, args, label} | null, tried: [{what, why}]}`; `tried` says, for
// every candidate looked at, why it was not used (and, for the one used, "used"). No VS Code API
// here: the caller passes the settings and the interpreters, so this runs under plain Node too.
'use strict';

const childProcess = require('child_process');
const fs = require('fs');
const path = require('path');

const IS_WINDOWS = process.platform === 'win32';
const MODULE = 'neural_debugger_cli';
const PROBE = `import ${MODULE}, adapter.cli`; // the dap command and its dependencies
const PROBE_TIMEOUT_MS = 15000;

// interpreter path -> true once it imported the package (failures are checked again next time,
// so installing the package fixes the next F5 without reloading the window).
const probed = new Map();

function isExecutableFile(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch (err) {
    return false;
  }
}

function onPath(name, envPath) {
  // The first executable `name` on `envPath` (a PATH string), or null.
  const exts = IS_WINDOWS ? ['.exe', '.cmd', '.bat', ''] : [''];
  for (const dir of (envPath || '').split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (isExecutableFile(candidate)) {
        return candidate;
      }
    }
  }
  return null;
}

function resolveExecutable(command, envPath) {
  // A command as a user writes it: a path (must exist and be executable) or a bare name on PATH.
  if (command.includes('/') || command.includes('\\')) {
    return isExecutableFile(command) ? command : null;
  }
  return onPath(command, envPath);
}

function probeInterpreter(argv, cwd, envPath) {
  // Whether `argv` (an interpreter and its leading arguments) can import the package:
  // resolves to {ok: true} or {ok: false, why}.
  const key = argv.join('\u0000');
  if (probed.get(key)) {
    return Promise.resolve({ ok: true });
  }
  const executable = resolveExecutable(argv[0], envPath);
  if (!executable) {
    return Promise.resolve({ ok: false, why: argv[0].includes('/') ? 'does not exist or is not executable' : 'is not on PATH' });
  }
  return new Promise((resolve) => {
    const options = { timeout: PROBE_TIMEOUT_MS, windowsHide: true };
    if (cwd && fs.existsSync(cwd)) {
      options.cwd = cwd;
    }
    childProcess.execFile(executable, [...argv.slice(1), '-c', PROBE], options, (err, stdout, stderr) => {
      if (!err) {
        probed.set(key, true);
        resolve({ ok: true });
      } else if (err.killed) {
        resolve({ ok: false, why: `did not answer \`${PROBE}\` within ${PROBE_TIMEOUT_MS / 1000} s` });
      } else {
        const last = String(stderr || err.message).trim().split('\n').pop();
        resolve({ ok: false, why: `does not have the neural-debugger package (${last || 'import failed'})` });
      }
    });
  });
}

function venvCandidates(folders, extensionPath) {
  const roots = [...folders];
  if (extensionPath) {
    roots.push(path.resolve(extensionPath, '..', '..')); // editors/vscode inside the repository
  }
  const exe = IS_WINDOWS ? path.join('.venv', 'Scripts', 'neural-debugger.exe') : path.join('.venv', 'bin', 'neural-debugger');
  return [...new Set(roots.map((root) => path.join(root, exe)))];
}

function substitute(value, folder) {
  return folder ? value.replace(/\$\{workspaceFolder\}/g, folder) : value;
}

/**
 * inputs: {
 *   command: the neuralDebugger.command setting ('' when unset),
 *   interpreters: [{source, argv}] in order (argv: the interpreter and its leading arguments),
 *   interpreterNotes: [{what, why}] for interpreter sources that gave nothing,
 *   folders: workspace folder paths, folder: the session's folder (cwd), extensionPath,
 *   envPath: the PATH to search,
 * }
 */
async function locateAdapter(inputs) {
  const tried = [];
  const folder = inputs.folder || (inputs.folders || [])[0];
  const envPath = inputs.envPath === undefined ? process.env.PATH : inputs.envPath;
  const setting = (inputs.command || '').trim();
  if (setting) {
    const command = substitute(setting, folder);
    const executable = resolveExecutable(command, envPath);
    if (executable) {
      tried.push({ what: `setting neuralDebugger.command = ${setting}`, why: 'used' });
      return { adapter: { command: executable, args: ['dap'], label: executable }, tried };
    }
    tried.push({ what: `setting neuralDebugger.command = ${setting}`,
      why: command.includes('/') || command.includes('\\') ? 'no executable file there' : 'not found on PATH' });
    return { adapter: null, tried };
  }
  tried.push({ what: 'setting neuralDebugger.command', why: 'not set' });

  for (const note of inputs.interpreterNotes || []) {
    tried.push(note);
  }
  for (const interpreter of inputs.interpreters || []) {
    const argv = interpreter.argv.map((part) => substitute(part, folder));
    const what = `${interpreter.source}: ${argv.join(' ')}`;
    const probe = await probeInterpreter(argv, folder, envPath);
    if (probe.ok) {
      tried.push({ what, why: 'used' });
      const args = [...argv.slice(1), '-m', MODULE, 'dap'];
      return { adapter: { command: resolveExecutable(argv[0], envPath), args, label: `${argv.join(' ')} -m ${MODULE}` }, tried };
    }
    tried.push({ what, why: probe.why });
  }

  for (const candidate of venvCandidates(inputs.folders || [], inputs.extensionPath)) {
    if (isExecutableFile(candidate)) {
      tried.push({ what: candidate, why: 'used' });
      return { adapter: { command: candidate, args: ['dap'], label: candidate }, tried };
    }
    tried.push({ what: candidate, why: 'does not exist' });
  }

  const found = onPath('neural-debugger', envPath);
  if (found) {
    tried.push({ what: 'neural-debugger on PATH', why: 'used' });
    return { adapter: { command: found, args: ['dap'], label: found }, tried };
  }
  tried.push({ what: 'neural-debugger on PATH', why: 'not found' });
  return { adapter: null, tried };
}

function describeTried(tried) {
  return tried.map((t, i) => `${i + 1}. ${t.what}: ${t.why}`).join('\n');
}

module.exports = { locateAdapter, describeTried, onPath, resolveExecutable, MODULE };
