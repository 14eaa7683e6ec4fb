// Texts with the cursor written in them (`‸`), for requests at a position.
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Position, Range, TextEdit } from 'vscode-languageserver-types';

export const CURSOR = '‸';

export interface AtCursor {
  /** The text without the marker. */
  readonly text: string;
  readonly offset: number;
  readonly position: Position;
  readonly document: TextDocument;
}

export function atCursor(marked: string, uri = 'file:///cursor.acmp-dag.json'): AtCursor {
  const offset = marked.indexOf(CURSOR);
  if (offset === -1 || marked.indexOf(CURSOR, offset + 1) !== -1) throw new Error('mark exactly one cursor');
  const text = marked.slice(0, offset) + marked.slice(offset + CURSOR.length);
  const document = TextDocument.create(uri, 'acmp-dag', 1, text);
  return { text, offset, position: document.positionAt(offset), document };
}

/** The text a range covers. */
export const textOf = (document: TextDocument, range: Range): string =>
  document.getText().slice(document.offsetAt(range.start), document.offsetAt(range.end));

export const applyEdits = (document: TextDocument, edits: readonly TextEdit[]): string =>
  TextDocument.applyEdits(document, [...edits]);
