// The JSON syntax tree of a DAG file. It is kept as a flat tape (typed arrays in document order) and its nodes are
// made on demand, so a 100,000-task file costs a few arrays instead of millions of long-lived objects (measured:
// garbage collection of an object per token was most of the analysis time). Valid text takes the fast path: the
// native JSON.parse checks it and makes the plain value, and the offsets are recorded by one linear pass only when
// a node is first asked for (a clean file's diagnostics need none). Any other text goes through the recovering
// parser on jsonc-parser's scanner, one diagnostic per fault. Nothing recurses, so nesting depth is unbounded.
import { createScanner, type JSONScanner, ScanError, SyntaxKind } from 'jsonc-parser';

export interface StringNode {
  readonly kind: 'string';
  readonly offset: number;
  readonly length: number;
  readonly value: string;
}
export interface ScalarNode {
  readonly kind: 'number' | 'boolean' | 'null';
  readonly offset: number;
  readonly length: number;
  readonly value: number | boolean | null;
}
export interface PropertyNode {
  readonly key: StringNode;
  /** Undefined when the text has a key but no value yet. */
  readonly value: JsonNode | undefined;
}
export type JsonNode = StringNode | ScalarNode | ObjectNode | ArrayNode;

/** Where an offset lies in the document (see `JsonDocument.pathAt`). */
export interface OffsetPath {
  /** Property names and array indexes from the top-level value; empty when the offset is outside it. */
  readonly path: readonly (string | number)[];
  /**
   * `entries[k]` is the entry at `path.slice(0, k)`, from the top-level value (`entries[0]`) down; the last is -1
   * for a property typed without a value yet. Empty when the offset is outside the top-level value.
   */
  readonly entries: readonly number[];
  /** `keys[k]` is the key entry of `path[k]`, or -1 for an array index. */
  readonly keys: readonly number[];
  /** The offset is on the key of the last property of the path, not on its value. */
  readonly onKey: boolean;
}

export interface SyntaxError {
  readonly offset: number;
  readonly length: number;
  readonly message: string;
}

export interface ParsedJson {
  readonly document: JsonDocument;
  /**
   * The plain value of the text (JSON.parse semantics: the last of duplicate keys wins). In recovered text, a key
   * typed without a value yet is an own property whose value is undefined.
   */
  readonly value: unknown;
  readonly errors: readonly SyntaxError[];
}

// An entry's kind, in the low bits, and its flags.
const OBJECT = 0;
const ARRAY = 1;
const STRING = 2;
const NUMBER = 3;
const TRUE = 4;
const FALSE = 5;
const NULL = 6;
const KIND = 7;
const KEY = 8;
/** The closing brace or bracket is there. */
const CLOSED = 16;
/** A value where a key belongs (broken text): kept for its extent, belongs to no property. */
const STRAY = 32;
/** A string whose value is not its raw text between the quotes (escapes, or unterminated). */
const DECODED = 64;

/**
 * The parsed text as entries in document order: each container is followed by its subtree, each key by its value.
 * An entry is a number, reached from `root`, `entryAt` or `nodeAt`; `node(entry)` makes (once) the node of an entry.
 */
export class JsonDocument {
  // Allocated with the first entry: a clean file's analysis never indexes it.
  kinds = new Uint8Array(0);
  offsets = new Int32Array(0);
  lengths = new Int32Array(0);
  /** One past the last entry of the subtree. */
  ends = new Int32Array(0);
  count = 0;
  readonly decoded = new Map<number, string>();
  /** The nodes made so far (few, unless a feature walks the whole tree). */
  private readonly nodes = new Map<number, JsonNode>();
  private readonly elementLists = new Map<number, number[]>();
  /** Text that JSON.parse accepted is indexed when an entry is first asked for. */
  private indexed = false;

  constructor(readonly text: string) {}

  add(kind: number, offset: number, length: number): number {
    if (this.count === this.kinds.length) this.grow();
    const index = this.count++;
    this.kinds[index] = kind;
    this.offsets[index] = offset;
    this.lengths[index] = length;
    this.ends[index] = index + 1;
    return index;
  }

  /** Ends a container at `endOffset`: its subtree is every entry added since it opened. */
  close(index: number, endOffset: number, closed: boolean): void {
    this.lengths[index] = endOffset - this.offsets[index]!;
    this.ends[index] = this.count;
    if (closed) this.kinds[index]! |= CLOSED;
  }

