// The DAG model, built from the parsed document rather than from validated data, so that a half-written file still
// gets every check on what could be parsed. It holds the strings the checks reason about and the entries of
// everything else: a node (and with it its offsets) is made only when a diagnostic or a feature asks for it, so the
// model of a clean 10,000-task file makes almost none (making them all was most of the model's time).
import type { JsonDocument, JsonNode, ObjectNode, ParsedJson, StringNode } from './json';

export type InputForm = 'literal' | 'reference' | 'both' | 'neither' | 'absent';
/** `from_task` only (single), `from_tasks` only (many, or empty), both, neither, or no source object at all. */
export type SourceForm = 'single' | 'many' | 'empty' | 'both' | 'neither' | 'absent';

/** No entry: the property is absent or its value is not of the kind the format requires. */
const NONE = -1;

/** The node of an entry, made on demand. */
function nodeAt<T extends JsonNode>(document: JsonDocument, entry: number): T | undefined {
  return entry === NONE ? undefined : (document.node(entry) as T);
}

/** `entry` if it holds a value of `kind`, else NONE. */
function ofKind(document: JsonDocument, entry: number, kind: JsonNode['kind']): number {
  return entry >= 0 && document.kindOf(entry) === kind ? entry : NONE;
}

export class TaskReference {
  constructor(
    private readonly document: JsonDocument,
    private readonly entry: number,
    readonly taskId: string,
    readonly via: 'from_task' | 'from_tasks',
  ) {}

  get node(): StringNode {
    return this.document.node(this.entry) as StringNode;
  }
}

const TASK_KEYS = ['task_id', 'capability', 'input', 'metadata'];
const INPUT_KEYS = ['type', 'data', 'source'];
const SOURCE_KEYS = ['from_task', 'from_tasks', 'field'];
const EDGE_KEYS = ['from', 'to', 'stream_eligible'];

export class TaskDeclaration {
  readonly id: string | undefined;
  readonly inputForm: InputForm;
  readonly sourceForm: SourceForm;
  /** The `field` path of the input's source, when it is a string. */
  readonly field: string | undefined;
  readonly references: readonly TaskReference[];
  readonly metadataDagId: string | undefined;
  private readonly idEntry: number;
  private readonly capabilityEntry: number;
  private readonly inputEntry: number;
  private readonly sourceEntry: number;
  private readonly fieldEntry: number;
  private readonly metadataDagIdEntry: number;

  constructor(
    private readonly document: JsonDocument,
    private readonly entry: number,
    /** The position in `tasks`. */
    readonly index: number,
  ) {
    const task = document.pick(entry, TASK_KEYS);
    const id = task[0]!;
    const capability = task[1]!;
    const input = task[2]!;
    const metadata = task[3]!;
    this.idEntry = ofKind(document, id, 'string');
    this.id = this.idEntry === NONE ? undefined : document.stringAt(this.idEntry);
    this.capabilityEntry = ofKind(document, capability, 'string');
    this.inputEntry = ofKind(document, input, 'object');

    let inputForm: InputForm = 'absent';
    let source = NONE;
    if (this.inputEntry !== NONE) {
      const picked = document.pick(this.inputEntry, INPUT_KEYS);
      const sourceValue = picked[2]!;
      inputForm = formOf(
        picked[0] !== NONE || picked[1] !== NONE,
        sourceValue !== NONE,
        'literal',
        'reference',
        'both',
      );
      source = ofKind(document, sourceValue, 'object');
    }
    this.inputForm = inputForm;
    this.sourceEntry = source;

    let references: TaskReference[] = [];
    let sourceForm: SourceForm = 'absent';
    let field = NONE;
    if (source !== NONE) {
      const picked = document.pick(source, SOURCE_KEYS);
      const fromTask = picked[0]!;
      const fromTasks = picked[1]!;
      const fieldValue = picked[2]!;
      // Arrays made at their final size: most tasks have one reference, and a push would reserve room for 17.
      if (ofKind(document, fromTask, 'string') !== NONE) {
        references = [new TaskReference(document, fromTask, document.stringAt(fromTask), 'from_task')];
      }
      const elements = ofKind(document, fromTasks, 'array') === NONE ? [] : document.elements(fromTasks);
      const many = elements
        .filter((element) => document.kindOf(element) === 'string')
        .map((element) => new TaskReference(document, element, document.stringAt(element), 'from_tasks'));
      if (many.length > 0) references = references.concat(many);
      sourceForm = formOf(fromTask !== NONE, fromTasks !== NONE, 'single', 'many', 'both');
      if (sourceForm === 'many' && ofKind(document, fromTasks, 'array') !== NONE && elements.length === 0) {
        sourceForm = 'empty';
      }
      field = ofKind(document, fieldValue, 'string');
    }
    this.sourceForm = sourceForm;
    this.references = references;
    this.fieldEntry = field;
    this.field = field === NONE ? undefined : document.stringAt(field);

    const metadataEntry = ofKind(document, metadata, 'object');
    this.metadataDagIdEntry =
      metadataEntry === NONE ? NONE : ofKind(document, document.pick(metadataEntry, ['dag_id'])[0]!, 'string');
    this.metadataDagId = this.metadataDagIdEntry === NONE ? undefined : document.stringAt(this.metadataDagIdEntry);
  }

