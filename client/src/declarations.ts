// Where a DAG file declares its dag_id and its tasks, found by a plain text search: the client places lenses,
// decorations and reveals with these and leaves every analysis to the server.
import { Range, type TextDocument } from 'vscode';

const DAG_ID_KEY = /"dag_id"\s*:/;
const TASK_ID_PROPERTY = /"task_id"\s*:\s*("(?:[^"\\\r\n]|\\.)*")/g;

/** The first `"dag_id"` key of the document. */
export function dagIdKeyRange(document: TextDocument): Range | undefined {
  const text = document.getText();
  const match = DAG_ID_KEY.exec(text);
  if (match === null) return undefined;
  return new Range(document.positionAt(match.index), document.positionAt(match.index + '"dag_id"'.length));
}

/** A JSON string's value; undefined for a malformed escape (the server reports it). */
function unquoted(quoted: string): string | undefined {
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return undefined;
  }
}

const cache = new WeakMap<TextDocument, { readonly version: number; readonly ranges: ReadonlyMap<string, Range> }>();

/** The range of each task's quoted `task_id` value (the first declaration of an id), computed once per version. */
export function taskIdRanges(document: TextDocument): ReadonlyMap<string, Range> {
  const cached = cache.get(document);
  if (cached?.version === document.version) return cached.ranges;
  const ranges = new Map<string, Range>();
  const text = document.getText();
  for (const match of text.matchAll(TASK_ID_PROPERTY)) {
    const quoted = match[1]!;
    const id = unquoted(quoted);
    if (id === undefined || ranges.has(id)) continue;
    const start = match.index + match[0].length - quoted.length;
    ranges.set(id, new Range(document.positionAt(start), document.positionAt(start + quoted.length)));
  }
  cache.set(document, { version: document.version, ranges });
  return ranges;
}
