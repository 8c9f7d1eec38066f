// The VS Code side of the neural debugger: starts `neural-debugger dap` for `neural` sessions.
//
// launch: a DebugAdapterExecutable running the adapter on stdio, found by `locate.js` (the
//   `neuralDebugger.command` setting; the Python interpreter selected in the Python extension, or
//   `python.defaultInterpreterPath`, as `<python> -m neural_debugger_cli dap`; the workspace's
//   `.venv`; `neural-debugger` on PATH). When none is found the session does not start and an
//   error notification says what was tried and how to fix it; an adapter that fails to start or
//   exits before answering is reported the same way (a tracker watches every session).
// attach (or any configuration with `debugServer`): a DebugAdapterServer connecting to a running
//   `neural-debugger dap --port N` on `host` (127.0.0.1 by default).
'use strict';

const fs = require('fs');
const path = require('path');
const vscode = require('vscode');
const { locateAdapter, describeTried, MODULE } = require('./locate');

const PYTHON_EXTENSION = 'ms-python.python';
const API_TIMEOUT_MS = 10000;
const FIX = 'Fix: install the neural-debugger package into the Python you use (`pip install PATH-OF-A-CLONE`, '
  + 'or `make setup` in a clone) and select that interpreter, or set neuralDebugger.command to the path of `neural-debugger`.';

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([Promise.resolve(promise), timeout]).finally(() => clearTimeout(timer));
}

async function pythonInterpreters(folderUri) {
  // The interpreters the user chose, in order: the Python extension's, then python.defaultInterpreterPath.
  const interpreters = [];
  const notes = [];
  const extension = vscode.extensions.getExtension(PYTHON_EXTENSION);
  if (!extension) {
    notes.push({ what: `Python extension (${PYTHON_EXTENSION})`, why: 'not installed' });
  } else {
    try {
      const api = extension.isActive ? extension.exports : await withTimeout(extension.activate(), API_TIMEOUT_MS, 'the Python extension');
      const environments = api && api.environments;
      if (environments && typeof environments.getActiveEnvironmentPath === 'function') {
        const active = environments.getActiveEnvironmentPath(folderUri);
        const resolved = await withTimeout(environments.resolveEnvironment(active), API_TIMEOUT_MS, 'the Python extension');
        const uri = resolved && resolved.executable && resolved.executable.uri;
        if (uri) {
          interpreters.push({ source: 'interpreter selected in the Python extension', argv: [uri.fsPath] });
        } else {
          notes.push({ what: `interpreter selected in the Python extension (${active && active.path})`, why: 'no Python executable found for it' });
        }
      } else if (api && api.settings && typeof api.settings.getExecutionDetails === 'function') {
        const exec = api.settings.getExecutionDetails(folderUri).execCommand;
        if (exec && exec.length) {
          interpreters.push({ source: 'interpreter selected in the Python extension', argv: exec });
        } else {
          notes.push({ what: 'interpreter selected in the Python extension', why: 'none selected' });
        }
      } else {
        notes.push({ what: `Python extension (${PYTHON_EXTENSION})`, why: 'its API offers neither environments nor settings.getExecutionDetails' });
      }
    } catch (err) {
      notes.push({ what: `Python extension (${PYTHON_EXTENSION})`, why: `failed: ${err.message}` });
    }
  }
  const configured = vscode.workspace.getConfiguration('python', folderUri).get('defaultInterpreterPath');
  if (configured) {
    if (!interpreters.some((i) => i.argv.length === 1 && i.argv[0] === configured)) {
      interpreters.push({ source: 'setting python.defaultInterpreterPath', argv: [configured] });
    }
  } else if (!interpreters.length) {
    notes.push({ what: 'setting python.defaultInterpreterPath', why: 'not set' });
  }
  return { interpreters, notes };
}

function extensionRepository(extensionPath) {
  // The clone this extension runs from (editors/vscode inside it), if it does.
  const root = path.resolve(extensionPath, '..', '..');
  return fs.existsSync(path.join(root, 'pyproject.toml')) ? extensionPath : undefined;
}

