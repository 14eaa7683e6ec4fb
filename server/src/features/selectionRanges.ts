// Selection ranges (expand/shrink selection): from the innermost node at the cursor outwards, string content →
// string → property → object → array → ... up to the top-level value, along the path the tape gives.
import type { SelectionRange } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { JsonDocument, JsonNode } from '../dag/json';
import { spanRange } from '../lspRanges';
import { type Feature, analysisOf } from './feature';

/** The spans around `offset`, innermost first, each containing the one before. */
function enclosingSpans(json: JsonDocument, offset: number): [start: number, end: number][] {
  const { entries, keys, onKey } = json.pathAt(offset);
  const spans: [number, number][] = [];
  const add = (start: number, end: number): void => {
    const inner = spans[spans.length - 1];
    if (inner === undefined || inner[0] !== start || inner[1] !== end) spans.push([start, end]);
  };
  /** A node's span, after its content's when it is a string with the cursor inside. */
  const addNode = (node: JsonNode): void => {
    const end = node.offset + node.length;
    if (node.kind === 'string') {
      const closed = node.length >= 2 && json.text[end - 1] === '"';
      const contentEnd = closed ? end - 1 : end;
      if (offset > node.offset && offset <= contentEnd) add(node.offset + 1, contentEnd);
    }
    add(node.offset, end);
  };
  const last = entries.length - 1;
  for (let k = last; k >= 0; k--) {
    const entry = entries[k]!;
    const node = entry === -1 ? undefined : json.node(entry);
    // On a key, the innermost node is the key rather than its value.
    if (node !== undefined && !(onKey && k === last)) addNode(node);
    const key = k > 0 ? keys[k - 1]! : -1;
    if (key === -1) continue;
    const keyNode = json.node(key);
    if (onKey && k === last) addNode(keyNode);
    // A property without a value yet reaches as far as the cursor.
    add(
      keyNode.offset,
      node === undefined ? Math.max(offset, keyNode.offset + keyNode.length) : node.offset + node.length,
    );
  }
  return spans;
}

function selectionRange(document: TextDocument, json: JsonDocument, offset: number): SelectionRange {
  let range: SelectionRange | undefined;
  for (const [start, end] of enclosingSpans(json, offset).reverse()) {
    range = { range: spanRange(document, start, end), parent: range };
  }
  return range ?? { range: spanRange(document, offset, offset) };
}

export const selectionRangesFeature: Feature = {
  capabilities: { selectionRangeProvider: true },
  register(context) {
    context.connection.onSelectionRanges(({ textDocument, positions }) => {
      const open = analysisOf(context, textDocument.uri);
      if (open === undefined) return [];
      const { document, analysis } = open;
      return positions.map((position) => selectionRange(document, analysis.document, document.offsetAt(position)));
    });
  },
};
