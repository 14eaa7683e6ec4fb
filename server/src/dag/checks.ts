// The checks of Layer 2 beyond the schema: task shapes, field paths, references, edges and the graph.
import type { DiagnosticCode, RelatedSpan, Severity } from './diagnostic';
import { parseFieldPath } from './fieldPath';
import { type Adjacency, adjacency, bfsWithin, depths, stronglyConnectedComponents } from './graph';
import type { JsonNode, StringNode } from './json';
import { type DagModel, type EdgeDeclaration, type SourceForm, type TaskDeclaration, taskLabel } from './model';

export interface AnalysisLimits {
  readonly maxTasks: number;
  readonly maxDepth: number;
  readonly maxFanOut: number;
  /** Larger files (UTF-8 bytes) are not analysed: one `limit` diagnostic instead of a frozen editor. */
  readonly maxFileBytes: number;
}

export interface CheckOptions {
  readonly limits: AnalysisLimits;
  /** The capabilities the configured providers offer; undefined when some provider takes any capability. */
  readonly knownCapabilities: readonly string[] | undefined;
}

type Emit = (
  code: DiagnosticCode,
  severity: Severity,
  node: { offset: number; length: number },
  message: string,
  related?: readonly RelatedSpan[],
) => void;

const span = (node: JsonNode, message: string): RelatedSpan => ({
  start: node.offset,
  end: node.offset + node.length,
  message,
});

/** Layer 2's id form: `prefix` and then at least one character, the `<random>` part. */
const hasIdForm = (id: string, prefix: string): boolean => id.length > prefix.length && id.startsWith(prefix);

/** A `task_id`-like string: the id and its quotes, as a person reads it. */
const quoted = (node: StringNode): string => JSON.stringify(node.value);

export function runChecks(model: DagModel, options: CheckOptions, emit: Emit): void {
  checkIds(model, emit);
  for (let t = 0; t < model.tasks.length; t++) checkTaskShape(model.tasks[t]!, options, emit);
  const graph = resolveGraph(model, emit);
  checkReferences(model, graph, emit);
  checkGraph(model, graph, options.limits, emit);
}

function checkIds(model: DagModel, emit: Emit): void {
  const dagId = model.dagId;
  if (dagId !== undefined && !hasIdForm(dagId, 'dag_')) {
    emit(
      'id-format',
      'information',
      model.dagIdNode!,
      `dag_id ${JSON.stringify(dagId)} is not of the form dag_<random> (Layer 2 §3).`,
    );
  }
  // Indexed loops in the per-task checks: for-of allocated an iterator result per task here.
  for (let t = 0; t < model.tasks.length; t++) {
    const task = model.tasks[t]!;
    const id = task.id;
    if (id === undefined) continue;
    const first = task.duplicateOf;
    if (first !== undefined) {
      emit(
        'duplicate-task-id',
        'error',
        task.idNode!,
        `Task id ${JSON.stringify(id)} is already declared by task #${first.index + 1}: task ids must be unique; rename this one.`,
        [span(first.idNode!, `first declaration of ${JSON.stringify(id)}`)],
      );
    }
    if (!hasIdForm(id, 'task_')) {
      emit(
        'id-format',
        'information',
        task.idNode!,
        `task_id ${JSON.stringify(id)} is not of the form task_<random> (Layer 2 §1).`,
      );
    }
    if (task.metadataDagId !== undefined && dagId !== undefined && task.metadataDagId !== dagId) {
      emit(
        'metadata-dag-id',
        'warning',
        task.metadataDagIdNode!,
        `metadata.dag_id ${JSON.stringify(task.metadataDagId)} of task ${taskLabel(task)} differs from the file's dag_id ${JSON.stringify(dagId)}: make them equal or remove it.`,
        [span(model.dagIdNode!, "the file's dag_id")],
      );
    }
  }
}

const SOURCE_SHAPE_PROBLEMS: Partial<Record<SourceForm, string>> = {
  both: 'has both "from_task" and "from_tasks": they are mutually exclusive; keep one.',
  neither: 'names no upstream: add "from_task" (one task) or "from_tasks" (several).',
  empty: 'has an empty "from_tasks": list at least one task id.',
};

