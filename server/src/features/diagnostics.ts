// Diagnostics on open and on every change; a stale analysis never overwrites a newer one. An opened document is
// analysed at once; after an edit the server waits a third of the document's last analysis time (edits that arrive
// during an analysis wait for it and then share the next one, so typing keeps it busy at most three quarters of
// the time): a small file answers within a few tens of milliseconds, a large one not much later than its analysis.
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { AnalysisOptions, DagAnalysis } from '../dag/analyze';
import { toLspDiagnostic } from '../lspDiagnostics';
import { warmUpAnalysisOnce } from '../analysisWarmUp';
import { dagIndex } from '../dag/dagIndex';
import { collectYoungGarbageSoon } from '../idleCollection';
import type { Settings } from '../protocol/settings';
import type { FeatureContext } from './feature';
import { providerOffers, providersOf } from '../providerOffers';

/** The wait after an edit is a third of the document's last analysis time, kept within these bounds. */
export const DIAGNOSTICS_DEBOUNCE_MS = { min: 15, max: 150 } as const;

/** What the first request after an analysis would otherwise do: index the text's offsets and the task ids. */
const prepareForRequests = (analysis: DagAnalysis): void => {
  void analysis.document.root;
  dagIndex(analysis.model).prepare();
};

const analysisOptions = (settings: Settings): AnalysisOptions => ({
  limits: settings.limits,
  offers: providerOffers(providersOf(settings)),
});

/** Publishes the analysis of the document with these options, unless a newer version or a close overtook it. */
function publish(
  { connection, documents, analyses }: FeatureContext,
  document: TextDocument,
  options: AnalysisOptions,
): void {
  const current = documents.get(document.uri);
  if (current === undefined || current.version !== document.version) return;
  const analysis = analyses.get(current, options);
  const sent = connection.sendDiagnostics({
    uri: document.uri,
    version: document.version,
    diagnostics: analysis.diagnostics.map((diagnostic) => toLspDiagnostic(document, diagnostic)),
  });
  // While the user reads the diagnostics, index the text's offsets and the task ids, so the first completion,
  // hover or rename after an edit answers as fast as the ones after it (10,000 tasks: the first hover after an open
  // 35 ms with it, about 50 without). Only once the diagnostics are written: the connection writes a message in a
  // later turn when another (the settings request) is being written, and the indexing, 30 ms at 10,000 tasks,
  // would come first.
  // A send fails only when the connection is gone, and then nothing is asked of the index.
  sent.then(
    () => {
      if (documents.get(document.uri)?.version !== document.version) return;
      prepareForRequests(analysis);
      warmUpAnalysisOnce(prepareForRequests, collectYoungGarbageSoon);
    },
    () => undefined,
  );
}

/** The wait after an edit: a third of the last analysis time, within DIAGNOSTICS_DEBOUNCE_MS; none before the first. */
const debounceMs = (lastMs: number | undefined): number =>
  lastMs === undefined
    ? 0
    : Math.min(DIAGNOSTICS_DEBOUNCE_MS.max, Math.max(DIAGNOSTICS_DEBOUNCE_MS.min, Math.round(lastMs / 3)));

export function registerDiagnostics(context: FeatureContext): {
  revalidateAll(): void;
} {
  const { connection, documents, analyses, settingsFor, likelySettingsFor } = context;
  const timers = new Map<string, NodeJS.Timeout>();

  // The settings round trip to the client overlaps the analysis: it runs with the settings most likely the
  // document's, and again only when the answer changes what the analysis uses.
  const validate = async (document: TextDocument): Promise<void> => {
    const asked = settingsFor(document.uri);
    const likely = likelySettingsFor(document.uri);
    const guessed = likely === undefined ? undefined : analysisOptions(likely);
    if (guessed !== undefined) publish(context, document, guessed);
    const options = analysisOptions(await asked);
    if (guessed === undefined || JSON.stringify(options) !== JSON.stringify(guessed))
      publish(context, document, options);
  };

  const schedule = (document: TextDocument, delay: number): void => {
    clearTimeout(timers.get(document.uri));
    timers.set(
      document.uri,
      setTimeout(() => {
        timers.delete(document.uri);
        validate(document).catch((error: unknown) => connection.console.error(`validation failed: ${String(error)}`));
      }, delay),
    );
  };

  // Fired on open too, where the document has no analysis yet.
  documents.onDidChangeContent(({ document }) => {
    schedule(document, debounceMs(analyses.durationOf(document.uri)));
  });
  documents.onDidClose((event) => {
    clearTimeout(timers.get(event.document.uri));
    timers.delete(event.document.uri);
    void connection.sendDiagnostics({ uri: event.document.uri, diagnostics: [] });
  });

  return {
    revalidateAll: () => {
      for (const document of documents.all()) schedule(document, 0);
    },
  };
}
