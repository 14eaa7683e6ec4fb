// The graph view's drawing: the layout the language server computed on a canvas with a view transform (zoom, pan,
// fit, an overview), only what is in view and with detail by zoom level, so that 10,000 tasks pan smoothly; focus
// mode lays out the neighbourhood of the cursor's task on its own. Run states colour the boxes; the cursor's task is
// highlighted. It runs in a worker on the page's canvases (OffscreenCanvas), off the thread the page shares with VS
// Code's window, or in the page where there is none (graph.ts); it touches none of the page's DOM, and tells the page
// what to show (the status line, a tooltip, what a harness reads) in messages. The DAG's text is only ever drawn as
// text (fillText).
import { BOX_HEIGHT, BOX_WIDTH, layOutTasks } from '../../server/src/dag/layout';
import type { TaskState } from '../../server/src/protocol/report';
import type { DagGraph, GraphLayout } from '../../server/src/protocol/run';
import { STATE_CODES, type ToGraphPage, unpackGraph } from '../src/graphPage';

type StatesMessage = Extract<ToGraphPage, { type: 'states' }>;
/** A canvas of the page's, in the page or handed to a worker, or one of the drawing's own. */
export type DrawingCanvas = HTMLCanvasElement | OffscreenCanvas;
type Context = CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D;

/** The page's view, in CSS pixels, and its device pixel ratio. */
export interface ViewSize {
  readonly width: number;
  readonly height: number;
  readonly ratio: number;
  readonly overviewWidth: number;
  readonly overviewHeight: number;
}

/** What the page tells the drawing: the extension's messages, passed on, and what the user did. */
export type ToGraphCanvas =
  | ToGraphPage
  | {
      readonly type: 'start';
      readonly canvas: DrawingCanvas;
      readonly overview: DrawingCanvas;
      readonly view: ViewSize;
      readonly palette: Palette;
      readonly focus: FocusSetting;
    }
  | { readonly type: 'size'; readonly view: ViewSize }
  | { readonly type: 'palette'; readonly palette: Palette }
  | ({ readonly type: 'focus' } & FocusSetting)
  | { readonly type: 'fit' }
  /** Zoom by `factor` keeping a point of the view where it is (its middle by default). */
  | { readonly type: 'zoom'; readonly factor: number; readonly x?: number; readonly y?: number }
  | { readonly type: 'pan'; readonly dx: number; readonly dy: number }
  /** Centre the view on this point of the overview (CSS pixels). */
  | { readonly type: 'centre'; readonly x: number; readonly y: number }
  /** The pointer is at this point of the view (CSS pixels), or left it; a click at a point. */
  | { readonly type: 'hover'; readonly x: number; readonly y: number }
  | { readonly type: 'leave' }
  | { readonly type: 'click'; readonly x: number; readonly y: number }
  /** Enter: reveal the highlighted task. */
  | { readonly type: 'enter' }
  /** A harness's record of the drawing's frames: started, or stopped and answered with a `frames` message. */
  | { readonly type: 'record frames'; readonly on: boolean };

/** The focus checkbox, and the levels up and down it shows. */
export interface FocusSetting {
  readonly on: boolean;
  readonly depth: number;
}

/** What the drawing tells the page. */
export type FromGraphCanvas =
  /** What a harness (and a curious user's dev tools) can read of the drawn view: the canvas's data attributes. */
  | { readonly type: 'drawn'; readonly drawn: Readonly<Record<string, string>> }
  | { readonly type: 'status'; readonly text: string }
  /** The tooltip's text for the box under the pointer; none: hide it. */
  | { readonly type: 'tooltip'; readonly text: string | undefined }
  | { readonly type: 'reveal'; readonly taskId: string }
  | { readonly type: 'overview'; readonly hidden: boolean }
  | { readonly type: 'frames'; readonly longest: number; readonly frames: number; readonly over50: number };

export type Palette = ReturnType<typeof paletteOf>;

const MIN_SCALE = 0.002;
const MAX_SCALE = 4;
/** Below these scales a box shows no text, then only its id. */
const ID_SCALE = 0.4;
const DETAIL_SCALE = 0.7;
/** Below this scale edges have no arrowheads and stream_eligible edges no double line. */
const ARROW_SCALE = 0.3;
/** Below this scale a box's outline is one pixel and solid (paintBoxes). */
const OUTLINE_SCALE = 0.25;
/**
 * The zoomed-out image of the whole graph: at most this scale and size. Zoomed in further, a view holds few enough
 * boxes to paint them each frame (at 10,000 tasks, a level at twice this scale doubled the image's painting, to 0.7 s).
 */
const CACHE_MAX_SCALE = 0.125;
const CACHE_MAX_PIXELS = 16e6;
const CACHE_MAX_SIDE = 16_000;
/**
 * The level of the image painted first fits this many pixels a side; the smallest fits this many. The largest comes
 * next, and the ones between are halved from it.
 */
const CACHE_FIRST_SIDE = 2_048;
const CACHE_MIN_SIDE = 256;
/** About this many boxes are painted into the image in a step. */
const CACHE_STRIPE_BOXES = 500;
/** The width in pixels of a column of a level of the image. */
const CACHE_COLUMN = 128;
/** A run's changes of state are drawn at most this often; in a graph of more than LARGE_GRAPH boxes, this often. */
const STATES_FRAME_MS = 100;
const LARGE_STATES_FRAME_MS = 250;
const LARGE_GRAPH = 1_000;
/**
 * At most this many boxes whose state changed are painted again into the image a frame, the rest in the next: in the
 * worker, with a 250 ms states frame, 2,500 made frames of 33-67 ms during bench:graph's run, 1,000 frames of 17 ms.
 */
const CHANGED_BOXES_A_FRAME = 1_000;
const FIT_MARGIN = 24;
/** A frame asked for is drawn at the latest this long after, animation frame or not (requestFrame). */
const FRAME_TIMEOUT_MS = 1_000;
/** Running tasks' outlines move at this interval. */
const ANIMATION_MS = 120;
const FONT = `13px sans-serif`;
const DETAIL_FONT = `11px sans-serif`;
const PADDING = 8;
/** A colour must stand out from the background by this contrast ratio, or the foreground is used instead. */
const MIN_CONTRAST = 3;
const STATE_GLYPH: Record<TaskState, string> = {
  pending: '…',
  running: '▶',
  completed: '✓',
  failed: '✕',
  cancelled: '⊘',
};

/** Where the drawing's messages go: the page. */
let tell: (message: FromGraphCanvas) => void = () => undefined;
let canvas: DrawingCanvas | undefined;
let overview: DrawingCanvas | undefined;
let context!: Context;
let overviewContext!: Context;
let viewSize: ViewSize = { width: 0, height: 0, ratio: 1, overviewWidth: 0, overviewHeight: 0 };
let overviewHidden = false;
let focusOn = false;
/** The levels up and down focus mode shows, clamped as it is taken in. */
let focusDepth = 1;

