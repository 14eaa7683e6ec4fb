// `schema` diagnostics: the zod schema's issues, placed on the node they concern and worded for a person.
import type { z } from 'zod';
import type { DagDiagnostic } from './diagnostic';
import { type JsonNode, type ObjectNode, nodeAtPath, propertyOf } from './json';
import { DagSchema } from './schema';

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

const typeName = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'object'
        ? 'an object'
        : `a ${typeof value}`;

/** Where an object sits, in words a user recognises: `task "task_a"`, `edge #2`, `the input of task "task_a"`. */
function describeObject(root: JsonNode, path: Path): string {
  if (path.length === 0) return 'the DAG';
  if (path[0] === 'tasks' && typeof path[1] === 'number') {
    const task = nodeAtPath(root, path.slice(0, 2));
    const id = task?.kind === 'object' ? propertyOf(task, 'task_id')?.value : undefined;
    const name = id?.kind === 'string' ? `task "${id.value}"` : `task #${path[1] + 1}`;
    const rest = path.slice(2).filter((segment) => typeof segment === 'string');
    return rest.length === 0 ? name : `"${rest.join('.')}" of ${name}`;
  }
  if (path[0] === 'edges' && typeof path[1] === 'number') return `edge #${path[1] + 1}`;
  return `"${path.join('.')}"`;
}

function expectedName(issue: Extract<Issue, { code: 'invalid_type' }>): string {
  switch (issue.expected) {
    case 'int':
      return 'an integer';
    case 'array':
    case 'object':
      return `an ${issue.expected}`;
    default:
      return `a ${issue.expected}`;
  }
}

/** A union failed: pick the branch the user evidently meant (a `source` key means a reference). */
function unionBranch(issue: Extract<Issue, { code: 'invalid_union' }>, value: unknown): readonly Issue[] {
  const wantsReference = value !== null && typeof value === 'object' && 'source' in value;
  return issue.errors[wantsReference ? 1 : 0] ?? issue.errors[0] ?? [];
}

export function schemaDiagnostics(
  root: JsonNode | undefined,
  value: unknown,
  skip: (path: Path) => boolean,
): DagDiagnostic[] {
  if (root === undefined) return [];
  if (root.kind !== 'object') {
    return [
      {
        code: 'schema',
        severity: 'error',
        start: root.offset,
        end: root.offset + root.length,
        message: `A DAG file is a JSON object with "dag_id", "tasks" and "edges", not ${typeName(value)}.`,
      },
    ];
  }
  const result = DagSchema.safeParse(value);
  if (result.success) return [];

  const diagnostics: DagDiagnostic[] = [];
  const onNode = (node: JsonNode, message: string, severity: 'error' | 'warning' = 'error'): void => {
    diagnostics.push({ code: 'schema', severity, start: node.offset, end: node.offset + node.length, message });
  };
  const pending: { issue: Issue; base: Path }[] = result.error.issues.map((issue) => ({ issue, base: [] }));
  while (pending.length > 0) {
    const { issue, base } = pending.pop()!;
    const path: Path = [...base, ...issue.path];
    if (skip(path)) continue;
    const node = nodeAtPath(root, path);
    if (issue.code === 'invalid_union') {
      for (const inner of unionBranch(issue, node === undefined ? undefined : node.value))
        pending.push({ issue: inner, base: path });
      continue;
    }
    if (node === undefined) {
      // A required property is missing: say so on the object that lacks it, unless that object is still being typed.
      const parent = nodeAtPath(root, path.slice(0, -1));
      if (parent?.kind === 'object' && parent.closed) {
        const key = String(path[path.length - 1]);
        onNode(parent, `${describeObject(root, path.slice(0, -1))} is missing the required property "${key}".`);
      }
      continue;
    }
    const name =
      path.length > 0 ? `"${String(path[path.length - 1])}" of ${describeObject(root, path.slice(0, -1))}` : 'The DAG';
    switch (issue.code) {
      case 'invalid_type':
        onNode(node, `${name} must be ${expectedName(issue)}, not ${typeName(node.value)}.`);
        break;
      case 'invalid_value':
        onNode(
          node,
          `${name} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}; found ${JSON.stringify(node.value)}.`,
        );
        break;
      case 'too_small':
        onNode(node, `${name} must be ${issue.inclusive ? 'at least' : 'greater than'} ${String(issue.minimum)}.`);
        break;
      case 'too_big':
        onNode(node, `${name} must be at most ${String(issue.maximum)}.`);
        break;
      case 'unrecognized_keys':
        if (node.kind === 'object') {
          for (const key of issue.keys) {
            const keyNode = unknownKeyNode(node, key);
            if (keyNode !== undefined) {
              onNode(
                keyNode,
                `Unknown property "${key}" in ${describeObject(root, path)}: it is not part of the ACMP format (check the spelling or remove it).`,
                'warning',
              );
            }
          }
        }
        break;
      default:
        // Any other issue keeps zod's own words.
        onNode(node, `${name}: ${issue.message}.`);
    }
  }
  return diagnostics.sort((a, b) => a.start - b.start);
}

function unknownKeyNode(node: ObjectNode, key: string): JsonNode | undefined {
  return node.properties.find((property) => property.key.value === key)?.key;
}
