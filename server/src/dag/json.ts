// An iterative JSON parser on jsonc-parser's scanner: it keeps every offset, builds the plain value alongside the
// tree, recovers from errors with one diagnostic per fault, and never recurses, so nesting depth is unbounded.
import { createScanner, ScanError, SyntaxKind } from 'jsonc-parser';

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
  value: JsonNode | undefined;
}
export interface ObjectNode {
  readonly kind: 'object';
  readonly offset: number;
  length: number;
  readonly properties: PropertyNode[];
  /** False when the closing brace is missing: its required properties may simply not have been typed yet. */
  closed: boolean;
  readonly value: Record<string, unknown>;
}
export interface ArrayNode {
  readonly kind: 'array';
  readonly offset: number;
  length: number;
  readonly items: JsonNode[];
  closed: boolean;
  readonly value: unknown[];
}
export type JsonNode = StringNode | ScalarNode | ObjectNode | ArrayNode;

export interface SyntaxError {
  readonly offset: number;
  readonly length: number;
  readonly message: string;
}

export interface ParsedJson {
  readonly root: JsonNode | undefined;
  readonly errors: readonly SyntaxError[];
}

/** The value of the last property named `key` (JSON.parse semantics for duplicate keys). */
export function propertyOf(node: ObjectNode, key: string): PropertyNode | undefined {
  for (let i = node.properties.length - 1; i >= 0; i--) {
    const property = node.properties[i]!;
    if (property.key.value === key) return property;
  }
  return undefined;
}

export function childOf(node: JsonNode | undefined, segment: PropertyKey): JsonNode | undefined {
  if (node?.kind === 'object' && typeof segment === 'string') return propertyOf(node, segment)?.value;
  if (node?.kind === 'array' && typeof segment === 'number') return node.items[segment];
  return undefined;
}

export function nodeAtPath(root: JsonNode | undefined, path: readonly PropertyKey[]): JsonNode | undefined {
  let node = root;
  for (const segment of path) node = childOf(node, segment);
  return node;
}

