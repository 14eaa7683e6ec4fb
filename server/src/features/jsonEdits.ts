// Text edits on the JSON syntax tree that keep the file's layout: remove elements or properties with exactly one
// adjacent comma and their whitespace, append some in the style of their neighbours, render a small object in a given
// style.
import type { ArrayNode, JsonNode, ObjectNode, PropertyNode } from '../dag/json';

/** Replace `[start, end)` of the text with `newText`. */
export interface OffsetEdit {
  readonly start: number;
  readonly end: number;
  readonly newText: string;
}

/** How the whole file is laid out, for text that has no neighbour to copy. */
export interface DocumentStyle {
  /** One level of indentation, e.g. two spaces or a tab. */
  readonly indentUnit: string;
  /** False for a file written on one line: new containers stay on one line too. */
  readonly multiLine: boolean;
}

/** The text around the properties of an object, to write another object the same way. */
export interface ObjectLayout {
  /** Between `{` and the first property, e.g. `" "` or `"\n    "`. */
  readonly open: string;
  /** Between a key and its value, e.g. `": "`. */
  readonly colon: string;
  /** Between two properties, comma included, e.g. `", "` or `",\n    "`. */
  readonly separator: string;
  /** Between the last property and `}`. */
  readonly close: string;
}

interface Span {
  readonly start: number;
  readonly end: number;
}

const ONE_LINE: ObjectLayout = { open: ' ', colon: ': ', separator: ', ', close: ' ' };

const end = (node: { readonly offset: number; readonly length: number }): number => node.offset + node.length;
const isBlank = (text: string): boolean => /^\s*$/.test(text);
const isSeparator = (text: string, mark: ',' | ':'): boolean => text.trim() === mark;

const propertySpan = (property: PropertyNode): Span => ({
  start: property.key.offset,
  end: end(property.value ?? property.key),
});
const elementSpans = (array: ArrayNode): Span[] => array.items.map((item) => ({ start: item.offset, end: end(item) }));

function skipBlank(text: string, offset: number, step: 1 | -1): number {
  // Backwards, `offset` is one past the character looked at.
  const at = step === 1 ? 0 : -1;
  while (offset + at >= 0 && offset + at < text.length && /\s/.test(text[offset + at]!)) offset += step;
  return offset;
}

function skipComma(text: string, offset: number, step: 1 | -1): number {
  return text[step === 1 ? offset : offset - 1] === ',' ? offset + step : offset;
}

/** The whitespace that starts the line holding `offset`. */
export function lineIndent(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart, offset))![0];
}

/** Where the closing bracket is; undefined when it is missing (broken text), so nothing after the entries is touched. */
const closingOffset = (container: ObjectNode | ArrayNode): number | undefined =>
  container.closed ? end(container) - 1 : undefined;

export function documentStyle(text: string, root: ObjectNode): DocumentStyle {
  const multiLine = text.slice(root.offset, end(root)).includes('\n');
  const first = root.properties[0];
  const rootIndent = lineIndent(text, root.offset);
  const propertyIndent = first === undefined ? '' : lineIndent(text, first.key.offset);
  const indentUnit =
    propertyIndent.length > rootIndent.length && propertyIndent.startsWith(rootIndent)
      ? propertyIndent.slice(rootIndent.length)
      : '  ';
  return { indentUnit, multiLine };
}

export function objectLayout(text: string, object: ObjectNode): ObjectLayout {
  const properties = object.properties;
  const first = properties[0];
  if (first === undefined) return ONE_LINE;
  const spans = properties.map(propertySpan);
  const last = spans[spans.length - 1]!;
  const open = text.slice(object.offset + 1, first.key.offset);
  const colon = first.value === undefined ? '' : text.slice(end(first.key), first.value.offset);
  const between = spans.length > 1 ? text.slice(spans[0]!.end, spans[1]!.start) : '';
  const close = text.slice(last.end, closingOffset(object) ?? last.end);
  const multiLine = open.includes('\n');
  const keyColon = isSeparator(colon, ':') ? colon : ONE_LINE.colon;
  // With one property there is no separator to copy: a one-line object spaces it as it spaces its colon.
  const oneLineSeparator = /\s$/.test(keyColon) ? ', ' : ',';
  return {
    open: isBlank(open) ? open : ONE_LINE.open,
    colon: keyColon,
    separator: isSeparator(between, ',') ? between : multiLine ? `,${open}` : oneLineSeparator,
    close: isBlank(close) && object.closed ? close : multiLine ? `\n${lineIndent(text, object.offset)}` : open,
  };
}

/** The same layout for an object whose `{` is on a line indented by `indent`. */
export function reindented(layout: ObjectLayout, indent: string, style: DocumentStyle): ObjectLayout {
  if (!layout.open.includes('\n')) return layout;
  const inner = `\n${indent}${style.indentUnit}`;
  return { open: inner, colon: layout.colon, separator: `,${inner}`, close: `\n${indent}` };
}