  private grow(): void {
    // Sized for about one entry per sixteen characters at first (a pretty-printed DAG has one per nine).
    const capacity = this.kinds.length === 0 ? (this.text.length >> 4) + 16 : this.kinds.length * 2;
    const kinds = new Uint8Array(capacity);
    kinds.set(this.kinds);
    this.kinds = kinds;
    for (const name of ['offsets', 'lengths', 'ends'] as const) {
      const grown = new Int32Array(capacity);
      grown.set(this[name]);
      this[name] = grown;
    }
  }

  /** The value of a string entry. */
  stringAt(index: number): string {
    if (this.kinds[index]! & DECODED) return this.decoded.get(index)!;
    const offset = this.offsets[index]!;
    return this.text.slice(offset + 1, offset + this.lengths[index]! - 1);
  }

  keyEquals(index: number, key: string): boolean {
    if (this.kinds[index]! & DECODED) return this.decoded.get(index) === key;
    return this.lengths[index] === key.length + 2 && this.text.startsWith(key, this.offsets[index]! + 1);
  }

  /** The entry of the value that follows the key at `keyIndex` inside a container ending at `stop`, or -1. */
  valueAfter(keyIndex: number, stop: number): number {
    const next = keyIndex + 1;
    return next < stop && (this.kinds[next]! & (KEY | STRAY)) === 0 ? next : -1;
  }

  /** The entries of an array's elements. */
  elements(index: number): readonly number[] {
    const cached = this.elementLists.get(index);
    if (cached !== undefined) return cached;
    const stop = this.ends[index]!;
    let count = 0;
    for (let element = index + 1; element < stop; element = this.ends[element]!) count++;
    // Sized once: most arrays here are short, and growing by push would reserve room for seventeen.
    const elements = new Array<number>(count);
    count = 0;
    for (let element = index + 1; element < stop; element = this.ends[element]!) elements[count++] = element;
    this.elementLists.set(index, elements);
    return elements;
  }

  /** The key entry of the last property named `key` of an object (JSON.parse semantics), or -1. */
  lastKey(object: number, key: string): number {
    const stop = this.ends[object]!;
    let found = -1;
    for (let entry = this.skipStrays(object + 1, stop); entry !== -1; entry = this.nextKey(entry, stop)) {
      if (this.keyEquals(entry, key)) found = entry;
    }
    return found;
  }

  /** The value entry of the last property named `key` of an object; -1 when absent or without a value yet. */
  member(object: number, key: string): number {
    const entry = this.lastKey(object, key);
    return entry === -1 ? -1 : this.valueAfter(entry, this.ends[object]!);
  }

  /** The key entry after the property whose key is at `key`, inside an object ending at `stop`, or -1. */
  nextKey(key: number, stop: number): number {
    const value = this.valueAfter(key, stop);
    return this.skipStrays(value === -1 ? key + 1 : this.ends[value]!, stop);
  }

  /**
   * The first key entry at or after `index` inside an object ending at `stop`, or -1. Anything else there (a STRAY,
   * or a value recovery left where a key belongs) is skipped whole, here and in `value`, so every reader of the tape
   * sees the same properties.
   */
  skipStrays(index: number, stop: number): number {
    while (index < stop && (this.kinds[index]! & KEY) === 0) index = this.ends[index]!;
    return index < stop ? index : -1;
  }

  /** The node of the top-level value; undefined for a text without one. */
  get root(): JsonNode | undefined {
    this.ensureIndexed();
    return this.count === 0 ? undefined : this.node(0);
  }

  /** The entry at a path of property names and array indexes from the top-level value, or -1. */
  entryAt(path: readonly PropertyKey[]): number {
    this.ensureIndexed();
    let entry = this.count === 0 ? -1 : 0;
    for (const segment of path) {
      if (entry < 0) return -1;
      const kind = this.kinds[entry]! & KIND;
      if (kind === OBJECT && typeof segment === 'string') entry = this.member(entry, segment);
      else if (kind === ARRAY && typeof segment === 'number') entry = this.elements(entry)[segment] ?? -1;
      else return -1;
    }
    return entry;
  }

  /** The node at a path (see `entryAt`), or undefined. */
  nodeAt(path: readonly PropertyKey[]): JsonNode | undefined {
    const entry = this.entryAt(path);
    return entry < 0 ? undefined : this.node(entry);
  }

