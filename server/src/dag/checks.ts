// The checks of Layer 2 beyond the schema: task shapes, field paths, references, edges and the graph.
import type { AnalysisLimits } from '../protocol/limits';
import type { DiagnosticCode, RelatedSpan, Severity } from './diagnostic';
import { parseFieldPath } from './fieldPath';
import { type Adjacency, adjacency, depths, stronglyConnectedComponents } from './graph';
import type { JsonNode, StringNode } from './json';
import { type DagModel, type EdgeDeclaration, type SourceForm, type TaskDeclaration, taskLabel } from './model';

/** The lowest price of a task among the providers that may take it, and the provider that asks it. */
export interface CheapestPrice {
  readonly priceCu: number;
  readonly providerId: string;
}

/**
 * What the providers (configured and discovered) offer, made once per change of them by the language server or the
 * CLI (features/providerOffers.ts): the no-provider and over-budget checks ask it once per task, and it never reads
 * the network or the disk. Absent when no provider is configured: a file of market capabilities is not wrong for lack
 * of settings, and gets neither warning.
 */
export interface ProviderOffers {
  /** The capabilities the providers offer, sorted; undefined when one of them may take any capability. */
  readonly capabilities: readonly string[] | undefined;
  /**
   * The lowest price of a task of `capability` estimating `inputTokensEst` tokens, when every provider that may take it
   * has a known price for it (advertised); undefined otherwise, since one of unknown price may
   * take a task whatever its max_price_cu (as the plan counts it).
   */
  cheapest(capability: string, inputTokensEst: number | undefined): CheapestPrice | undefined;
}

export interface CheckOptions {
  readonly limits: AnalysisLimits;
  readonly offers: ProviderOffers | undefined;
}

/**
 * A price as messages and quick fixes write it: 12 significant digits, so that a per-1k-tokens product reads as the
 * number a person would write (0.003, not 0.0030000000000000005); over-budget compares against this same number.
 */
export const roundCu = (priceCu: number): number => Number(priceCu.toPrecision(12));

/** At most this many offered capabilities are named in a no-provider message. */
const MAX_NAMED_CAPABILITIES = 8;

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

/** A string of the text with its quotes, as a person reads it. */
const quoted = (node: StringNode): string => JSON.stringify(node.value);

/** How messages name a task: as `taskLabel` does, but an empty id by the task's position, not as `""`. */
const taskName = (task: TaskDeclaration): string =>
  task.id === '' ? `#${task.index + 1} (empty task_id)` : taskLabel(task);

/** A string value as messages name it: in quotes, or, when empty, as "an empty <what>" (`""` is easily misread). */
const named = (value: string, what: string): string => (value === '' ? `an empty ${what}` : JSON.stringify(value));

const quotedId = (id: string): string => named(id, 'task id');

export function runChecks(model: DagModel, options: CheckOptions, emit: Emit): void {
  checkIds(model, emit);
  for (let t = 0; t < model.tasks.length; t++) checkTaskShape(model.tasks[t]!, options, emit);
  const graph = resolveGraph(model, emit);
  checkReferences(model, graph, emit);
  reportUnpairedDangling(graph, emit);
  checkGraph(model, graph, options.limits, emit);
}