/** Own-property assignment: a "__proto__" key must become data, never the object's prototype. */
function setMember(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

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
  | { readonly node: ObjectNode; state: ObjectState; property: PropertyNode | undefined }
  | { readonly node: ArrayNode; state: ArrayState };

export function parseJson(text: string): ParsedJson {
  // Without a '/' there can be no comment, and the scanner may skip all trivia itself (much faster).
  const scanner = createScanner(text, !text.includes('/'));
  const errors: SyntaxError[] = [];
  // Panic mode: after an error, further errors wait until a token has been accepted cleanly, so one fault gives
  // one diagnostic rather than a cascade.
  let recovering = false;
  const report = (offset: number, length: number, message: string): void => {
    if (recovering) return;
    errors.push({ offset, length, message });
    recovering = true;
  };

  let token = SyntaxKind.Unknown as SyntaxKind;
  const next = (): SyntaxKind => {
    for (;;) {
      token = scanner.scan();
      switch (token) {
        case SyntaxKind.LineCommentTrivia:
        case SyntaxKind.BlockCommentTrivia:
          if (scanner.getTokenError() === ScanError.UnexpectedEndOfComment) {
            report(
              scanner.getTokenOffset(),
              scanner.getTokenLength(),
              scanErrorMessages[ScanError.UnexpectedEndOfComment]!,
            );
          } else {
            report(scanner.getTokenOffset(), scanner.getTokenLength(), 'Comments are not allowed in JSON: remove it');
          }
          break;
        case SyntaxKind.LineBreakTrivia:
        case SyntaxKind.Trivia:
          break;
        default:
          return token;
      }
    }
  };
  const tokenOffset = (): number => scanner.getTokenOffset();
  const tokenLength = (): number => scanner.getTokenLength();
  const accept = (): void => {
    const error = scanner.getTokenError();
    if (error !== ScanError.None) {
      report(tokenOffset(), tokenLength(), scanErrorMessages[error] ?? 'Invalid token');
    } else {
      recovering = false;
    }
  };

  const stack: Frame[] = [];
  // Where the last comma stood, so that a trailing comma is reported on itself.
  let commaOffset = 0;
  let root: JsonNode | undefined;

  /** Parses the value that starts at the current token: scalars return at once, containers push a frame. */
  const startValue = (): JsonNode | undefined => {
    const offset = tokenOffset();
    const length = tokenLength();
    switch (token) {
      case SyntaxKind.OpenBraceToken: {
        accept();
        const node: ObjectNode = { kind: 'object', offset, length: 1, properties: [], closed: false, value: {} };
        stack.push({ node, state: 'firstKey', property: undefined });
        return node;
      }
      case SyntaxKind.OpenBracketToken: {
        accept();
        const node: ArrayNode = { kind: 'array', offset, length: 1, items: [], closed: false, value: [] };
        stack.push({ node, state: 'firstValue' });
        return node;
      }
      case SyntaxKind.StringLiteral:
        accept();
        return { kind: 'string', offset, length, value: scanner.getTokenValue() };
      case SyntaxKind.NumericLiteral:
        accept();
        return { kind: 'number', offset, length, value: Number(scanner.getTokenValue()) };
      case SyntaxKind.TrueKeyword:
      case SyntaxKind.FalseKeyword:
        accept();
        return { kind: 'boolean', offset, length, value: token === SyntaxKind.TrueKeyword };
      case SyntaxKind.NullKeyword:
        accept();
        return { kind: 'null', offset, length, value: null };
      default:
        return undefined;
    }
  };
  const isValueStart = (): boolean =>
    token === SyntaxKind.OpenBraceToken ||
    token === SyntaxKind.OpenBracketToken ||
    token === SyntaxKind.StringLiteral ||
    token === SyntaxKind.NumericLiteral ||
    token === SyntaxKind.TrueKeyword ||
    token === SyntaxKind.FalseKeyword ||
    token === SyntaxKind.NullKeyword;

  const close = (): void => {
    const frame = stack.pop()!;
    frame.node.closed = true;
    frame.node.length = tokenOffset() + tokenLength() - frame.node.offset;
    accept();
  };

  const describe = (): string =>
    token === SyntaxKind.EOF ? 'end of file' : `'${text.substr(tokenOffset(), Math.min(tokenLength(), 20))}'`;

  next();
  for (;;) {
    const frame = stack[stack.length - 1];
    if (frame === undefined) {
      if (token === SyntaxKind.EOF) {
        if (root === undefined) report(0, 0, 'Expected a JSON object with "dag_id", "tasks" and "edges"');
        break;
      }
      if (root !== undefined) {
        report(
          tokenOffset(),
          text.length - tokenOffset(),
          'End of file expected: remove the text after the top-level value',
        );
        break;
      }
      const value = startValue();
      if (value === undefined) report(tokenOffset(), tokenLength(), `Value expected, found ${describe()}`);
      else root = value;
      next();
      continue;
    }

    if (token === SyntaxKind.EOF) {
      const opener = frame.node.kind === 'object' ? "'}'" : "']'";
      report(
        text.length,
        0,
        `Unexpected end of file: expected ${opener} to close the ${frame.node.kind} opened at offset ${frame.node.offset}`,
      );
      // Every open container ends here, unclosed.
      for (const open of stack) open.node.length = text.length - open.node.offset;
      stack.length = 0;
      continue;
    }

    if (frame.node.kind === 'object') {
      const objectFrame = frame as Extract<Frame, { node: ObjectNode }>;
      const object = objectFrame.node;
      switch (objectFrame.state) {
        case 'firstKey':
        case 'key':
          if (token === SyntaxKind.StringLiteral) {
            const key = startValue() as StringNode;
            objectFrame.property = { key, value: undefined };
            object.properties.push(objectFrame.property);
            objectFrame.state = 'colon';
            next();
          } else if (token === SyntaxKind.CloseBraceToken) {
            if (objectFrame.state === 'key') report(commaOffset, 1, 'Trailing comma: remove it (JSON allows none)');
            close();
            next();
          } else {
            report(tokenOffset(), tokenLength(), `Property name expected, found ${describe()}`);
            if (token === SyntaxKind.CommaToken) objectFrame.state = 'key';
            else if (token === SyntaxKind.CloseBracketToken) {
              close();
            } else if (isValueStart()) {
              // A value where a key belongs: skip it as a whole.
              startValue();
              objectFrame.state = 'commaOrEnd';
            }
            next();
          }
          break;
        case 'colon':
          if (token === SyntaxKind.ColonToken) {
            accept();
            objectFrame.state = 'value';
            next();
          } else {
            report(tokenOffset(), tokenLength(), `Colon expected after property name, found ${describe()}`);
            if (isValueStart()) objectFrame.state = 'value';
            else if (token === SyntaxKind.CloseBraceToken) {
              close();
              next();
            } else if (token === SyntaxKind.CommaToken) {
              objectFrame.state = 'key';
              next();
            } else next();
          }
          break;
        case 'value': {
          const value = startValue();
          if (value !== undefined) {
            objectFrame.property!.value = value;
            setMember(object.value, objectFrame.property!.key.value, value.value);
            objectFrame.state = 'commaOrEnd';
            next();
          } else {
            report(tokenOffset(), tokenLength(), `Value expected, found ${describe()}`);
            if (token === SyntaxKind.CloseBraceToken) close();
            else if (token === SyntaxKind.CommaToken) objectFrame.state = 'key';
            next();
          }
          break;
        }
        case 'commaOrEnd':
          if (token === SyntaxKind.CommaToken) {
            commaOffset = tokenOffset();
            accept();
            objectFrame.state = 'key';
            next();
          } else if (token === SyntaxKind.CloseBraceToken) {
            close();
            next();
          } else if (token === SyntaxKind.StringLiteral) {
            report(tokenOffset(), tokenLength(), 'Comma expected between properties');
            objectFrame.state = 'key';
          } else {
            report(tokenOffset(), tokenLength(), `Expected ',' or '}', found ${describe()}`);
            if (token === SyntaxKind.CloseBracketToken && stack.length > 1) close();
            next();
          }
          break;
      }
    } else {
      const arrayFrame = frame as Extract<Frame, { node: ArrayNode }>;
      const array = arrayFrame.node;
      switch (arrayFrame.state) {
        case 'firstValue':
        case 'value': {
          if (token === SyntaxKind.CloseBracketToken) {
            if (arrayFrame.state === 'value') report(commaOffset, 1, 'Trailing comma: remove it (JSON allows none)');
            close();
            next();
            break;
          }
          const value = startValue();
          if (value !== undefined) {
            array.items.push(value);
            array.value.push(value.value);
            arrayFrame.state = 'commaOrEnd';
          } else {
            report(tokenOffset(), tokenLength(), `Value expected, found ${describe()}`);
            if (token === SyntaxKind.CloseBraceToken && stack.length > 1) close();
          }
          next();
          break;
        }
        case 'commaOrEnd':
          if (token === SyntaxKind.CommaToken) {
            commaOffset = tokenOffset();
            accept();
            arrayFrame.state = 'value';
            next();
          } else if (token === SyntaxKind.CloseBracketToken) {
            close();
            next();
          } else if (isValueStart()) {
            report(tokenOffset(), tokenLength(), 'Comma expected between array elements');
            arrayFrame.state = 'value';
          } else {
            report(tokenOffset(), tokenLength(), `Expected ',' or ']', found ${describe()}`);
            if (token === SyntaxKind.CloseBraceToken && stack.length > 1) close();
            next();
          }
          break;
      }
    }
  }
  return { root, errors };
}
