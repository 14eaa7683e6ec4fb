// The graph view's drawing's state, all of it in one object (GraphState) that the drawing's functions are handed:
// its canvases, the graph and what of it is shown, the view transform, focus and selection, the run's states, the
// frames asked for and the images kept between them.
import type { DagGraph, GraphLayout } from '../../server/src/protocol/runMessages';
import { type DrawnGraph, type ShownState, STATE_CODES } from '../src/graphPage';
import type { CacheLevel } from './graphCache';
import type { DrawingCanvas, FromGraphCanvas, ViewSize } from './graphMessages';
import type { Palette } from './graphPalette';
import type { GroupBy } from '../src/graphShape';

export type Context = CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D;

/** A drawable graph: the whole DAG, or the neighbourhood focus mode shows. Boxes: the tasks, then the missing ids. */
export interface Shown {
  readonly ids: readonly string[];
  readonly capabilities: readonly (string | undefined)[];
  readonly taskCount: number;
  readonly edges: DagGraph['edges'];
  readonly layout: GraphLayout;
  /** The bounding box of each edge's route: x0, y0, x1, y1. */
  readonly edgeBounds: Float64Array;
  /** Each box's label cut to fit, by font, computed once. */
  readonly labels: Map<string, string>;
  /** Each task's index in the graph (focus mode's boxes are some of its tasks); none: box n is task n. */
  readonly taskIndexes?: Int32Array;
  /** For each box, whether its task is on the critical path (1) or not; for each edge, whether it joins two steps. */
  readonly criticalBoxes: Uint8Array;
  readonly criticalEdges: Uint8Array;
  /** In the shape view (graphShapeView.ts): each box's group (its label in `ids`), none for a task's box. */
  readonly groups?: readonly (ShownGroup | undefined)[];
  /** In the shape view: how many task edges each edge stands for. */
  readonly edgeCounts?: Uint32Array;
}

/** A rectangle of the graph's plane (world coordinates): what a frame or a level of the image paints. */
export interface WorldRect {
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}

/** Whether edge e's route, by its bounding box, may cross `rect`. */
export function edgeCrosses(shown: Shown, e: number, rect: WorldRect): boolean {
  const { edgeBounds } = shown;
  const b = 4 * e;
  return !(
    edgeBounds[b]! > rect.right ||
    edgeBounds[b + 2]! < rect.left ||
    edgeBounds[b + 1]! > rect.bottom ||
    edgeBounds[b + 3]! < rect.top
  );
}

/** A box of the shape view that stands for a group of tasks. */
export interface ShownGroup {
  /** What expands it (TaskGroup.id). */
  readonly id: string;
  /** Its tasks' indexes in the graph. */
  readonly tasks: readonly number[];
  /** How many of its tasks are in each state, by its number in STATE_CODES (kept by graphShapeView.ts). */
  readonly stateCounts: Uint32Array;
}

/** The boxes and edges of `path` (the graph's critical path, its task ids in order) among those shown. */
function criticalOf(ids: readonly string[], taskCount: number, edges: DagGraph['edges'], path: readonly string[]) {
  const steps = new Set(path.slice(1).map((id, i) => `${path[i]}\n${id}`));
  const onPath = new Set(path);
  const criticalBoxes = new Uint8Array(ids.length);
  for (let n = 0; n < taskCount; n++) criticalBoxes[n] = onPath.has(ids[n]!) ? 1 : 0;
  const criticalEdges = Uint8Array.from(edges, ({ from, to }) => (steps.has(`${from}\n${to}`) ? 1 : 0));
  return { criticalBoxes, criticalEdges };
}

export function shownOf(
  ids: readonly string[],
  capabilities: readonly (string | undefined)[],
  edges: DagGraph['edges'],
  layout: GraphLayout & { readonly missing: readonly string[] },
  taskIndexes?: Int32Array,
  criticalPath: readonly string[] = [],
): Shown {
  const edgeBounds = new Float64Array(4 * edges.length);
  layout.routes.forEach((route, e) => {
    let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
    for (let p = 0; p < route.length; p += 2) {
      x0 = Math.min(x0, route[p]!);
      x1 = Math.max(x1, route[p]!);
      y0 = Math.min(y0, route[p + 1]!);
      y1 = Math.max(y1, route[p + 1]!);
    }
    edgeBounds.set([x0, y0, x1, y1], 4 * e);
  });
  return {
    ...criticalOf(ids, ids.length, edges, criticalPath),
    ids: [...ids, ...layout.missing],
    capabilities: [...capabilities, ...layout.missing.map(() => 'no such task')],
    taskCount: ids.length,
    edges,
    layout,
    edgeBounds,
    labels: new Map(),
    ...(taskIndexes !== undefined && { taskIndexes }),
  };
}

/** What of the changes of state an image (a level of the cache, the overview) shows. */
export interface PaintedStates {
  /** For each box, the change of state its looks in the image show (changedAt's value when painted). */
  readonly paintedAt: Uint32Array;
  /** Every change up to this one is painted. */
  paintedThrough: number;
}