function checkTaskShape(task: TaskDeclaration, options: CheckOptions, emit: Emit): void {
  if (task.inputForm === 'both') {
    emit(
      'input-shape',
      'error',
      task.inputNode!,
      `The input of task ${taskLabel(task)} has both a literal form (type/data) and a source: keep one of them.`,
    );
  } else if (task.inputForm === 'neither') {
    emit(
      'input-shape',
      'error',
      task.inputNode!,
      `The input of task ${taskLabel(task)} is empty: give it a literal {"type", "data"} or a {"source": {...}} reference.`,
    );
  }
  const sourceProblem = SOURCE_SHAPE_PROBLEMS[task.sourceForm];
  if (sourceProblem !== undefined) {
    emit('source-shape', 'error', task.sourceNode!, `The source of task ${taskLabel(task)} ${sourceProblem}`);
  }
  if (task.field !== undefined) {
    const parsed = parseFieldPath(task.field);
    if (!parsed.ok) {
      const field = task.fieldNode!;
      // Point at the offending character when the string has no escapes (raw and decoded offsets agree).
      const exact = field.length === field.value.length + 2;
      const at = exact
        ? { offset: field.offset + 1 + parsed.offset, length: Math.min(1, field.value.length - parsed.offset) }
        : field;
      emit(
        'invalid-field-path',
        'error',
        at,
        `Invalid field path ${quoted(field)} in task ${taskLabel(task)}: ${parsed.message}.`,
      );
    }
    if (task.sourceForm === 'many' || task.sourceForm === 'empty' || task.sourceForm === 'both') {
      emit(
        'from-tasks-field',
        'warning',
        task.fieldNode!,
        `"field" with "from_tasks" in task ${taskLabel(task)} is not defined by Layer 2: this tool applies it to each referenced output, other orchestrators may not. Prefer a separate task per field.`,
      );
    }
  }
  if (options.knownCapabilities === undefined) return;
  const capability = task.capabilityNode;
  if (capability !== undefined && !options.knownCapabilities.includes(capability.value)) {
    const known = options.knownCapabilities.length === 0 ? 'none' : options.knownCapabilities.join(', ');
    emit(
      'unknown-capability',
      'warning',
      capability,
      `No configured provider offers capability ${quoted(capability)} (task ${taskLabel(task)}); offered: ${known}. Add a provider for it to acmp.providers or fix the name.`,
    );
  }
}

/**
 * The edges between declared tasks, numbered: graph node n is `tasks[n]`. A later declaration of an id is a node
 * without edges, since every edge resolves to an id's first declaration. Pairs are found with marks in typed arrays
 * rather than a map of pairs: at 10,000 tasks the map was a tenth of the analysis.
 */
interface TaskGraph {
  readonly nodes: readonly TaskDeclaration[];
  /** The graph node of the task that an id names; undefined when no task has that id. */
  readonly nodeOf: (id: string) => number | undefined;
  /** The graph node of a task: its id's first declaration. */
  readonly nodeOfTask: (task: TaskDeclaration) => number;
  /** One edge per distinct pair, in declaration order: `from[e]` → `to[e]`, declared by `edges[e]`. */
  readonly from: Int32Array;
  readonly to: Int32Array;
  readonly edges: readonly EdgeDeclaration[];
  /** Every edge between declared tasks, duplicates included, grouped by target: `into.targets` holds their numbers. */
  readonly into: Adjacency;
  readonly declaredFrom: Int32Array;
  readonly declared: readonly EdgeDeclaration[];
}

/**
 * The graph node of each declaration, its position in `tasks`: that is its index in the file's list unless the list
 * has elements that are not objects (which declare no task), and only then is a table needed.
 */
function nodeNumbers(tasks: readonly TaskDeclaration[]): (task: TaskDeclaration) => number {
  const last = tasks[tasks.length - 1];
  if (last === undefined || last.index === tasks.length - 1) return (task) => task.index;
  const nodeAt = new Int32Array(last.index + 1);
  for (let n = 0; n < tasks.length; n++) nodeAt[tasks[n]!.index] = n;
  return (task) => nodeAt[task.index]!;
}

