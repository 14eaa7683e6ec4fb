// The graph webview's page and the messages between it and the extension. No `vscode` import: the page script and
// the unit tests use this file too.
import { BOX_HEIGHT, BOX_WIDTH } from '../../server/src/dag/layout';
import type { DagGraph } from '../../server/src/protocol/runMessages';
import type { TaskState } from '../../server/src/protocol/report';

/** How a task of the run is drawn: its state, or `cached` for a task completed with the result store's output. */
export type ShownState = TaskState | 'cached';
/** The run states a task is coloured by, in the order the legend shows them. */
const SHOWN_STATES: readonly ShownState[] = ['pending', 'running', 'completed', 'cached', 'failed', 'cancelled'];
/**
 * The states, numbered as a `states` message carries them: 0 is none (the task is not in the run); `cached` last, so
 * that the numbers of the others stay as they were.
 */
export const STATE_CODES: readonly (ShownState | undefined)[] = [
  undefined,
  ...SHOWN_STATES.filter((state) => state !== 'cached'),
  'cached',
];

/** Each state's number in STATE_CODES. */
export const STATE_CODE = Object.fromEntries(
  SHOWN_STATES.map((state) => [state, STATE_CODES.indexOf(state)]),
) as Readonly<Record<ShownState, number>>;

/** How a task of a run is drawn. */
export const shownState = (task: { readonly state: TaskState; readonly cached?: unknown }): ShownState =>
  task.cached === undefined ? task.state : 'cached';

/**
 * Tasks' new states (numbered as in STATE_CODES): the tasks of the graph last posted by their index in its `names`,
 * in typed arrays, and the few it does not have (a run of another version of the text) by id. Ids by state took the
 * page 80 ms of the window's thread to look up at a 10,000-task run's end; VS Code passes typed arrays as bytes.
 */
export interface PostedStates {
  readonly tasks: Uint32Array;
  readonly codes: Uint8Array;
  readonly others: readonly (readonly [taskId: string, code: number])[];
}

/** Collects the changes of state of one `states` message, given the posted graph's task indexes by id. */
export class StateChanges {
  private readonly tasks: number[] = [];
  private readonly codes: number[] = [];
  private readonly others: [string, number][] = [];

  constructor(private readonly indexOf: ReadonlyMap<string, number>) {}

  /** A task's new state; none: it has none now. */
  add(taskId: string, state?: ShownState): void {
    const code = STATE_CODES.indexOf(state);
    const n = this.indexOf.get(taskId);
    if (n === undefined) this.others.push([taskId, code]);
    else {
      this.tasks.push(n);
      this.codes.push(code);
    }
  }

  get size(): number {
    return this.tasks.length + this.others.length;
  }

  posted(): PostedStates {
    return { tasks: Uint32Array.from(this.tasks), codes: Uint8Array.from(this.codes), others: this.others };
  }
}

/** The index of each task of a graph in its posted `names` (of a duplicated id, the last, as the page's boxes). */
export function taskIndexes(graph: DagGraph): ReadonlyMap<string, number> {
  return new Map(graph.nodes.map(({ id }, n) => [id, n]));
}

/** What the page draws of a DagGraph: its tasks without where they are declared (the extension reveals a task). */
export type DrawnGraph = Omit<DagGraph, 'version' | 'nodes'> & {
  readonly nodes: readonly Pick<DagGraph['nodes'][number], 'id' | 'capability'>[];
};

/** Indexes below `bound`, in two bytes each where they fit. */
type Indexes = Uint16Array | Uint32Array;
const indexesFor = (length: number, bound: number): Indexes =>
  bound <= 0xffff ? new Uint16Array(length) : new Uint32Array(length);

/**
 * A DagGraph as posted to the page: what it draws, its numbers and flags in typed arrays, which VS Code passes to a
 * webview as bytes. As JSON, the graph of a 10,000-task DAG was 4.2 MB (its 29,700 edges 2.8 MB) and took 1.1 s from
 * postMessage to the page in code-server; the message crosses VS Code's webview relay, whose time grows with its size
 * (0.3-0.8 s for the 0.7 MB this was with tasks' positions, four-byte indexes and a capability a task).
 */
