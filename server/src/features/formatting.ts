// Document and range formatting through jsonc-parser, which changes only the whitespace between tokens and skips
// the neighbourhood of most broken ones, with the editor's tab settings and the file's own line ending.
import { type Edit, type Range as Span, ScanError, SyntaxKind, createScanner, format } from 'jsonc-parser';
import type { FormattingOptions, Range, TextEdit } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { MAX_NESTING } from '../dag/nesting';
import { spanRange } from '../lspRanges';
import { type Feature, analysisOf } from './feature';

const LINE_BREAK = /\r\n|\r|\n/;

/**
 * The edit jsonc-parser made for the whitespace after the last token (which it always empties), redone by the
 * editor's rules: final newlines kept unless `trimFinalNewlines`, one added with `insertFinalNewline`.
 */
function settleEnd(text: string, edits: Edit[], eol: string, options: FormattingOptions, span?: Span): void {
  const last = edits[edits.length - 1];
  const tailEdit = last !== undefined && last.offset + last.length === text.length ? last : undefined;
  if (tailEdit === undefined) {
    // No edit at the end: the text ends with its last token, or the end lies outside the range.
    const reachesEnd = span === undefined || span.offset + span.length === text.length;
    if (options.insertFinalNewline === true && reachesEnd && /[^ \t\r\n]$/.test(text)) {
      edits.push({ offset: text.length, length: 0, content: eol });
    }
    return;
  }
  let newlines = text.slice(tailEdit.offset).split(LINE_BREAK).length - 1;
  if (options.trimFinalNewlines === true) newlines = Math.min(newlines, 1);
  if (options.insertFinalNewline === true) newlines = Math.max(newlines, 1);
  tailEdit.content = eol.repeat(newlines);
}

/**
 * What formatting needs to know of the tokens: where the strings left open end (jsonc-parser would remove the line
 * break after one, and the next line would then join the string: the one change of whitespace that alters the
 * tokens), and how deep objects and arrays nest.
 */
function scanTokens(text: string): { openStringEnds: Set<number>; depth: number } {
  const openStringEnds = new Set<number>();
  let depth = 0;
  let open = 0;
  const scanner = createScanner(text, true);
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    if (token === SyntaxKind.OpenBraceToken || token === SyntaxKind.OpenBracketToken) depth = Math.max(depth, ++open);
    else if (token === SyntaxKind.CloseBraceToken || token === SyntaxKind.CloseBracketToken) open--;
    if (scanner.getTokenError() === ScanError.UnexpectedEndOfString) {
      openStringEnds.add(scanner.getTokenOffset() + scanner.getTokenLength());
    }
  }
  return { openStringEnds, depth };
}

/**
 * jsonc-parser 3.3.1 caches line breaks with up to 199 indent characters and tests `amount > cache.length` where it
 * needs `>=`, so a line indented by exactly 200 gets an undefined edit. A line break it does not know (a String object
 * equal to the real one) takes its uncached path, about a third slower on a whole file: so only where the indent can
 * reach 200, by nesting or, in a range, by the indentation the range starts at.
 */
const CACHED_INDENT = 200;
function lineBreakFor(eol: string, indentWidth: number, depth: number, span: Span | undefined): string {
  return span !== undefined || indentWidth * depth >= CACHED_INDENT ? (new String(eol) as unknown as string) : eol;
}

/** The edit without the characters it would keep at either end (so re-indenting deletes two spaces, not the line). */
function trimmed(text: string, { offset, length, content }: Edit): Edit {
  let start = 0;
  while (start < length && start < content.length && text[offset + start] === content[start]) start++;
  let end = 0;
  while (
    end < length - start &&
    end < content.length - start &&
    text[offset + length - 1 - end] === content[content.length - 1 - end]
  ) {
    end++;
  }
  return { offset: offset + start, length: length - start - end, content: content.slice(start, content.length - end) };
}

/** The edits that format the document, or only `range` of it. */
function formattingEdits(document: TextDocument, options: FormattingOptions, range?: Range): TextEdit[] {
  const text = document.getText();
  const eol = LINE_BREAK.exec(text)?.[0] ?? '\n';
  const span: Span | undefined =
    range === undefined
      ? undefined
      : {
          offset: document.offsetAt(range.start),
          length: document.offsetAt(range.end) - document.offsetAt(range.start),
        };
  const { openStringEnds, depth } = scanTokens(text);
  // Indented, a nest's text grows with the square of its depth (20,000 levels: 800 million blanks, and the server's
  // heap gone); nesting past the limit is an error of its own, which formatting would not fix.
  if (depth > MAX_NESTING) return [];
  const edits = format(text, span, {
    tabSize: options.tabSize,
    insertSpaces: options.insertSpaces,
    eol: lineBreakFor(eol, options.insertSpaces ? options.tabSize : 1, depth, span),
    insertFinalNewline: false,
  });
  settleEnd(text, edits, eol, options, span);
  return edits
    .filter((edit) => !openStringEnds.has(edit.offset))
    .map((edit) => trimmed(text, edit))
    .filter((edit) => edit.length > 0 || edit.content.length > 0)
    .map((edit) => ({ range: spanRange(document, edit.offset, edit.offset + edit.length), newText: edit.content }));
}

export const formattingFeature: Feature = {
  capabilities: { documentFormattingProvider: true, documentRangeFormattingProvider: true },
  register(context) {
    // analysisOf: a file over the size limit is not formatted either.
    context.connection.onDocumentFormatting(({ textDocument, options }) => {
      const document = analysisOf(context, textDocument.uri)?.document;
      return document === undefined ? [] : formattingEdits(document, options);
    });
    context.connection.onDocumentRangeFormatting(({ textDocument, range, options }) => {
      const document = analysisOf(context, textDocument.uri)?.document;
      return document === undefined ? [] : formattingEdits(document, options, range);
    });
  },
};