/** A drawable graph: the whole DAG, or the neighbourhood focus mode shows. Boxes: the tasks, then the missing ids. */
interface Shown {
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
}

let graph: DagGraph | undefined;
let graphSummary = '';
let whole: Shown | undefined;
let shown: Shown | undefined;
/** The run state of each task of the graph, by its index, numbered as in STATE_CODES (0: none). */
let taskStates = new Uint8Array(0);
/** The states of tasks of the run the graph does not have (a run of another version of the text), by id. */
const otherStates = new Map<string, number>();
/**
 * Each shown box's state, numbered as in STATE_CODES (a missing task's: none): a frame reads those of every box in
 * sight, and the overview those of all. In focus mode, each task's box (-1: not shown).
 */
let boxStates = new Uint8Array(0);
let boxOfTask: Int32Array | undefined;
/**
 * How many tasks are in each state, by its number (counted as they change: the status line shows them at every
 * change); none is not counted.
 */
const stateCounts = new Uint32Array(STATE_CODES.length);
const [PENDING, RUNNING] = [STATE_CODES.indexOf('pending'), STATE_CODES.indexOf('running')];
let runGoing = false;
let currentTaskId: string | undefined;
let hovered = -1;
let focused: string | undefined;
/** The view transform: screen = world × scale + (x, y), in CSS pixels. */
const transform = { scale: 1, x: 0, y: 0 };
/** The whole graph's view, kept while focus mode shows a neighbourhood. */
let wholeTransform: typeof transform | undefined;
let frameRequested = false;
/** When a frame was last drawn, and the timer of the next frame for changes of state. */
let lastDrawnAt = -Infinity;
let statesFrameTimer: ReturnType<typeof setTimeout> | undefined;
let overviewStale = true;
let animation: ReturnType<typeof setTimeout> | undefined;
/** Boxes painted in the last frame drawn live. */
let visibleBoxes = 0;
let palette!: Palette;

