// The VS Code client: starts the bundled language server over Node IPC; all analysis lives in the server.
import * as path from 'node:path';
import { type ExtensionContext, workspace } from 'vscode';
import {
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';

let client: LanguageClient | undefined;

export async function activate(context: ExtensionContext): Promise<void> {
  const module = context.asAbsolutePath(path.join('dist', 'server.js'));
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc },
    debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6009'] } },
  };
  // The server keeps the workspace's DAG files (workspace symbols, capability completion) current from its events;
  // the client does not dispose a watcher it is given.
  const dagFileWatcher = workspace.createFileSystemWatcher('**/*.acmp-dag.json');
  context.subscriptions.push(dagFileWatcher);
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ language: 'acmp-dag' }],
    synchronize: { configurationSection: 'acmp', fileEvents: dagFileWatcher },
  };
  // The client's id `acmp` makes VS Code honour the `acmp.trace.server` setting.
  client = new LanguageClient('acmp', 'ACMP DAG Language Server', serverOptions, clientOptions);
  context.subscriptions.push(client);
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
