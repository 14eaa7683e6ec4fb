// Quick fixes for `schema` diagnostics, read off the format's JSON Schema (generated from the zod schema, the single
// source of truth): a value outside an enum, an unknown property, a missing required property.
import { distance } from 'fastest-levenshtein';
import { type JsonDocument, type JsonNode, type ObjectNode, childOf } from '../dag/json';
import { dagJsonSchema } from '../dag/jsonSchema';
import { edgeAt } from '../dag/site';
import { type Change, type Fix, type Target, closestNames, replace, spans } from './fixChanges';
import { documentStyle, objectLayout, propertyEntry, reindented, renderObject, replaceValue } from './jsonEdits';
import { edgeEndCandidates, missingEdges, removeEdge } from './references';
import { freshTaskId } from './taskIds';

interface JsonSchema {
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly items?: JsonSchema;
  readonly anyOf?: readonly JsonSchema[];
  readonly enum?: readonly unknown[];
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
}

let formatSchema: JsonSchema | undefined;

const keysOf = (node: JsonNode | undefined): string[] =>
  node?.kind === 'object' ? node.properties.map((property) => property.key.value) : [];

/** The branch of a union the value means: the first with one of its keys (an input with `source` is a reference). */
function meant(schema: JsonSchema, node: JsonNode | undefined): JsonSchema {
  if (schema.anyOf === undefined) return schema;
  const keys = keysOf(node);
  return schema.anyOf.find((branch) => keys.some((key) => branch.properties?.[key] !== undefined)) ?? schema.anyOf[0]!;
}

/** The schema of the value at `path`, as meant by the values along it. */
function schemaAt(document: JsonDocument, path: readonly (string | number)[]): JsonSchema | undefined {
  formatSchema ??= dagJsonSchema() as JsonSchema;
  let schema: JsonSchema | undefined = formatSchema;
  let node = document.root;
  for (const segment of path) {
    if (schema === undefined) return undefined;
    schema = meant(schema, node);
    schema = typeof segment === 'number' ? schema.items : schema.properties?.[segment];
    node = childOf(node, segment);
  }
  return schema === undefined ? undefined : meant(schema, node);
}

/** One "Change to" per allowed value; the closest to what is there is preferred (an enum is short: S, A, B). */
function enumFixes(schema: JsonSchema, node: JsonNode): Fix[] {
  const allowed = schema.enum;
  if (allowed === undefined || allowed.some((value) => value === node.value)) return [];
  const written = JSON.stringify(node.value).toLowerCase();
  const closeness = (value: unknown): number => distance(written, JSON.stringify(value).toLowerCase());
  const closest = allowed.reduce((best, value) => (closeness(value) < closeness(best) ? value : best));
  return allowed.map((value) => ({
    title: `Change to ${JSON.stringify(value)}`,
    changes: [replace(replaceValue(node, value))],
    preferred: value === closest,
  }));
}

/** Remove the unknown property, or rename it to a close name the object may have and does not have yet. */
function unknownPropertyFixes(target: Target, path: readonly (string | number)[]): Fix[] {
  const { document } = target.analysis;
  const objectPath = path.slice(0, -1);
  const object = document.nodeAt(objectPath);
  const schema = schemaAt(document, objectPath);
  if (object?.kind !== 'object' || schema?.additionalProperties !== false) return [];
  const index = object.properties.findIndex((property) => spans(property.key, target.start, target.end));
  const property = object.properties[index];
  if (property === undefined || schema.properties?.[property.key.value] !== undefined) return [];
  const renames = closestNames(Object.keys(schema.properties ?? {}), property.key.value, keysOf(object)).map(
    (name, rank): Fix => ({
      title: `Rename to ${JSON.stringify(name)}`,
      changes: [replace(replaceValue(property.key, name))],
      preferred: rank === 0,
    }),
  );
  return [
    ...renames,
    {
      title: `Remove property ${JSON.stringify(property.key.value)}`,
      changes: [{ kind: 'remove', container: object, index }],
    },
  ];
}

/** A `dag_<...>` id: one the tasks' metadata already names, else one made of the file's name. */
function dagIdFor(target: Target): string {
  const named = target.analysis.model.tasks.find((task) => task.metadataDagId?.startsWith('dag_') === true);
  if (named?.metadataDagId !== undefined) return named.metadataDagId;
  const file = decodeURIComponent(target.uri.slice(target.uri.lastIndexOf('/') + 1)).replace(/\.acmp-dag\.json$/, '');
  return `dag_${file.replace(/[^A-Za-z0-9_]/g, '_') || 'new'}`;
}

