// What every editor feature gets, and what it declares: one file a feature, each registering its handlers.
import type { Connection, ServerCapabilities, TextDocuments } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { AnalysisCache } from '../analyses';
import type { DagAnalysis } from '../dag/analyze';
import type { TaskOutput } from '../protocol/report';
import type { Settings } from '../protocol/settings';
import type { WorkspaceDags } from '../workspaceDags';

export interface FeatureContext {
  readonly connection: Connection;
  readonly documents: TextDocuments<TextDocument>;
  readonly analyses: AnalysisCache;
  /**
   * The document's settings. Their `providers` are the effective ones: the configured (`acmp.providers`), then those
   * the catalogs (`acmp.catalogs`) describe, a configured one winning by id (discoveredProviders.ts).
   */
  readonly settingsFor: (uri: string) => Promise<Settings>;
  /**
   * Without waiting: the settings last received for the document, else the last received for any document (one
   * workspace's documents nearly always share them); undefined before any arrived.
   */
  readonly likelySettingsFor: (uri: string) => Settings | undefined;
  /** The DAG files of the workspace folders, open or not. */
  readonly workspace: WorkspaceDags;
  /** The outputs of each document's last run, by task id (completion offers the paths of real outputs). */
  readonly lastOutputs: Map<string, ReadonlyMap<string, TaskOutput>>;
}

export interface Feature {
  /** Merged into the server's answer to `initialize`. */
  readonly capabilities: ServerCapabilities;
  register(context: FeatureContext): void;
}

/**
 * The open document at `uri` and its current analysis; undefined when the client has not opened it, or when it is
 * over the size limit (every feature then answers nothing rather than scan a huge text).
 */
export function analysisOf(
  context: FeatureContext,
  uri: string,
): { document: TextDocument; analysis: DagAnalysis } | undefined {
  const document = context.documents.get(uri);
  if (document === undefined) return undefined;
  const analysis = context.analyses.get(document);
  return analysis.tooLarge ? undefined : { document, analysis };
}
