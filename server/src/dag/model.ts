// The DAG model, built from the plain value of the text rather than from validated data, so that a half-written
// file still gets every check on what could be parsed. It holds the strings the checks reason about and where each
// came from: a node (and with it its offsets) is found only when a diagnostic or a feature asks for it, so the
// model of a clean file needs no offsets at all.
import type { JsonDocument, JsonNode, ObjectNode, ParsedJson, StringNode } from './json';

export type InputForm = 'literal' | 'reference' | 'both' | 'neither' | 'absent';
/** `from_task` only (single), `from_tasks` only (many, or empty), both, neither, or no source object at all. */
export type SourceForm = 'single' | 'many' | 'empty' | 'both' | 'neither' | 'absent';

type PlainObject = Record<string, unknown>;

/** Shared by every task without `from_tasks`, rather than an empty array each. */
const NONE: readonly unknown[] = Object.freeze([]);

const isObject = (value: unknown): value is PlainObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The property names the model reads: none is a property of Object.prototype. */
type FormatKey =
  | 'tasks'
  | 'edges'
  | 'dag_id'
  | 'task_id'
  | 'capability'
  | 'input'
  | 'type'
  | 'data'
  | 'source'
  | 'from_task'
  | 'from_tasks'
  | 'field'
  | 'metadata'
  | 'from'
  | 'to'
  | 'stream_eligible'
  | 'max_price_cu'
  | 'input_tokens_est'
  | 'preferred_tier'
  | 'proof_method';

// Plain reads and `in` are safe here because no format key is inherited from Object.prototype (an Object.hasOwn per
// read was a fifth of the model's time at 100,000 tasks). `in` also sees a key typed without a value yet: the
// recovering parser makes it an own property whose value is undefined.
const has = (object: PlainObject, key: FormatKey): boolean => key in object;
const own = (object: PlainObject | undefined, key: FormatKey): unknown => object?.[key];
const ownString = (object: PlainObject | undefined, key: FormatKey): string | undefined => {
  const value = own(object, key);
  return typeof value === 'string' ? value : undefined;
};
const ownNumber = (object: PlainObject, key: FormatKey): number | undefined => {
  const value = own(object, key);
  return typeof value === 'number' ? value : undefined;
};
const ownObject = (object: PlainObject | undefined, key: FormatKey): PlainObject | undefined => {
  const value = own(object, key);
  return isObject(value) ? value : undefined;
};

/** The node at `path` when `present`, found on demand. */
function nodeAt<T extends JsonNode>(document: JsonDocument, present: boolean, path: readonly PropertyKey[]) {
  return present ? (document.nodeAt(path) as T | undefined) : undefined;
}

export class TaskReference {
  constructor(
    private readonly document: JsonDocument,
    /** The referencing task's position in `tasks`. */
    private readonly task: number,
    readonly taskId: string,
    /** `from_tasks[element]`, or -1 for `from_task`. */
    private readonly element: number,
  ) {}

  get via(): 'from_task' | 'from_tasks' {
    return this.element === -1 ? 'from_task' : 'from_tasks';
  }

  get node(): StringNode {
    const source = ['tasks', this.task, 'input', 'source'];
    const path = this.element === -1 ? [...source, 'from_task'] : [...source, 'from_tasks', this.element];
    return this.document.nodeAt(path) as StringNode;
  }
}

/** The tasks by id (each id's first declaration), and whether any id is declared twice. */
interface TaskRegistry {
  readonly byId: Map<string, TaskDeclaration>;
  hasDuplicates: boolean;
}

export class TaskDeclaration {
  readonly id: string | undefined;
  readonly inputForm: InputForm;
  readonly sourceForm: SourceForm;
  /** The `field` path of the input's source, when it is a string. */
  readonly field: string | undefined;
  /** How many task ids the source names (`from_task`, then the strings of `from_tasks`). */
  readonly referenceCount: number;
  readonly metadataDagId: string | undefined;
  readonly capability: string | undefined;
  /** `max_price_cu` and `input_tokens_est` when they are numbers (for the DAG's figures). */
  readonly maxPriceCu: number | undefined;
  readonly inputTokensEst: number | undefined;
  /** `preferred_tier` and `proof_method` when they are strings (what a plan asks providers to quote). */
  readonly preferredTier: string | undefined;
  readonly proofMethod: string | undefined;
  private readonly fromTask: string | undefined;
  /** `from_tasks` as the text has it: its elements that are not strings are the schema check's concern. */
  private readonly fromTasks: readonly unknown[];
  private referenceList: readonly TaskReference[] | undefined;