function checkIds(model: DagModel, emit: Emit): void {
  const dagId = model.dagId;
  if (dagId !== undefined && !hasIdForm(dagId, 'dag_')) {
    emit(
      'id-format',
      'information',
      model.dagIdNode!,
      dagId === ''
        ? 'The dag_id is empty: give the DAG an id of the form dag_<random> (Layer 2 §3).'
        : `The dag_id ${JSON.stringify(dagId)} is not of the form dag_<random> (Layer 2 §3): rename it, e.g. to ${JSON.stringify(`dag_${dagId}`)}.`,
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
        `Task #${task.index + 1} declares the id ${quotedId(id)} again (task #${first.index + 1} declares it first): task ids must be unique; rename this one.`,
        [span(first.idNode!, `first declaration of ${quotedId(id)}`)],
      );
    } else if (!hasIdForm(id, 'task_')) {
      // Not on a second declaration: renaming it, as its duplicate-task-id error says, settles the form too.
      emit(
        'id-format',
        'information',
        task.idNode!,
        id === ''
          ? `Task #${task.index + 1} has an empty task_id: give it an id of the form task_<random> (Layer 2 §1).`
          : `The task_id ${JSON.stringify(id)} is not of the form task_<random> (Layer 2 §1): rename it, e.g. to ${JSON.stringify(`task_${id}`)}.`,
      );
    }
    if (task.metadataDagId !== undefined && dagId !== undefined && task.metadataDagId !== dagId) {
      emit(
        'metadata-dag-id',
        'warning',
        task.metadataDagIdNode!,
        `The metadata.dag_id ${named(task.metadataDagId, 'dag_id')} of task ${taskName(task)} differs from the file's dag_id ${named(dagId, 'dag_id')}: make them equal or remove it.`,
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
      `The input of task ${taskName(task)} has both a literal form (type/data) and a source: keep one of them.`,
    );
  } else if (task.inputForm === 'neither') {
    emit(
      'input-shape',
      'error',
      task.inputNode!,
      `The input of task ${taskName(task)} has neither a literal form nor a source: give it a literal {"type", "data"} or a {"source": {...}} reference.`,
    );
  }
  const sourceProblem = SOURCE_SHAPE_PROBLEMS[task.sourceForm];
  if (sourceProblem !== undefined) {
    emit('source-shape', 'error', task.sourceNode!, `The source of task ${taskName(task)} ${sourceProblem}`);
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
        `The field path ${named(field.value, 'field')} of task ${taskName(task)} is invalid: ${parsed.message}.`,
      );
    }
    if (task.sourceForm === 'many' || task.sourceForm === 'empty' || task.sourceForm === 'both') {
      emit(
        'from-tasks-field',
        'warning',
        task.fieldNode!,
        `The "field" with "from_tasks" in task ${taskName(task)} is not defined by Layer 2: this tool applies it to each referenced output, other orchestrators may not. Prefer a separate task per field.`,
      );
    }
  }
  if (options.offers !== undefined) checkMarket(task, options.offers, emit);
}

/** `no-provider` on a capability no provider offers; else `over-budget` on a max_price_cu below every known price. */
function checkMarket(task: TaskDeclaration, offers: ProviderOffers, emit: Emit): void {
  // By value first: a node makes the analysis index the text's offsets, which a clean file never needs.
  const name = task.capability;
  if (name === undefined) return;
  const offered = offers.capabilities;
  if (offered !== undefined && !offered.includes(name)) {
    const capability = task.capabilityNode!;
    const listed = offered.slice(0, MAX_NAMED_CAPABILITIES).join(', ');
    const more = offered.length > MAX_NAMED_CAPABILITIES ? `, … (${offered.length} in all)` : '';
    emit(
      'no-provider',
      'warning',
      capability,
      offered.length === 0
        ? `No provider offers ${named(capability.value, 'capability')} (task ${taskName(task)}), and the providers list none. Add a provider that offers it (acmp.providers, acmp.catalogs).`
        : `No provider offers ${named(capability.value, 'capability')} (task ${taskName(task)}). Offered: ${listed}${more}. Use one of them, or add a provider that offers it (acmp.providers, acmp.catalogs).`,
    );
    return;
  }
  const maxPriceCu = task.maxPriceCu;
  if (maxPriceCu === undefined) return;
  const cheapest = offers.cheapest(name, task.inputTokensEst);
  if (cheapest === undefined || maxPriceCu >= roundCu(cheapest.priceCu)) return;
  const price = roundCu(cheapest.priceCu);
  emit(
    'over-budget',
    'warning',
    task.maxPriceCuNode!,
    `The max_price_cu ${maxPriceCu} of task ${taskName(task)} is below the price of every provider that offers ${named(name, 'capability')}: the cheapest, ${JSON.stringify(cheapest.providerId)}, asks ${price} CU, so none would take the task. Raise max_price_cu to ${price}.`,
  );
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
  /**
   * By graph node, in declaration order: the edges into that task whose `from` names no task, not yet reported. A
   * reference of the task that lacks its edge takes the first of them (one renamed end, one fault); the rest are
   * reported alone. Undefined when there are none.
   */
  readonly danglingInto: Map<number, EdgeDeclaration[]> | undefined;
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
  let danglingInto: Map<number, EdgeDeclaration[]> | undefined;
  for (let e = 0; e < model.edges.length; e++) {
    const edge = model.edges[e]!;
    const source = edge.from === undefined ? undefined : nodeOf(edge.from);
    const target = edge.to === undefined ? undefined : nodeOf(edge.to);
    if (edge.from !== undefined && source === undefined) {
      if (target === undefined) reportDangling(edge, 'from', emit);
      else {
        danglingInto ??= new Map();
        const into = danglingInto.get(target);
        if (into === undefined) danglingInto.set(target, [edge]);
        else into.push(edge);
      }
    }
    if (edge.to !== undefined && target === undefined) reportDangling(edge, 'to', emit);
    if (source === undefined || target === undefined) continue;
    declaredFrom[count] = source;
    declaredTo[count] = target;
    declared[count++] = edge;
  }
  declared.length = count;
  const numbers = new Int32Array(count);
  for (let d = 0; d < count; d++) numbers[d] = d;

  const into = adjacency(nodes.length, declaredTo.subarray(0, count), numbers);
  const duplicate = findDuplicateEdges(into, declaredFrom, declared, emit);
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
    danglingInto,
  };
}

