// The language server, wired onto any connection: no module-level state, so tests can start several.
import {
  type ClientCapabilities,
  type Connection,
  type ServerCapabilities,
  TextDocumentSyncKind,
  TextDocuments,
} from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { AnalysisCache } from './analyses';
import { DiscoveredProviders } from './discoveredProviders';
import { codeActionsFeature } from './features/codeActions';
import { completionFeature } from './features/completion';
import { registerDiagnostics } from './features/diagnostics';
import type { Feature, FeatureContext } from './features/feature';
import { foldingFeature } from './features/folding';
import { formattingFeature } from './features/formatting';
import { graphFeature } from './features/graphRequest';
import { hoverFeature } from './features/hover';
import { navigationFeature } from './features/navigation';
import { planFeature, refreshPlanLenses } from './features/plan';
import { renameFeature } from './features/rename';
import { runFeature } from './features/runDag';
import { guardHandlers } from './features/runSafe';
import { selectionRangesFeature } from './features/selectionRanges';
import { symbolsFeature } from './features/symbols';
import { type Settings, normalizeSettings } from './protocol/settings';
import { WorkspaceDags } from './workspaceDags';

/** The editor features, each in its own file under features/. */
const FEATURES: readonly Feature[] = [
  codeActionsFeature,
  completionFeature,
  foldingFeature,
  formattingFeature,
  graphFeature,
  hoverFeature,
  navigationFeature,
  planFeature,
  renameFeature,
  selectionRangesFeature,
  symbolsFeature,
  runFeature,
];

/** The providers or the settings changed: every document is analysed again, and the plans' lenses are asked for again. */
function providersChanged(
  connection: Connection,
  client: ClientCapabilities,
  diagnostics: { revalidateAll(): void },
): void {
  diagnostics.revalidateAll();
  refreshPlanLenses(connection, client);
}

export function startServer(connection: Connection): void {
  const documents = new TextDocuments(TextDocument);
  const analyses = new AnalysisCache();
  let canPullConfiguration = false;
  let client: ClientCapabilities = {};
  // Each document's settings are asked for once, until the configuration changes or the document closes.
  const settingsCache = new Map<string, Promise<Settings>>();
  const settingsReceived = new Map<string, Settings>();
  let lastSettingsReceived: Settings | undefined;

  const settingsFor = (uri: string): Promise<Settings> => {
    if (!canPullConfiguration) return Promise.resolve(normalizeSettings({}));
    const cached = settingsCache.get(uri);
    if (cached !== undefined) return cached;
    const asked: Promise<Settings> = connection.workspace
      .getConfiguration(uri === '' ? { section: 'acmp' } : { scopeUri: uri, section: 'acmp' }) // '': the workspace's
      .then(normalizeSettings, () => normalizeSettings({}))
      .then((received) => {
        // An answer that a configuration change or a close overtook is no longer the document's.
        if (settingsCache.get(uri) === asked) settingsReceived.set(uri, received);
        lastSettingsReceived = received;
        return received;
      });
    settingsCache.set(uri, asked);
    return asked;
  };
  const likelySettingsFor = (uri: string): Settings | undefined =>
    canPullConfiguration ? (settingsReceived.get(uri) ?? lastSettingsReceived) : normalizeSettings({});
  const discovered = new DiscoveredProviders({
    changed: () => providersChanged(connection, client, diagnostics),
    warn: (message) => connection.console.warn(message),
  });
  const context: FeatureContext = {
    // A feature that throws answers that one request with an error; the others go on.
    connection: guardHandlers(connection),
    documents,
    analyses,
    // What every feature and run sees: the providers the catalogs describe among the configured ones.
    settingsFor: async (uri) => discovered.withProviders(await settingsFor(uri)),
    likelySettingsFor: (uri) => discovered.withProviders(likelySettingsFor(uri), { fetch: false }),
    workspace: new WorkspaceDags(connection, documents, analyses),
    lastOutputs: new Map(),
  };

  connection.onInitialize((params) => {
    canPullConfiguration = params.capabilities.workspace?.configuration === true;
    context.workspace.setFolders(params);
    client = params.capabilities;
    const capabilities: ServerCapabilities = {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
    };
    for (const feature of FEATURES) Object.assign(capabilities, feature.capabilities);
    return { capabilities, serverInfo: { name: 'acmp-dag-language-server', version: '0.1.0' } };
  });

  const diagnostics = registerDiagnostics(context);
  for (const feature of FEATURES) feature.register(context);
  connection.onInitialized(() => {
    context.workspace.scanInBackground();
    // The library refuses the handler when the client cannot send the notification.
    if (client.workspace?.workspaceFolders === true)
      connection.workspace.onDidChangeWorkspaceFolders((event) => context.workspace.foldersChanged(event));
  });
  connection.onDidChangeWatchedFiles(({ changes }) => context.workspace.filesChanged(changes));
  documents.onDidClose((event) => {
    settingsCache.delete(event.document.uri);
    settingsReceived.delete(event.document.uri);
    analyses.forget(event.document.uri);
  });
  connection.onDidChangeConfiguration(() => {
    settingsCache.clear();
    settingsReceived.clear();
    discovered.settingsChanged();
    providersChanged(connection, client, diagnostics);
  });

  documents.listen(connection);
  connection.listen();
}