  constructor(
    private readonly document: JsonDocument,
    task: PlainObject,
    /** The position in `tasks`. */
    readonly index: number,
    private readonly registry: TaskRegistry,
  ) {
    this.id = ownString(task, 'task_id');
    this.capability = ownString(task, 'capability');
    this.maxPriceCu = ownNumber(task, 'max_price_cu');
    this.inputTokensEst = ownNumber(task, 'input_tokens_est');
    this.preferredTier = ownString(task, 'preferred_tier');
    this.proofMethod = ownString(task, 'proof_method');
    const input = ownObject(task, 'input');
    this.inputForm =
      input === undefined ? 'absent' : formOf(has(input, 'type') || has(input, 'data'), has(input, 'source'));
    const source = ownObject(input, 'source');
    this.sourceForm = source === undefined ? 'absent' : sourceFormOf(source);
    this.field = ownString(source, 'field');
    this.fromTask = ownString(source, 'from_task');
    const fromTasks = own(source, 'from_tasks');
    this.fromTasks = Array.isArray(fromTasks) ? fromTasks : NONE;
    let count = this.fromTask === undefined ? 0 : 1;
    for (let k = 0; k < this.fromTasks.length; k++) if (typeof this.fromTasks[k] === 'string') count++;
    this.referenceCount = count;
    this.metadataDagId = ownString(ownObject(task, 'metadata'), 'dag_id');
  }

  /**
   * The id at `position` (below `referenceCount`) among the references, without making them: the checks read every
   * task's references, and an object per reference was a fifth of the analysis's own allocation.
   */
  referencedId(position: number): string {
    const element = this.elementOf(position);
    return element === -1 ? this.fromTask! : (this.fromTasks[element] as string);
  }

  /** The first declaration of this task's id, when this one declares it again. */
  get duplicateOf(): TaskDeclaration | undefined {
    if (!this.registry.hasDuplicates || this.id === undefined) return undefined;
    const first = this.registry.byId.get(this.id);
    return first === this ? undefined : first;
  }

  /** The references, with their nodes on demand. */
  get references(): readonly TaskReference[] {
    this.referenceList ??= Array.from(
      { length: this.referenceCount },
      (_, position) =>
        new TaskReference(this.document, this.index, this.referencedId(position), this.elementOf(position)),
    );
    return this.referenceList;
  }

  /** Where the reference at `position` is: its element in `from_tasks`, or -1 for `from_task`. */
  private elementOf(position: number): number {
    if (this.fromTask !== undefined && position-- === 0) return -1;
    let element = 0;
    for (; element < this.fromTasks.length; element++) {
      if (typeof this.fromTasks[element] === 'string' && position-- === 0) break;
    }
    return element;
  }

  private path(...rest: PropertyKey[]): PropertyKey[] {
    return ['tasks', this.index, ...rest];
  }

  get node(): ObjectNode {
    return this.document.nodeAt(this.path()) as ObjectNode;
  }
  get idNode(): StringNode | undefined {
    return nodeAt(this.document, this.id !== undefined, this.path('task_id'));
  }
  get capabilityNode(): StringNode | undefined {
    return nodeAt(this.document, this.capability !== undefined, this.path('capability'));
  }
  get inputNode(): ObjectNode | undefined {
    return nodeAt(this.document, this.inputForm !== 'absent', this.path('input'));
  }
  get sourceNode(): ObjectNode | undefined {
    return nodeAt(this.document, this.sourceForm !== 'absent', this.path('input', 'source'));
  }
  get fieldNode(): StringNode | undefined {
    return nodeAt(this.document, this.field !== undefined, this.path('input', 'source', 'field'));
  }
  get maxPriceCuNode(): JsonNode | undefined {
    return nodeAt(this.document, this.maxPriceCu !== undefined, this.path('max_price_cu'));
  }
  get metadataDagIdNode(): StringNode | undefined {
    return nodeAt(this.document, this.metadataDagId !== undefined, this.path('metadata', 'dag_id'));
  }
}

