// What a quick fix changes, said in terms of the syntax tree so that several fixes combine into one edit of the file:
// the removals and appends of one container are written together (two separate removals overlap at a comma), and
// fixes whose changes touch the same text are told apart before any of them is applied.
import { distance } from 'fastest-levenshtein';
import type { DagAnalysis } from '../dag/analyze';
import type { ProviderOffers } from '../dag/checks';
import type { TextSpan } from '../dag/diagnostic';
import type { ArrayNode, JsonNode, ObjectNode } from '../dag/json';
import {
  type DocumentStyle,
  type OffsetEdit,
  editEntries,
  propertyEntry,
  renderArray,
  replaceValue,
} from './jsonEdits';

export type Change =
  | ({ readonly kind: 'replace' } & OffsetEdit)
  | { readonly kind: 'remove'; readonly container: ObjectNode | ArrayNode; readonly index: number }
  | {
      readonly kind: 'append';
      readonly container: ObjectNode | ArrayNode;
      /** The entry, rendered at its line's indentation (for an object, `"key": value`). */
      readonly render: (indent: string) => string;
    }
  | {
      /**
       * Adds the array property `list`, which the object does not have yet, with the element (none: an empty list).
       * The elements added to one such list make one new property.
       */
      readonly kind: 'append-list';
      readonly container: ObjectNode;
      readonly list: string;
      readonly element?: (indent: string) => string;
    };

export interface Fix {
  readonly title: string;
  readonly changes: readonly Change[];
  readonly preferred?: boolean;
}

/** What a fix works on: a diagnostic (from a request or from the server's own analysis) and the analysis it is of. */
export interface Target {
  readonly code: string;
  readonly message: string;
  readonly start: number;
  readonly end: number;
  /** The diagnostic's related places in the same file. */
  readonly related: readonly TextSpan[];
  readonly uri: string;
  readonly analysis: DagAnalysis;
  /** What the providers offer; undefined when none is configured. */
  readonly offers: ProviderOffers | undefined;
}

export const MAX_SUGGESTIONS = 3;

/** Whether the node is exactly `[start, end)`: a diagnostic of an older text gets no fix rather than a wrong one. */
export const spans = (node: JsonNode | undefined, start: number, end: number): boolean =>
  node !== undefined && node.offset === start && node.offset + node.length === end;

/** `names` closest to `name` first (ties by name), at most MAX_SUGGESTIONS, those `near` keeps; never one of `excluded`. */
function rankedNames(
  names: Iterable<string>,
  name: string,
  excluded: readonly (string | undefined)[],
  near: (edits: number, candidate: string) => boolean,
): string[] {
  const scored: { name: string; distance: number }[] = [];
  for (const candidate of names) {
    if (excluded.includes(candidate)) continue;
    const edits = distance(name, candidate);
    if (near(edits, candidate)) scored.push({ name: candidate, distance: edits });
  }
  scored.sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return scored.slice(0, MAX_SUGGESTIONS).map((entry) => entry.name);
}

/** The names close enough to `name` to be what was meant, closest first; never one of `excluded`. */
export const closestNames = (
  names: Iterable<string>,
  name: string,
  excluded: readonly (string | undefined)[],
): string[] =>
  // A typo changes about one character in three at most; farther names are other things, not what was meant.
  rankedNames(
    names,
    name,
    excluded,
    (edits, candidate) => edits <= Math.max(1, Math.floor(Math.max(name.length, candidate.length) / 3)),
  );

/** The names nearest to `name`, however far: the few a person picks from when none is a typo of it. */
export const nearestNames = (names: Iterable<string>, name: string): string[] =>
  rankedNames(names, name, [], () => true);

/** "Change to …" for each candidate, the first preferred; `nodes` are the places the fix rewrites. */
export const changeTo = (candidates: readonly string[], nodes: readonly JsonNode[]): Fix[] =>
  candidates.map((candidate, rank) => ({
    title: `Change to ${JSON.stringify(candidate)}`,
    changes: nodes.map((node) => replace(replaceValue(node, candidate))),
    preferred: rank === 0,
  }));

/** Removes the last property named `key` (the one JSON.parse keeps). */
export function dropProperty(object: ObjectNode | undefined, key: string, title: string, preferred = false): Fix[] {
  const index = object === undefined ? -1 : object.properties.map((property) => property.key.value).lastIndexOf(key);
  return object === undefined || index === -1
    ? []
    : [{ title, changes: [{ kind: 'remove', container: object, index }], preferred }];
}

export const replace = (edit: OffsetEdit): Change => ({ kind: 'replace', ...edit });

/** The text a change claims: another change claiming any of it cannot be applied with it. */
function claim(change: Change): { start: number; end: number } {
  if (change.kind === 'replace') return change;
  const { container } = change;
  if (change.kind === 'append' || change.kind === 'append-list') {
    // Appends to one container combine; only a change around the container's end excludes them.
    const at = container.offset + container.length - 1;
    return { start: at, end: at };
  }
  const { index } = change;
  const property = container.kind === 'object' ? container.properties[index] : undefined;
  const first =
    property === undefined ? (container.kind === 'array' ? container.items[index] : undefined) : property.key;
  const last = property?.value ?? first;
  return first === undefined || last === undefined
    ? { start: 0, end: 0 }
    : { start: first.offset, end: last.offset + last.length };
}

/** Spans overlap when they share text; a point (an append) only when it is strictly inside the other span. */
function overlaps(a: { start: number; end: number }, b: { start: number; end: number }): boolean {
  if (a.start === a.end) return b.start < a.start && a.start < b.end;
  if (b.start === b.end) return a.start < b.start && b.start < a.end;
  return a.start < b.end && b.start < a.end;
}

/** Whether `changes` can be applied together with `taken` (changes already chosen). */
export const compatible = (changes: readonly Change[], taken: readonly Change[]): boolean =>
  changes.every((change) => taken.every((other) => !overlaps(claim(change), claim(other))));

type Render = (indent: string) => string;

/** The text edits of the changes, in text order; those of one container become one change of its entries. */
export function resolveChanges(text: string, style: DocumentStyle, changes: readonly Change[]): OffsetEdit[] {
  const edits: OffsetEdit[] = [];
  const containers = new Map<
    number,
    { container: ObjectNode | ArrayNode; removed: Set<number>; appended: Render[]; lists: Map<string, Render[]> }
  >();
  for (const change of changes) {
    if (change.kind === 'replace') {
      edits.push({ start: change.start, end: change.end, newText: change.newText });
      continue;
    }
    const { container } = change;
    let entries = containers.get(container.offset);
    if (entries === undefined) {
      entries = { container, removed: new Set(), appended: [], lists: new Map() };
      containers.set(container.offset, entries);
    }
    if (change.kind === 'remove') entries.removed.add(change.index);
    else if (change.kind === 'append') entries.appended.push(change.render);
    else {
      const elements = entries.lists.get(change.list) ?? [];
      entries.lists.set(change.list, change.element === undefined ? elements : [...elements, change.element]);
    }
  }
  for (const { container, removed, appended, lists } of containers.values()) {
    if (container.kind === 'object') {
      for (const [key, elements] of lists) {
        appended.push(propertyEntry(text, container, key, (indent) => renderArray(elements, indent, style)));
      }
    }
    edits.push(...editEntries(text, container, removed, appended, style));
  }
  return edits.sort((a, b) => a.start - b.start || a.end - b.end);
}