export function renderObject(layout: ObjectLayout, entries: readonly (readonly [string, unknown])[]): string {
  const properties = entries.map(([key, value]) => `${JSON.stringify(key)}${layout.colon}${JSON.stringify(value)}`);
  return `{${layout.open}${properties.join(layout.separator)}${layout.close}}`;
}

/** `render(inner)` on its own line one level in from `outer`, or as it is in a one-line file. */
function block(render: (indent: string) => string, outer: string, style: DocumentStyle): string {
  const inner = outer + style.indentUnit;
  return style.multiLine ? `\n${inner}${render(inner)}\n${outer}` : render(inner);
}

/** Several entries rendered at one indentation, each on its own line in a multi-line file. */
const joined =
  (renders: readonly ((indent: string) => string)[], style: DocumentStyle) =>
  (indent: string): string =>
    renders.map((render) => render(indent)).join(style.multiLine ? `,\n${indent}` : ', ');

/** An array of the rendered elements (maybe none), each at its indentation; the array's own line is indented by `indent`. */
export function renderArray(
  renders: readonly ((indent: string) => string)[],
  indent: string,
  style: DocumentStyle,
): string {
  return renders.length === 0 ? '[]' : `[${block(joined(renders, style), indent, style)}]`;
}

const entrySpans = (container: ObjectNode | ArrayNode): Span[] =>
  container.kind === 'object' ? container.properties.map(propertySpan) : elementSpans(container);

/**
 * One change of a container's entries: removes those at `removed` and appends `appended` after the last. A removed
 * entry goes with the comma and whitespace after it, so the next entry takes its place and indentation; removed last
 * entries with the comma and whitespace before them; removing them all leaves the container empty (`[]`, `{}`). An
 * appended entry is separated as the last two are, or fills an empty container. Several removals and appends in one
 * container come out as text that is still valid, which separate edits would not (two of them overlap at a comma).
 */
export function editEntries(
  text: string,
  container: ObjectNode | ArrayNode,
  removed: ReadonlySet<number>,
  appended: readonly ((indent: string) => string)[],
  style: DocumentStyle,
): OffsetEdit[] {
  const spans = entrySpans(container);
  const kept = spans.filter((_, index) => !removed.has(index));
  const last = spans[spans.length - 1];
  if (kept.length === 0 && (last !== undefined || appended.length > 0)) {
    const start = container.offset + 1;
    const indent = lineIndent(text, container.offset);
    // An empty object is filled on its line, as small objects are written (`"input": {}`); an array on lines of its own.
    const newText =
      appended.length === 0
        ? ''
        : container.kind === 'object'
          ? ` ${joined(appended, { ...style, multiLine: false })(indent + style.indentUnit)} `
          : block(joined(appended, style), indent, style);
    return [{ start, end: closingOffset(container) ?? last?.end ?? start, newText }];
  }
  const edits: OffsetEdit[] = [];
  for (let first = 0; first < spans.length; first++) {
    if (!removed.has(first)) continue;
    let final = first;
    while (removed.has(final + 1)) final++;
    const next = spans[final + 1];
    if (next !== undefined) {
      const after = skipBlank(text, skipComma(text, skipBlank(text, spans[final]!.end, 1), 1), 1);
      edits.push({ start: spans[first]!.start, end: Math.min(after, next.start), newText: '' });
    } else {
      const before = skipBlank(text, skipComma(text, skipBlank(text, spans[first]!.start, -1), -1), -1);
      edits.push({ start: Math.max(before, spans[first - 1]!.end), end: spans[final]!.end, newText: '' });
    }
    first = final;
  }
  if (appended.length > 0 && last !== undefined) {
    const between =
      spans.length > 1
        ? text.slice(spans[spans.length - 2]!.end, last.start)
        : `,${text.slice(container.offset + 1, last.start)}`;
    const separator = isSeparator(between, ',') ? between : ', ';
    const indent = lineIndent(text, last.start);
    edits.push({
      start: last.end,
      end: last.end,
      newText: appended.map((render) => separator + render(indent)).join(''),
    });
  }
  return edits;
}

/** The entry `"key": value` of `object`, its value rendered at the indentation of the entry's line. */
export function propertyEntry(
  text: string,
  object: ObjectNode,
  key: string,
  renderValue: (indent: string) => string,
): (indent: string) => string {
  const { colon } = objectLayout(text, object);
  return (indent) => `${JSON.stringify(key)}${colon}${renderValue(indent)}`;
}

/** Replaces a value with `value`, written as JSON. */
export const replaceValue = (node: JsonNode, value: unknown): OffsetEdit => ({
  start: node.offset,
  end: end(node),
  newText: JSON.stringify(value),
});