/** Which of two mutually exclusive forms an input takes. */
function formOf(literal: boolean, reference: boolean): InputForm {
  return literal && reference ? 'both' : literal ? 'literal' : reference ? 'reference' : 'neither';
}

function sourceFormOf(source: PlainObject): SourceForm {
  const single = has(source, 'from_task');
  const many = has(source, 'from_tasks');
  if (single && many) return 'both';
  if (single) return 'single';
  if (!many) return 'neither';
  const list = source.from_tasks;
  return Array.isArray(list) && list.length === 0 ? 'empty' : 'many';
}

export class EdgeDeclaration {
  readonly from: string | undefined;
  readonly to: string | undefined;
  readonly streamEligible: boolean;

  constructor(
    private readonly document: JsonDocument,
    edge: PlainObject,
    /** The position in `edges`. */
    readonly index: number,
  ) {
    this.from = ownString(edge, 'from');
    this.to = ownString(edge, 'to');
    this.streamEligible = own(edge, 'stream_eligible') === true;
  }

  get node(): ObjectNode {
    return this.document.nodeAt(['edges', this.index]) as ObjectNode;
  }
  get fromNode(): StringNode | undefined {
    return nodeAt(this.document, this.from !== undefined, ['edges', this.index, 'from']);
  }
  get toNode(): StringNode | undefined {
    return nodeAt(this.document, this.to !== undefined, ['edges', this.index, 'to']);
  }
}

export interface DagModel {
  /** The top-level object (found on demand); undefined when the text holds no object. */
  readonly root: ObjectNode | undefined;
  readonly dagId: string | undefined;
  readonly dagIdNode: StringNode | undefined;
  readonly tasks: readonly TaskDeclaration[];
  /** The first declaration of each id (in no particular order: `tasks` has the text's order). */
  readonly taskById: ReadonlyMap<string, TaskDeclaration>;
  readonly edges: readonly EdgeDeclaration[];
}

/** The declarations made from the objects of an array (other elements are the schema check's concern). */
function declarations<T>(list: unknown, declare: (object: PlainObject, index: number) => T): T[] {
  if (!Array.isArray(list)) return [];
  // Sized once (growing by push copied the array of 10,000 declarations over a dozen times), trimmed at the end.
  const made = new Array<T>(list.length);
  let count = 0;
  list.forEach((item: unknown, index) => {
    if (isObject(item)) made[count++] = declare(item, index);
  });
  made.length = count;
  return made;
}

export function buildModel({ document, value }: ParsedJson): DagModel {
  const dag = isObject(value) ? value : undefined;
  const registry: TaskRegistry = { byId: new Map(), hasDuplicates: false };
  const tasks = declarations(
    own(dag, 'tasks'),
    (object, index) => new TaskDeclaration(document, object, index, registry),
  );
  // Set from the last declaration to the first, so each id ends on its first declaration with one map operation a
  // task (map operations were the largest cost at 100,000 tasks); duplicates show as fewer ids than declarations.
  let declared = 0;
  for (let t = tasks.length - 1; t >= 0; t--) {
    const id = tasks[t]!.id;
    if (id === undefined) continue;
    registry.byId.set(id, tasks[t]!);
    declared++;
  }
  registry.hasDuplicates = registry.byId.size < declared;
  const taskById = registry.byId;
  const dagId = ownString(dag, 'dag_id');
  // The getters keep what they read alive as long as the model: a flag, not the plain value (which they kept whole,
  // 42 MB at 100,000 tasks, when `root` tested `dag` itself).
  const hasRoot = dag !== undefined;
  return {
    dagId,
    get root() {
      return hasRoot ? (document.root as ObjectNode) : undefined;
    },
    get dagIdNode() {
      return nodeAt<StringNode>(document, dagId !== undefined, ['dag_id']);
    },
    tasks,
    taskById,
    edges: declarations(own(dag, 'edges'), (object, index) => new EdgeDeclaration(document, object, index)),
  };
}

/** How messages name a task: by its id when it has one, else by its position. */
export function taskLabel(task: TaskDeclaration): string {
  return task.id !== undefined ? `"${task.id}"` : `#${task.index + 1} (no task_id)`;
}