/**
 * Marks each edge that repeats an earlier one between the same pair, reporting it: per target, in declaration order,
 * each source is marked once. `into` groups the edges (numbers into `declaredFrom` and `declared`) by target.
 */
function findDuplicateEdges(
  into: Adjacency,
  declaredFrom: Int32Array,
  declared: readonly EdgeDeclaration[],
  emit: Emit,
): Uint8Array {
  const nodeCount = into.offsets.length - 1;
  const markedFor = new Int32Array(nodeCount).fill(-1);
  const firstOf = new Int32Array(nodeCount);
  const duplicate = new Uint8Array(declared.length);
  for (let target = 0; target < nodeCount; target++) {
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
  return duplicate;
}

function reportDangling(edge: EdgeDeclaration, side: 'from' | 'to', emit: Emit): void {
  const end = side === 'from' ? edge.fromNode! : edge.toNode!;
  emit(
    'dangling-edge',
    'error',
    end,
    `Edge #${edge.index + 1} "${side}" names ${quotedId(end.value)}, but no task has that id: change it to an existing task's id or remove the edge.`,
  );
}

/** The dangling `from` ends that no reference took: each is its own fault. */
function reportUnpairedDangling(graph: TaskGraph, emit: Emit): void {
  for (const edges of graph.danglingInto?.values() ?? []) for (const edge of edges) reportDangling(edge, 'from', emit);
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
    // A sub-field with from_tasks has its own warning (the same edit, removing the field, settles both).
    let streamWarned = task.sourceForm !== 'single';
    for (let r = 0; r < task.referenceCount; r++) {
      const id = task.referencedId(r);
      const upstream = sourceNamed(graph, target, id) ?? graph.nodeOf(id);
      if (upstream === undefined) {
        const reference = task.references[r]!;
        emit(
          'unknown-task',
          'error',
          reference.node,
          `Task ${taskName(task)} references ${quotedId(id)} in ${reference.via}, but no task has that id: change it to an existing task's id, or add the task.`,
        );
        continue;
      }
      if (task.id === undefined) continue;
      if (upstream === target) {
        emit(
          'missing-edge',
          'error',
          task.references[r]!.node,
          `Task ${taskName(task)} reads its own output, which it cannot: a task cannot depend on itself (Layer 2 §3). Point this reference at an upstream task.`,
        );
        continue;
      }
      if (edgeFrom[upstream] !== t) {
        reportMissingEdge(graph, task, r, target, emit);
        // The other references to the same task are settled by the same edit: one diagnostic for them all.
        edgeFrom[upstream] = t;
      }
      // A streamed edge cannot carry a sub-field (Layer 2 §5).
      if (streamFrom[upstream] === t && !streamWarned && task.field !== undefined && task.field !== 'data') {
        streamWarned = true;
        const field = task.fieldNode!;
        emit(
          'stream-field',
          'warning',
          field,
          `The edge ${quotedId(id)} → ${taskName(task)} is stream_eligible, but field ${quoted(field)} selects a sub-field: it will run non-streaming (Layer 2 §5). Remove the field (or use "data") or drop stream_eligible.`,
          [span(graph.declared[streamEdge[upstream]!]!.node, 'the stream_eligible edge')],
        );
      }
    }
  }
}