function shownOf(
  ids: readonly string[],
  capabilities: readonly (string | undefined)[],
  edges: DagGraph['edges'],
  layout: GraphLayout & { readonly missing: readonly string[] },
  taskIndexes?: Int32Array,
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

// ---- Colours: the theme's variables, read again when the theme changes; each kept legible on the background.

/** The red, green, blue of any CSS colour, through a canvas's parser; undefined for one it cannot read. */
export function rgbOf(parser: Context, colour: string): [number, number, number] | undefined {
  parser.fillStyle = '#000001';
  parser.fillStyle = colour;
  const parsed = String(parser.fillStyle);
  if (parsed === '#000001' && colour.trim() !== '#000001') return undefined;
  const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(parsed);
  if (hex !== null) return [1, 2, 3].map((i) => parseInt(hex[i]!, 16)) as [number, number, number];
  const rgba = /rgba?\((\d+), (\d+), (\d+)/.exec(parsed);
  return rgba === null ? undefined : ([1, 2, 3].map((i) => Number(rgba[i])) as [number, number, number]);
}

function luminance([r, g, b]: [number, number, number]): number {
  const linear = (c: number): number => (c <= 10 ? c / 3295 : ((c / 255 + 0.055) / 1.055) ** 2.4);
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/** The colours, from the theme's variables (read by the page, which has its styles), each kept legible. */
export function paletteOf(variable: (name: string, fallback: string) => string, parser: Context) {
  const background = variable('--vscode-editor-background', '#ffffff');
  const foreground = variable('--vscode-foreground', '#333333');
  const backgroundRgb = rgbOf(parser, background) ?? [255, 255, 255];
  /** A colour for lines and outlines, the foreground when it would not stand out from the background. */
  const legible = (name: string, fallback: string): string => {
    const colour = variable(name, fallback);
    const rgb = rgbOf(parser, colour);
    if (rgb === undefined) return foreground;
    const [lighter, darker] = [luminance(rgb), luminance(backgroundRgb)].sort((a, b) => b - a) as [number, number];
    return (lighter + 0.05) / (darker + 0.05) >= MIN_CONTRAST ? colour : foreground;
  };
  return {
    background,
    foreground,
    description: variable('--vscode-descriptionForeground', foreground),
    box: variable('--vscode-editorWidget-background', background),
    border: variable('--vscode-editorWidget-border', variable('--vscode-contrastBorder', foreground)),
    hover: variable('--vscode-list-hoverBackground', background),
    current: variable('--vscode-editor-selectionBackground', background),
    focus: legible('--vscode-focusBorder', foreground),
    cycle: legible('--vscode-errorForeground', '#e51400'),
    warning: legible('--vscode-editorWarning-foreground', '#bf8803'),
    viewport: variable('--vscode-scrollbarSlider-activeBackground', foreground),
    states: {
      pending: legible('--vscode-disabledForeground', foreground),
      running: legible('--vscode-charts-blue', '#1a85ff'),
      completed: legible('--vscode-charts-green', '#388a34'),
      failed: legible('--vscode-charts-red', '#e51400'),
      cancelled: legible('--vscode-charts-purple', '#652d90'),
    } satisfies Record<TaskState, string>,
  };
}

// ---- The view transform.

function fit(): void {
  if (shown === undefined) return;
  const { width, height } = viewSize;
  const { layout } = shown;
  const scale = Math.min(
    MAX_SCALE,
    1,
    (width - 2 * FIT_MARGIN) / Math.max(1, layout.width),
    (height - 2 * FIT_MARGIN) / Math.max(1, layout.height),
  );
  transform.scale = Math.max(MIN_SCALE, scale);
  transform.x = (width - layout.width * transform.scale) / 2;
  transform.y = Math.max(FIT_MARGIN, (height - layout.height * transform.scale) / 2);
  requestFrame();
}

/** Zooms by `factor` keeping the point (x, y) of the view (CSS pixels) where it is. */
function zoom(factor: number, x = viewSize.width / 2, y = viewSize.height / 2): void {
  const scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, transform.scale * factor));
  transform.x = x - ((x - transform.x) * scale) / transform.scale;
  transform.y = y - ((y - transform.y) * scale) / transform.scale;
  transform.scale = scale;
  requestFrame();
}

function pan(dx: number, dy: number): void {
  transform.x += dx;
  transform.y += dy;
  requestFrame();
}

/** Pans so that box n is in view, centring it when it is not. */
function bringIntoView(n: number): void {
  if (shown === undefined) return;
  const { width, height } = viewSize;
  const [x, y] = [shown.layout.boxes[2 * n]!, shown.layout.boxes[2 * n + 1]!];
  const left = x * transform.scale + transform.x;
  const top = y * transform.scale + transform.y;
  const [w, h] = [BOX_WIDTH * transform.scale, BOX_HEIGHT * transform.scale];
  if (left >= 0 && top >= 0 && left + w <= width && top + h <= height) return;
  transform.x = width / 2 - (x + BOX_WIDTH / 2) * transform.scale;
  transform.y = height / 2 - (y + BOX_HEIGHT / 2) * transform.scale;
  requestFrame();
}

// ---- Drawing.

let frameTimeout: ReturnType<typeof setTimeout> | undefined;

/**
 * Asks for a frame: the next animation frame, or, where none comes within FRAME_TIMEOUT_MS, a timer's. A worker's
 * animation frames wait for its canvas's compositor and stop while the canvas is out of sight, and what a frame
 * tells the page (its status line, the data attributes) would wait with them. (The e2e failure this was first added
 * for, a new graph page that drew nothing, was VS Code giving the test's document another one's text.) A frame
 * requested but not yet drawn is drawn once.
 */
function requestFrame(): void {
  if (frameRequested) return;
  frameRequested = true;
  const requested = (now: number): void => {
    if (!frameRequested) return;
    clearTimeout(frameTimeout);
    draw(now);
  };
  requestAnimationFrame(requested);
  frameTimeout = setTimeout(() => requested(performance.now()), FRAME_TIMEOUT_MS);
}

/** A label cut with an ellipsis to fit a box, measured once per text and font. */
function fitted(n: number, line: 0 | 1): string {
  const text = (line === 0 ? shown!.ids[n] : shown!.capabilities[n]) ?? '';
  const key = `${line}:${n}`;
  let cut = shown!.labels.get(key);
  if (cut === undefined) {
    const room = BOX_WIDTH - 2 * PADDING - 16;
    cut = text;
    if (context.measureText(text).width > room) {
      let [low, high] = [0, text.length];
      while (low < high) {
        const middle = (low + high + 1) >> 1;
        if (context.measureText(`${text.slice(0, middle)}…`).width <= room) low = middle;
        else high = middle - 1;
      }
      cut = `${text.slice(0, low)}…`;
    }
    shown!.labels.set(key, cut);
  }
  return cut;
}

function stateOf(n: number): TaskState | undefined {
  return STATE_CODES[boxStates[n]!];
}

interface WorldRect {
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}

/** Traces the routes of edges, with an arrowhead along the last segment of each when asked. */
function trace(target: Context, list: readonly number[], arrows: boolean): void {
  const { routes } = shown!.layout;
  target.beginPath();
  for (const e of list) {
    const route = routes[e]!;
    target.moveTo(route[0]!, route[1]!);
    for (let p = 2; p < route.length; p += 2) target.lineTo(route[p]!, route[p + 1]!);
    if (!arrows || route.length < 4) continue;
    const end = route.length;
    const [x1, y1, x0, y0] = [route[end - 2]!, route[end - 1]!, route[end - 4]!, route[end - 3]!];
    const length = Math.hypot(x1 - x0, y1 - y0) || 1;
    const [ux, uy] = [(x1 - x0) / length, (y1 - y0) / length];
    target.moveTo(x1 - 8 * ux - 4 * uy, y1 - 8 * uy + 4 * ux);
    target.lineTo(x1, y1);
    target.lineTo(x1 - 8 * ux + 4 * uy, y1 - 8 * uy - 4 * ux);
  }
}

function traceBoxes(target: Context, list: readonly number[]): void {
  const { boxes } = shown!.layout;
  target.beginPath();
  for (const n of list) target.rect(boxes[2 * n]!, boxes[2 * n + 1]!, BOX_WIDTH, BOX_HEIGHT);
}

/**
 * Paints the edges and boxes inside `rect` (world coordinates) on a context already transformed to `scale`, with
 * text when it is large enough to read; returns whether a running task's moving outline was painted.
 */
function paint(target: Context, scale: number, rect: WorldRect, now: number): boolean {
  const pixel = 1 / scale;
  const { layout, edges, edgeBounds } = shown!;
  const kinds = { plain: [] as number[], cycle: [] as number[], dangling: [] as number[] };
  const streams: number[] = [];
  edges.forEach((edge, e) => {
    const b = 4 * e;
    if (edgeBounds[b]! > rect.right || edgeBounds[b + 2]! < rect.left) return;
    if (edgeBounds[b + 1]! > rect.bottom || edgeBounds[b + 3]! < rect.top) return;
    (edge.cycle ? kinds.cycle : edge.dangling ? kinds.dangling : kinds.plain).push(e);
    if (edge.streamEligible) streams.push(e);
  });
  // A stream_eligible edge is a double line: drawn wide in its colour, then its middle in the background's.
  const isStream = (e: number): boolean => edges[e]!.streamEligible;
  for (const [kind, list] of Object.entries(kinds)) {
    target.strokeStyle = kind === 'cycle' ? palette.cycle : kind === 'dangling' ? palette.warning : palette.foreground;
    target.setLineDash(kind === 'dangling' ? [5 * pixel, 4 * pixel] : []);
    target.lineWidth = (kind === 'plain' ? 1 : 1.5) * Math.max(pixel, 1);
    trace(target, list, scale >= ARROW_SCALE);
    target.stroke();
    if (scale < ARROW_SCALE) continue;
    target.lineWidth = 5 * pixel;
    trace(target, list.filter(isStream), false);
    target.stroke();
  }
  target.setLineDash([]);
  if (scale >= ARROW_SCALE) {
    target.lineWidth = 2 * pixel;
    target.strokeStyle = palette.background;
    trace(target, streams, false);
    target.stroke();
  }

  const visible: number[] = [];
  for (let n = 0; n < layout.boxes.length / 2; n++) {
    const x = layout.boxes[2 * n]!;
    const y = layout.boxes[2 * n + 1]!;
    if (x > rect.right || x < rect.left || y > rect.bottom || y < rect.top) continue;
    visible.push(n);
  }
  const running = paintBoxes(target, visible, pixel, now);

  if (scale >= ID_SCALE) {
    target.textBaseline = 'middle';
    const detail = scale >= DETAIL_SCALE;
    for (const n of visible) {
      const x = layout.boxes[2 * n]! + PADDING;
      const y = layout.boxes[2 * n + 1]!;
      target.font = FONT;
      target.fillStyle = palette.foreground;
      target.fillText(fitted(n, 0), x, detail ? y + 15 : y + BOX_HEIGHT / 2);
      const state = stateOf(n);
      if (state !== undefined) {
        target.fillStyle = palette.states[state];
        target.fillText(STATE_GLYPH[state], layout.boxes[2 * n]! + BOX_WIDTH - PADDING - 10, y + 15);
      }
      if (detail && shown!.capabilities[n] !== undefined) {
        target.font = DETAIL_FONT;
        target.fillStyle = palette.description;
        target.fillText(fitted(n, 1), x, y + 31);
      }
    }
  }
  visibleBoxes = visible.length;
  return running;
}

/**
 * Paints boxes, one path a look, on a context transformed to 1 / `pixel`; returns whether a running task's moving
 * outline was among them. `over`: the boxes were painted before in another look, whose outline the new one must cover.
 *
 * Zoomed out beyond OUTLINE_SCALE (where a box shows no text, and further out the image of the whole graph is drawn)
 * outlines are one pixel and solid: rasterising 10,000 outlines of 2.5 px took 200 ms in Chromium's software canvas,
 * dashed ones 0.3-4 s, one-pixel ones 10-25 ms. There a look is told by its colour, its glyph and dash once zoomed in.
 */
function paintBoxes(target: Context, list: readonly number[], pixel: number, now: number, over = false): boolean {
  const looks = new Map<string, number[]>();
  for (const n of list) {
    const look = n >= shown!.taskCount ? 'missing' : (stateOf(n) ?? 'none');
    let boxes = looks.get(look);
    if (boxes === undefined) looks.set(look, (boxes = []));
    boxes.push(n);
  }
  const fine = 1 / pixel > OUTLINE_SCALE;
  const widest = fine ? 2.5 * Math.max(pixel, 1) : pixel;
  for (const [look, boxes] of looks) {
    const colour =
      look === 'none' ? palette.border : look === 'missing' ? palette.warning : palette.states[look as TaskState];
    if (over) {
      // The old outline is covered by a box larger by one and a half outlines (a fill: a wider stroke costs).
      const { boxes: at } = shown!.layout;
      target.beginPath();
      const margin = 1.5 * widest;
      for (const n of boxes)
        target.rect(at[2 * n]! - margin, at[2 * n + 1]! - margin, BOX_WIDTH + 2 * margin, BOX_HEIGHT + 2 * margin);
      target.fillStyle = palette.box;
      target.fill();
    }
    traceBoxes(target, boxes);
    target.fillStyle = palette.box;
    target.fill();
    if (look !== 'none' && look !== 'missing') {
      target.globalAlpha = fine ? 0.22 : 0.4;
      target.fillStyle = colour;
      target.fill();
      target.globalAlpha = 1;
    }
    target.strokeStyle = colour;
    target.lineWidth = look === 'none' && fine ? widest / 2.5 : widest;
    // Not by colour alone: a missing, cancelled or running task has a dashed outline; a running one's moves.
    const dashed = fine && (look === 'missing' || look === 'cancelled' || look === 'running');
    target.setLineDash(dashed ? [6, 4] : []);
    target.lineDashOffset = look === 'running' ? -((now / ANIMATION_MS) % 10) : 0;
    target.stroke();
  }
  target.setLineDash([]);
  target.lineDashOffset = 0;
  // Zoomed out, outlines are solid: nothing moves, and no frame is drawn for it (each costs the compositor too).
  return fine && looks.has('running');
}

/**
 * The whole graph painted once at a small scale: zoomed out that far, a frame draws this image instead of every
 * edge again (what keeps panning 10,000 tasks under 50 ms a frame). Painted again, when idle, after what is shown or
 * its colours change.
 */
interface CacheLevel extends PaintedStates {
  readonly scale: number;
  /** The image's size in pixels. */
  readonly width: number;
  readonly height: number;
  /**
   * The image in columns CACHE_COLUMN pixels wide: one canvas of a level of 10,000 tasks (14 million pixels) took
   * 150 ms to allocate, in one frame; a column takes a few milliseconds.
   */
  readonly columns: DrawingCanvas[];
}

/** What of the changes of state an image (a level, the overview) shows. */
interface PaintedStates {
  /** For each box, the change of state its looks in the image show (changedAt's value when painted). */
  readonly paintedAt: Uint32Array;
  /** Every change up to this one is painted. */
  paintedThrough: number;
}

/**
 * The boxes whose state changed since `image` painted them, at most `limit` of them, marked painted; `image` is
 * marked current when none is left.
 */
function unpainted(image: PaintedStates, limit = Infinity): number[] {
  const boxes: number[] = [];
  if (image.paintedThrough === changes) return boxes;
  for (let n = 0; n < changedAt.length; n++) {
    if (changedAt[n] === image.paintedAt[n]) continue;
    if (boxes.length === limit) return boxes;
    boxes.push(n);
    image.paintedAt[n] = changedAt[n]!;
  }
  image.paintedThrough = changes;
  return boxes;
}
/** The levels painted so far, from the largest scale. */
let cache: { readonly levels: readonly CacheLevel[] } | undefined;
/** Bumped when a new image is begun: the painting of an older one stops. */
let cacheGeneration = 0;
/**
 * For each box shown, the number of the last change of state it had (0: none since shown), and the count of
 * changes: a level of the image paints again the boxes whose number differs from what it painted (typed arrays: a
 * run's start changes 10,000 states at once, and a set a level took 50 ms to fill).
 */
let changedAt = new Uint32Array(0);
let changes = 0;

/** What is shown changed: the whole graph or a neighbourhood, or a new graph. */
function shownChanged(): void {
  cache = undefined;
  const boxes = shown === undefined ? 0 : shown.layout.boxes.length / 2;
  changedAt = new Uint32Array(boxes);
  changes = 0;
  boxStates = new Uint8Array(boxes);
  const indexes = shown?.taskIndexes;
  if (indexes === undefined) {
    boxOfTask = undefined;
    boxStates.set(taskStates.subarray(0, shown?.taskCount ?? 0));
  } else {
    boxOfTask = new Int32Array(taskStates.length).fill(-1);
    indexes.forEach((task, n) => {
      boxOfTask![task] = n;
      boxStates[n] = taskStates[task]!;
    });
  }
  looksChanged();
}

/** Colours changed: everything is painted again. */
function looksChanged(): void {
  overviewStale = true;
  paintCache();
  requestFrame();
}

/** No task has a state; the graph has this many tasks. */
function forgetStates(tasks: number): void {
  if (taskStates.length === tasks) taskStates.fill(0);
  else taskStates = new Uint8Array(tasks);
  otherStates.clear();
  stateCounts.fill(0);
}

/**
 * Takes in a message's states. The boxes whose state changed are painted again into the image where they are (a run
 * changes thousands of states a second: painting all of the image again for each change would keep a large graph's
 * page busy for the whole run).
 */
function statesReceived({ reset, states: { tasks, codes, others }, running }: StatesMessage): void {
  changes++;
  if (reset) {
    forgetStates(taskStates.length);
    boxStates.fill(0);
    changedAt.fill(changes);
  }
  const count = (from: number, to: number): void => {
    if (from !== 0) stateCounts[from]!--;
    if (to !== 0) stateCounts[to]!++;
  };
  // A number that is no state is taken for none.
  const known = (code: number): number => (code < STATE_CODES.length ? code : 0);
  for (let k = 0; k < tasks.length; k++) {
    const task = tasks[k]!;
    if (task >= taskStates.length) continue;
    const code = known(codes[k]!);
    count(taskStates[task]!, code);
    taskStates[task] = code;
    const n = boxOfTask === undefined ? task : boxOfTask[task]!;
    if (n < 0) continue;
    boxStates[n] = code;
    changedAt[n] = changes;
  }
  for (const [taskId, posted] of others) {
    const code = known(posted);
    count(otherStates.get(taskId) ?? 0, code);
    if (code === 0) otherStates.delete(taskId);
    else otherStates.set(taskId, code);
  }
  runGoing = running;
  if (shown !== undefined) requestStatesFrame();
  describe();
}

/**
 * A frame for changes of state, at most one in STATES_FRAME_MS (LARGE_STATES_FRAME_MS in a large graph): at a
 * 10,000-task run's end the machine is at its busiest, and each frame costs the compositor too (a trace put
 * Chromium's at 0.4 s of CPU for the drawing's 20 frames of such a run, beside the window's thread).
 */
function requestStatesFrame(): void {
  if (frameRequested || statesFrameTimer !== undefined) return;
  const interval = changedAt.length > LARGE_GRAPH ? LARGE_STATES_FRAME_MS : STATES_FRAME_MS;
  const wait = lastDrawnAt + interval - performance.now();
  if (wait <= 0) requestFrame();
  else {
    statesFrameTimer = setTimeout(() => {
      statesFrameTimer = undefined;
      requestFrame();
    }, wait);
  }
}

/** Column c of a level: a canvas, and a context whose world coordinates are the level's. */
function columnContext(level: CacheLevel, c: number): Context {
  const target = level.columns[c]!.getContext('2d') as Context;
  target.setTransform(level.scale, 0, 0, level.scale, -c * CACHE_COLUMN, 0);
  return target;
}

/**
 * Paints changed boxes of a level of the image again, over their old looks: at most CHANGED_BOXES_A_FRAME of them, the
 * rest in the next frames (the frame that first draws the image after a change pays for rasterising them: at a
 * 10,000-task run's end, all of them in one frame took 200-370 ms).
 */
function currentLevel(level: CacheLevel): CacheLevel {
  const { boxes } = shown!.layout;
  const byColumn = new Map<number, number[]>();
  for (const n of unpainted(level, CHANGED_BOXES_A_FRAME)) {
    // The box and the margin paintBoxes paints over its old outline, in the columns they cross.
    const first = Math.floor((boxes[2 * n]! * level.scale - 2) / CACHE_COLUMN);
    const last = Math.floor(((boxes[2 * n]! + BOX_WIDTH) * level.scale + 2) / CACHE_COLUMN);
    for (let c = Math.max(0, first); c <= Math.min(last, level.columns.length - 1); c++) {
      let list = byColumn.get(c);
      if (list === undefined) byColumn.set(c, (list = []));
      list.push(n);
    }
  }
  for (const [c, list] of byColumn) paintBoxes(columnContext(level, c), list, 1 / level.scale, 0, true);
  if (level.paintedThrough !== changes) requestFrame();
  return level;
}

/**
 * Runs a task when nothing more urgent waits (input, frames, the workbench's own tasks, which share the thread): at the
 * background priority of the Prioritized Task Scheduling API, which Chromium has; elsewhere as a task of its own. Not
 * requestIdleCallback: while anything animates (a progress bar), the idle time between frames is shorter than a step,
 * so the steps waited, then ran during the next busy stretch (a run's end) when its timeout forced them.
 */
function inBackground(task: () => void): void {
  const { scheduler } = globalThis as {
    scheduler?: { postTask(task: () => void, options: { priority: 'background' }): Promise<void> };
  };
  if (scheduler === undefined) setTimeout(task, 0);
  else void scheduler.postTask(task, { priority: 'background' });
}

/** A level of the image of what is shown at `scale`, showing the states as they are now; no column yet. */
function newLevel(scale: number): CacheLevel {
  return {
    scale,
    width: Math.ceil(shown!.layout.width * scale) + 2,
    height: Math.ceil(shown!.layout.height * scale) + 2,
    columns: [],
    paintedAt: changedAt.slice(),
    paintedThrough: changes,
  };
}

/** A canvas of the drawing's own: offscreen where there is OffscreenCanvas (always in a worker). */
function newCanvas(width: number, height: number): DrawingCanvas {
  if (typeof OffscreenCanvas === 'function') return new OffscreenCanvas(width, height);
  return Object.assign(document.createElement('canvas'), { width, height });
}

function newColumn(level: CacheLevel, c: number): DrawingCanvas {
  const column = newCanvas(Math.min(CACHE_COLUMN, level.width - c * CACHE_COLUMN), level.height);
  level.columns[c] = column;
  return column;
}

/**
 * Paints the image's levels in the background (inBackground), in steps of a few milliseconds: a stripe of a
 * column of a level, flushed to pixels (a frame can come between two steps), or a column of a level halved from the
 * larger one. The level that shows the whole graph in about a screen comes first, then the smaller ones halved from
 * it, then the largest, then those between halved from that: each is drawn from as soon as it is painted. (Before,
 * the largest came first and none was used until all were; input put the painting off, so zooming out meanwhile
 * painted all 10,000 boxes and their edges in a frame: 117-133 ms in VS Code.)
 */
function paintCache(): void {
  if (shown === undefined) return;
  const painted = shown;
  const generation = ++cacheGeneration;
  const { width, height } = painted.layout;
  const largest = Math.min(
    CACHE_MAX_SCALE,
    Math.sqrt(CACHE_MAX_PIXELS / Math.max(1, width * height)),
    CACHE_MAX_SIDE / Math.max(1, width),
    CACHE_MAX_SIDE / Math.max(1, height),
  );
  const fits = (scale: number, side: number): boolean => width * scale <= side && height * scale <= side;
  const scales = [largest];
  while (!fits(scales.at(-1)!, CACHE_MIN_SIDE)) scales.push(scales.at(-1)! / 2);
  const first = scales.findIndex((scale) => fits(scale, CACHE_FIRST_SIDE));

  const levels: CacheLevel[] = [];
  const levelPainted = (level: CacheLevel): void => {
    levels.push(level);
    levels.sort((a, b) => b.scale - a.scale);
    cache = { levels: [...levels] };
    requestFrame();
  };
  const steps: (() => void)[] = [];
  /** Steps that paint a level from the graph, in stripes of about CACHE_STRIPE_BOXES boxes were they spread evenly. */
  const paintLevel = (scale: number): CacheLevel => {
    const level = newLevel(scale);
    const boxCount = painted.layout.boxes.length / 2;
    const columns = Math.ceil(level.width / CACHE_COLUMN);
    for (let c = 0; c < columns; c++) {
      const columnWidth = Math.min(CACHE_COLUMN, level.width - c * CACHE_COLUMN);
      const stripes = Math.max(1, Math.round((boxCount * columnWidth) / level.width / CACHE_STRIPE_BOXES));
      for (let stripe = 0; stripe < stripes; stripe++) {
        steps.push(() => {
          if (stripe === 0) newColumn(level, c);
          const target = columnContext(level, c);
          const left = (c * CACHE_COLUMN + (stripe * columnWidth) / stripes) / scale;
          const right = (c * CACHE_COLUMN + ((stripe + 1) * columnWidth) / stripes) / scale;
          target.save();
          target.beginPath();
          target.rect(left, -1, right - left, height + 2);
          target.clip();
          paint(target, scale, { left: left - BOX_WIDTH, top: -Infinity, right, bottom: Infinity }, 0);
          target.restore();
          target.getImageData(0, 0, 1, 1);
          if (c === columns - 1 && stripe === stripes - 1) levelPainted(level);
        });
      }
    }
    return level;
  };
  /** Steps that halve a level into one of half its scale, a column a step (after the larger one's steps). */
  const halveLevel = (larger: CacheLevel): CacheLevel => {
    const level = newLevel(larger.scale / 2);
    const columns = Math.ceil(level.width / CACHE_COLUMN);
    for (let c = 0; c < columns; c++) {
      steps.push(() => {
        // What the larger level shows of states now, which this level's columns will show or later ones.
        if (c === 0) {
          level.paintedAt.set(larger.paintedAt);
          level.paintedThrough = larger.paintedThrough;
        }
        const target = newColumn(level, c).getContext('2d') as Context;
        for (const from of [2 * c, 2 * c + 1]) {
          const source = larger.columns[from];
          if (source === undefined) continue;
          const x = (from * CACHE_COLUMN) / 2 - c * CACHE_COLUMN;
          target.drawImage(source, x, 0, source.width / 2, source.height / 2);
        }
        target.getImageData(0, 0, 1, 1);
        if (c === columns - 1) levelPainted(level);
      });
    }
    return level;
  };
  // Painting a level costs about the same at any scale (the edges are stroked again for each), halving one little.
  let smaller = paintLevel(scales[first]!);
  for (let n = first + 1; n < scales.length; n++) smaller = halveLevel(smaller);
  if (first > 0) {
    let larger = paintLevel(scales[0]!);
    for (let n = 1; n < first; n++) larger = halveLevel(larger);
  }

  let next = 0;
  const run = (): void => {
    if (generation !== cacheGeneration || shown !== painted) return;
    steps[next++]!();
    if (next < steps.length) inBackground(run);
  };
  // After the next frame: a new graph is drawn first.
  requestAnimationFrame(() => inBackground(run));
}

function draw(now: number): void {
  frameRequested = false;
  lastDrawnAt = performance.now();
  if (canvas === undefined) return;
  const { width, height, ratio } = viewSize;
  const [pixelWidth, pixelHeight] = [Math.round(width * ratio), Math.round(height * ratio)];
  if (canvas.width !== pixelWidth || canvas.height !== pixelHeight) {
    canvas.width = pixelWidth;
    canvas.height = pixelHeight;
  }
  context.setTransform(1, 0, 0, 1, 0, 0);
  context.clearRect(0, 0, pixelWidth, pixelHeight);
  if (shown === undefined) return;
  const { scale } = transform;
  let running = false;
  // The smallest level still as sharp as the screen's pixels.
  const level = cache?.levels.reduce((best, candidate) => (candidate.scale >= scale * ratio ? candidate : best));
  if (level !== undefined && scale <= cache!.levels[0]!.scale) {
    // In device pixels, each column from a whole pixel to the next column's: no seam between them.
    context.setTransform(1, 0, 0, 1, 0, 0);
    const { columns } = currentLevel(level);
    const pixels = (ratio * scale) / level.scale;
    const at = (c: number): number => Math.round(ratio * transform.x + c * CACHE_COLUMN * pixels);
    const [top, bottom] = [Math.round(ratio * transform.y), Math.round(ratio * transform.y + level.height * pixels)];
    columns.forEach((column, c) => {
      const [left, right] = [at(c), c === columns.length - 1 ? at(c) + Math.round(column.width * pixels) : at(c + 1)];
      if (right >= 0 && left <= pixelWidth) context.drawImage(column, left, top, right - left, bottom - top);
    });
    context.setTransform(ratio * scale, 0, 0, ratio * scale, ratio * transform.x, ratio * transform.y);
  } else {
    context.setTransform(ratio * scale, 0, 0, ratio * scale, ratio * transform.x, ratio * transform.y);
    // The world rectangle in view, a box wider so that outlines at the edge are drawn.
    running = paint(
      context,
      scale,
      {
        left: -transform.x / scale - BOX_WIDTH,
        top: -transform.y / scale - BOX_HEIGHT,
        right: (width - transform.x) / scale,
        bottom: (height - transform.y) / scale,
      },
      now,
    );
  }
  const highlight = (n: number, fill: string): void => {
    traceBoxes(context, [n]);
    context.globalAlpha = 0.6;
    context.fillStyle = fill;
    context.fill();
    context.globalAlpha = 1;
  };
  if (hovered >= 0) highlight(hovered, palette.hover);
  const current = currentTaskId === undefined ? -1 : shown.ids.indexOf(currentTaskId);
  if (current >= 0 && current < shown.taskCount) {
    highlight(current, palette.current);
    traceBoxes(context, [current]);
    context.strokeStyle = palette.focus;
    context.lineWidth = 3 / scale;
    context.stroke();
  }
  drawOverview();
  publish();
  clearTimeout(animation);
  if (running) animation = setTimeout(requestFrame, ANIMATION_MS);
}

/**
 * The overview: the whole shown graph in miniature and the view's rectangle. Its image is painted pixel by pixel (at
 * 10,000 tasks a box is a pixel or two here, and rasterising 10,000 rectangles took a 50-100 ms frame), whole when
 * what is shown, its colours or its size changed, else only the boxes whose state changed since (painting all of it
 * for every change of a run took 80 ms of the page's thread in a 10,000-task run).
 */
let overviewImage: DrawingCanvas | undefined;
let overviewPixels: ImageData | undefined;
let overviewPainted: PaintedStates = { paintedAt: new Uint32Array(0), paintedThrough: 0 };
function drawOverview(): void {
  if (shown === undefined || overview === undefined || overviewHidden || viewSize.overviewWidth === 0) return;
  const { layout } = shown;
  const { ratio, overviewWidth: width, overviewHeight: height } = viewSize;
  const scale = Math.min(width / Math.max(1, layout.width), height / Math.max(1, layout.height));
  const [pixelWidth, pixelHeight] = [Math.round(width * ratio), Math.round(height * ratio)];
  const whole = overviewStale || overviewPixels === undefined || overviewImage?.width !== pixelWidth;
  if (whole || overviewPainted.paintedThrough !== changes) {
    if (whole || overviewImage === undefined) {
      overviewStale = false;
      overview.width = pixelWidth;
      overview.height = pixelHeight;
      overviewImage = newCanvas(pixelWidth, pixelHeight);
      overviewPixels = (overviewImage.getContext('2d') as Context).createImageData(pixelWidth, pixelHeight);
      // A change no box has had (and a count no change reaches): every box is painted.
      overviewPainted = { paintedAt: new Uint32Array(changedAt.length).fill(-1), paintedThrough: -1 };
    }
    const pixels = overviewPixels!;
    const toPixels = ratio * scale;
    const rgbs = new Map<string, readonly number[]>();
    for (const n of unpainted(overviewPainted)) {
      const state = stateOf(n);
      const colour =
        n >= shown.taskCount ? palette.warning : state === undefined ? palette.border : palette.states[state];
      let rgb = rgbs.get(colour);
      if (rgb === undefined) {
        rgb = rgbOf(overviewContext, colour) ?? rgbOf(overviewContext, palette.foreground) ?? [128, 128, 128];
        rgbs.set(colour, rgb);
      }
      const left = Math.floor(layout.boxes[2 * n]! * toPixels);
      const top = Math.floor(layout.boxes[2 * n + 1]! * toPixels);
      const right = Math.min(
        pixels.width,
        Math.max(left + 1, Math.round((layout.boxes[2 * n]! + BOX_WIDTH) * toPixels)),
      );
      const bottom = Math.min(
        pixels.height,
        Math.max(top + 1, Math.round((layout.boxes[2 * n + 1]! + BOX_HEIGHT) * toPixels)),
      );
      for (let y = top; y < bottom; y++) {
        for (let x = left; x < right; x++) {
          const at = 4 * (y * pixels.width + x);
          pixels.data[at] = rgb[0]!;
          pixels.data[at + 1] = rgb[1]!;
          pixels.data[at + 2] = rgb[2]!;
          pixels.data[at + 3] = 255;
        }
      }
    }
    (overviewImage.getContext('2d') as Context).putImageData(pixels, 0, 0);
  }
  overviewContext.setTransform(1, 0, 0, 1, 0, 0);
  overviewContext.clearRect(0, 0, overview.width, overview.height);
  overviewContext.drawImage(overviewImage!, 0, 0);
  overviewContext.setTransform(ratio * scale, 0, 0, ratio * scale, 0, 0);
  overviewContext.strokeStyle = palette.focus;
  overviewContext.lineWidth = 1.5 / scale;
  overviewContext.strokeRect(
    -transform.x / transform.scale,
    -transform.y / transform.scale,
    viewSize.width / transform.scale,
    viewSize.height / transform.scale,
  );
}

/** What a harness (and a curious user's dev tools) can read of the drawn view, told to the page when it changes. */
let firstDrawnAt: number | undefined;
let published: Record<string, string> = {};
function publish(): void {
  firstDrawnAt ??= performance.timeOrigin + performance.now();
  const drawn: Record<string, string> = {
    tasks: String(shown?.taskCount ?? 0),
    visibleBoxes: String(visibleBoxes),
    scale: transform.scale.toFixed(4),
    x: transform.x.toFixed(1),
    y: transform.y.toFixed(1),
    current: currentTaskId ?? '',
    focus: focused ?? '',
    depth: String(focusDepth),
    drawnAt: String(firstDrawnAt),
    received: String(received),
  };
  // Only when something changed: each attribute set is a change of the page's DOM, which a run's frames would make
  // for nothing.
  if (Object.entries(drawn).every(([key, value]) => published[key] === value)) return;
  published = drawn;
  tell({ type: 'drawn', drawn });
}

// ---- What is shown: the whole graph or a neighbourhood; the status line.

/** The levels up and down focus mode shows, from what the user typed. */
export function clampDepth(value: number): number {
  return Math.max(1, Math.min(50, Math.round(value) || 1));
}

/** The tasks at most `depth` edges up or down from a task, and the edges between them, laid out on their own. */
function neighbourhood(of: string, levels: number): Shown {
  const { nodes, edges } = graph!;
  const near = new Set([of]);
  for (const direction of ['up', 'down'] as const) {
    let frontier = new Set([of]);
    for (let level = 0; level < levels && frontier.size > 0; level++) {
      const next = new Set<string>();
      for (const { from, to } of edges) {
        const [here, there] = direction === 'down' ? [from, to] : [to, from];
        if (frontier.has(here) && !near.has(there)) next.add(there);
      }
      for (const id of next) near.add(id);
      frontier = next;
    }
  }
  const kept = nodes.flatMap((node, n) => (near.has(node.id) ? [{ node, n }] : []));
  const keptEdges = edges.filter((edge) => near.has(edge.from) && near.has(edge.to));
  const ids = kept.map(({ node }) => node.id);
  return shownOf(
    ids,
    kept.map(({ node }) => node.capability),
    keptEdges,
    layOutTasks(ids, keptEdges),
    Int32Array.from(kept, ({ n }) => n),
  );
}

function show(): void {
  const wanted = focusOn && currentTaskId !== undefined ? currentTaskId : undefined;
  const levels = focusDepth;
  if (wanted !== undefined && graph !== undefined && graph.nodes.some((node) => node.id === wanted)) {
    if (focused === undefined) wholeTransform = { ...transform };
    focused = wanted;
    shown = neighbourhood(wanted, levels);
    hovered = -1;
    shownChanged();
    fit();
  } else if (focused !== undefined || shown !== whole) {
    focused = undefined;
    shown = whole;
    hovered = -1;
    shownChanged();
    if (wholeTransform !== undefined) Object.assign(transform, wholeTransform);
    else fit();
    wholeTransform = undefined;
  }
  // The overview is of the whole graph; a neighbourhood fits the view.
  if (overviewHidden !== (focused !== undefined)) {
    overviewHidden = focused !== undefined;
    tell({ type: 'overview', hidden: overviewHidden });
  }
  describe();
  requestFrame();
}

/** What the status line says of a graph (counted once: a run's states change it many times a second). */
function summaryOf(graph: DagGraph, stale: boolean): string {
  const cycles = graph.edges.filter((edge) => edge.cycle).length;
  const dangling = graph.edges.filter((edge) => edge.dangling).length;
  const parts = [`${graph.dagId ?? 'DAG without a dag_id'}: ${graph.nodes.length} tasks, ${graph.edges.length} edges`];
  if (cycles > 0) parts.push(`${cycles} on a cycle`);
  if (dangling > 0) parts.push(`${dangling} to a missing task`);
  if (stale) parts.push('the file is not valid JSON now: this is the last graph that parsed');
  return parts.join(' · ');
}

function describe(): void {
  if (graph === undefined) return;
  const parts = [graphSummary];
  if (focused !== undefined) {
    parts.push(
      `focus: ${focused}, ${focusDepth} level${focusDepth === 1 ? '' : 's'} up and down (${shown!.taskCount} tasks)`,
    );
  } else if (focusOn) {
    parts.push('focus: put the cursor in a task');
  }
  const tasksInRun = stateCounts.reduce((sum, tasks) => sum + tasks, 0);
  if (tasksInRun > 0) {
    const running = stateCounts[RUNNING]!;
    const finished = tasksInRun - running - stateCounts[PENDING]!;
    parts.push(
      `${runGoing ? 'run' : 'last run'}: ${finished}/${tasksInRun} finished${running > 0 ? `, ${running} running` : ''}`,
    );
  }
  const text = parts.join(' · ');
  if (text !== described) tell({ type: 'status', text: (described = text) });
}
let described = '';

// ---- What the user does (the page passes it on) and the extension's messages.

/** The box at a point of the view (CSS pixels), or -1. */
function boxAt(viewX: number, viewY: number): number {
  if (shown === undefined) return -1;
  const x = (viewX - transform.x) / transform.scale;
  const y = (viewY - transform.y) / transform.scale;
  const { boxes } = shown.layout;
  for (let n = 0; n < boxes.length / 2; n++) {
    const [bx, by] = [boxes[2 * n]!, boxes[2 * n + 1]!];
    if (x >= bx && x <= bx + BOX_WIDTH && y >= by && y <= by + BOX_HEIGHT) return n;
  }
  return -1;
}

function select(taskId: string): void {
  // The highlight moves at once; the editor's cursor follows.
  currentTaskId = taskId;
  tell({ type: 'reveal', taskId });
  if (focusOn) show();
  requestFrame();
}

function hover(n: number): void {
  if (n !== hovered) {
    hovered = n;
    requestFrame();
  }
  if (n < 0) {
    tell({ type: 'tooltip', text: undefined });
    return;
  }
  const state = n < shown!.taskCount ? stateOf(n) : undefined;
  const text = [shown!.ids[n], shown!.capabilities[n], state].filter((line) => line !== undefined).join('\n');
  tell({ type: 'tooltip', text });
}

function centreOverviewAt(x: number, y: number): void {
  if (shown === undefined) return;
  const { layout } = shown;
  const { overviewWidth, overviewHeight } = viewSize;
  const scale = Math.min(overviewWidth / Math.max(1, layout.width), overviewHeight / Math.max(1, layout.height));
  transform.x = viewSize.width / 2 - (x / scale) * transform.scale;
  transform.y = viewSize.height / 2 - (y / scale) * transform.scale;
  requestFrame();
}

/** A harness's record of the gaps between the drawing's animation frames (in a worker, the page's frames say nothing). */
let frameRecord: { last: number; longest: number; frames: number; over50: number; on: boolean } | undefined;
function recordFrames(on: boolean): void {
  if (!on) {
    if (frameRecord === undefined) return;
    frameRecord.on = false;
    const { longest, frames, over50 } = frameRecord;
    frameRecord = undefined;
    tell({ type: 'frames', longest: Math.round(longest * 10) / 10, frames, over50 });
    return;
  }
  const record = { last: performance.now(), longest: 0, frames: 0, over50: 0, on: true };
  frameRecord = record;
  const tick = (now: number): void => {
    if (!record.on) return;
    record.longest = Math.max(record.longest, now - record.last);
    if (now - record.last > 50) record.over50++;
    record.last = now;
    record.frames++;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}

/** Starts the drawing: its messages go to `post`. */
export function startGraphCanvas(post: (message: FromGraphCanvas) => void): (message: ToGraphCanvas) => void {
  tell = post;
  return receive;
}

/** Messages taken in: a harness knows a frame drawn after this many shows what the page had sent. */
let received = 0;
function receive(message: ToGraphCanvas): void {
  received++;
  switch (message.type) {
    case 'start':
      canvas = message.canvas;
      overview = message.overview;
      context = canvas.getContext('2d') as Context;
      overviewContext = overview.getContext('2d') as Context;
      viewSize = message.view;
      palette = message.palette;
      focusOn = message.focus.on;
      focusDepth = clampDepth(message.focus.depth);
      break;
    case 'size': {
      // A graph that came while the view had no size yet (a panel still being laid out) is fitted once it has one.
      const unsized = viewSize.width === 0 || viewSize.height === 0;
      viewSize = message.view;
      if (unsized && focused === undefined && whole !== undefined) fit();
      requestFrame();
      break;
    }
    case 'palette':
      palette = message.palette;
      looksChanged();
      break;
    case 'focus':
      focusOn = message.on;
      focusDepth = clampDepth(message.depth);
      show();
      break;
    case 'fit':
      fit();
      break;
    case 'zoom':
      zoom(message.factor, message.x, message.y);
      break;
    case 'pan':
      pan(message.dx, message.dy);
      break;
    case 'centre':
      centreOverviewAt(message.x, message.y);
      break;
    case 'hover':
      hover(boxAt(message.x, message.y));
      break;
    case 'leave':
      hover(-1);
      break;
    case 'click': {
      const n = boxAt(message.x, message.y);
      if (n >= 0 && n < shown!.taskCount) select(shown!.ids[n]!);
      break;
    }
    case 'enter':
      if (currentTaskId !== undefined) tell({ type: 'reveal', taskId: currentTaskId });
      break;
    case 'record frames':
      recordFrames(message.on);
      break;
    case 'graph': {
      const first = whole === undefined;
      graph = unpackGraph(message.graph);
      graphSummary = summaryOf(graph, message.stale);
      // Its states follow, in its tasks' indexes.
      forgetStates(graph.nodes.length);
      const ids = graph.nodes.map((node) => node.id);
      whole = shownOf(
        ids,
        graph.nodes.map((node) => node.capability),
        graph.edges,
        graph.layout ?? layOutTasks(ids, graph.edges),
      );
      if (focused === undefined) shown = whole;
      shownChanged();
      firstDrawnAt = undefined;
      if (first) fit();
      show();
      break;
    }
    case 'states':
      statesReceived(message);
      break;
    case 'cursor':
      currentTaskId = message.taskId;
      if (focusOn) show();
      else if (shown !== undefined && currentTaskId !== undefined) {
        const n = shown.ids.indexOf(currentTaskId);
        if (n >= 0) bringIntoView(n);
      }
      requestFrame();
      break;
  }
}