/** Numbers the tasks and edges, reporting dangling and duplicate edges on the way. */
function resolveGraph(model: DagModel, emit: Emit): TaskGraph {
  const nodes = model.tasks;
  const nodeNumber = nodeNumbers(nodes);
  const nodeOf = (id: string): number | undefined => {
    const task = model.taskById.get(id);
    return task === undefined ? undefined : nodeNumber(task);
  };
  const nodeOfTask = (task: TaskDeclaration): number => nodeNumber(task.duplicateOf ?? task);
  // Arrays sized once, trimmed at the end: growing them by push was most of this function's allocation.
  const declaredFrom = new Int32Array(model.edges.length);
  const declaredTo = new Int32Array(model.edges.length);
  const declared = new Array<EdgeDeclaration>(model.edges.length);
  let count = 0;
  for (let e = 0; e < model.edges.length; e++) {
    const edge = model.edges[e]!;
    const source = edge.from === undefined ? undefined : nodeOf(edge.from);
    const target = edge.to === undefined ? undefined : nodeOf(edge.to);
    if (edge.from !== undefined && source === undefined) reportDangling(edge, 'from', edge.fromNode!, emit);
    if (edge.to !== undefined && target === undefined) reportDangling(edge, 'to', edge.toNode!, emit);
    if (source === undefined || target === undefined) continue;
    declaredFrom[count] = source;
    declaredTo[count] = target;
    declared[count++] = edge;
  }
  declared.length = count;
  const numbers = new Int32Array(count);
  for (let d = 0; d < count; d++) numbers[d] = d;

  // A later edge between the same pair is a duplicate: per target, in declaration order, mark each source once.
  const into = adjacency(nodes.length, declaredTo.subarray(0, count), numbers);
  const markedFor = new Int32Array(nodes.length).fill(-1);
  const firstOf = new Int32Array(nodes.length);
  const duplicate = new Uint8Array(declared.length);
  for (let target = 0; target < nodes.length; target++) {
    for (let i = into.offsets[target]!; i < into.offsets[target + 1]!; i++) {
      const d = into.targets[i]!;
      const source = declaredFrom[d]!;
      if (markedFor[source] !== target) {
        markedFor[source] = target;
        firstOf[source] = d;
        continue;
      }
      duplicate[d] = 1;
      const edge = declared[d]!;
      const first = declared[firstOf[source]!]!;
      emit(
        'duplicate-edge',
        'warning',
        edge.node,
        `Edge ${JSON.stringify(edge.from)} → ${JSON.stringify(edge.to)} is declared twice (also edge #${first.index + 1}): remove this one.`,
        [span(first.node, 'the first declaration')],
      );
    }
  }
  const from = new Int32Array(count);
  const to = new Int32Array(count);
  const edges = new Array<EdgeDeclaration>(count);
  let distinct = 0;
  for (let d = 0; d < count; d++) {
    if (duplicate[d] === 1) continue;
    from[distinct] = declaredFrom[d]!;
    to[distinct] = declaredTo[d]!;
    edges[distinct++] = declared[d]!;
  }
  edges.length = distinct;
  return {
    nodes,
    nodeOf,
    nodeOfTask,
    from: from.subarray(0, edges.length),
    to: to.subarray(0, edges.length),
    edges,
    into,
    declaredFrom,
    declared,
  };
}

function reportDangling(edge: EdgeDeclaration, side: 'from' | 'to', end: StringNode, emit: Emit): void {
  emit(
    'dangling-edge',
    'error',
    end,
    `Edge #${edge.index + 1} "${side}" names ${quoted(end)}, but no task has that id: fix the id or remove the edge.`,
  );
}

/**
 * The source of an edge into `target` whose task has the id `id`: a reference normally has its edge, and comparing a
 * few strings is cheaper than a lookup in a map of 100,000 ids.
 */
function sourceNamed(graph: TaskGraph, target: number, id: string): number | undefined {
  const { offsets, targets } = graph.into;
  for (let i = offsets[target]!; i < offsets[target + 1]!; i++) {
    const source = graph.declaredFrom[targets[i]!]!;
    if (graph.nodes[source]!.id === id) return source;
  }
  return undefined;
}

