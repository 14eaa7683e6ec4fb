// Questions editor features ask about a whole DAG: where a task id occurs, what is upstream and downstream of a
// task, the DAG's figures. Built once per model, on the first question, in passes linear in the file.
import { type Adjacency, adjacency, depths, stronglyConnectedComponents } from './graph';
import type { StringNode } from './json';
import type { DagModel, EdgeDeclaration, TaskDeclaration } from './model';

export type OccurrenceKind = 'declaration' | 'edge-from' | 'edge-to' | 'from_task' | 'from_tasks';

/** One place a task id is written. */
export interface Occurrence {
  readonly kind: OccurrenceKind;
  /** The task that declares or references the id; undefined for an edge end. */
  readonly task: TaskDeclaration | undefined;
  readonly edge: EdgeDeclaration | undefined;
  readonly node: StringNode;
}

/** Where an occurrence is, cheaply: its node is found only when asked for. */
interface Place {
  readonly kind: OccurrenceKind;
  readonly task?: TaskDeclaration;
  readonly edge?: EdgeDeclaration;
  /** Which reference of the task (see `TaskDeclaration.references`). */
  readonly reference?: number;
}

/** Graph nodes of the edges' ends, by position in `model.edges`; -1 where an end names no task. */
interface EdgeEnds {
  readonly from: Int32Array;
  readonly to: Int32Array;
}

export interface DagFigures {
  readonly tasks: number;
  readonly edges: number;
  readonly roots: readonly string[];
  readonly leaves: readonly string[];
  /** Tasks on the longest path; undefined when the graph has a cycle. */
  readonly depth: number | undefined;
  readonly longestPath: readonly string[];
  readonly maxPriceCu: number;
  readonly inputTokensEst: number;
  /** Tasks without a `max_price_cu` (so the sum is a lower bound when some lack it). */
  readonly unpriced: number;
}

export class DagIndex {
  private places: Map<string, Place[]> | undefined;
  private graph: { successors: Adjacency; predecessors: Adjacency; ends: EdgeEnds } | undefined;
  private referenceGraph: { readers: Adjacency; read: Adjacency } | undefined;
  private figureCache: DagFigures | undefined;
  private cycleMarks: Uint8Array | undefined;

  constructor(readonly model: DagModel) {}

  /** Builds what the questions need ahead of them (an editor does this while idle after an analysis). */
  prepare(): void {
    this.placeMap();
    this.adjacencies();
  }

  /** Every place `id` is written, in no particular order: declarations, edge ends and references. */
  occurrences(id: string): Occurrence[] {
    return (this.placeMap().get(id) ?? []).map((place) => ({
      kind: place.kind,
      task: place.task,
      edge: place.edge,
      node: nodeOf(place),
    }));
  }

  /** The task a graph node stands for (the first declaration of its id). */
  task(node: number): TaskDeclaration {
    return this.model.tasks[node]!;
  }

  /** The graph node of a task: the position of its id's first declaration in `model.tasks`. */
  nodeOf(task: TaskDeclaration): number | undefined {
    const first = task.id === undefined ? task : this.model.taskById.get(task.id);
    return first === undefined ? undefined : positionOf(this.model.tasks, first);
  }

  /** The tasks with an edge into `task`, each once, in edge order. */
  upstream(task: TaskDeclaration): TaskDeclaration[] {
    return this.neighbours(task, this.adjacencies().predecessors);
  }

  /** The tasks with an edge from `task`, each once, in edge order. */
  downstream(task: TaskDeclaration): TaskDeclaration[] {
    return this.neighbours(task, this.adjacencies().successors);
  }

  /** The tasks whose input reads `task` (`from_task` or `from_tasks`), each once, in file order. */
  readers(task: TaskDeclaration): TaskDeclaration[] {
    return this.neighbours(task, this.readings().readers);
  }

  /** The tasks `task`'s input reads, each once, in file order. */
  readBy(task: TaskDeclaration): TaskDeclaration[] {
    return this.neighbours(task, this.readings().read);
  }

  /**
   * Successors and predecessors by graph node (a task's position in `model.tasks`), over the edges whose both ends
   * name a task; a repeated edge is there as often as it is written.
   */
  dependencies(): { readonly successors: Adjacency; readonly predecessors: Adjacency } {
    return this.adjacencies();
  }

