// The VS Code side of the neural debugger: starts `neural-debugger dap` for `neural` sessions.
//
// launch: a DebugAdapterExecutable running `<command> dap` on stdio, where <command> is the
//   `neuralDebugger.command` setting, else the workspace's .venv/bin/neural-debugger (or the one of
//   the repository this extension sits in, when run from source), else `neural-debugger` on PATH.
// attach (or any configuration with `debugServer`): a DebugAdapterServer connecting to a running
//   `neural-debugger dap --port N` on `host` (127.0.0.1 by default).
'use strict';

const fs = require('fs');
const path = require('path');
const vscode = require('vscode');

function candidateVenvs(extensionPath) {
  const roots = (vscode.workspace.workspaceFolders || []).map((f) => f.uri.fsPath);
  roots.push(path.resolve(extensionPath, '..', '..')); // editors/vscode inside the repository
  const exe = process.platform === 'win32' ? path.join('.venv', 'Scripts', 'neural-debugger.exe') : path.join('.venv', 'bin', 'neural-debugger');
  return roots.map((root) => path.join(root, exe));
}

function adapterCommand(extensionPath) {
  const configured = vscode.workspace.getConfiguration('neuralDebugger').get('command');
  if (configured) {
    return configured;
  }
  for (const candidate of candidateVenvs(extensionPath)) {
    if (fs.existsSync(candidate)) {
      return candidate;
    }
  }
  return 'neural-debugger';
}

class NeuralAdapterFactory {
  constructor(extensionPath) {
    this.extensionPath = extensionPath;
  }

  createDebugAdapterDescriptor(session) {
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
    const folder = session.workspaceFolder ? session.workspaceFolder.uri.fsPath : undefined;
    return new vscode.DebugAdapterExecutable(adapterCommand(this.extensionPath), ['dap'], folder ? { cwd: folder } : {});
  }
}

class NeuralConfigurationProvider {
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
}

function activate(context) {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory('neural', new NeuralAdapterFactory(context.extensionPath)),
    vscode.debug.registerDebugConfigurationProvider('neural', new NeuralConfigurationProvider()),
    vscode.debug.onDidReceiveDebugSessionCustomEvent((event) => {
      if (event.session.type === 'neural' && event.event === 'neuralComparisonSummary' && event.body) {
        const s = event.body;
        vscode.window.showInformationMessage(`Neural vs debugpy: ${s.matched}/${s.stops} stops matched.`);
      }
    }),
  );
}

function deactivate() {}

module.exports = { activate, deactivate, adapterCommand, NeuralAdapterFactory };