function checkReferences(model: DagModel, graph: TaskGraph, emit: Emit): void {
  // Per task: mark the sources of its incoming edges (and of its stream_eligible ones), then test its references.
  const edgeFrom = new Int32Array(graph.nodes.length).fill(-1);
  const streamFrom = new Int32Array(graph.nodes.length).fill(-1);
  const streamEdge = new Int32Array(graph.nodes.length);
  for (let t = 0; t < model.tasks.length; t++) {
    const task = model.tasks[t]!;
    if (task.referenceCount === 0) continue;
    const target = graph.nodeOfTask(task);
    const { offsets, targets } = graph.into;
    for (let i = offsets[target]!; i < offsets[target + 1]!; i++) {
      const d = targets[i]!;
      const source = graph.declaredFrom[d]!;
      edgeFrom[source] = t;
      if (graph.declared[d]!.streamEligible) {
        streamFrom[source] = t;
        streamEdge[source] = d;
      }
    }
    let streamWarned = false;
    for (let r = 0; r < task.referenceCount; r++) {
      const id = task.referencedId(r);
      const upstream = sourceNamed(graph, target, id) ?? graph.nodeOf(id);
      if (upstream === undefined) {
        emit(
          'unknown-task',
          'error',
          task.references[r]!.node,
          `Task ${taskLabel(task)} references ${quoted(task.references[r]!.node)} in ${task.references[r]!.via}, but no task has that id.`,
        );
        continue;
      }
      if (task.id === undefined) continue;
      if (edgeFrom[upstream] !== t) {
        emit(
          'missing-edge',
          'error',
          task.references[r]!.node,
          `Task ${taskLabel(task)} reads the output of ${quoted(task.references[r]!.node)} but there is no edge {"from": ${quoted(task.references[r]!.node)}, "to": "${task.id}"}: add it (Layer 2 §3).`,
          [span(graph.nodes[upstream]!.idNode!, `task ${quoted(task.references[r]!.node)}`)],
        );
      }
      // A streamed edge cannot carry a sub-field (Layer 2 §5).
      if (streamFrom[upstream] === t && !streamWarned && task.field !== undefined && task.field !== 'data') {
        streamWarned = true;
        const field = task.fieldNode!;
        emit(
          'stream-field',
          'warning',
          field,
          `The edge ${quoted(task.references[r]!.node)} → "${task.id}" is stream_eligible, but field ${quoted(field)} selects a sub-field: it will run non-streaming (Layer 2 §5). Remove the field (or use "data") or drop stream_eligible.`,
          [span(graph.declared[streamEdge[upstream]!]!.node, 'the stream_eligible edge')],
        );
      }
    }
  }
}

/** Longest cycle text shown in full; longer ones are elided in the middle. */
const MAX_CYCLE_SHOWN = 24;

function checkGraph(model: DagModel, taskGraph: TaskGraph, limits: AnalysisLimits, emit: Emit): void {
  const { nodes, from, to, edges: graphEdges } = taskGraph;
  const graph = adjacency(nodes.length, from, to);
  const component = stronglyConnectedComponents(graph);
  const componentSize = new Int32Array(nodes.length);
  for (let n = 0; n < nodes.length; n++) componentSize[component[n]!]!++;
  const cyclic = (e: number): boolean =>
    component[from[e]!] === component[to[e]!] && (from[e] === to[e] || componentSize[component[from[e]!]!]! > 1);

  if (graphEdges.some((_, e) => cyclic(e))) {
    const reverse = adjacency(nodes.length, to, from);
    const forwardParent = new Int32Array(nodes.length).fill(-1);
    const forwardDistance = new Int32Array(nodes.length).fill(-1);
    const towardRoot = new Int32Array(nodes.length).fill(-1);
    const backDistance = new Int32Array(nodes.length).fill(-1);
    const rootOf = new Int32Array(nodes.length).fill(-1);
    const name = (n: number): string => nodes[n]!.id!;
    // Pairs are looked up only to show a cycle's other edges, so their map is made only when there is a cycle.
    const edgeByPair = new Map<number, EdgeDeclaration>();
    graphEdges.forEach((edge, e) => edgeByPair.set(from[e]! * nodes.length + to[e]!, edge));
    const edgeBetween = (a: number, b: number): EdgeDeclaration | undefined => edgeByPair.get(a * nodes.length + b);

    for (let e = 0; e < graphEdges.length; e++) {
      if (!cyclic(e)) continue;
      const u = from[e]!;
      const v = to[e]!;
      const c = component[u]!;
      if (rootOf[c] === -1) {
        // One pair of BFS trees per component: a closed walk through any of its edges is root ⇝ u → v ⇝ root.
        rootOf[c] = u;
        bfsWithin(graph, u, component, forwardParent, forwardDistance);
        bfsWithin(reverse, u, component, towardRoot, backDistance);
      }
      const root = rootOf[c]!;
      let cycle: number[];
      let omitted = 0;
      const walkLength = u === v ? 1 : 1 + backDistance[v]! + forwardDistance[u]!;
      if (u === v) cycle = [u, u];
      else if (walkLength <= MAX_CYCLE_SHOWN) cycle = simpleCycle(u, v, root, towardRoot, forwardParent);
      else {
        const head = [u, v, towardRoot[v]!].filter((n) => n !== -1);
        const tail = [forwardParent[u]!, u].filter((n) => n !== -1);
        omitted = walkLength + 1 - head.length - tail.length;
        cycle = [...head, -1, ...tail];
      }
      const text = cycle.map((n) => (n === -1 ? `… (${omitted} more) …` : name(n))).join(' → ');
      const related: RelatedSpan[] = [];
      for (let i = 0; i + 1 < cycle.length && related.length < 10; i++) {
        const a = cycle[i]!;
        const b = cycle[i + 1]!;
        if (a === -1 || b === -1 || (a === u && b === v)) continue;
        const other = edgeBetween(a, b);
        if (other !== undefined) related.push(span(other.node, `edge ${name(a)} → ${name(b)} on the cycle`));
      }
      const fix = u === v ? 'a task cannot depend on itself: remove this edge' : 'remove one of its edges';
      emit(
        'cycle',
        'error',
        graphEdges[e]!.node,
        `This edge lies on the cycle ${text}: the graph must be acyclic (Layer 2 §3); ${fix}.`,
        related,
      );
    }
  }

  checkLimits(model, nodes, graph, limits, emit);
}