  /**
   * A breadth-first walk from `task` along the dependencies, edges and references alike (a task waits for what it
   * reads as it waits for an edge's `from`), downstream or upstream. By graph node: the neighbour one step nearer
   * `task` on a shortest way back to it, the node itself for `task`, -1 where the walk did not reach.
   */
  dependencyWalk(task: TaskDeclaration, direction: 'downstream' | 'upstream'): Int32Array {
    const { successors, predecessors } = this.adjacencies();
    const { readers, read } = this.readings();
    const graphs = direction === 'downstream' ? [successors, readers] : [predecessors, read];
    const steps = new Int32Array(this.model.tasks.length).fill(-1);
    const start = this.nodeOf(task);
    if (start === undefined) return steps;
    const queue = [start];
    steps[start] = start;
    for (let head = 0; head < queue.length; head++) {
      const node = queue[head]!;
      for (const graph of graphs) {
        for (let e = graph.offsets[node]!; e < graph.offsets[node + 1]!; e++) {
          const next = graph.targets[e]!;
          if (steps[next] === -1) {
            steps[next] = node;
            queue.push(next);
          }
        }
      }
    }
    return steps;
  }

  /**
   * Marks, by position in `model.edges`, the edges that lie on a cycle: both ends in one strongly connected component
   * (a self-loop included). Dangling edges are never marked.
   */
  edgesOnCycles(): Uint8Array {
    this.cycleMarks ??= this.computeCycleMarks();
    return this.cycleMarks;
  }

  private computeCycleMarks(): Uint8Array {
    const { successors, ends } = this.adjacencies();
    const component = stronglyConnectedComponents(successors);
    const componentSize = new Int32Array(this.model.tasks.length);
    for (const c of component) componentSize[c]!++;
    return Uint8Array.from(this.model.edges, (_, e) => {
      const from = ends.from[e]!;
      const to = ends.to[e]!;
      if (from === -1 || to === -1) return 0;
      return component[from] === component[to] && (from === to || componentSize[component[from]!]! > 1) ? 1 : 0;
    });
  }

  figures(): DagFigures {
    this.figureCache ??= this.computeFigures();
    return this.figureCache;
  }

  private computeFigures(): DagFigures {
    const { successors, predecessors } = this.adjacencies();
    const tasks = this.model.tasks;
    const roots: string[] = [];
    const leaves: string[] = [];
    let maxPriceCu = 0;
    let inputTokensEst = 0;
    let unpriced = 0;
    for (let n = 0; n < tasks.length; n++) {
      const task = tasks[n]!;
      maxPriceCu += task.maxPriceCu ?? 0;
      inputTokensEst += task.inputTokensEst ?? 0;
      if (task.maxPriceCu === undefined) unpriced++;
      if (task.id === undefined || task.duplicateOf !== undefined) continue;
      if (predecessors.offsets[n] === predecessors.offsets[n + 1]) roots.push(task.id);
      if (successors.offsets[n] === successors.offsets[n + 1]) leaves.push(task.id);
    }
    const depth = depths(successors);
    let deepest = -1;
    let acyclic = true;
    for (let n = 0; n < tasks.length; n++) {
      if (depth[n] === 0) acyclic = false;
      if (deepest === -1 || depth[n]! > depth[deepest]!) deepest = n;
    }
    // Walk back from the deepest task through a predecessor one level shallower each time.
    const longestPath: string[] = [];
    for (let n = acyclic ? deepest : -1; n !== -1;) {
      longestPath.push(tasks[n]!.id ?? `#${tasks[n]!.index + 1}`);
      let previous = -1;
      for (let e = predecessors.offsets[n]!; e < predecessors.offsets[n + 1]!; e++) {
        if (depth[predecessors.targets[e]!] === depth[n]! - 1) previous = predecessors.targets[e]!;
      }
      n = previous;
    }
    longestPath.reverse();
    return {
      tasks: tasks.length,
      edges: this.model.edges.length,
      roots,
      leaves,
      depth: acyclic ? (deepest === -1 ? 0 : depth[deepest]) : undefined,
      longestPath,
      maxPriceCu,
      inputTokensEst,
      unpriced,
    };
  }