  /**
   * Where `offset` lies: the path from the top-level value down to the innermost node, or value slot, that holds it.
   * Bounds are inclusive (a cursor just after a closing quote is still on that string), and a property typed
   * without a value yet owns the space after its key up to the next comma. Objects are searched key by key, arrays
   * by binary search, so a task in a 10,000-task file is found in a few dozen steps.
   */
  pathAt(offset: number): OffsetPath {
    this.ensureIndexed();
    const path: (string | number)[] = [];
    const entries: number[] = [];
    const keys: number[] = [];
    const located = (onKey: boolean): OffsetPath => ({ path, entries, keys, onKey });
    if (this.count === 0 || offset < this.offsets[0]! || offset > this.offsets[0]! + this.lengths[0]!) {
      return located(false);
    }
    entries.push(0);
    for (let entry = 0; ;) {
      const kind = this.kinds[entry]! & KIND;
      const start = this.offsets[entry]!;
      const inside = offset > start && (offset < start + this.lengths[entry]! || (this.kinds[entry]! & CLOSED) === 0);
      if (!inside || (kind !== OBJECT && kind !== ARRAY)) return located(false);
      const stop = this.ends[entry]!;
      let next = -1;
      if (kind === OBJECT) {
        for (let key = this.skipStrays(entry + 1, stop); key !== -1; key = this.nextKey(key, stop)) {
          const keyStart = this.offsets[key]!;
          if (offset < keyStart) break;
          const keyEnd = keyStart + this.lengths[key]!;
          const value = this.valueAfter(key, stop);
          if (offset <= keyEnd) {
            path.push(this.stringAt(key));
            keys.push(key);
            entries.push(value);
            return located(true);
          }
          const inValue =
            value !== -1
              ? offset <= this.offsets[value]! + this.lengths[value]!
              : this.text.lastIndexOf(',', offset - 1) < keyEnd;
          if (!inValue) continue;
          path.push(this.stringAt(key));
          keys.push(key);
          entries.push(value);
          if (value === -1) return located(false);
          next = value;
          break;
        }
      } else {
        const elements = this.elements(entry);
        let low = 0;
        let high = elements.length - 1;
        // The last element starting at or before the offset.
        while (low <= high) {
          const middle = (low + high) >> 1;
          if (this.offsets[elements[middle]!]! <= offset) low = middle + 1;
          else high = middle - 1;
        }
        const element = elements[high];
        if (element !== undefined && offset <= this.offsets[element]! + this.lengths[element]!) {
          path.push(high);
          keys.push(-1);
          entries.push(element);
          next = element;
        }
      }
      if (next === -1) return located(false);
      entry = next;
    }
  }

  /** Marks a recovered parse: its entries are complete. */
  markIndexed(): void {
    this.indexed = true;
  }

  private ensureIndexed(): void {
    if (this.indexed) return;
    this.indexed = true;
    // Passed in rather than searched inside: there, V8's optimised loop ran a hundred times slower (node 20).
    indexValid(this.text, this, this.text.indexOf('\\'));
  }

  node(index: number): JsonNode {
    const made = this.nodes.get(index);
    if (made !== undefined) return made;
    const offset = this.offsets[index]!;
    const length = this.lengths[index]!;
    let node: JsonNode;
    switch (this.kinds[index]! & KIND) {
      case OBJECT:
        node = new ObjectNode(this, index);
        break;
      case ARRAY:
        node = new ArrayNode(this, index);
        break;
      case STRING:
        node = { kind: 'string', offset, length, value: this.stringAt(index) };
        break;
      case NUMBER:
        node = { kind: 'number', offset, length, value: this.numberAt(index) };
        break;
      case NULL:
        node = { kind: 'null', offset, length, value: null };
        break;
      default:
        node = { kind: 'boolean', offset, length, value: (this.kinds[index]! & KIND) === TRUE };
    }
    this.nodes.set(index, node);
    return node;
  }

  private numberAt(index: number): number {
    const offset = this.offsets[index]!;
    return Number(this.text.slice(offset, offset + this.lengths[index]!));
  }

  /** The value of a string, number, boolean or null entry, without making its node. */
  private scalar(index: number): string | number | boolean | null {
    switch (this.kinds[index]! & KIND) {
      case STRING:
        return this.stringAt(index);
      case NUMBER:
        return this.numberAt(index);
      case TRUE:
        return true;
      case FALSE:
        return false;
      default:
        return null;
    }
  }

