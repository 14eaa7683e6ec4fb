// Offsets of the core to LSP ranges and back, in one place for the server, its features and the CLI.
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Range } from 'vscode-languageserver-types';

export const spanRange = (document: TextDocument, start: number, end: number): Range => ({
  start: document.positionAt(start),
  end: document.positionAt(end),
});

export const nodeRange = (document: TextDocument, node: { readonly offset: number; readonly length: number }): Range =>
  spanRange(document, node.offset, node.offset + node.length);