export interface PackedGraph {
  readonly parsed: boolean;
  readonly dagId: string | undefined;
  /** The tasks' ids (as many as `capabilities`), then the other ids edges name. */
  readonly names: readonly string[];
  /** The capabilities the tasks have, each once. */
  readonly capabilityNames: readonly string[];
  /** Each task's capability: 1 + its index in `capabilityNames`, 0 for none. */
  readonly capabilities: Indexes;
  /** Each edge's ends, indexes into `names`: from, to. */
  readonly edgeEnds: Indexes;
  /** Each edge's EDGE_* flags. */
  readonly edgeFlags: Uint8Array;
  readonly layout?: {
    readonly width: number;
    readonly height: number;
    /** Coordinates in single precision (whole numbers but a self-loop's thirds of a box, drawn within a thousandth). */
    readonly boxes: Float32Array;
    /**
     * All routes' points one after another; route e is routePoints[routeStarts[e]] up to routeStarts[e + 1]. A route
     * with no points is the straight line from the middle of its source box's bottom to the middle of its target
     * box's top (an edge to the next layer down, most of them: in a 10,000-task DAG of layers, every one): not sent.
     * When no route has points, `routeStarts` is empty.
     */
    readonly routePoints: Float32Array;
    readonly routeStarts: Uint32Array;
    readonly missing: readonly string[];
  };
  /** As DagGraph's: a few ids and numbers. */
  readonly criticalPath?: DagGraph['criticalPath'];
}

const EDGE_CYCLE = 1;
const EDGE_DANGLING = 2;
const EDGE_STREAM = 4;

/** The straight route from the middle of box `from`'s bottom to the middle of box `to`'s top. */
function straightRoute(boxes: ArrayLike<number>, from: number, to: number): number[] {
  return [
    boxes[2 * from]! + BOX_WIDTH / 2,
    boxes[2 * from + 1]! + BOX_HEIGHT,
    boxes[2 * to]! + BOX_WIDTH / 2,
    boxes[2 * to + 1]!,
  ];
}

function isStraight(route: readonly number[], boxes: ArrayLike<number>, from: number, to: number): boolean {
  if (route.length !== 4 || 2 * Math.max(from, to) + 1 >= boxes.length) return false;
  return straightRoute(boxes, from, to).every((value, k) => value === route[k]);
}

export function packGraph({ parsed, dagId, nodes, edges, layout, criticalPath }: DagGraph): PackedGraph {
  const names = nodes.map(({ id }) => id);
  const indexOf = new Map(names.map((name, n) => [name, n]));
  const index = (name: string): number => {
    let n = indexOf.get(name);
    if (n === undefined) indexOf.set(name, (n = names.push(name) - 1));
    return n;
  };
  // The ids no task declares first: the names' count sets the indexes' size.
  const ends = edges.flatMap(({ from, to }) => [index(from), index(to)]);
  const edgeEnds = indexesFor(ends.length, names.length);
  edgeEnds.set(ends);
  const edgeFlags = new Uint8Array(edges.length);
  edges.forEach((edge, e) => {
    edgeFlags[e] =
      (edge.cycle ? EDGE_CYCLE : 0) | (edge.dangling ? EDGE_DANGLING : 0) | (edge.streamEligible ? EDGE_STREAM : 0);
  });
  const capabilityIndex = new Map<string, number>();
  const capabilities = indexesFor(nodes.length, nodes.length + 1);
  nodes.forEach(({ capability }, n) => {
    if (capability === undefined) return;
    let k = capabilityIndex.get(capability);
    if (k === undefined) capabilityIndex.set(capability, (k = capabilityIndex.size));
    capabilities[n] = k + 1;
  });
  let routes: PackedGraph['layout'];
  if (layout !== undefined) {
    // The layout's boxes are the tasks' then the missing ids', as `names` (both in order of first mention).
    const straight = (e: number): boolean =>
      isStraight(layout.routes[e]!, layout.boxes, edgeEnds[2 * e]!, edgeEnds[2 * e + 1]!);
    const sent = layout.routes.map((route, e) => (straight(e) ? [] : route));
    const routeStarts = new Uint32Array(sent.length + 1);
    sent.forEach((route, e) => (routeStarts[e + 1] = routeStarts[e]! + route.length));
    const routePoints = new Float32Array(routeStarts[sent.length]!);
    sent.forEach((route, e) => routePoints.set(route, routeStarts[e]));
    const { width, height, boxes, missing } = layout;
    routes = {
      width,
      height,
      boxes: Float32Array.from(boxes),
      routePoints,
      routeStarts: routePoints.length === 0 ? new Uint32Array(0) : routeStarts,
      missing,
    };
  }
  return {
    parsed,
    dagId,
    names,
    capabilityNames: [...capabilityIndex.keys()],
    capabilities,
    edgeEnds,
    edgeFlags,
    ...(routes === undefined ? {} : { layout: routes }),
    ...(criticalPath === undefined ? {} : { criticalPath }),
  };
}