  /** The plain value of an entry's subtree (JSON.parse semantics: the last of duplicate keys wins). */
  value(start: number): unknown {
    const kind = this.kinds[start]! & KIND;
    if (kind !== OBJECT && kind !== ARRAY) return this.scalar(start);
    const result: unknown = kind === OBJECT ? {} : [];
    const open: { value: Record<string, unknown> | unknown[]; end: number }[] = [
      { value: result as Record<string, unknown> | unknown[], end: this.ends[start]! },
    ];
    for (let index = start + 1; index < this.ends[start]!;) {
      while (index >= open[open.length - 1]!.end) open.pop();
      const container = open[open.length - 1]!;
      const flags = this.kinds[index]!;
      if (flags & STRAY || (!Array.isArray(container.value) && (flags & KEY) === 0)) {
        index = this.ends[index]!;
        continue;
      }
      let key: string | undefined;
      if (flags & KEY) {
        key = this.stringAt(index);
        const valueIndex = this.valueAfter(index, container.end);
        if (valueIndex === -1) {
          setMember(container.value as Record<string, unknown>, key, undefined);
          index++;
          continue;
        }
        index = valueIndex;
      }
      const valueKind = this.kinds[index]! & KIND;
      const value: unknown = valueKind === OBJECT ? {} : valueKind === ARRAY ? [] : this.scalar(index);
      if (Array.isArray(container.value)) container.value.push(value);
      else setMember(container.value, key!, value);
      if (valueKind === OBJECT || valueKind === ARRAY) {
        open.push({ value: value as Record<string, unknown> | unknown[], end: this.ends[index]! });
      }
      index++;
    }
    return result;
  }
}