async function findAdapter(folder, extensionPath) {
  const folderUri = folder ? folder.uri : undefined;
  const { interpreters, notes } = await pythonInterpreters(folderUri);
  return locateAdapter({
    command: vscode.workspace.getConfiguration('neuralDebugger', folderUri).get('command') || '',
    interpreters,
    interpreterNotes: notes,
    folders: (vscode.workspace.workspaceFolders || []).map((f) => f.uri.fsPath),
    folder: folder ? folder.uri.fsPath : undefined,
    extensionPath: extensionRepository(extensionPath),
  });
}

class Reporter {
  // Error notifications with the whole story in the "Neural Debugger" output channel.
  constructor() {
    this.channel = vscode.window.createOutputChannel('Neural Debugger');
  }

  error(summary, details) {
    this.channel.appendLine(`[${new Date().toISOString()}] ${summary}`);
    if (details) {
      this.channel.appendLine(details);
    }
    vscode.window.showErrorMessage(summary, 'Open Settings', 'Show Details').then((choice) => {
      if (choice === 'Open Settings') {
        vscode.commands.executeCommand('workbench.action.openSettings', 'neuralDebugger.command');
      } else if (choice === 'Show Details') {
        this.channel.show(true);
      }
    });
  }

  notFound(tried) {
    const list = tried.map((t, i) => `${i + 1}. ${t.what}: ${t.why}`).join('; ');
    this.error(`Neural Debugger: no adapter found to run \`neural-debugger dap\`. Tried: ${list}. ${FIX}`,
      `Tried, in order:\n${describeTried(tried)}\n${FIX}\nPATH seen by VS Code: ${process.env.PATH || ''}`);
  }
}

class NeuralAdapterFactory {
  constructor(extensionPath, reporter, started) {
    this.extensionPath = extensionPath;
    this.reporter = reporter;
    this.started = started; // session id -> label of the adapter command started for it
  }

  async createDebugAdapterDescriptor(session) {
    const config = session.configuration;
    const host = config.host || '127.0.0.1';
    if (config.debugServer) {
      return new vscode.DebugAdapterServer(Number(config.debugServer), host);
    }
    if (config.request === 'attach') {
      if (!config.port) {
        throw new Error('a neural attach configuration needs "port": the port of `neural-debugger dap --port N`');
      }
      return new vscode.DebugAdapterServer(Number(config.port), host);
    }
    const { adapter, tried } = await findAdapter(session.workspaceFolder, this.extensionPath);
    if (!adapter) {
      this.reporter.notFound(tried);
      throw new Error('Neural Debugger: no adapter found (see the notification or the "Neural Debugger" output)');
    }
    this.started.set(session.id, `${adapter.command} ${adapter.args.join(' ')}`);
    const folder = session.workspaceFolder ? session.workspaceFolder.uri.fsPath : undefined;
    return new vscode.DebugAdapterExecutable(adapter.command, adapter.args, folder ? { cwd: folder } : {});
  }
}

class StartWatch {
  // Reports an adapter that could not be started or exited before answering VS Code.
  constructor(session, reporter, started) {
    this.session = session;
    this.reporter = reporter;
    this.started = started;
    this.answered = false;
    this.reported = false;
  }

  onDidSendMessage() {
    this.answered = true;
  }

  report(what) {
    if (this.reported) {
      return;
    }
    this.reported = true;
    const command = this.started.get(this.session.id) || 'the neural-debugger adapter';
    this.reporter.error(`Neural Debugger: the adapter \`${command}\` ${what}. Run that command in a terminal to see why; `
      + `to use another adapter, set neuralDebugger.command. ${FIX}`);
  }