export function unpackGraph(packed: PackedGraph): DrawnGraph {
  const { names, capabilityNames, edgeEnds, edgeFlags, layout } = packed;
  const routeOf = (starts: Uint32Array, points: Float32Array, boxes: Float32Array, e: number): number[] =>
    starts.length === 0 || starts[e + 1] === starts[e]
      ? straightRoute(boxes, edgeEnds[2 * e]!, edgeEnds[2 * e + 1]!)
      : Array.from(points.subarray(starts[e], starts[e + 1]));
  return {
    parsed: packed.parsed,
    dagId: packed.dagId,
    nodes: Array.from(packed.capabilities, (capability, n) => ({
      id: names[n]!,
      capability: capability === 0 ? undefined : capabilityNames[capability - 1],
    })),
    edges: Array.from(edgeFlags, (flags, e) => ({
      from: names[edgeEnds[2 * e]!]!,
      to: names[edgeEnds[2 * e + 1]!]!,
      cycle: (flags & EDGE_CYCLE) !== 0,
      dangling: (flags & EDGE_DANGLING) !== 0,
      streamEligible: (flags & EDGE_STREAM) !== 0,
    })),
    ...(layout !== undefined && {
      layout: {
        width: layout.width,
        height: layout.height,
        boxes: Array.from(layout.boxes),
        routes: Array.from(edgeFlags, (_, e) => routeOf(layout.routeStarts, layout.routePoints, layout.boxes, e)),
        missing: layout.missing,
      },
    }),
    ...(packed.criticalPath !== undefined && { criticalPath: packed.criticalPath }),
  };
}

/** Whether two critical paths are the same path, found the same way. */
export const sameCriticalPath = (a: DagGraph['criticalPath'], b: DagGraph['criticalPath']): boolean =>
  a === b ||
  (a !== undefined &&
    b !== undefined &&
    a.by === b.by &&
    a.latencyMs === b.latencyMs &&
    a.unknownLatency === b.unknownLatency &&
    a.taskIds.length === b.taskIds.length &&
    a.taskIds.every((id, k) => id === b.taskIds[k]));

/**
 * Whether two graphs are drawn alike: the same tasks (ids and capabilities), edges and critical path. An edit that
 * only moved text (a task's position) changes nothing drawn. Compared in place: as JSON, a 10,000-task graph took the
 * extension host 70 ms.
 */
export function drawnAlike(a: DagGraph, b: DagGraph): boolean {
  return (
    a.parsed === b.parsed &&
    a.dagId === b.dagId &&
    a.nodes.length === b.nodes.length &&
    a.edges.length === b.edges.length &&
    a.nodes.every((node, n) => node.id === b.nodes[n]!.id && node.capability === b.nodes[n]!.capability) &&
    a.edges.every((edge, e) => {
      const other = b.edges[e]!;
      return (
        edge.from === other.from &&
        edge.to === other.to &&
        edge.cycle === other.cycle &&
        edge.dangling === other.dangling &&
        edge.streamEligible === other.streamEligible
      );
    }) &&
    sameCriticalPath(a.criticalPath, b.criticalPath)
  );
}

/** What the extension tells the page. */
export type ToGraphPage =
  /** `stale`: the text does not parse now, and this is the last graph that did. The graph carries its layout. */
  | { readonly type: 'graph'; readonly graph: PackedGraph; readonly stale: boolean }
  /**
   * Run states that changed since the last message (`reset`: the states of every task, forgetting earlier ones: a
   * new run, a new graph, or the page was loaded again), and whether the run is still going. A `graph` message is
   * always followed by a reset, in the new graph's indexes.
   */
  | {
      readonly type: 'states';
      readonly reset: boolean;
      readonly states: PostedStates;
      readonly running: boolean;
    }
  /** The task whose object holds the editor's cursor. */
  | { readonly type: 'cursor'; readonly taskId: string | undefined }
  /** The plan's critical path of the graph last posted, which came with another (its longest chain, by depth). */
  | { readonly type: 'criticalPath'; readonly criticalPath: DagGraph['criticalPath'] };

