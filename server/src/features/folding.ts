// Folding ranges: objects and arrays over several lines (a task, its input, the tasks and edges lists), by
// vscode-json-languageservice, which scans the text without recursion.
import { getLanguageService } from 'vscode-json-languageservice';
import type { Feature } from './feature';

/** Ranges answered at most, the outermost kept (VS Code's own default limit). */
const MAX_FOLDING_RANGES = 5_000;

export const foldingFeature: Feature = {
  capabilities: { foldingRangeProvider: true },
  register({ connection, documents }) {
    const json = getLanguageService({});
    connection.onFoldingRanges(({ textDocument }) => {
      const document = documents.get(textDocument.uri);
      return document === undefined ? [] : json.getFoldingRanges(document, { rangeLimit: MAX_FOLDING_RANGES });
    });
  },
};