  get node(): ObjectNode {
    return this.document.node(this.entry) as ObjectNode;
  }
  get idNode(): StringNode | undefined {
    return nodeAt(this.document, this.idEntry);
  }
  get capabilityNode(): StringNode | undefined {
    return nodeAt(this.document, this.capabilityEntry);
  }
  get inputNode(): ObjectNode | undefined {
    return nodeAt(this.document, this.inputEntry);
  }
  get sourceNode(): ObjectNode | undefined {
    return nodeAt(this.document, this.sourceEntry);
  }
  get fieldNode(): StringNode | undefined {
    return nodeAt(this.document, this.fieldEntry);
  }
  get metadataDagIdNode(): StringNode | undefined {
    return nodeAt(this.document, this.metadataDagIdEntry);
  }
}

/** Which of two mutually exclusive forms an object takes; 'neither' when it takes none. */
function formOf<A, B, C>(first: boolean, second: boolean, a: A, b: B, both: C): A | B | C | 'neither' {
  return first && second ? both : first ? a : second ? b : 'neither';
}

export class EdgeDeclaration {
  readonly from: string | undefined;
  readonly to: string | undefined;
  readonly streamEligible: boolean;
  private readonly fromEntry: number;
  private readonly toEntry: number;

  constructor(
    private readonly document: JsonDocument,
    private readonly entry: number,
    /** The position in `edges`. */
    readonly index: number,
  ) {
    const edge = document.pick(entry, EDGE_KEYS);
    const from = edge[0]!;
    const to = edge[1]!;
    const streamEligible = edge[2]!;
    this.fromEntry = ofKind(document, from, 'string');
    this.toEntry = ofKind(document, to, 'string');
    this.from = this.fromEntry === NONE ? undefined : document.stringAt(this.fromEntry);
    this.to = this.toEntry === NONE ? undefined : document.stringAt(this.toEntry);
    this.streamEligible =
      ofKind(document, streamEligible, 'boolean') !== NONE && document.node(streamEligible).value === true;
  }

  get node(): ObjectNode {
    return this.document.node(this.entry) as ObjectNode;
  }
  get fromNode(): StringNode | undefined {
    return nodeAt(this.document, this.fromEntry);
  }
  get toNode(): StringNode | undefined {
    return nodeAt(this.document, this.toEntry);
  }
}

export interface DagModel {
  readonly root: ObjectNode | undefined;
  readonly dagIdNode: StringNode | undefined;
  readonly tasks: readonly TaskDeclaration[];
  /** The first declaration of each id: later duplicates are reported and otherwise ignored. */
  readonly taskById: ReadonlyMap<string, TaskDeclaration>;
  readonly edges: readonly EdgeDeclaration[];
}

/** The declarations made from the objects of an array (other elements are the schema check's concern). */
function declarations<T>(
  document: JsonDocument,
  array: number,
  declare: new (document: JsonDocument, entry: number, index: number) => T,
): T[] {
  const made: T[] = [];
  if (ofKind(document, array, 'array') === NONE) return made;
  document.elements(array).forEach((element, index) => {
    if (document.kindOf(element) === 'object') made.push(new declare(document, element, index));
  });
  return made;
}

export function buildModel({ document, root }: ParsedJson): DagModel {
  if (root?.kind !== 'object')
    return { root: undefined, dagIdNode: undefined, tasks: [], taskById: new Map(), edges: [] };
  const dag = document.pick(0, ['dag_id', 'tasks', 'edges']);
  const dagId = dag[0]!;
  const tasksEntry = dag[1]!;
  const edgesEntry = dag[2]!;
  const tasks = declarations(document, tasksEntry, TaskDeclaration);
  const taskById = new Map<string, TaskDeclaration>();
  for (const task of tasks) {
    if (task.id !== undefined && !taskById.has(task.id)) taskById.set(task.id, task);
  }
  return {
    root,
    dagIdNode: nodeAt(document, ofKind(document, dagId, 'string')),
    tasks,
    taskById,
    edges: declarations(document, edgesEntry, EdgeDeclaration),
  };
}

/** How messages name a task: by its id when it has one, else by its position. */
export function taskLabel(task: TaskDeclaration): string {
  return task.id !== undefined ? `"${task.id}"` : `#${task.index + 1} (no task_id)`;
}
