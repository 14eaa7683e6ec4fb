// What the text at an offset is, in the terms of the format: the place every editor feature starts from (completion,
// hover, navigation, rename). Found by one descent on the syntax tape, then matched against the format's paths.
import type { JsonDocument, JsonNode, OffsetPath, StringNode } from './json';
import type { DagModel, EdgeDeclaration, TaskDeclaration } from './model';

/** The kinds of object the format has, for property names and their documentation. */
export type ObjectKind = 'dag' | 'task' | 'edge' | 'input' | 'source' | 'metadata';

/**
 * A place in a DAG file. For value sites, `node` is the value there (undefined while a key has no value yet, or, in
 * `from_tasks`, for a position between elements, where a new element would go).
 */
export type Site =
  | { readonly kind: 'task-id'; readonly task: TaskDeclaration; readonly node: JsonNode | undefined }
  | {
      readonly kind: 'edge-end';
      readonly edge: EdgeDeclaration;
      readonly end: 'from' | 'to';
      readonly node: JsonNode | undefined;
    }
  | {
      readonly kind: 'reference';
      readonly task: TaskDeclaration;
      /** `from_task` or `from_tasks`. */
      readonly via: 'from_task' | 'from_tasks';
      readonly node: JsonNode | undefined;
    }
  | { readonly kind: 'field'; readonly task: TaskDeclaration; readonly node: JsonNode | undefined }
  | { readonly kind: 'capability'; readonly task: TaskDeclaration; readonly node: JsonNode | undefined }
  | { readonly kind: 'dag-id'; readonly node: JsonNode | undefined }
  /** The `input` of a task: its value slot, or a place between its properties. */
  | { readonly kind: 'input'; readonly task: TaskDeclaration; readonly node: JsonNode | undefined }
  /** Between the elements of `tasks` or `edges`, where a new one would go. */
  | { readonly kind: 'new-element'; readonly list: 'tasks' | 'edges' }
  /** Between the properties of an object of the format, where a new one would go. */
  | { readonly kind: 'new-property'; readonly owner: ObjectKind }
  | { readonly kind: 'property'; readonly owner: ObjectKind; readonly key: string; readonly keyNode: StringNode }
  | { readonly kind: 'other' };

/** The string value a site holds, when it holds one. */
export const siteString = (site: { readonly node: JsonNode | undefined }): string | undefined =>
  site.node?.kind === 'string' ? site.node.value : undefined;

/** The declaration made from `items[position]`, found by binary search (declarations skip non-objects). */
function declarationAt<T extends { readonly index: number }>(
  declarations: readonly T[],
  position: number,
): T | undefined {
  let low = 0;
  let high = declarations.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const index = declarations[middle]!.index;
    if (index === position) return declarations[middle];
    if (index < position) low = middle + 1;
    else high = middle - 1;
  }
  return undefined;
}

export const taskAt = (model: DagModel, position: number): TaskDeclaration | undefined =>
  declarationAt(model.tasks, position);
export const edgeAt = (model: DagModel, position: number): EdgeDeclaration | undefined =>
  declarationAt(model.edges, position);

/** The kind of object at `path` (a path to an object), when the format defines one there. */
function objectKind(path: readonly (string | number)[]): ObjectKind | undefined {
  const [top, position, inner, sourceKey] = path;
  if (path.length === 0) return 'dag';
  if (typeof position !== 'number') return undefined;
  if (top === 'edges' && path.length === 2) return 'edge';
  if (top !== 'tasks') return undefined;
  if (path.length === 2) return 'task';
  if (path.length === 3 && inner === 'metadata') return 'metadata';
  if (path.length === 3 && inner === 'input') return 'input';
  if (path.length === 4 && inner === 'input' && sourceKey === 'source') return 'source';
  return undefined;
}

export function siteAt(document: JsonDocument, model: DagModel, offset: number): Site {
  const located: OffsetPath = document.pathAt(offset);
  const { path, entries } = located;
  const last = entries[entries.length - 1];
  const node = last === undefined || last === -1 ? undefined : document.node(last);
  if (located.onKey) {
    const owner = objectKind(path.slice(0, -1));
    const keyNode = document.node(located.keys[located.keys.length - 1]!) as StringNode;
    return owner === undefined ? { kind: 'other' } : { kind: 'property', owner, key: keyNode.value, keyNode };
  }
  const [top, position, key, sourceKey, member] = path;
  // Inside a container's brackets, not on its boundary (a cursor before `{` is on the value as a whole).
  const within =
    (node?.kind === 'object' || node?.kind === 'array') &&
    offset > node.offset &&
    (offset < node.offset + node.length || !node.closed);
  if (path.length === 1 && top === 'dag_id') return { kind: 'dag-id', node };
  if (path.length === 1 && (top === 'tasks' || top === 'edges') && within && node.kind === 'array') {
    return { kind: 'new-element', list: top };
  }
  if (within && node.kind === 'object') {
    const owner = objectKind(path);
    if (owner !== undefined && owner !== 'input') return { kind: 'new-property', owner };
  }
  if (typeof position !== 'number') return { kind: 'other' };
  if (top === 'edges') {
    const edge = edgeAt(model, position);
    if (edge !== undefined && path.length === 3 && (key === 'from' || key === 'to')) {
      return { kind: 'edge-end', edge, end: key, node };
    }
    return { kind: 'other' };
  }
  const task = top === 'tasks' ? taskAt(model, position) : undefined;
  if (task === undefined) return { kind: 'other' };
  if (path.length === 3 && key === 'task_id') return { kind: 'task-id', task, node };
  if (path.length === 3 && key === 'capability') return { kind: 'capability', task, node };
  if (path.length === 3 && key === 'input') return { kind: 'input', task, node };
  if (key !== 'input' || sourceKey !== 'source') return { kind: 'other' };
  if (member === 'from_task' && path.length === 5) return { kind: 'reference', task, via: 'from_task', node };
  if (member === 'field' && path.length === 5) return { kind: 'field', task, node };
  if (member === 'from_tasks' && path.length === 6) return { kind: 'reference', task, via: 'from_tasks', node };
  // Between the elements of `from_tasks`, where a new one would go.
  if (member === 'from_tasks' && path.length === 5 && node?.kind === 'array') {
    return { kind: 'reference', task, via: 'from_tasks', node: undefined };
  }
  return { kind: 'other' };
}