/** A harness's record of the gaps between the drawing's animation frames (in a worker, the page's frames say nothing). */
export interface FrameRecord {
  last: number;
  longest: number;
  frames: number;
  over50: number;
  on: boolean;
}

/** The view transform: screen = world × scale + (x, y), in CSS pixels. */
export interface Transform {
  scale: number;
  x: number;
  y: number;
}

export class GraphState {
  /** `tell`: where the drawing's messages go, the page. */
  constructor(readonly tell: (message: FromGraphCanvas) => void) {}

  // ---- The page's canvases, view and colours (the start message's).
  canvas: DrawingCanvas | undefined;
  overview: DrawingCanvas | undefined;
  context!: Context;
  overviewContext!: Context;
  viewSize: ViewSize = { width: 0, height: 0, ratio: 1, overviewWidth: 0, overviewHeight: 0 };
  palette!: Palette;

  // ---- The graph and what of it is shown.
  graph: DrawnGraph | undefined;
  /** Whether the graph is the last that parsed of a text that does not parse now. */
  stale = false;
  graphSummary = '';
  whole: Shown | undefined;
  shown: Shown | undefined;

  /** The shape view of the graph (graphShapeView.ts) while it is chosen, shown when focus mode is not. */
  shape: Shown | undefined;
  /** The user's choice of the shape or the tasks; none yet: Fit chooses by what is legible. */
  shapeChosen: 'shape' | 'tasks' | undefined;
  groupBy: GroupBy = 'prefix';
  /** The groups of the shape the user expanded into their tasks (TaskGroup.id). */
  readonly expandedGroups = new Set<string>();
  /** The view transform Fit last set (graphShapeView.ts fitView). */
  fittedTransform: Transform | undefined;

  // ---- View state: zoom and pan, focus mode, the cursor's task, the box under the pointer.
  readonly transform: Transform = { scale: 1, x: 0, y: 0 };
  /** The whole graph's view, kept while focus mode shows a neighbourhood. */
  wholeTransform: Transform | undefined;
  focusOn = false;
  /** The levels up and down focus mode shows, clamped as it is taken in. */
  focusDepth = 1;
  /** The task focus mode shows the neighbourhood of. */
  focused: string | undefined;
  currentTaskId: string | undefined;
  hovered = -1;

  // ---- The run's states.
  /** The run state of each task of the graph, by its index, numbered as in STATE_CODES (0: none). */
  taskStates = new Uint8Array(0);
  /** The states of tasks of the run the graph does not have (a run of another version of the text), by id. */
  readonly otherStates = new Map<string, number>();
  /**
   * Each shown box's state, numbered as in STATE_CODES (a missing task's: none): a frame reads those of every box in
   * sight, and the overview those of all. In focus mode, each task's box (-1: not shown).
   */
  boxStates = new Uint8Array(0);
  boxOfTask: Int32Array | undefined;
  /**
   * How many tasks are in each state, by its number (counted as they change: the status line shows them at every
   * change); none is not counted.
   */
  readonly stateCounts = new Uint32Array(STATE_CODES.length);
  runGoing = false;
  /**
   * For each box shown, the number of the last change of state it had (0: none since shown), and the count of
   * changes: a level of the image paints again the boxes whose number differs from what it painted (typed arrays: a
   * run's start changes 10,000 states at once, and a set a level took 50 ms to fill).
   */
  changedAt = new Uint32Array(0);
  changes = 0;

  // ---- Frames.
  frameRequested = false;
  /** A requested frame's timer, in case no animation frame comes (requestFrame). */
  frameTimeout: ReturnType<typeof setTimeout> | undefined;
  /** When a frame was last drawn, and the timer of the next frame for changes of state. */
  lastDrawnAt = -Infinity;
  statesFrameTimer: ReturnType<typeof setTimeout> | undefined;
  /** The timer of the next frame of running tasks' moving outlines. */
  animation: ReturnType<typeof setTimeout> | undefined;
  /** Boxes in sight in the last frame, and how many of them showed their id. */
  visibleBoxes = 0;
  labelledBoxes = 0;
  frameRecord: FrameRecord | undefined;

  // ---- The images kept between frames.
  /** The zoomed-out image's levels painted so far, from the largest scale (graphCache.ts). */
  cache: { readonly levels: readonly CacheLevel[] } | undefined;
  /** Bumped when a new image is begun: the painting of an older one stops. */
  cacheGeneration = 0;
  overviewHidden = false;
  overviewStale = true;
  overviewImage: DrawingCanvas | undefined;
  overviewPixels: ImageData | undefined;
  overviewPainted: PaintedStates = { paintedAt: new Uint32Array(0), paintedThrough: 0 };

  // ---- What the page was told.
  /** Messages taken in: a harness knows a frame drawn after this many shows what the page had sent. */
  received = 0;
  firstDrawnAt: number | undefined;
  /** The data attributes last told to the page (publish). */
  published: Record<string, string> = {};
  /** The status line last told to the page. */
  described = '';
}

export function stateOf(s: GraphState, n: number): ShownState | undefined {
  return STATE_CODES[s.boxStates[n]!];
}
