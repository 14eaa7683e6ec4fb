// The DAG model built from the syntax tree, not from validated data, so that a half-written file still gets every
// check on what could be parsed. Every element keeps its node, and with it its offsets.
import { type JsonNode, type ObjectNode, type StringNode, propertyOf } from './json';

export interface TaskReference {
  readonly taskId: string;
  readonly node: StringNode;
  readonly via: 'from_task' | 'from_tasks';
}

export type InputForm = 'literal' | 'reference' | 'both' | 'neither' | 'absent';

export interface TaskDeclaration {
  readonly index: number;
  readonly node: ObjectNode;
  readonly id: string | undefined;
  readonly idNode: StringNode | undefined;
  readonly capabilityNode: StringNode | undefined;
  readonly inputNode: ObjectNode | undefined;
  readonly inputForm: InputForm;
  readonly sourceNode: ObjectNode | undefined;
  readonly fieldNode: StringNode | undefined;
  readonly references: readonly TaskReference[];
  readonly metadataDagIdNode: StringNode | undefined;
}

export interface EdgeDeclaration {
  readonly index: number;
  readonly node: ObjectNode;
  readonly fromNode: StringNode | undefined;
  readonly toNode: StringNode | undefined;
  readonly streamEligible: boolean;
}

export interface DagModel {
  readonly root: ObjectNode | undefined;
  readonly dagIdNode: StringNode | undefined;
  readonly tasks: readonly TaskDeclaration[];
  /** The first declaration of each id: later duplicates are reported and otherwise ignored. */
  readonly taskById: ReadonlyMap<string, TaskDeclaration>;
  readonly edges: readonly EdgeDeclaration[];
}

export function stringProperty(node: ObjectNode | undefined, key: string): StringNode | undefined {
  const value = node === undefined ? undefined : propertyOf(node, key)?.value;
  return value?.kind === 'string' ? value : undefined;
}

export function objectProperty(node: ObjectNode | undefined, key: string): ObjectNode | undefined {
  const value = node === undefined ? undefined : propertyOf(node, key)?.value;
  return value?.kind === 'object' ? value : undefined;
}

function objectsOf(node: JsonNode | undefined): { node: ObjectNode; index: number }[] {
  if (node?.kind !== 'array') return [];
  const objects: { node: ObjectNode; index: number }[] = [];
  node.items.forEach((item, index) => {
    if (item.kind === 'object') objects.push({ node: item, index });
  });
  return objects;
}

function inputFormOf(input: ObjectNode | undefined): InputForm {
  if (input === undefined) return 'absent';
  const literal = propertyOf(input, 'type') !== undefined || propertyOf(input, 'data') !== undefined;
  const reference = propertyOf(input, 'source') !== undefined;
  if (literal && reference) return 'both';
  if (literal) return 'literal';
  if (reference) return 'reference';
  return 'neither';
}

function referencesOf(source: ObjectNode | undefined): TaskReference[] {
  if (source === undefined) return [];
  const references: TaskReference[] = [];
  const single = stringProperty(source, 'from_task');
  if (single !== undefined) references.push({ taskId: single.value, node: single, via: 'from_task' });
  const many = propertyOf(source, 'from_tasks')?.value;
  if (many?.kind === 'array') {
    for (const item of many.items) {
      if (item.kind === 'string') references.push({ taskId: item.value, node: item, via: 'from_tasks' });
    }
  }
  return references;
}

function taskDeclaration(node: ObjectNode, index: number): TaskDeclaration {
  const idNode = stringProperty(node, 'task_id');
  const inputNode = objectProperty(node, 'input');
  const inputForm = inputFormOf(inputNode);
  const sourceNode = objectProperty(inputNode, 'source');
  return {
    index,
    node,
    id: idNode?.value,
    idNode,
    capabilityNode: stringProperty(node, 'capability'),
    inputNode,
    inputForm,
    sourceNode,
    fieldNode: stringProperty(sourceNode, 'field'),
    references: referencesOf(sourceNode),
    metadataDagIdNode: stringProperty(objectProperty(node, 'metadata'), 'dag_id'),
  };
}

export function buildModel(root: JsonNode | undefined): DagModel {
  const dag = root?.kind === 'object' ? root : undefined;
  const tasks = objectsOf(dag === undefined ? undefined : propertyOf(dag, 'tasks')?.value).map(({ node, index }) =>
    taskDeclaration(node, index),
  );
  const taskById = new Map<string, TaskDeclaration>();
  for (const task of tasks) {
    if (task.id !== undefined && !taskById.has(task.id)) taskById.set(task.id, task);
  }
  const edges = objectsOf(dag === undefined ? undefined : propertyOf(dag, 'edges')?.value).map(
    ({ node, index }): EdgeDeclaration => {
      const streamEligible = propertyOf(node, 'stream_eligible')?.value;
      return {
        index,
        node,
        fromNode: stringProperty(node, 'from'),
        toNode: stringProperty(node, 'to'),
        streamEligible: streamEligible?.kind === 'boolean' && streamEligible.value === true,
      };
    },
  );
  return { root: dag, dagIdNode: stringProperty(dag, 'dag_id'), tasks, taskById, edges };
}

/** How messages name a task: by its id when it has one, else by its position. */
export function taskLabel(task: TaskDeclaration): string {
  return task.id !== undefined ? `"${task.id}"` : `#${task.index + 1} (no task_id)`;
}
