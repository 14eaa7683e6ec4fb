// One analysis per open document version, shared by diagnostics and every editor feature: a request after an edit
// analyses the new text once, and the features that follow reuse it.
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { type AnalysisOptions, type DagAnalysis, analyzeDag } from './dag/analyze';

interface Entry {
  readonly version: number;
  readonly options: AnalysisOptions;
  /** The options as a string, to tell whether diagnostics asked with the same settings. */
  readonly optionsKey: string;
  readonly analysis: DagAnalysis;
  /** How long the analysis took, in milliseconds. */
  readonly durationMs: number;
}

export class AnalysisCache {
  private readonly entries = new Map<string, Entry>();

  /**
   * The analysis of the document's current version. Without `options` (editor features, which do not depend on
   * settings), any analysis of this version serves, and a new one uses the options the document was last analysed
   * with.
   */
  get(document: TextDocument, options?: AnalysisOptions): DagAnalysis {
    const entry = this.entries.get(document.uri);
    const optionsKey = options === undefined ? undefined : JSON.stringify(options);
    if (
      entry !== undefined &&
      entry.version === document.version &&
      (optionsKey === undefined || optionsKey === entry.optionsKey)
    ) {
      return entry.analysis;
    }
    const used = options ?? entry?.options ?? {};
    const start = performance.now();
    const analysis = analyzeDag(document.getText(), used);
    this.entries.set(document.uri, {
      version: document.version,
      options: used,
      optionsKey: optionsKey ?? entry?.optionsKey ?? JSON.stringify(used),
      analysis,
      durationMs: performance.now() - start,
    });
    return analysis;
  }

  /** How long the last analysis of the document took; undefined when it has none. */
  durationOf(uri: string): number | undefined {
    return this.entries.get(uri)?.durationMs;
  }

  forget(uri: string): void {
    this.entries.delete(uri);
  }
}