/** The capability most tasks of the file use among those a provider offers, else one offered, else `echo`. */
function capabilityFor(target: Target): string {
  const known = target.offers?.capabilities;
  const counts = new Map<string, number>();
  for (const task of target.analysis.model.tasks) {
    if (task.capability !== undefined && (known === undefined || known.includes(task.capability))) {
      counts.set(task.capability, (counts.get(task.capability) ?? 0) + 1);
    }
  }
  const used = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  return used ?? (known === undefined || known.includes('echo') ? 'echo' : (known[0] ?? 'echo'));
}

type Render = (indent: string) => string;

/**
 * The value a missing property gets: one that is valid itself, so that adding it brings no new error (an edge end is
 * a task that reads the other end without its edge, else the best ranked task that closes no cycle).
 */
function placeholder(
  target: Target,
  path: readonly (string | number)[],
  object: ObjectNode,
  key: string,
): Render | undefined {
  const { analysis } = target;
  const text = analysis.document.text;
  const value =
    (json: unknown): Render =>
    () =>
      JSON.stringify(json);
  switch (key) {
    case 'dag_id':
      return value(dagIdFor(target));
    case 'task_id':
      return value(freshTaskId(analysis));
    case 'capability':
      return value(capabilityFor(target));
    case 'input': {
      const style = documentStyle(text, analysis.model.root!);
      return (indent) =>
        renderObject(reindented(objectLayout(text, object), indent, style), [
          ['type', 'text'],
          ['data', ''],
        ]);
    }
    case 'type':
      return value('text');
    case 'data':
      return value('');
    case 'from':
    case 'to': {
      const edge = path[0] === 'edges' && typeof path[1] === 'number' ? edgeAt(analysis.model, path[1]) : undefined;
      const id = edge === undefined ? undefined : edgeEndCandidates(analysis, edge, key)[0];
      return id === undefined ? undefined : value(id);
    }
    default:
      return undefined;
  }
}

/** "Add" each missing required property, all of them at once when several are missing (preferred). */
function requiredFixes(
  target: Target,
  path: readonly (string | number)[],
  schema: JsonSchema,
  object: ObjectNode,
): Fix[] {
  if (target.analysis.model.root === undefined) return [];
  const text = target.analysis.document.text;
  const missing = (schema.required ?? []).filter((key) => !object.has(key));
  // An edge with neither end gets both from a reference that lacks its edge, or none.
  const pair = path[0] === 'edges' && missing.length === 2 ? missingEdges(target.analysis.model)[0] : undefined;
  const additions: { key: string; change: Change }[] = [];
  for (const key of missing) {
    // The lists of the DAG are added as lists, so that fixes adding elements to the same list make one property.
    if (path.length === 0 && (key === 'tasks' || key === 'edges')) {
      additions.push({ key, change: { kind: 'append-list', container: object, list: key } });
      continue;
    }
    const render =
      pair === undefined ? placeholder(target, path, object, key) : () => JSON.stringify(pair[key as 'from' | 'to']);
    if (render !== undefined)
      additions.push({
        key,
        change: { kind: 'append', container: object, render: propertyEntry(text, object, key, render) },
      });
  }
  const fixes = additions.map(({ key, change }) => ({
    title: `Add ${JSON.stringify(key)}`,
    changes: [change],
    preferred: missing.length === 1,
  }));
  if (additions.length > 1 && additions.length === missing.length) {
    fixes.unshift({
      title: `Add ${missing.map((key) => JSON.stringify(key)).join(' and ')}`,
      changes: additions.map(({ change }) => change),
      preferred: true,
    });
  }
  // An edge that cannot be completed without a new error can still go.
  const edge = path[0] === 'edges' && typeof path[1] === 'number' ? edgeAt(target.analysis.model, path[1]) : undefined;
  return edge !== undefined && additions.length < missing.length
    ? [...fixes, ...removeEdge(target.analysis, edge, 'Remove edge', false)]
    : fixes;
}

export function fixSchema(target: Target): Fix[] {
  const { document } = target.analysis;
  const located = document.pathAt(target.start);
  if (located.onKey) return unknownPropertyFixes(target, located.path);
  const node = document.nodeAt(located.path);
  const schema = schemaAt(document, located.path);
  if (!spans(node, target.start, target.end) || schema === undefined) return [];
  return [
    ...enumFixes(schema, node!),
    ...(node!.kind === 'object' && node!.closed ? requiredFixes(target, located.path, schema, node!) : []),
  ];
}
