// The text of a DAG file read from disk (the CLI, and the language server for files the editor has not opened): UTF-8,
// or a diagnostic saying where it is not, rather than an analysis of text whose bad bytes became U+FFFD unnoticed (a
// task id among them would silently be another id). A leading byte order mark is dropped, as editors drop it, so
// that positions are the ones an editor shows.
import { isUtf8 } from 'node:buffer';
import { type AnalysisOptions, type DagAnalysis, analyzeDag, notUtf8Analysis } from './dag/analyze';

export interface FileText {
  readonly text: string;
  /** Where in `text` the first bytes that are not UTF-8 stand (as U+FFFD); undefined when the file is UTF-8. */
  readonly notUtf8At?: number;
}

const REPLACEMENT = '\uFFFD';

/** The file's text (without a byte order mark), and where it first is not UTF-8. */
export function decodeFileText(bytes: Buffer): FileText {
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const text = bytes.toString('utf8', start);
  if (isUtf8(start === 0 ? bytes : bytes.subarray(start))) return { text };
  return { text, notUtf8At: firstReplacement(text, bytes, start) };
}

/**
 * The first U+FFFD of `text` that stands for bytes that are not UTF-8, rather than for a U+FFFD the file holds as
 * UTF-8 (EF BF BD): everything before it decoded exactly, so its bytes are counted from the text.
 */
function firstReplacement(text: string, bytes: Buffer, start: number): number {
  let byte = start;
  let counted = 0;
  for (let at = text.indexOf(REPLACEMENT); at !== -1; at = text.indexOf(REPLACEMENT, at + 1)) {
    byte += Buffer.byteLength(text.slice(counted, at), 'utf8');
    if (bytes[byte] !== 0xef || bytes[byte + 1] !== 0xbf || bytes[byte + 2] !== 0xbd) return at;
    byte += 3;
    counted = at + 1;
  }
  // isUtf8 refused the bytes, so one replacement stands for them.
  return text.length;
}

/** The analysis of a file's text: one `json-syntax` error when it is not UTF-8. */
export const analyzeFileText = (file: FileText, options?: AnalysisOptions): DagAnalysis =>
  file.notUtf8At === undefined ? analyzeDag(file.text, options) : notUtf8Analysis(file.text, file.notUtf8At);
