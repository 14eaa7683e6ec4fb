// The graph view's shape: the DAG collapsed into groups, each the tasks of one layer (or of a band of consecutive
// layers, where there are more layers than a view holds legibly) that share a key, their id prefix or their
// capability; edges between groups carry how many task edges they stand for. Groups the user expanded are shown as
// their tasks among the others. Pure: the view lays the result out (layout.ts) and paints it.
import type { GraphLayout } from '../../server/src/protocol/runMessages';
import type { DrawnGraph } from './graphPage';

/** What tasks are grouped by: their id without its trailing number (`task_3_42` → `task_`), or their capability. */
export type GroupBy = 'prefix' | 'capability';

/** A task id's prefix: the id without its trailing digits and the separators among and after them. */
export function idPrefix(id: string): string {
  return id.replace(/[0-9][0-9_.:-]*$/, '');
}

/**
 * The layer of each of the first `tasks` boxes of a layered layout, numbered from the top: each layer is a row of
 * boxes at one height (layout.ts).
 */
export function layersOf(layout: GraphLayout, tasks: number): Int32Array {
  const tops = new Set<number>();
  for (let n = 0; n < tasks; n++) tops.add(layout.boxes[2 * n + 1]!);
  const layerOfTop = new Map([...tops].sort((a, b) => a - b).map((top, layer) => [top, layer]));
  return Int32Array.from({ length: tasks }, (_, n) => layerOfTop.get(layout.boxes[2 * n + 1]!)!);
}

export interface TaskGroup {
  /** Unique in its grouping, and the same for the same tasks in the next version of the graph: what expands it. */
  readonly id: string;
  /** The prefix or capability its tasks share ('' for tasks without a capability). */
  readonly key: string;
  readonly firstLayer: number;
  readonly lastLayer: number;
  /** Its tasks' indexes, in document order. */
  readonly tasks: readonly number[];
  /** The capability all its tasks have, if they share one. */
  readonly capability: string | undefined;
  /** How many different capabilities its tasks have. */
  readonly capabilities: number;
}

export interface Grouping {
  readonly by: GroupBy;
  /** In order of their bands, then of their first task in the document. */
  readonly groups: readonly TaskGroup[];
  /** The group of each task. */
  readonly groupOfTask: Int32Array;
}

/** The layers a band of `layersPerBand` holds so that at most `rows` bands show all `layers` (at least one a band). */
export function layersPerBand(layers: number, rows: number): number {
  return Math.max(1, Math.ceil(layers / Math.max(1, rows)));
}

/** Groups tasks by layer band (`layersPerBand` consecutive layers) and key. */
export function groupTasks(nodes: DrawnGraph['nodes'], layerOfTask: Int32Array, by: GroupBy, bandLayers = 1): Grouping {
  const keyOf = (n: number): string => (by === 'prefix' ? idPrefix(nodes[n]!.id) : (nodes[n]!.capability ?? ''));
  const found = new Map<string, { band: number; key: string; tasks: number[] }>();
  for (let n = 0; n < nodes.length; n++) {
    const band = Math.floor(layerOfTask[n]! / bandLayers);
    const key = keyOf(n);
    const id = `${band}:${key}`;
    let group = found.get(id);
    if (group === undefined) found.set(id, (group = { band, key, tasks: [] }));
    group.tasks.push(n);
  }
  // Bands top to bottom; within a band, the order of the document (a Map keeps the order of first mention).
  const ordered = [...found.entries()].sort(([, a], [, b]) => a.band - b.band);
  const groupOfTask = new Int32Array(nodes.length);
  const groups = ordered.map(([id, { band, key, tasks }], g): TaskGroup => {
    const capabilities = new Set(tasks.map((n) => nodes[n]!.capability));
    let [firstLayer, lastLayer] = [Infinity, -Infinity];
    for (const n of tasks) {
      groupOfTask[n] = g;
      firstLayer = Math.min(firstLayer, layerOfTask[n]!);
      lastLayer = Math.max(lastLayer, layerOfTask[n]!);
    }
    const [shared] = capabilities;
    return {
      id,
      key,
      firstLayer: firstLayer === Infinity ? band * bandLayers : firstLayer,
      lastLayer: lastLayer === -Infinity ? band * bandLayers : lastLayer,
      tasks,
      capability: capabilities.size === 1 ? shared : undefined,
      capabilities: capabilities.size,
    };
  });
  return { by, groups, groupOfTask };
}

/** A box of the shape: a group of tasks, a task of an expanded group (or a group of one), an id no task declares. */
export type ShapeBox = { readonly group: number } | { readonly task: number } | { readonly missing: string };