  private neighbours(task: TaskDeclaration, graph: Adjacency): TaskDeclaration[] {
    const node = this.nodeOf(task);
    if (node === undefined) return [];
    const seen = new Set<number>();
    const found: TaskDeclaration[] = [];
    for (let e = graph.offsets[node]!; e < graph.offsets[node + 1]!; e++) {
      const next = graph.targets[e]!;
      if (!seen.has(next)) {
        seen.add(next);
        found.push(this.model.tasks[next]!);
      }
    }
    return found;
  }

  /**
   * Successors and predecessors over the edges whose both ends name a task (dangling edges are left out), and the
   * graph nodes of each edge's ends by position in `model.edges` (-1 for an end that names no task).
   */
  private adjacencies(): { successors: Adjacency; predecessors: Adjacency; ends: EdgeEnds } {
    if (this.graph === undefined) {
      const edges = this.model.edges;
      const ends: EdgeEnds = { from: new Int32Array(edges.length), to: new Int32Array(edges.length) };
      const from: number[] = [];
      const to: number[] = [];
      edges.forEach((edge, e) => {
        const source = this.graphNode(edge.from);
        const target = this.graphNode(edge.to);
        ends.from[e] = source;
        ends.to[e] = target;
        if (source === -1 || target === -1) return;
        from.push(source);
        to.push(target);
      });
      const count = this.model.tasks.length;
      this.graph = { successors: adjacency(count, from, to), predecessors: adjacency(count, to, from), ends };
    }
    return this.graph;
  }

  /** By graph node, the tasks that read it (`readers`) and the tasks it reads (`read`), over references to tasks. */
  private readings(): { readers: Adjacency; read: Adjacency } {
    if (this.referenceGraph === undefined) {
      const tasks = this.model.tasks;
      const from: number[] = [];
      const to: number[] = [];
      for (let reader = 0; reader < tasks.length; reader++) {
        const task = tasks[reader]!;
        if (task.duplicateOf !== undefined) continue;
        for (let position = 0; position < task.referenceCount; position++) {
          const source = this.graphNode(task.referencedId(position));
          if (source === -1) continue;
          from.push(source);
          to.push(reader);
        }
      }
      this.referenceGraph = { readers: adjacency(tasks.length, from, to), read: adjacency(tasks.length, to, from) };
    }
    return this.referenceGraph;
  }

  /** The graph node of the task `id` names, or -1. */
  private graphNode(id: string | undefined): number {
    const task = id === undefined ? undefined : this.model.taskById.get(id);
    return task === undefined ? -1 : positionOf(this.model.tasks, task);
  }

  private placeMap(): Map<string, Place[]> {
    if (this.places !== undefined) return this.places;
    const places = new Map<string, Place[]>();
    const add = (id: string | undefined, place: Place): void => {
      if (id === undefined) return;
      const list = places.get(id);
      if (list === undefined) places.set(id, [place]);
      else list.push(place);
    };
    for (const task of this.model.tasks) {
      add(task.id, { kind: 'declaration', task });
      for (let reference = 0; reference < task.referenceCount; reference++) {
        add(task.referencedId(reference), {
          kind: task.references[reference]!.via,
          task,
          reference,
        });
      }
    }
    for (const edge of this.model.edges) {
      add(edge.from, { kind: 'edge-from', edge });
      add(edge.to, { kind: 'edge-to', edge });
    }
    this.places = places;
    return places;
  }
}

function nodeOf(place: Place): StringNode {
  switch (place.kind) {
    case 'declaration':
      return place.task!.idNode!;
    case 'edge-from':
      return place.edge!.fromNode!;
    case 'edge-to':
      return place.edge!.toNode!;
    default:
      return place.task!.references[place.reference!]!.node;
  }
}

/** A declaration's position in `model.tasks` (declarations are in text order, so a binary search on `index`). */
function positionOf(tasks: readonly TaskDeclaration[], task: TaskDeclaration): number {
  let low = 0;
  let high = tasks.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (tasks[middle]!.index < task.index) low = middle + 1;
    else high = middle;
  }
  return low;
}

const indexes = new WeakMap<DagModel, DagIndex>();

/** The index of a model, made on first use and kept as long as the model lives. */
export function dagIndex(model: DagModel): DagIndex {
  let index = indexes.get(model);
  if (index === undefined) {
    index = new DagIndex(model);
    indexes.set(model, index);
  }
  return index;
}