  onError(error) {
    // A failed spawn, or the pipe breaking because the process exited: give onExit (which knows the
    // exit code) a moment to tell the story first.
    if (!this.answered && !this.reported) {
      const why = error && error.message ? error.message : String(error);
      setTimeout(() => this.report(`could not be started or stopped answering (${why})`), 1500);
    }
  }

  onExit(code, signal) {
    if (!this.answered) {
      this.report(`exited before answering VS Code (${signal ? `signal ${signal}` : `exit code ${code}`})`);
    }
    this.started.delete(this.session.id);
  }
}

class NeuralConfigurationProvider {
  constructor(extensionPath, reporter) {
    this.extensionPath = extensionPath;
    this.reporter = reporter;
  }

  // F5 without a launch.json: step through the active Python file.
  resolveDebugConfiguration(folder, config) {
    if (!config.type && !config.request && !config.name) {
      const editor = vscode.window.activeTextEditor;
      if (editor && editor.document.languageId === 'python') {
        config.type = 'neural';
        config.name = 'Neural: step through current file';
        config.request = 'launch';
        config.program = '${file}';
        config.stopOnEntry = true;
      }
    }
    if (config.request !== 'attach' && !config.program) {
      return vscode.window.showInformationMessage('Open a Python file (or set "program") to step through it.').then(() => undefined);
    }
    return config;
  }

  // Before the session starts: a launch without an adapter to run stops here, with the notification
  // (returning undefined ends the launch quietly, so VS Code adds no dialog of its own).
  async resolveDebugConfigurationWithSubstitutedVariables(folder, config) {
    if (config.request === 'attach' || config.debugServer) {
      return config;
    }
    const { adapter, tried } = await findAdapter(folder, this.extensionPath);
    if (!adapter) {
      this.reporter.notFound(tried);
      return undefined;
    }
    return config;
  }
}

function activate(context) {
  const reporter = new Reporter();
  const started = new Map();
  context.subscriptions.push(
    reporter.channel,
    vscode.debug.registerDebugAdapterDescriptorFactory('neural', new NeuralAdapterFactory(context.extensionPath, reporter, started)),
    vscode.debug.registerDebugConfigurationProvider('neural', new NeuralConfigurationProvider(context.extensionPath, reporter)),
    vscode.debug.registerDebugAdapterTrackerFactory('neural', {
      createDebugAdapterTracker(session) {
        const config = session.configuration;
        return config.request === 'attach' || config.debugServer ? undefined : new StartWatch(session, reporter, started);
      },
    }),
    vscode.commands.registerCommand('neuralDebugger.predictBefore', predictBefore),
    vscode.debug.onDidReceiveDebugSessionCustomEvent((event) => {
      if (event.session.type === 'neural' && event.event === 'neuralComparisonSummary' && event.body) {
        const s = event.body;
        vscode.window.showInformationMessage(`Neural vs debugpy: ${s.matched}/${s.stops} stops matched.`);
      }
    }),
  );
}

const BEFORE_KINDS = [
  { label: 'inv_step_call', description: 'the call that led here: the function\'s first stop, its arguments' },
  { label: 'inv_step_over', description: 'the previous line of this function' },
  { label: 'inv_step_into', description: 'the previous stop, wherever it was' },
];

/** "Neural: predict how we got here": the inverse model predicts an earlier stop (custom request neuralPredictBefore). */
async function predictBefore() {
  const session = vscode.debug.activeDebugSession;
  if (!session || session.type !== 'neural') {
    vscode.window.showWarningMessage('Neural: start a neural debug session and stop somewhere first.');
    return;
  }
  const kind = await vscode.window.showQuickPick(BEFORE_KINDS, { placeHolder: 'Predict which earlier stop?' });
  if (!kind) return;
  try {
    await session.customRequest('neuralPredictBefore', { kind: kind.label });
  } catch (err) {
    vscode.window.showErrorMessage(`Neural: ${err && err.message ? err.message : err}`);
  }
}

function deactivate() {}

module.exports = { activate, deactivate, findAdapter, NeuralAdapterFactory, MODULE };