/**
 * A reference to an existing task without an edge from it. With an edge into the task whose `from` names no task, the
 * likely story is one renamed end: one diagnostic, on that edge end, saying which id it should name.
 */
function reportMissingEdge(graph: TaskGraph, task: TaskDeclaration, r: number, target: number, emit: Emit): void {
  const id = task.referencedId(r);
  const reference = task.references[r]!;
  const others: RelatedSpan[] = [];
  for (let other = r + 1; other < task.referenceCount; other++) {
    if (task.referencedId(other) === id) others.push(span(task.references[other]!.node, `also reads ${quotedId(id)}`));
  }
  const renamed = graph.danglingInto?.get(target)?.shift();
  if (renamed !== undefined) {
    const end = renamed.fromNode!;
    emit(
      'dangling-edge',
      'error',
      end,
      `Edge #${renamed.index + 1} "from" names ${quotedId(end.value)}, but no task has that id; task ${taskName(task)} reads ${quotedId(id)} (${reference.via}), which has no edge into ${taskName(task)}: change it to ${quotedId(id)}.`,
      [span(reference.node, `the reference to ${quotedId(id)} without its edge`), ...others],
    );
    return;
  }
  emit(
    'missing-edge',
    'error',
    reference.node,
    `Task ${taskName(task)} reads the output of ${quotedId(id)} but there is no edge {"from": ${JSON.stringify(id)}, "to": ${JSON.stringify(task.id)}}: add it (Layer 2 §3).`,
    [span(graph.nodes[graph.nodeOf(id)!]!.idNode!, `task ${quotedId(id)}`), ...others],
  );
}

/** Longest cycle text shown in full; longer ones are elided in the middle. */
const MAX_CYCLE_SHOWN = 24;
/** How many of a cycle's other edges its diagnostic points at. */
const MAX_CYCLE_RELATED = 20;

/**
 * One `cycle` error per back edge of a depth-first walk in document order (start nodes in task order, out-edges in
 * edge order) over the edges inside strongly connected components: removing the back edges makes the graph acyclic,
 * so each is a cycle that must be broken. Walking only inside a component starts it at its first-declared task, which
 * in a file written in dependency order is the cycle's top: one wrong edge is then one error however long its cycle
 * (a walk entering the cycle midway finds a back edge for each way back to the path). Typed arrays, no recursion.
 */
function checkGraph(model: DagModel, taskGraph: TaskGraph, limits: AnalysisLimits, emit: Emit): void {
  const { nodes, from, to, edges } = taskGraph;
  const edgeNumbers = new Int32Array(edges.length);
  for (let e = 0; e < edges.length; e++) edgeNumbers[e] = e;
  // The out-edges of each node by number, in declaration order (`adjacency` keeps the order of its input).
  const outEdges = adjacency(nodes.length, from, edgeNumbers);
  const successors = new Int32Array(edges.length);
  for (let i = 0; i < edges.length; i++) successors[i] = to[outEdges.targets[i]!]!;
  const graph: Adjacency = { offsets: outEdges.offsets, targets: successors };
  const component = stronglyConnectedComponents(graph);
  let cyclic = false;
  for (let e = 0; e < edges.length && !cyclic; e++) cyclic = component[from[e]!] === component[to[e]!];
  if (cyclic) walkCycles(taskGraph, outEdges, successors, component, emit);
  checkLimits(model, nodes, graph, limits, emit);
}

