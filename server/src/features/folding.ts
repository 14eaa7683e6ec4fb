// Folding ranges: objects and arrays over several lines (a task, its input, the tasks and edges lists), by
// vscode-json-languageservice, which scans the text without recursion.
import { getLanguageService } from 'vscode-json-languageservice';
import { type Feature, analysisOf } from './feature';

/** Ranges answered at most, the outermost kept (VS Code's own default limit). */
const MAX_FOLDING_RANGES = 5_000;

export const foldingFeature: Feature = {
  capabilities: { foldingRangeProvider: true },
  register(context) {
    const json = getLanguageService({});
    context.connection.onFoldingRanges(({ textDocument }) => {
      // analysisOf: a file over the size limit gets no ranges rather than a scan of all of it.
      const document = analysisOf(context, textDocument.uri)?.document;
      return document === undefined ? [] : json.getFoldingRanges(document, { rangeLimit: MAX_FOLDING_RANGES });
    });
  },
};
