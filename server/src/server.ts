// The language server, wired onto any connection: no module-level state, so tests can start several.
import { type Connection, TextDocumentSyncKind, TextDocuments } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { registerDiagnostics } from './features/diagnostics';
import { type Settings, normalizeSettings } from './protocol/settings';

export function startServer(connection: Connection): void {
  const documents = new TextDocuments(TextDocument);
  let canPullConfiguration = false;
  const settingsCache = new Map<string, Promise<Settings>>();

  connection.onInitialize((params) => {
    canPullConfiguration = params.capabilities.workspace?.configuration === true;
    return {
      capabilities: { textDocumentSync: TextDocumentSyncKind.Incremental },
      serverInfo: { name: 'acmp-dag-language-server', version: '0.1.0' },
    };
  });

  const settingsFor = (uri: string): Promise<Settings> => {
    if (!canPullConfiguration) return Promise.resolve(normalizeSettings({}));
    let settings = settingsCache.get(uri);
    if (settings === undefined) {
      settings = connection.workspace
        .getConfiguration({ scopeUri: uri, section: 'acmp' })
        .then(normalizeSettings, () => normalizeSettings({}));
      settingsCache.set(uri, settings);
    }
    return settings;
  };

  const diagnostics = registerDiagnostics(connection, documents, settingsFor);
  documents.onDidClose((event) => settingsCache.delete(event.document.uri));
  connection.onDidChangeConfiguration(() => {
    settingsCache.clear();
    diagnostics.revalidateAll();
  });

  documents.listen(connection);
  connection.listen();
}