export interface ShapeEdge {
  /** The boxes it joins. */
  readonly from: number;
  readonly to: number;
  /** The task edges it stands for. */
  readonly count: number;
  /** Whether any of them closes a cycle, or names no task; whether all of them are stream_eligible. */
  readonly cycle: boolean;
  readonly dangling: boolean;
  readonly streamEligible: boolean;
}

export interface ShapeGraph {
  /** The groups and tasks first (in the groups' order), then the ids no task declares. */
  readonly boxes: readonly ShapeBox[];
  /** The boxes that are not missing ids. */
  readonly taskBoxes: number;
  /** In the order of their first task edge; none within a box. */
  readonly edges: readonly ShapeEdge[];
  /** The box of each task. */
  readonly boxOfTask: Int32Array;
  /** For each box, whether a task of the critical path is in it (1); for each edge, whether a step of the path is. */
  readonly criticalBoxes: Uint8Array;
  readonly criticalEdges: Uint8Array;
}

/**
 * The graph of the groups, with the groups whose ids are in `expanded` shown as their tasks; a group of one task is
 * shown as its task. Edges between two boxes are one edge with the count of the task edges between them.
 */
export function shapeGraph(
  graph: Pick<DrawnGraph, 'nodes' | 'edges' | 'criticalPath'>,
  grouping: Grouping,
  expanded: ReadonlySet<string>,
): ShapeGraph {
  const boxes: ShapeBox[] = [];
  const boxOfTask = new Int32Array(graph.nodes.length);
  grouping.groups.forEach((group, g) => {
    if (group.tasks.length > 1 && !expanded.has(group.id)) {
      for (const n of group.tasks) boxOfTask[n] = boxes.length;
      boxes.push({ group: g });
      return;
    }
    for (const n of group.tasks) {
      boxOfTask[n] = boxes.length;
      boxes.push({ task: n });
    }
  });
  const taskBoxes = boxes.length;
  const indexOfTask = new Map(graph.nodes.map((node, n) => [node.id, n]));
  const missingBox = new Map<string, number>();
  const boxOf = (id: string): number => {
    const task = indexOfTask.get(id);
    if (task !== undefined) return boxOfTask[task]!;
    let box = missingBox.get(id);
    if (box === undefined) {
      missingBox.set(id, (box = boxes.length));
      boxes.push({ missing: id });
    }
    return box;
  };
  // By a number of the pair of boxes (a string key for each of 30,000 edges took 0.3 s cold).
  const pairOf = (from: number, to: number): number => from * 2 ** 26 + to;
  const joined = new Map<
    number,
    { from: number; to: number; count: number; cycle: boolean; dangling: boolean; streamEligible: boolean }
  >();
  for (const edge of graph.edges) {
    const [from, to] = [boxOf(edge.from), boxOf(edge.to)];
    // Within a group (a self-loop of a task stays: it is drawn on its box).
    if (from === to && !('task' in boxes[from]!)) continue;
    const key = pairOf(from, to);
    const found = joined.get(key);
    if (found === undefined) {
      joined.set(key, {
        from,
        to,
        count: 1,
        cycle: edge.cycle,
        dangling: edge.dangling,
        streamEligible: edge.streamEligible,
      });
      continue;
    }
    found.count++;
    found.cycle ||= edge.cycle;
    found.dangling ||= edge.dangling;
    found.streamEligible &&= edge.streamEligible;
  }
  const edges = [...joined.values()];
  const path = (graph.criticalPath?.taskIds ?? []).map(boxOf);
  const criticalBoxes = new Uint8Array(boxes.length);
  for (const box of path) criticalBoxes[box] = 1;
  const steps = new Set(path.slice(1).map((box, k) => pairOf(path[k]!, box)));
  const criticalEdges = Uint8Array.from(edges, ({ from, to }) => (steps.has(pairOf(from, to)) ? 1 : 0));
  return { boxes, taskBoxes, edges, boxOfTask, criticalBoxes, criticalEdges };
}

/** A group's label: `task_… ×100` by prefix, `echo ×100` by capability. */
export function groupLabel(group: TaskGroup, by: GroupBy): string {
  const name = by === 'prefix' ? `${group.key}…` : group.key === '' ? 'no capability' : group.key;
  return `${name} ×${group.tasks.length}`;
}

/** A group's second line: its layers when more than one, and its tasks' capability (or how many) when by prefix. */
export function groupDetail(group: TaskGroup, by: GroupBy): string | undefined {
  const parts: string[] = [];
  if (group.lastLayer > group.firstLayer) parts.push(`layers ${group.firstLayer + 1}–${group.lastLayer + 1}`);
  if (by === 'prefix') {
    if (group.capability !== undefined) parts.push(group.capability);
    else if (group.capabilities > 1) parts.push(`${group.capabilities} capabilities`);
  }
  return parts.length === 0 ? undefined : parts.join(' · ');
}