function walkCycles(
  taskGraph: TaskGraph,
  outEdges: Adjacency,
  successors: Int32Array,
  component: Int32Array,
  emit: Emit,
): void {
  const nodeCount = taskGraph.nodes.length;
  const onPath = new Int32Array(nodeCount).fill(-1); // a node's depth on the walk's path while it is on it
  const visited = new Uint8Array(nodeCount);
  const path = new Int32Array(nodeCount);
  const next = new Int32Array(nodeCount); // per depth: the position in `outEdges` of the next edge to follow
  const enteredBy = new Int32Array(nodeCount); // per depth: the edge the walk took to that node
  for (let start = 0; start < nodeCount; start++) {
    if (visited[start] === 1) continue;
    visited[start] = 1;
    onPath[start] = 0;
    path[0] = start;
    next[0] = outEdges.offsets[start]!;
    for (let depth = 0; depth >= 0;) {
      const node = path[depth]!;
      const position = next[depth]!;
      if (position === outEdges.offsets[node + 1]) {
        onPath[node] = -1;
        depth--;
        continue;
      }
      next[depth] = position + 1;
      const target = successors[position]!;
      if (component[target] !== component[node]) continue;
      if (onPath[target] !== -1) {
        reportCycle(taskGraph, outEdges.targets[position]!, path, enteredBy, onPath[target]!, depth, emit);
      } else if (visited[target] === 0) {
        visited[target] = 1;
        onPath[target] = ++depth;
        path[depth] = target;
        next[depth] = outEdges.offsets[target]!;
        enteredBy[depth] = outEdges.targets[position]!;
      }
    }
  }
}

/** The cycle closed by `backEdge`: the walk's path from depth `top` (its target) to `bottom` (its source), and back. */
function reportCycle(
  { nodes, edges, from, to }: TaskGraph,
  backEdge: number,
  path: Int32Array,
  enteredBy: Int32Array,
  top: number,
  bottom: number,
  emit: Emit,
): void {
  const name = (n: number): string => nodes[n]!.id!;
  const edge = edges[backEdge]!;
  if (top === bottom) {
    emit(
      'cycle',
      'error',
      edge.node,
      `Task "${name(path[top]!)}" depends on itself through this edge, which makes the cycle ${name(path[top]!)} → ${name(path[top]!)}: a task cannot depend on itself; remove this edge (Layer 2 §3).`,
    );
    return;
  }
  const length = bottom - top + 1;
  const shown = (depth: number): string => name(path[depth]!);
  const names: string[] = [];
  if (length + 1 <= MAX_CYCLE_SHOWN) {
    for (let depth = top; depth <= bottom; depth++) names.push(shown(depth));
  } else {
    names.push(
      shown(top),
      shown(top + 1),
      shown(top + 2),
      `… (${length - 5} more) …`,
      shown(bottom - 1),
      shown(bottom),
    );
  }
  names.push(shown(top));
  const related: RelatedSpan[] = [];
  for (let depth = top + 1; depth <= bottom && related.length < MAX_CYCLE_RELATED; depth++) {
    const e = enteredBy[depth]!;
    related.push(span(edges[e]!.node, `edge ${name(from[e]!)} → ${name(to[e]!)} on the cycle`));
  }
  emit(
    'cycle',
    'error',
    edge.node,
    `This edge closes the cycle ${names.join(' → ')}: the graph must be acyclic (Layer 2 §3); remove this edge "${name(from[backEdge]!)}" → "${name(to[backEdge]!)}" (or another edge of the cycle).`,
    related,
  );
}

function checkLimits(
  model: DagModel,
  nodes: readonly TaskDeclaration[],
  graph: Adjacency,
  limits: AnalysisLimits,
  emit: Emit,
): void {
  const anchor = model.tasks.length > limits.maxTasks ? (model.dagIdNode ?? model.root) : undefined;
  if (anchor !== undefined) {
    emit(
      'limit',
      'warning',
      anchor,
      `The DAG has ${model.tasks.length} tasks, more than the limit of ${limits.maxTasks}: split the DAG, or raise acmp.limits.maxTasks.`,
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
      `The DAG is ${depth[deepest]} tasks deep (the longest path ends at task ${taskName(task)}), more than the limit of ${limits.maxDepth}: shorten its longest chain, or raise acmp.limits.maxDepth.`,
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
        `Task ${taskName(task)} has ${fanOut} downstream tasks, more than the limit of ${limits.maxFanOut}: split its fan-out, or raise acmp.limits.maxFanOut.`,
      );
    }
  }
}
