// JSON text of any size, in pieces: the bytes of JSON.stringify(value, null, 2), made without one string of the whole
// (V8 caps a string near 512 MB, and a run report can hold more) and without recursion (outputs can nest deeply).
import { closeSync, createReadStream, openSync, writeSync } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';

/** JSON text kept in a file (written by writeJsonFile at indent 0): copied into the text rather than serialized. */
export interface JsonFileRef {
  readonly path: string;
}

/** A piece of the text: characters, or a file's text to copy with `indent` after each of its line breaks. */
export type JsonPiece = string | { readonly file: JsonFileRef; readonly indent: string };

const GAP = '  ';
/** Characters gathered before a piece is handed out: big enough that a write per piece costs nothing. */
const PIECE_CHARS = 64 * 1024;
/** Values in a container that JSON.stringify writes whole, at most: a walk that gives up sooner costs little. */
const WHOLE_VALUES = 512;
/** Levels deep at most where a small value is stringified inside arrays rather than indented afterwards. */
const WRAPPED_DEPTH = 16;

interface Frame {
  readonly container: Record<string, unknown> | readonly unknown[];
  /** The property names of an object; undefined for an array. */
  readonly keys: readonly string[] | undefined;
  readonly length: number;
  next: number;
  /** Whether a member was written (an object whose members are all undefined is `{}`). */
  opened: boolean;
  /** The indentation of the container's own line. */
  readonly indent: string;
}

/** The value as JSON.stringify sees it: after toJSON, and with primitive wrappers unwrapped. */
function jsonValueOf(key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  return value;
}

const skipped = (value: unknown): boolean =>
  value === undefined || typeof value === 'function' || typeof value === 'symbol';

const boxed = (value: object): boolean =>
  value instanceof Number || value instanceof String || value instanceof Boolean;

/**
 * Whether JSON.stringify may write `container` whole, several times faster than walking it here: it is small (at most
 * WHOLE_VALUES values and PIECE_CHARS characters of strings and keys) and holds nothing this walk treats its own way
 * (a file's value, a toJSON, a boxed primitive). Returns its characters of strings and keys, or -1 when it is not.
 */
function smallSize(container: object, fileOf: ((value: object) => JsonFileRef | undefined) | undefined): number {
  const pending: unknown[] = [container];
  let values = 0;
  let chars = 0;
  while (pending.length > 0) {
    const next = pending.pop();
    if (++values > WHOLE_VALUES || chars > PIECE_CHARS) return -1;
    if (typeof next === 'string') chars += next.length;
    if (next === null || typeof next !== 'object') continue;
    if (typeof (next as { toJSON?: unknown }).toJSON === 'function' || boxed(next) || fileOf?.(next) !== undefined) {
      return -1;
    }
    if (Array.isArray(next)) {
      for (const element of next as unknown[]) pending.push(element);
      continue;
    }
    for (const key in next) {
      if (!Object.hasOwn(next, key)) continue;
      chars += key.length;
      pending.push((next as Record<string, unknown>)[key]);
    }
  }
  return chars;
}

/**
 * Where the run of elements from `from` ends that JSON.stringify may write together: primitives and small containers,
 * up to about PIECE_CHARS characters. A report's 10,000s of task entries go a few hundred at a time.
 */
function smallRunEnd(
  array: readonly unknown[],
  from: number,
  fileOf: ((value: object) => JsonFileRef | undefined) | undefined,
): number {
  let chars = 0;
  let end = from;
  while (end < array.length && chars <= PIECE_CHARS) {
    const element = array[end];
    if (element !== null && typeof element === 'object') {
      const size = smallSize(element, fileOf);
      if (size < 0) break;
      chars += size;
    } else if (typeof element === 'string') chars += element.length;
    end++;
  }
  return end;
}

/**
 * JSON.stringify(value, null, 2) as it reads `depth` levels deep: the value stringified inside `depth` arrays, whose
 * brackets are cut off again (no raw line break is inside a JSON string). Indenting its lines afterwards (a replace of every line break) made a second copy of
 * every small value's text, the most of what writing a large report allocated.
 */
function stringifiedAt(value: object, depth: number): string {
  if (depth === 0) return JSON.stringify(value, null, 2);
  // Deep down (outputs can nest deeply) the wrapping would be deep recursion: there the lines are indented instead.
  if (depth > WRAPPED_DEPTH) return JSON.stringify(value, null, 2).replaceAll('\n', `\n${GAP.repeat(depth)}`);
  let wrapped: unknown = value;
  for (let level = 0; level < depth; level++) wrapped = [wrapped];
  const whole = JSON.stringify(wrapped, null, 2);
  // Level k (1..depth) opens with `[\n` and 2k spaces, and closes with `\n`, 2(k - 1) spaces and `]`.
  const opening = 2 * depth + depth * (depth + 1);
  const closing = 2 * depth + depth * (depth - 1);
  return whole.slice(opening, whole.length - closing);
}

/**
 * Starts writing `value` at `indent`: returns its whole text, or the file that holds it, or '' when it opened a frame
 * on `stack` (a container written member by member).
 */
