// The language client: starts the bundled language server over Node IPC; all analysis and execution live there.
import * as path from 'node:path';
import { type DocumentSymbol, type ExtensionContext, window, workspace } from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';
import { limitOutline } from './outlineLimit';
import type { ProviderTokens } from './tokens';

/**
 * The server's run commands have the ids of the extension's own commands (design.md §3), which add the editor's side
 * of a run (trust, tokens, progress, the tree) and call the server themselves; the client's generic forwarding of
 * server commands would register the same ids a second time.
 */
class AcmpLanguageClient extends LanguageClient {
  override registerFeature(feature: Parameters<LanguageClient['registerFeature']>[0]): void {
    if ('registrationType' in feature && feature.registrationType.method === ExecuteCommandRequest.method) return;
    super.registerFeature(feature);
  }
}

export function createLanguageClient(context: ExtensionContext, tokens: ProviderTokens): LanguageClient {
  const module = context.asAbsolutePath(path.join('dist', 'server.js'));
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc },
    debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6009'] } },
  };
  // The server keeps the workspace's DAG files (workspace symbols, capability completion) current from its events;
  // the client does not dispose a watcher it is given.
  const dagFileWatcher = workspace.createFileSystemWatcher('**/*.acmp-dag.json');
  // A verbose trace prints every request's arguments, a run's tokens included: the channel masks them.
  const outputChannel = window.createOutputChannel('ACMP DAG Language Server', { log: true });
  context.subscriptions.push(dagFileWatcher, outputChannel);
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ language: 'acmp-dag' }],
    synchronize: { configurationSection: 'acmp', fileEvents: dagFileWatcher },
    outputChannel: tokens.redacting(outputChannel),
    middleware: {
      // The editor's outline, cut to what its window can take (outlineLimit.ts); the server's answer is whole.
      provideDocumentSymbols: async (document, token, next) => {
        const symbols = await next(document, token);
        // The server answers DocumentSymbols (a tree); a flat SymbolInformation list is passed on as it is.
        return symbols?.[0] !== undefined && 'children' in symbols[0]
          ? limitOutline(symbols as DocumentSymbol[])
          : symbols;
      },
    },
  };
  // The client's id `acmp` makes VS Code honour the `acmp.trace.server` setting.
  return new AcmpLanguageClient('acmp', 'ACMP DAG Language Server', serverOptions, clientOptions);
}