/** Own-property assignment: a "__proto__" key must become data, never the object's prototype. */
function setMember(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

abstract class ContainerNode {
  readonly offset: number;
  readonly length: number;
  /** False when the closing brace or bracket is missing: its required properties may simply not be typed yet. */
  readonly closed: boolean;
  private plain: unknown = undefined;

  constructor(
    protected readonly document: JsonDocument,
    protected readonly index: number,
  ) {
    this.offset = document.offsets[index]!;
    this.length = document.lengths[index]!;
    this.closed = (document.kinds[index]! & CLOSED) !== 0;
  }

  protected plainValue(): unknown {
    this.plain ??= this.document.value(this.index);
    return this.plain;
  }
}

export class ObjectNode extends ContainerNode {
  readonly kind = 'object';
  private members: PropertyNode[] | undefined;

  get value(): Record<string, unknown> {
    return this.plainValue() as Record<string, unknown>;
  }

  /** Every property in text order, duplicates included. */
  get properties(): readonly PropertyNode[] {
    if (this.members === undefined) {
      const members: PropertyNode[] = [];
      const stop = this.document.ends[this.index]!;
      for (let keyIndex = this.firstKey(); keyIndex !== -1; keyIndex = this.nextKey(keyIndex)) {
        const valueIndex = this.document.valueAfter(keyIndex, stop);
        members.push({
          key: this.document.node(keyIndex) as StringNode,
          value: valueIndex === -1 ? undefined : this.document.node(valueIndex),
        });
      }
      this.members = members;
    }
    return this.members;
  }

  private firstKey(): number {
    return this.document.skipStrays(this.index + 1, this.document.ends[this.index]!);
  }

  private nextKey(keyIndex: number): number {
    return this.document.nextKey(keyIndex, this.document.ends[this.index]!);
  }

  /** Whether a property named `key` is there, with a value or not yet. */
  has(key: string): boolean {
    return this.document.lastKey(this.index, key) !== -1;
  }

  /** The value of the last property named `key` (JSON.parse semantics for duplicate keys); makes no other node. */
  get(key: string): JsonNode | undefined {
    const entry = this.document.member(this.index, key);
    return entry === -1 ? undefined : this.document.node(entry);
  }
}

export class ArrayNode extends ContainerNode {
  readonly kind = 'array';
  private elementNodes: JsonNode[] | undefined;

  get value(): unknown[] {
    return this.plainValue() as unknown[];
  }

  /** The element at `index`, without making the others' nodes (a schema problem in task 9,000 needs one). */
  item(index: number): JsonNode | undefined {
    const element = this.document.elements(this.index)[index];
    return element === undefined ? undefined : this.document.node(element);
  }

  get items(): readonly JsonNode[] {
    this.elementNodes ??= this.document.elements(this.index).map((element) => this.document.node(element));
    return this.elementNodes;
  }
}

export function childOf(node: JsonNode | undefined, segment: PropertyKey): JsonNode | undefined {
  if (node?.kind === 'object' && typeof segment === 'string') return node.get(segment);
  if (node?.kind === 'array' && typeof segment === 'number') return node.item(segment);
  return undefined;
}

/** Whether the text starts with a byte order mark, which is no part of the JSON (RFC 8259 §8.1 lets parsers ignore it). */
const hasByteOrderMark = (text: string): boolean => text.charCodeAt(0) === 0xfeff;

export function parseJson(text: string): ParsedJson {
  const document = new JsonDocument(text);
  try {
    return { document, value: JSON.parse(hasByteOrderMark(text) ? text.slice(1) : text) as unknown, errors: [] };
  } catch {
    const errors = parseRecovering(text, document);
    document.markIndexed();
    return { document, value: document.count === 0 ? undefined : document.value(0), errors };
  }
}

/** Records the entries of text that JSON.parse accepted, so no check is needed here. */
function indexValid(text: string, document: JsonDocument, firstBackslash: number): void {
  const open: number[] = [];
  let expectKey = false;
  let backslash = firstBackslash;
  for (let i = 0; i < text.length;) {
    const c = text.charCodeAt(i);
    switch (c) {
      case 0x20: // space
      case 0x0a: // \n
      case 0x0d: // \r
      case 0x09: // \t
      case 0x3a: // :
      case 0xfeff: // the byte order mark, which JSON.parse accepted only at the start
        i++;
        continue;
      case 0x2c: // ,
        expectKey = (document.kinds[open[open.length - 1]!]! & KIND) === OBJECT;
        i++;
        continue;
      case 0x7b: // {
      case 0x5b: // [
        open.push(document.add(c === 0x7b ? OBJECT : ARRAY, i, 1));
        expectKey = c === 0x7b;
        i++;
        continue;
      case 0x7d: // }
      case 0x5d: // ]
        document.close(open.pop()!, i + 1, true);
        expectKey = false;
        i++;
        continue;
      case 0x22: {
        // "
        let end = text.indexOf('"', i + 1);
        let flags = expectKey ? STRING | KEY : STRING;
        if (backslash !== -1 && backslash < end) {
          // Backslashes occur only inside strings, so the first one ahead says whether this string has escapes.
          end = i + 1;
          for (let ch = text.charCodeAt(end); ch !== 0x22; ch = text.charCodeAt(end)) end += ch === 0x5c ? 2 : 1;
          backslash = text.indexOf('\\', end);
          flags |= DECODED;
        }
        const index = document.add(flags, i, end + 1 - i);
        if (flags & DECODED) document.decoded.set(index, JSON.parse(text.slice(i, end + 1)) as string);
        expectKey = false;
        i = end + 1;
        continue;
      }
      case 0x74: // t
        document.add(TRUE, i, 4);
        i += 4;
        continue;
      case 0x66: // f
        document.add(FALSE, i, 5);
        i += 5;
        continue;
      case 0x6e: // n
        document.add(NULL, i, 4);
        i += 4;
        continue;
      default: {
        let end = i + 1;
        for (let ch = text.charCodeAt(end); isNumberChar(ch); ch = text.charCodeAt(end)) end++;
        document.add(NUMBER, i, end - i);
        i = end;
      }
    }
  }
}

const isNumberChar = (ch: number): boolean =>
  (ch >= 0x30 && ch <= 0x39) || ch === 0x2e || ch === 0x65 || ch === 0x45 || ch === 0x2b || ch === 0x2d;

const scanErrorMessages: Record<number, string> = {
  [ScanError.UnexpectedEndOfComment]: 'Unterminated comment (comments are not allowed in JSON)',
  [ScanError.UnexpectedEndOfString]: 'Unterminated string: add the closing quote',
  [ScanError.UnexpectedEndOfNumber]: 'Incomplete number',
  [ScanError.InvalidUnicode]: 'Invalid unicode escape: use \\u followed by four hex digits',
  [ScanError.InvalidEscapeCharacter]: 'Invalid escape character in string',
  [ScanError.InvalidCharacter]: 'Invalid character in string (control characters must be escaped)',
};

type ObjectState = 'firstKey' | 'key' | 'colon' | 'value' | 'commaOrEnd';
type ArrayState = 'firstValue' | 'value' | 'commaOrEnd';
type Frame =
  | { readonly index: number; readonly kind: 'object'; state: ObjectState }
  | { readonly index: number; readonly kind: 'array'; state: ArrayState };

/** Where an offset is, as a person reads it (lines and columns from 1); counted only when a message needs it. */
export function lineAndColumnOf(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    const c = text.charCodeAt(i);
    // A line ends at \n, \r\n or a lone \r, as in LSP positions.
    if (c === 0x0a || (c === 0x0d && text.charCodeAt(i + 1) !== 0x0a)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

function lineAndColumn(text: string, offset: number): string {
  const { line, column } = lineAndColumnOf(text, offset);
  return `line ${line}, column ${column}`;
}

/** Parses any text into the document, recovering from every error; returns the syntax errors. */
function parseRecovering(text: string, document: JsonDocument): SyntaxError[] {
  return new RecoveringParser(text, document).parse();
}

/**
 * A state machine over the scanner's tokens with an explicit stack of open containers, so nesting depth costs no
 * call stack. Its steps are methods rather than closures: one parser per parse, nothing allocated per token.
 */
class RecoveringParser {
  private readonly scanner: JSONScanner;
  private readonly errors: SyntaxError[] = [];
  // Panic mode: after an error, further errors wait until a separator or closer (`:` `,` `}` `]`) has been
  // accepted where one belongs, so one fault gives one diagnostic rather than a cascade: after a missing value
  // (`"from_task": ,"task_a",`) the string that follows is no proof of being back on track.
  private recovering = false;
  private token = SyntaxKind.Unknown as SyntaxKind;
  private readonly stack: Frame[] = [];
  // Where the last comma stood, so that a trailing comma is reported on itself.
  private commaOffset = 0;
  private hasRoot = false;

  constructor(
    private readonly text: string,
    private readonly document: JsonDocument,
  ) {
    // Without a '/' there can be no comment, and the scanner may skip all trivia itself (much faster).
    this.scanner = createScanner(text, !text.includes('/'));
  }

  parse(): SyntaxError[] {
    if (hasByteOrderMark(this.text)) this.scanner.setPosition(1);
    this.next();
    for (;;) {
      const frame = this.stack[this.stack.length - 1];
      if (frame === undefined) {
        if (this.atTopLevel()) break;
      } else if (this.token === SyntaxKind.EOF) this.endOfFileIn(frame);
      else if (frame.kind === 'object') this.inObject(frame);
      else this.inArray(frame);
    }
    return this.errors;
  }

  private report(offset: number, length: number, message: string): void {
    if (this.recovering) return;
    this.errors.push({ offset, length, message });
    this.recovering = true;
  }

  /** Reports an error on the current token. */
  private reportToken(message: string): void {
    this.report(this.scanner.getTokenOffset(), this.scanner.getTokenLength(), message);
  }

  /** Moves to the next token that is not trivia, reporting comments. */
  private next(): void {
    for (;;) {
      const token = this.scanner.scan();
      this.token = token;
      switch (token) {
        case SyntaxKind.LineCommentTrivia:
        case SyntaxKind.BlockCommentTrivia:
          if (this.scanner.getTokenError() === ScanError.UnexpectedEndOfComment) {
            this.reportToken(scanErrorMessages[ScanError.UnexpectedEndOfComment]!);
          } else {
            this.reportToken('Comments are not allowed in JSON: remove it');
          }
          break;
        case SyntaxKind.LineBreakTrivia:
        case SyntaxKind.Trivia:
          break;
        default:
          return;
      }
    }
  }

  private accept(resynchronises = false): void {
    const error = this.scanner.getTokenError();
    if (error !== ScanError.None) {
      this.reportToken(scanErrorMessages[error] ?? 'Invalid token');
    } else if (resynchronises) {
      this.recovering = false;
    }
  }

  /** Adds the value that starts at the current token (a container also opens a frame); -1 when none starts. */
  private startValue(flags = 0): number {
    const offset = this.scanner.getTokenOffset();
    const length = this.scanner.getTokenLength();
    let index: number;
    switch (this.token) {
      case SyntaxKind.OpenBraceToken:
        index = this.document.add(OBJECT | flags, offset, 1);
        this.stack.push({ index, kind: 'object', state: 'firstKey' });
        break;
      case SyntaxKind.OpenBracketToken:
        index = this.document.add(ARRAY | flags, offset, 1);
        this.stack.push({ index, kind: 'array', state: 'firstValue' });
        break;
      case SyntaxKind.StringLiteral:
        if (this.scanner.getTokenError() === ScanError.UnexpectedEndOfString) return this.unterminatedString(flags);
        index = this.addString(flags, offset, length);
        break;
      case SyntaxKind.NumericLiteral:
        index = this.document.add(NUMBER | flags, offset, length);
        break;
      case SyntaxKind.TrueKeyword:
        index = this.document.add(TRUE | flags, offset, length);
        break;
      case SyntaxKind.FalseKeyword:
        index = this.document.add(FALSE | flags, offset, length);
        break;
      case SyntaxKind.NullKeyword:
        index = this.document.add(NULL | flags, offset, length);
        break;
      default:
        return -1;
    }
    this.accept();
    return index;
  }

  private addString(flags: number, offset: number, length: number): number {
    const value = this.scanner.getTokenValue();
    const raw = length >= 2 && this.text.charCodeAt(offset + length - 1) === 0x22;
    const decoded = !raw || this.text.slice(offset + 1, offset + length - 1) !== value;
    const index = this.document.add(STRING | flags | (decoded ? DECODED : 0), offset, length);
    if (decoded) this.document.decoded.set(index, value);
    return index;
  }

  /**
   * The scanner ran to the end of the line, swallowing the `}` or `,` a person typed after the string: end it at the
   * first blank or separator instead, and read the rest of the line again.
   */
  private unterminatedString(flags: number): number {
    const text = this.text;
    const offset = this.scanner.getTokenOffset();
    let end = offset + 1;
    while (end < text.length && !' \t\r\n,:}]'.includes(text[end]!)) end++;
    this.report(offset, end - offset, scanErrorMessages[ScanError.UnexpectedEndOfString]!);
    const index = this.document.add(STRING | flags | DECODED, offset, end - offset);
    this.document.decoded.set(index, text.slice(offset + 1, end));
    this.scanner.setPosition(end);
    return index;
  }

  private isValueStart(): boolean {
    const token = this.token;
    return (
      token === SyntaxKind.OpenBraceToken ||
      token === SyntaxKind.OpenBracketToken ||
      token === SyntaxKind.StringLiteral ||
      token === SyntaxKind.NumericLiteral ||
      token === SyntaxKind.TrueKeyword ||
      token === SyntaxKind.FalseKeyword ||
      token === SyntaxKind.NullKeyword
    );
  }

  /** Closes the innermost container at the current token, its closer. */
  private close(): void {
    const frame = this.stack.pop()!;
    this.document.close(frame.index, this.scanner.getTokenOffset() + this.scanner.getTokenLength(), true);
    this.accept(true);
  }

  private describe(): string {
    if (this.token === SyntaxKind.EOF) return 'end of file';
    return `'${this.text.substr(this.scanner.getTokenOffset(), Math.min(this.scanner.getTokenLength(), 20))}'`;
  }

  /** Outside every container: the top-level value, or the end. Returns whether parsing is done. */
  private atTopLevel(): boolean {
    if (this.token === SyntaxKind.EOF) {
      if (!this.hasRoot) this.report(0, 0, 'Expected a JSON object with "dag_id", "tasks" and "edges"');
      return true;
    }
    if (this.hasRoot) {
      const offset = this.scanner.getTokenOffset();
      this.report(offset, this.text.length - offset, 'End of file expected: remove the text after the top-level value');
      return true;
    }
    if (this.startValue() === -1) this.reportToken(`Value expected, found ${this.describe()}`);
    else this.hasRoot = true;
    this.next();
    return false;
  }

  /** The text ends inside `frame`: every open container ends there, unclosed, innermost first. */
  private endOfFileIn(frame: Frame): void {
    const text = this.text;
    const opener = frame.kind === 'object' ? "'}'" : "']'";
    const openedAt = lineAndColumn(text, this.document.offsets[frame.index]!);
    this.report(
      text.length,
      0,
      `Unexpected end of file: expected ${opener} to close the ${frame.kind} opened at ${openedAt}`,
    );
    while (this.stack.length > 0) this.document.close(this.stack.pop()!.index, text.length, false);
  }

  private inObject(frame: Frame & { kind: 'object' }): void {
    switch (frame.state) {
      case 'firstKey':
      case 'key':
        this.expectKey(frame);
        break;
      case 'colon':
        this.expectColon(frame);
        break;
      case 'value':
        if (this.startValue() !== -1) frame.state = 'commaOrEnd';
        else {
          this.reportToken(`Value expected, found ${this.describe()}`);
          if (this.token === SyntaxKind.CloseBraceToken) this.close();
          else if (this.token === SyntaxKind.CommaToken) frame.state = 'key';
        }
        this.next();
        break;
      case 'commaOrEnd':
        this.expectCommaOrEnd(frame);
        break;
    }
  }

  private inArray(frame: Frame & { kind: 'array' }): void {
    switch (frame.state) {
      case 'firstValue':
      case 'value':
        if (this.token === SyntaxKind.CloseBracketToken) {
          this.closeList(frame.state === 'value');
          return;
        }
        if (this.startValue() !== -1) frame.state = 'commaOrEnd';
        else {
          this.reportToken(`Value expected, found ${this.describe()}`);
          if (this.token === SyntaxKind.CloseBraceToken && this.stack.length > 1) this.close();
        }
        this.next();
        break;
      case 'commaOrEnd':
        this.expectCommaOrEnd(frame);
        break;
    }
  }

  /** The closer of the innermost container, after its first member slot or (`afterComma`) after a comma. */
  private closeList(afterComma: boolean): void {
    if (afterComma) this.report(this.commaOffset, 1, 'Trailing comma: remove it (JSON allows none)');
    this.close();
    this.next();
  }

  private expectKey(frame: Frame & { kind: 'object' }): void {
    if (this.token === SyntaxKind.StringLiteral) {
      this.startValue(KEY);
      frame.state = 'colon';
    } else if (this.token === SyntaxKind.CloseBraceToken) {
      this.closeList(frame.state === 'key');
      return;
    } else {
      this.reportToken(`Property name expected, found ${this.describe()}`);
      if (this.token === SyntaxKind.CommaToken) frame.state = 'key';
      else if (this.token === SyntaxKind.CloseBracketToken) this.close();
      else if (this.isValueStart()) {
        // A value where a key belongs: skip it as a whole.
        this.startValue(STRAY);
        frame.state = 'commaOrEnd';
      }
    }
    this.next();
  }

  private expectColon(frame: Frame & { kind: 'object' }): void {
    if (this.token === SyntaxKind.ColonToken) {
      this.accept(true);
      frame.state = 'value';
      this.next();
      return;
    }
    this.reportToken(`Colon expected after property name, found ${this.describe()}`);
    if (this.isValueStart()) {
      frame.state = 'value';
      return;
    }
    // A string with neither colon nor value after it is no key: a value out of place, or a key being typed.
    const document = this.document;
    const key = document.count - 1;
    document.kinds[key] = (document.kinds[key]! & ~KEY) | STRAY;
    if (this.token === SyntaxKind.CloseBraceToken) this.close();
    else if (this.token === SyntaxKind.CommaToken) frame.state = 'key';
    this.next();
  }

  /** After a member of either container: a comma, its closer, or (reported) a member without a comma before it. */
  private expectCommaOrEnd(frame: Frame): void {
    const inObject = frame.kind === 'object';
    const token = this.token;
    if (token === SyntaxKind.CommaToken) {
      this.commaOffset = this.scanner.getTokenOffset();
      this.accept(true);
      this.expectMember(frame);
      this.next();
    } else if (token === (inObject ? SyntaxKind.CloseBraceToken : SyntaxKind.CloseBracketToken)) {
      this.close();
      this.next();
    } else if (inObject ? token === SyntaxKind.StringLiteral : this.isValueStart()) {
      this.reportToken(inObject ? 'Comma expected between properties' : 'Comma expected between array elements');
      this.expectMember(frame);
    } else {
      this.reportToken(`Expected ',' or '${inObject ? '}' : ']'}', found ${this.describe()}`);
      const otherCloser = inObject ? SyntaxKind.CloseBracketToken : SyntaxKind.CloseBraceToken;
      if (token === otherCloser && this.stack.length > 1) this.close();
      this.next();
    }
  }

  /** The container now expects its next member: a key, or an element. */
  private expectMember(frame: Frame): void {
    if (frame.kind === 'object') frame.state = 'key';
    else frame.state = 'value';
  }
}