function startValue(
  value: unknown,
  indent: string,
  stack: Frame[],
  fileOf: ((value: object) => JsonFileRef | undefined) | undefined,
): string | JsonFileRef {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const file = fileOf?.(value);
  if (file !== undefined) return file;
  if (smallSize(value, fileOf) >= 0) return stringifiedAt(value, indent.length / GAP.length);
  if (Array.isArray(value)) {
    stack.push({ container: value, keys: undefined, length: value.length, next: 0, opened: false, indent });
  } else if (boxed(value)) {
    return JSON.stringify(value);
  } else {
    const keys = Object.keys(value);
    stack.push({
      container: value as Record<string, unknown>,
      keys,
      length: keys.length,
      next: 0,
      opened: false,
      indent,
    });
  }
  return '';
}

/**
 * The pieces of JSON.stringify(value, null, 2), in order. `fileOf` names the values whose text is in a file: their
 * text is copied from it (its line breaks followed by the indentation of the place it goes to).
 */
export function* jsonPieces(value: unknown, fileOf?: (value: object) => JsonFileRef | undefined): Generator<JsonPiece> {
  let text = '';
  const stack: Frame[] = [];
  let next: unknown = jsonValueOf('', value);
  if (skipped(next)) return;
  let indent = '';
  for (;;) {
    // `next` is a value to write at `indent` (its key or slot is written); then the innermost open container goes on.
    const started = startValue(next, indent, stack, fileOf);
    if (typeof started === 'string') {
      text += started;
    } else {
      if (text !== '') yield text;
      text = '';
      yield { file: started, indent };
    }
    if (text.length >= PIECE_CHARS) {
      yield text;
      text = '';
    }
    // The next member to write, closing the containers that have none left.
    let found = false;
    while (!found && stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      if (frame.next === frame.length) {
        stack.pop();
        const [open, close] = frame.keys === undefined ? ['[', ']'] : ['{', '}'];
        text += frame.opened ? `\n${frame.indent}${close}` : `${open}${close}`;
        if (text.length >= PIECE_CHARS) {
          yield text;
          text = '';
        }
        continue;
      }
      if (frame.keys === undefined) {
        const array = frame.container as readonly unknown[];
        const end = smallRunEnd(array, frame.next, fileOf);
        if (end - frame.next > 1) {
          // The run as JSON.stringify writes it in this array (its elements' lines indented), without the closing line.
          const whole = stringifiedAt(array.slice(frame.next, end), frame.indent.length / GAP.length);
          text += `${frame.opened ? ',' : '['}${whole.slice(1, whole.length - frame.indent.length - 2)}`;
          frame.next = end;
          frame.opened = true;
          if (text.length >= PIECE_CHARS) {
            yield text;
            text = '';
          }
          continue;
        }
      }
      const index = frame.next++;
      indent = frame.indent + GAP;
      const separator = frame.opened ? `,\n${indent}` : `${frame.keys === undefined ? '[' : '{'}\n${indent}`;
      if (frame.keys === undefined) {
        next = jsonValueOf(String(index), (frame.container as readonly unknown[])[index]);
        text += separator;
        // An array writes null where JSON has no value.
        if (skipped(next)) next = null;
      } else {
        const key = frame.keys[index]!;
        next = jsonValueOf(key, (frame.container as Record<string, unknown>)[key]);
        if (skipped(next)) continue;
        text += `${separator}${JSON.stringify(key)}: `;
      }
      frame.opened = true;
      found = true;
    }
    if (!found) break;
  }
  if (text !== '') yield text;
}

/** Writes JSON.stringify(value, null, 2) to `path` (no file pieces: `value` is plain JSON data); returns its bytes. */
export function writeJsonFile(path: string, value: unknown): number {
  const fd = openSync(path, 'w');
  let bytes = 0;
  try {
    for (const piece of jsonPieces(value)) bytes += writeSync(fd, piece as string);
  } finally {
    closeSync(fd);
  }
  return bytes;
}

const LINE_FEED = 0x0a;

/** Copies a file's JSON text to `out` with `indent` after each line break (no string in JSON holds a raw one). */
async function copyIndented(path: string, indent: string, out: Writable): Promise<void> {
  const indentBytes = Buffer.from(`\n${indent}`);
  for await (const chunk of createReadStream(path, { highWaterMark: PIECE_CHARS })) {
    const bytes = chunk as Buffer;
    const parts: Buffer[] = [];
    let start = 0;
    for (let end = bytes.indexOf(LINE_FEED); end !== -1; end = bytes.indexOf(LINE_FEED, start)) {
      parts.push(bytes.subarray(start, end), indentBytes);
      start = end + 1;
    }
    parts.push(bytes.subarray(start));
    await write(out, Buffer.concat(parts));
  }
}

/** Writes and, when the stream asks for it, waits until it drained (rejecting when it fails meanwhile). */
async function write(out: Writable, data: string | Buffer): Promise<void> {
  if (!out.write(data)) await once(out, 'drain');
}

/** Writes JSON.stringify(value, null, 2) to a stream, piece by piece, with its backpressure. */
export async function writeJson(
  out: Writable,
  value: unknown,
  fileOf?: (value: object) => JsonFileRef | undefined,
): Promise<void> {
  for (const piece of jsonPieces(value, fileOf)) {
    if (typeof piece === 'string') await write(out, piece);
    else await copyIndented(piece.file.path, piece.indent, out);
  }
}
