// `schema` diagnostics: the structural check, placed on the node each problem concerns and worded for a person.
// It validates against the JSON Schema generated from the zod schema (zod stays the single source of truth),
// compiled by ajv into plain code: zod's own parse of a 10,000-task file took longer than JSON.parse of its text
// three times over, ajv's takes a tenth of it.
import type { ErrorObject } from 'ajv';
import type { DagDiagnostic } from './diagnostic';
import { type JsonDocument, type JsonNode, type ObjectNode, childOf } from './json';
import { REFERENCE_BRANCH, everyProblemValidator, firstProblemValidator } from './validators';

type Path = readonly PropertyKey[];

export type SchemaProblem = ErrorObject;

/**
 * The schema's problems with the plain value of the text. A validator that stops at the first problem settles the
 * common case, a valid file, at less than half the cost; only a file with problems is validated again for all of them.
 */
export function schemaProblems(value: unknown): readonly SchemaProblem[] {
  if (firstProblemValidator()(value)) return [];
  const everyProblem = everyProblemValidator();
  return everyProblem(value) ? [] : (everyProblem.errors ?? []);
}

const typeName = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'object'
        ? 'an object'
        : `a ${typeof value}`;

const expectedName = (type: string): string =>
  type === 'integer' ? 'an integer' : type === 'array' || type === 'object' ? `an ${type}` : `a ${type}`;

/** A description put at the start of a sentence. */
const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** Where an object sits, in words a user recognises: `task "task_a"`, `edge #2`, `the "input.source" of task "task_a"`. */
function describeObject(root: JsonNode, path: Path): string {
  if (path.length === 0) return 'the DAG';
  if (path[0] === 'tasks' && typeof path[1] === 'number') {
    const task = childOf(childOf(root, 'tasks'), path[1]);
    const id = childOf(task, 'task_id');
    const name = id?.kind === 'string' ? `task "${id.value}"` : `task #${path[1] + 1}`;
    const rest = path.slice(2).filter((segment) => typeof segment === 'string');
    return rest.length === 0 ? name : `the "${rest.join('.')}" of ${name}`;
  }
  if (path[0] === 'edges' && typeof path[1] === 'number') return `edge #${path[1] + 1}`;
  return `the "${path.join('.')}"`;
}

/** The node an ajv instance path (a JSON Pointer) names, and its path with array indexes as numbers. */
function locate(root: JsonNode, pointer: string): { node: JsonNode | undefined; path: PropertyKey[] } {
  const path: PropertyKey[] = [];
  let node: JsonNode | undefined = root;
  for (const raw of pointer === '' ? [] : pointer.slice(1).split('/')) {
    const name = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const segment = node?.kind === 'array' ? Number(name) : name;
    path.push(segment);
    node = childOf(node, segment);
  }
  return { node, path };
}

/** How many instance levels a schema path descends: one per `properties/<name>` and per `items`. */
function instanceDepth(schemaPath: readonly string[]): number {
  let depth = 0;
  for (let i = 0; i < schemaPath.length; i++) {
    if (schemaPath[i] === 'properties') {
      depth++;
      i++;
    } else if (schemaPath[i] === 'items') depth++;
  }
  return depth;
}

/**
 * Whether an error lies in a branch of a union (`anyOf`) that the user evidently did not mean: an input with a
 * `source` key means the reference form, any other the literal form. The union's own "matches no branch" error goes
 * too, since the meant branch's errors say more.
 */
function inUnmeantBranch(root: JsonNode, error: ErrorObject): boolean {
  if (error.keyword === 'anyOf') return true;
  const schemaPath = error.schemaPath.split('/');
  const union = schemaPath.indexOf('anyOf');
  if (union === -1) return false;
  const depth = instanceDepth(schemaPath.slice(0, union));
  const unionPointer = error.instancePath
    .split('/')
    .slice(0, depth + 1)
    .join('/');
  const { node } = locate(root, unionPointer);
  const wantsReference = node?.kind === 'object' && node.has('source');
  return (schemaPath[union + 1] === REFERENCE_BRANCH) !== wantsReference;
}

/** The problems as diagnostics, each on the node it concerns; `skip` drops those that another check words better. */
export function schemaDiagnostics(
  document: JsonDocument,
  problems: readonly SchemaProblem[],
  skip: (path: Path) => boolean,
): DagDiagnostic[] {
  // Nodes are found only for problems: a valid file's offsets are never needed.
  const root = problems.length === 0 ? undefined : document.root;
  if (root === undefined) return [];
  if (root.kind !== 'object') {
    return [
      {
        code: 'schema',
        severity: 'error',
        start: root.offset,
        end: root.offset + root.length,
        message: `A DAG file is a JSON object with "dag_id", "tasks" and "edges", not ${typeName(root.value)}.`,
      },
    ];
  }
  const diagnostics: DagDiagnostic[] = [];
  const onNode = (node: JsonNode, message: string, severity: 'error' | 'warning' = 'error'): void => {
    diagnostics.push({ code: 'schema', severity, start: node.offset, end: node.offset + node.length, message });
  };
  for (const error of problems) {
    if (inUnmeantBranch(root, error)) continue;
    const { node, path } = locate(root, error.instancePath);
    if (node === undefined || skip(path)) continue;
    const name =
      path.length > 0
        ? `The "${String(path[path.length - 1])}" of ${describeObject(root, path.slice(0, -1))}`
        : 'The DAG';
    const params = error.params as Record<string, unknown>;
    switch (error.keyword) {
      case 'required': {
        // Said on the object that lacks the property, unless that object is still being typed or the key is there
        // without a (well-formed) value: that is the syntax error's to report.
        const missing = String(params.missingProperty);
        if (node.kind === 'object' && node.closed && !node.has(missing)) {
          onNode(node, `${capitalized(describeObject(root, path))} is missing the required property "${missing}".`);
        }
        break;
      }
      case 'additionalProperties':
        if (node.kind === 'object') {
          const key = String(params.additionalProperty);
          const keyNode = firstKeyNode(node, key);
          if (keyNode !== undefined) {
            onNode(
              keyNode,
              `Unknown property "${key}" in ${describeObject(root, path)}: it is not part of the ACMP format (check the spelling or remove it).`,
              'warning',
            );
          }
        }
        break;
      case 'type':
        onNode(node, `${name} must be ${expectedName(String(params.type))}, not ${typeName(node.value)}.`);
        break;
      case 'enum':
        onNode(
          node,
          `${name} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}; found ${JSON.stringify(node.value)}.`,
        );
        break;
      case 'minimum':
        onNode(node, `${name} must be at least ${String(params.limit)}.`);
        break;
      case 'exclusiveMinimum':
        onNode(node, `${name} must be greater than ${String(params.limit)}.`);
        break;
      case 'maximum':
        onNode(node, `${name} must be at most ${String(params.limit)}.`);
        break;
      default:
        // Any other keyword keeps ajv's own words.
        onNode(node, `${name} ${error.message ?? 'does not match the schema'}.`);
    }
  }
  return diagnostics.sort((a, b) => a.start - b.start);
}

function firstKeyNode(node: ObjectNode, key: string): JsonNode | undefined {
  return node.properties.find((property) => property.key.value === key)?.key;
}