/**
 * What the page tells the extension: it is loaded (and needs everything), it drew its first frame of a graph (what
 * can wait for it is asked for now), or a task was clicked.
 */
export type FromGraphPage =
  { readonly type: 'ready' } | { readonly type: 'drawn' } | { readonly type: 'reveal'; readonly taskId: string };

export interface GraphPageResources {
  /** The webview's `cspSource`: the only origin scripts and styles may come from. */
  readonly cspSource: string;
  /** Webview URIs of the bundled page script and its style sheet. */
  readonly scriptUri: string;
  readonly styleUri: string;
}

/**
 * What the page says until the graph's first frame is drawn: laying out a large graph and drawing it first take
 * seconds, through which an empty canvas would look broken. The count once the page has the graph.
 */
export const layingOutText = (tasks: number | undefined): string =>
  tasks === undefined
    ? 'Laying out the graph…'
    : `Laying out ${tasks.toLocaleString('en')} task${tasks === 1 ? '' : 's'}…`;

const escapeAttribute = (value: string): string =>
  value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/**
 * The page: no inline script or style and nothing from the network (a strict Content-Security-Policy; a worker only
 * from a blob: the page script makes its drawing's worker from its own text). It holds no data of the DAG: the script
 * draws what the extension posts on a canvas (text as text).
 */
export function graphHtml({ cspSource, scriptUri, styleUri }: GraphPageResources): string {
  const source = escapeAttribute(cspSource);
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${source}; style-src ${source}; worker-src blob:">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <link rel="stylesheet" href="${escapeAttribute(styleUri)}">
  <title>ACMP DAG graph</title>
</head>
<body>
  <div id="toolbar" role="toolbar" aria-label="Graph view">
    <button id="fit" type="button" title="Fit the graph in the view (0)">Fit</button>
    <button id="zoom-out" type="button" title="Zoom out (-)" aria-label="Zoom out">−</button>
    <button id="zoom-in" type="button" title="Zoom in (+)" aria-label="Zoom in">+</button>
    <label title="Show only the tasks near the cursor's task (F)"><input id="focus" type="checkbox"> Focus</label>
    <label title="Levels up and down that focus shows ([ and ])">levels <input id="depth" type="number" min="1" max="50" value="2"></label>
    <select id="shape" title="The shape: the tasks collapsed into groups of a layer, by id prefix or capability (S: shape or tasks)" aria-label="Show">
      <option value="shape prefix">Shape by id prefix</option>
      <option value="shape capability">Shape by capability</option>
      <option value="tasks">Tasks</option>
    </select>
    <button id="collapse" type="button" title="Collapse the groups expanded into their tasks" disabled>Collapse</button>
  </div>
  <p id="status" role="status"></p>
  <ul id="legend" aria-label="Legend">
${SHOWN_STATES.map((state) => `    <li><span class="swatch state-${state}"></span>${state}</li>`).join('\n')}
    <li><span class="line cycle"></span>edge on a cycle</li>
    <li><span class="line dangling"></span>edge to a missing task</li>
    <li><span class="line stream"></span>stream_eligible edge</li>
    <li><span class="line critical"></span>critical path</li>
  </ul>
  <div id="view">
    <canvas id="graph" tabindex="0" aria-describedby="status keys" data-phase="laying-out"></canvas>
    <p id="phase" role="status">${layingOutText(undefined)}</p>
    <canvas id="overview" aria-hidden="true"></canvas>
    <div id="tooltip" role="tooltip" hidden></div>
  </div>
  <p id="keys">Wheel or pinch: zoom · drag or arrows: pan · + − 0: zoom, fit · F: focus · [ ]: levels · S: shape or tasks · click: reveal, or expand a group</p>
  <script src="${escapeAttribute(scriptUri)}"></script>
</body>
</html>
`;
}