/** The cycle u → v ⇝ root ⇝ u with repeated nodes cut out, so it visits each task once. */
function simpleCycle(u: number, v: number, root: number, towardRoot: Int32Array, forwardParent: Int32Array): number[] {
  const walk = [u];
  for (let x = v; ; x = towardRoot[x]!) {
    walk.push(x);
    if (x === root) break;
  }
  const forward: number[] = [];
  for (let x = u; x !== root; x = forwardParent[x]!) forward.push(x);
  walk.push(...forward.reverse());
  if (walk[walk.length - 1] !== u) walk.push(u);

  const cycle: number[] = [u];
  const position = new Map<number, number>([[u, 0]]);
  for (let i = 1; i < walk.length; i++) {
    const x = walk[i]!;
    if (x === u) break;
    const seen = position.get(x);
    if (seen !== undefined && seen >= 1) {
      for (const dropped of cycle.splice(seen + 1)) position.delete(dropped);
      continue;
    }
    position.set(x, cycle.length);
    cycle.push(x);
  }
  cycle.push(u);
  return cycle;
}

function checkLimits(
  model: DagModel,
  nodes: readonly TaskDeclaration[],
  graph: ReturnType<typeof adjacency>,
  limits: AnalysisLimits,
  emit: Emit,
): void {
  const anchor = model.tasks.length > limits.maxTasks ? (model.dagIdNode ?? model.root) : undefined;
  if (anchor !== undefined) {
    emit(
      'limit',
      'warning',
      anchor,
      `The DAG has ${model.tasks.length} tasks, more than the limit of ${limits.maxTasks} (acmp.limits.maxTasks).`,
    );
  }
  const depth = depths(graph);
  let deepest = -1;
  for (let n = 0; n < nodes.length; n++) if (deepest === -1 || depth[n]! > depth[deepest]!) deepest = n;
  if (deepest !== -1 && depth[deepest]! > limits.maxDepth) {
    const task = nodes[deepest]!;
    emit(
      'limit',
      'warning',
      task.idNode ?? task.node,
      `The DAG is ${depth[deepest]} tasks deep (the longest path ends at task ${taskLabel(task)}), more than the limit of ${limits.maxDepth} (acmp.limits.maxDepth).`,
    );
  }
  for (let n = 0; n < nodes.length; n++) {
    const fanOut = graph.offsets[n + 1]! - graph.offsets[n]!;
    if (fanOut > limits.maxFanOut) {
      const task = nodes[n]!;
      emit(
        'limit',
        'warning',
        task.idNode ?? task.node,
        `Task ${taskLabel(task)} has ${fanOut} downstream tasks, more than the limit of ${limits.maxFanOut} (acmp.limits.maxFanOut).`,
      );
    }
  }
}
