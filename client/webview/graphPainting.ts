// The graph view's painting: the frames asked for and drawn, each of the edges, boxes and labels in view (or, zoomed
// out, the zoomed-out image: graphCache.ts) with the hovered and the cursor's boxes highlighted, the overview, and
// what the page is told a frame shows.
import { BOX_HEIGHT, BOX_WIDTH } from '../../server/src/dag/layout';
import type { ShownState } from '../src/graphPage';
import { CACHE_COLUMN, currentLevel, newCanvas, paintCache } from './graphCache';
import { type Palette, rgbOf } from './graphPalette';
import { unpainted } from './graphRunStates';
import { paintEdgeCounts, paintGroupProgress, paintShapeEdges, strokedByCount } from './graphShapePainting';
import { shapeAttributes, tasksShown } from './graphShapeView';
import { type Context, type GraphState, type Shown, type WorldRect, edgeCrosses, stateOf } from './graphState';

/** Below this scale edges have no arrowheads and stream_eligible edges no double line. */
const ARROW_SCALE = 0.3;
/** How far outside its box the ring of a task on the critical path is, in world units (beyond paintBoxes's cover). */
const CRITICAL_RING = 5;
/** Below this scale a box's outline is one pixel and solid (paintBoxes). */
const OUTLINE_SCALE = 0.25;
/** A frame asked for is drawn at the latest this long after, animation frame or not (requestFrame). */
const FRAME_TIMEOUT_MS = 1_000;
/** Running tasks' outlines move at this interval. */
const ANIMATION_MS = 120;
/**
 * Text on the canvas is drawn at the screen's scale, never smaller than this (CSS pixels), so a box shows its id
 * once it is this tall on screen: at 60 px wide a box is 13 px tall. Drawn in world units instead, text shrank with
 * the zoom and was unreadable (5 px) where boxes were 60-75 px wide.
 */
export const MIN_TEXT_PX = 11;
const MAX_TEXT_PX = 15;
/** The id's size for a box's height on screen; the capability's line is a pixel or two smaller. */
const ID_TEXT_SHARE = 0.3;
/** A box shows its capability under its id when it is this many id lines tall, and its state's glyph this wide. */
const DETAIL_LINES = 2.6;
const GLYPH_MIN_BOX_PX = 90;
/** Space between a box's outline and its text, at most (CSS pixels). */
const TEXT_PADDING = 8;
/** Edges of the hovered, the cursor's and the focused task: this wide (CSS pixels), arrowheads this long. */
const STRONG_EDGE_PX = 2;
const ARROW_PX = 9;
/** A label cut to fit is remembered by the room it had, in steps of this many pixels; at most this many of them. */
const LABEL_ROOM_STEP = 4;
const MAX_LABELS_KEPT = 50_000;
const STATE_GLYPH: Record<ShownState, string> = {
  pending: '…',
  running: '▶',
  completed: '✓',
  // A store's cylinder: the output came from the result store.
  cached: '⛁',
  failed: '✕',
  cancelled: '⊘',
};

/**
 * Asks for a frame: the next animation frame, or, where none comes within FRAME_TIMEOUT_MS, a timer's. A worker's
 * animation frames wait for its canvas's compositor and stop while the canvas is out of sight, and what a frame
 * tells the page (its status line, the data attributes) would wait with them. (The e2e failure this was first added
 * for, a new graph page that drew nothing, was VS Code giving the test's document another one's text.) A frame
 * requested but not yet drawn is drawn once.
 */
export function requestFrame(s: GraphState): void {
  if (s.frameRequested) return;
  s.frameRequested = true;
  const requested = (now: number): void => {
    if (!s.frameRequested) return;
    clearTimeout(s.frameTimeout);
    draw(s, now);
  };
  requestAnimationFrame(requested);
  s.frameTimeout = setTimeout(() => requested(performance.now()), FRAME_TIMEOUT_MS);
}

/** Colours changed: everything is painted again. */
export function looksChanged(s: GraphState): void {
  s.overviewStale = true;
  paintCache(s);
  requestFrame(s);
}

/**
 * A box's text cut to fit `room` CSS pixels in the context's font, keeping twice as much of its end as of its start:
 * the ids of a DAG share their beginnings and differ at their ends (`task_4_72` and `task_5_72` are `ta…4_72` and
 * `ta…5_72`, not `tas…_72` twice). Remembered by text, font and room.
 */
function elided(s: GraphState, target: Context, n: number, line: 0 | 1, room: number): string {
  const shown = s.shown!;
  const text = (line === 0 ? shown.ids[n] : shown.capabilities[n]) ?? '';
  const step = Math.floor(room / LABEL_ROOM_STEP);
  const key = `${line}:${n}:${target.font}:${step}`;
  let cut = shown.labels.get(key);
  if (cut !== undefined) return cut;
  const fits = (candidate: string): boolean => target.measureText(candidate).width <= step * LABEL_ROOM_STEP;
  const keeping = (kept: number): string =>
    `${text.slice(0, Math.floor(kept / 3))}…${text.slice(text.length - Math.ceil((2 * kept) / 3))}`;
  cut = text;
  if (!fits(text)) {
    let [low, high] = [0, text.length - 1];
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (fits(keeping(middle))) low = middle;
      else high = middle - 1;
    }
    cut = low === 0 ? '' : keeping(low);
  }
  if (shown.labels.size >= MAX_LABELS_KEPT) shown.labels.clear();
  shown.labels.set(key, cut);
  return cut;
}

/** Traces the routes of edges, with an arrowhead `arrow` world units long along the last segment of each when asked. */
export function trace(s: GraphState, target: Context, list: readonly number[], arrow = 0): void {
  const { routes } = s.shown!.layout;
  target.beginPath();
  for (const e of list) {
    const route = routes[e]!;
    target.moveTo(route[0]!, route[1]!);
    for (let p = 2; p < route.length; p += 2) target.lineTo(route[p]!, route[p + 1]!);
    if (arrow === 0 || route.length < 4) continue;
    const end = route.length;
    const [x1, y1, x0, y0] = [route[end - 2]!, route[end - 1]!, route[end - 4]!, route[end - 3]!];
    const length = Math.hypot(x1 - x0, y1 - y0) || 1;
    const [ux, uy] = [(x1 - x0) / length, (y1 - y0) / length];
    const [back, side] = [arrow, arrow / 2];
    target.moveTo(x1 - back * ux - side * uy, y1 - back * uy + side * ux);
    target.lineTo(x1, y1);
    target.lineTo(x1 - back * ux + side * uy, y1 - back * uy - side * ux);
  }
}

function traceBoxes(s: GraphState, target: Context, list: readonly number[]): void {
  const { boxes } = s.shown!.layout;
  target.beginPath();
  for (const n of list) target.rect(boxes[2 * n]!, boxes[2 * n + 1]!, BOX_WIDTH, BOX_HEIGHT);
}

/** The boxes whose top left corner is inside `rect` (world coordinates, a box wider than what is in sight). */
function boxesIn(s: GraphState, rect: WorldRect): number[] {
  const { boxes } = s.shown!.layout;
  const inside: number[] = [];
  for (let n = 0; n < boxes.length / 2; n++) {
    const x = boxes[2 * n]!;
    const y = boxes[2 * n + 1]!;
    if (x > rect.right || x < rect.left || y > rect.bottom || y < rect.top) continue;
    inside.push(n);
  }
  return inside;
}

/**
 * Paints the edges and boxes inside `rect` (world coordinates) on a context already transformed to `scale`; returns
 * whether a running task's moving outline was painted. Text is the live frame's (paintLabels), at the screen's scale.
 */
export function paint(s: GraphState, target: Context, scale: number, rect: WorldRect, now: number): boolean {
  const pixel = 1 / scale;
  paintEdges(s, target, scale, rect);
  paintShapeEdges(s, target, scale, rect);
  const visible = boxesIn(s, rect);
  const running = paintBoxes(s, target, visible, pixel, now);
  paintCriticalRings(s, target, visible, pixel);
  paintGroupProgress(s, target, visible, pixel);
  return running;
}

/**
 * How each kind of edge is stroked: its colour, its width in CSS pixels (when zoomed in, in world units: it grows with
 * the boxes), and whether it has an arrowhead. A plain edge is thin, light and without one (every edge points down
 * its layers): hundreds of them between two layers are a haze the boxes stand out from, and the edges of the task
 * under the pointer, the cursor's and the focused one are drawn over them, strong and with their direction.
 */
const EDGE_LOOK: Record<
  'plain' | 'critical' | 'cycle' | 'dangling',
  { colour: (p: Palette) => string; width: number; arrow: boolean }
> = {
  plain: { colour: (palette) => palette.edge, width: 1, arrow: false },
  critical: { colour: (palette) => palette.critical, width: 2.5, arrow: false },
  // Upwards: its arrowhead says so.
  cycle: { colour: (palette) => palette.cycle, width: 1.5, arrow: true },
  dangling: { colour: (palette) => palette.warning, width: 1.5, arrow: true },
};

/**
 * Rings the boxes in view of the tasks on the critical path, outside their outlines: a box keeps the look of its
 * run state, and the ring is told from it by its colour and by being solid and apart from the box.
 */
function paintCriticalRings(s: GraphState, target: Context, visible: readonly number[], pixel: number): void {
  const { layout, criticalBoxes } = s.shown!;
  target.beginPath();
  for (const n of visible) {
    if (criticalBoxes[n] !== 1) continue;
    const [x, y] = [layout.boxes[2 * n]! - CRITICAL_RING, layout.boxes[2 * n + 1]! - CRITICAL_RING];
    target.rect(x, y, BOX_WIDTH + 2 * CRITICAL_RING, BOX_HEIGHT + 2 * CRITICAL_RING);
  }
  target.strokeStyle = s.palette.critical;
  target.lineWidth = 2.5 * Math.max(pixel, 1);
  target.stroke();
}

/**
 * Paints the edges whose routes cross `rect` (world coordinates) on a context transformed to `scale`, but the shape's
 * that paintShapeEdges strokes by their counts.
 */
function paintEdges(s: GraphState, target: Context, scale: number, rect: WorldRect): void {
  const pixel = 1 / scale;
  const { palette } = s;
  const shown = s.shown!;
  const { edges, criticalEdges } = shown;
  const kinds = { plain: [] as number[], critical: [] as number[], cycle: [] as number[], dangling: [] as number[] };
  const streams: number[] = [];
  edges.forEach((edge, e) => {
    if (strokedByCount(shown, e) || !edgeCrosses(shown, e, rect)) return;
    const kind = edge.cycle ? 'cycle' : edge.dangling ? 'dangling' : criticalEdges[e] === 1 ? 'critical' : 'plain';
    kinds[kind].push(e);
    if (edge.streamEligible) streams.push(e);
  });
  // A stream_eligible edge is a double line: drawn wide in its colour, then its middle in the background's.
  const isStream = (e: number): boolean => edges[e]!.streamEligible;
  const detailed = scale >= ARROW_SCALE;
  for (const [kind, list] of Object.entries(kinds) as [keyof typeof kinds, number[]][]) {
    const look = EDGE_LOOK[kind];
    target.strokeStyle = look.colour(palette);
    target.setLineDash(kind === 'dangling' ? [5 * pixel, 4 * pixel] : []);
    target.lineWidth = look.width * Math.max(pixel, 1);
    trace(s, target, list, look.arrow && detailed ? ARROW_PX * pixel : 0);
    target.stroke();
    if (!detailed) continue;
    target.lineWidth = 5 * pixel;
    trace(s, target, list.filter(isStream));
    target.stroke();
  }
  target.setLineDash([]);
  if (detailed) {
    target.lineWidth = 2 * pixel;
    target.strokeStyle = palette.background;
    trace(s, target, streams);
    target.stroke();
  }
}

/** For each box of a shown graph, the edges that leave or enter it (built when first asked). */
const edgesOfBoxes = new WeakMap<Shown, readonly (readonly number[])[]>();

function edgesOf(shown: Shown, n: number): readonly number[] {
  let lists = edgesOfBoxes.get(shown);
  if (lists === undefined) {
    const boxOf = new Map(shown.ids.map((id, box) => [id, box]));
    const built: number[][] = shown.ids.map(() => []);
    shown.edges.forEach(({ from, to }, e) => {
      for (const end of new Set([boxOf.get(from), boxOf.get(to)])) if (end !== undefined) built[end]!.push(e);
    });
    edgesOfBoxes.set(shown, (lists = built));
  }
  return lists[n] ?? [];
}

/** The boxes whose edges are drawn strong: the one under the pointer, the cursor's task's and the focused task's. */
function emphasised(s: GraphState): number[] {
  const shown = s.shown!;
  const boxes = new Set<number>();
  if (s.hovered >= 0) boxes.add(s.hovered);
  for (const id of [s.currentTaskId, s.focused]) {
    const n = id === undefined ? -1 : shown.ids.indexOf(id);
    if (n >= 0 && n < shown.taskCount) boxes.add(n);
  }
  return [...boxes];
}

/** Draws the edges of the emphasised boxes strong, with their direction, over the others (world coordinates). */
function paintStrongEdges(s: GraphState, boxes: readonly number[]): void {
  const { context, palette } = s;
  const shown = s.shown!;
  const pixel = 1 / s.transform.scale;
  const list = [...new Set(boxes.flatMap((n) => edgesOf(shown, n)))];
  if (list.length === 0) return;
  context.strokeStyle = palette.foreground;
  context.lineWidth = STRONG_EDGE_PX * pixel;
  trace(s, context, list, ARROW_PX * pixel);
  context.stroke();
}

/** What the text of boxes a frame shows: sizes in CSS pixels. */
interface LabelLook {
  readonly idPx: number;
  readonly capabilityPx: number;
  readonly capability: boolean;
  readonly glyph: boolean;
}

/** The text a box shows at `scale`: none when its id would not be legible (then the box's colour tells its state). */
export function labelLook(scale: number): LabelLook | undefined {
  const [width, height] = [BOX_WIDTH * scale, BOX_HEIGHT * scale];
  if (height < MIN_TEXT_PX) return undefined;
  const idPx = Math.min(MAX_TEXT_PX, Math.max(MIN_TEXT_PX, Math.round(height * ID_TEXT_SHARE)));
  return {
    idPx,
    capabilityPx: Math.max(MIN_TEXT_PX, idPx - 2),
    capability: height >= DETAIL_LINES * idPx,
    glyph: width >= GLYPH_MIN_BOX_PX,
  };
}

/**
 * Paints the text of the boxes in `visible` at the screen's scale, in device pixels: each box's id (cut in the
 * middle to fit), its state's glyph where it has room, and its capability where it is tall enough. Answers how many
 * boxes show their id.
 */
function paintLabels(s: GraphState, visible: readonly number[]): number {
  const { context, palette, transform } = s;
  const look = labelLook(transform.scale);
  if (look === undefined) return 0;
  const shown = s.shown!;
  const { boxes } = shown.layout;
  const { ratio } = s.viewSize;
  const [width, height] = [BOX_WIDTH * transform.scale, BOX_HEIGHT * transform.scale];
  const padding = Math.min(TEXT_PADDING, width * 0.06);
  const glyphRoom = look.glyph ? look.idPx + padding : 0;
  const left = (n: number): number => boxes[2 * n]! * transform.scale + transform.x;
  const top = (n: number): number => boxes[2 * n + 1]! * transform.scale + transform.y;
  const idMiddle = look.capability ? height * 0.34 : height / 2;
  context.save();
  context.setTransform(ratio, 0, 0, ratio, 0, 0);
  context.textBaseline = 'middle';
  context.font = `${look.idPx}px ${palette.font}`;
  context.fillStyle = palette.foreground;
  let labelled = 0;
  for (const n of visible) {
    // Room for the glyph only where there is one: a group's name needs all of its box at fit.
    const id = elided(s, context, n, 0, width - 2 * padding - (stateOf(s, n) === undefined ? 0 : glyphRoom));
    if (id === '') continue;
    context.fillText(id, left(n) + padding, top(n) + idMiddle);
    labelled++;
  }
  if (look.glyph) {
    for (const n of visible) {
      const state = stateOf(s, n);
      if (state === undefined) continue;
      context.fillStyle = palette.states[state];
      context.fillText(STATE_GLYPH[state], left(n) + width - padding - look.idPx, top(n) + idMiddle);
    }
  }
  if (look.capability) {
    context.font = `${look.capabilityPx}px ${palette.font}`;
    context.fillStyle = palette.description;
    for (const n of visible) {
      if (shown.capabilities[n] === undefined) continue;
      const capability = elided(s, context, n, 1, width - 2 * padding);
      context.fillText(capability, left(n) + padding, top(n) + height * 0.7);
    }
  }
  context.restore();
  return labelled;
}

/**
 * Paints boxes, one path a look, on a context transformed to 1 / `pixel`; returns whether a running task's moving
 * outline was among them. `over`: the boxes were painted before in another look, whose outline the new one must cover.
 *
 * Zoomed out beyond OUTLINE_SCALE (where a box shows no text, and further out the image of the whole graph is drawn)
 * outlines are one pixel and solid: rasterising 10,000 outlines of 2.5 px took 200 ms in Chromium's software canvas,
 * dashed ones 0.3-4 s, one-pixel ones 10-25 ms. There a look is told by its colour, its glyph and dash once zoomed in.
 */
export function paintBoxes(
  s: GraphState,
  target: Context,
  list: readonly number[],
  pixel: number,
  now: number,
  over = false,
): boolean {
  const { palette } = s;
  const shown = s.shown!;
  const looks = new Map<string, number[]>();
  for (const n of list) {
    const look = n >= shown.taskCount ? 'missing' : (stateOf(s, n) ?? 'none');
    let boxes = looks.get(look);
    if (boxes === undefined) looks.set(look, (boxes = []));
    boxes.push(n);
  }
  const fine = 1 / pixel > OUTLINE_SCALE;
  const widest = fine ? 2.5 * Math.max(pixel, 1) : pixel;
  for (const [look, boxes] of looks) {
    const colour =
      look === 'none' ? palette.border : look === 'missing' ? palette.warning : palette.states[look as ShownState];
    if (over) {
      // The old outline is covered by a box larger by one and a half outlines (a fill: a wider stroke costs).
      const { boxes: at } = shown.layout;
      target.beginPath();
      const margin = 1.5 * widest;
      for (const n of boxes)
        target.rect(at[2 * n]! - margin, at[2 * n + 1]! - margin, BOX_WIDTH + 2 * margin, BOX_HEIGHT + 2 * margin);
      target.fillStyle = palette.box;
      target.fill();
    }
    traceBoxes(s, target, boxes);
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
    // Not by colour alone: a missing, cancelled or running task has a dashed outline, a running one's moving; a
    // cached one a dotted outline.
    const dashed = fine && (look === 'missing' || look === 'cancelled' || look === 'running');
    target.setLineDash(dashed ? [6, 4] : fine && look === 'cached' ? [2, 3] : []);
    target.lineDashOffset = look === 'running' ? -((now / ANIMATION_MS) % 10) : 0;
    target.stroke();
  }
  target.setLineDash([]);
  target.lineDashOffset = 0;
  // Zoomed out, outlines are solid: nothing moves, and no frame is drawn for it (each costs the compositor too).
  return fine && looks.has('running');
}

function draw(s: GraphState, now: number): void {
  s.frameRequested = false;
  s.lastDrawnAt = performance.now();
  const { canvas, context, transform, shown } = s;
  if (canvas === undefined) return;
  const { width, height, ratio } = s.viewSize;
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
  // The world rectangle in view, a box wider so that outlines at the edge are drawn.
  const inView = {
    left: -transform.x / scale - BOX_WIDTH,
    top: -transform.y / scale - BOX_HEIGHT,
    right: (width - transform.x) / scale,
    bottom: (height - transform.y) / scale,
  };
  // The smallest level still as sharp as the screen's pixels.
  const level = s.cache?.levels.reduce((best, candidate) => (candidate.scale >= scale * ratio ? candidate : best));
  if (level !== undefined && scale <= s.cache!.levels[0]!.scale) {
    // In device pixels, each column from a whole pixel to the next column's: no seam between them.
    context.setTransform(1, 0, 0, 1, 0, 0);
    const { columns } = currentLevel(s, level);
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
    running = paint(s, context, scale, inView, now);
  }
  const visible = boxesIn(s, inView);
  s.visibleBoxes = visible.length;
  paintStrongEdges(s, emphasised(s));
  highlight(s);
  s.labelledBoxes = paintLabels(s, visible);
  paintEdgeCounts(s);
  showOverviewWhenUseful(s);
  drawOverview(s);
  publish(s);
  clearTimeout(s.animation);
  if (running) s.animation = setTimeout(() => requestFrame(s), ANIMATION_MS);
}

/** The overview shows only where it helps: over a view large enough, of a whole graph not all in sight. */
const OVERVIEW_MIN_VIEW = { width: 420, height: 300 };

/**
 * Hides the overview where it would cover the graph it summarises and tell nothing more: a graph all in view (a small
 * DAG, or any at fit), focus mode's neighbourhood, or a view too small to spare its corner.
 */
function showOverviewWhenUseful(s: GraphState): void {
  const { layout } = s.shown!;
  const { transform, viewSize } = s;
  const [left, top] = [transform.x, transform.y];
  const [right, bottom] = [left + layout.width * transform.scale, top + layout.height * transform.scale];
  const allInView = left >= -1 && top >= -1 && right <= viewSize.width + 1 && bottom <= viewSize.height + 1;
  const small = viewSize.width < OVERVIEW_MIN_VIEW.width || viewSize.height < OVERVIEW_MIN_VIEW.height;
  const hidden = s.focused !== undefined || allInView || small;
  if (hidden === s.overviewHidden) return;
  s.overviewHidden = hidden;
  s.tell({ type: 'overview', hidden });
}

/** Highlights the hovered box and the cursor's task's, on the main context in world coordinates. */
function highlight(s: GraphState): void {
  const { context, palette } = s;
  const shown = s.shown!;
  const tint = (n: number, fill: string): void => {
    traceBoxes(s, context, [n]);
    context.globalAlpha = 0.6;
    context.fillStyle = fill;
    context.fill();
    context.globalAlpha = 1;
  };
  if (s.hovered >= 0) tint(s.hovered, palette.hover);
  const current = s.currentTaskId === undefined ? -1 : shown.ids.indexOf(s.currentTaskId);
  if (current >= 0 && current < shown.taskCount) {
    tint(current, palette.current);
    traceBoxes(s, context, [current]);
    context.strokeStyle = palette.focus;
    context.lineWidth = 3 / s.transform.scale;
    context.stroke();
  }
}

/**
 * The overview: the whole shown graph in miniature and the view's rectangle. Its image is painted pixel by pixel (at
 * 10,000 tasks a box is a pixel or two here, and rasterising 10,000 rectangles took a 50-100 ms frame), whole when
 * what is shown, its colours or its size changed, else only the boxes whose state changed since (painting all of it
 * for every change of a run took 80 ms of the page's thread in a 10,000-task run).
 */
function drawOverview(s: GraphState): void {
  const { shown, overview, overviewContext, palette, transform, viewSize } = s;
  if (shown === undefined || overview === undefined || s.overviewHidden || viewSize.overviewWidth === 0) return;
  const { layout } = shown;
  const { ratio, overviewWidth: width, overviewHeight: height } = viewSize;
  const scale = Math.min(width / Math.max(1, layout.width), height / Math.max(1, layout.height));
  const [pixelWidth, pixelHeight] = [Math.round(width * ratio), Math.round(height * ratio)];
  const whole = s.overviewStale || s.overviewPixels === undefined || s.overviewImage?.width !== pixelWidth;
  if (whole || s.overviewPainted.paintedThrough !== s.changes) {
    if (whole || s.overviewImage === undefined) {
      s.overviewStale = false;
      overview.width = pixelWidth;
      overview.height = pixelHeight;
      s.overviewImage = newCanvas(pixelWidth, pixelHeight);
      s.overviewPixels = (s.overviewImage.getContext('2d') as Context).createImageData(pixelWidth, pixelHeight);
      // A change no box has had (and a count no change reaches): every box is painted.
      s.overviewPainted = { paintedAt: new Uint32Array(s.changedAt.length).fill(-1), paintedThrough: -1 };
    }
    paintOverviewPixels(s, s.overviewPixels!, ratio * scale);
    (s.overviewImage.getContext('2d') as Context).putImageData(s.overviewPixels!, 0, 0);
  }
  overviewContext.setTransform(1, 0, 0, 1, 0, 0);
  overviewContext.clearRect(0, 0, overview.width, overview.height);
  overviewContext.drawImage(s.overviewImage!, 0, 0);
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

/** Sets the overview's pixels of the boxes it does not show as they are now, at `toPixels` device pixels a unit. */
function paintOverviewPixels(s: GraphState, pixels: ImageData, toPixels: number): void {
  const { palette, overviewContext } = s;
  const shown = s.shown!;
  const { layout } = shown;
  const rgbs = new Map<string, readonly number[]>();
  for (const n of unpainted(s, s.overviewPainted)) {
    const state = stateOf(s, n);
    const colour =
      n >= shown.taskCount ? palette.warning : state === undefined ? palette.border : palette.states[state];
    let rgb = rgbs.get(colour);
    if (rgb === undefined) {
      rgb = rgbOf(overviewContext, colour) ?? rgbOf(overviewContext, palette.foreground) ?? [128, 128, 128];
      rgbs.set(colour, rgb);
    }
    const left = Math.floor(layout.boxes[2 * n]! * toPixels);
    const top = Math.floor(layout.boxes[2 * n + 1]! * toPixels);
    const right = Math.min(pixels.width, Math.max(left + 1, Math.round((layout.boxes[2 * n]! + BOX_WIDTH) * toPixels)));
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
}

/** What a harness (and a curious user's dev tools) can read of the drawn view, told to the page when it changes. */
function publish(s: GraphState): void {
  s.firstDrawnAt ??= performance.timeOrigin + performance.now();
  const drawn: Record<string, string> = {
    tasks: String(tasksShown(s)),
    ...shapeAttributes(s),
    visibleBoxes: String(s.visibleBoxes),
    labelledBoxes: String(s.labelledBoxes),
    boxWidth: (BOX_WIDTH * s.transform.scale).toFixed(1),
    scale: s.transform.scale.toFixed(4),
    x: s.transform.x.toFixed(1),
    y: s.transform.y.toFixed(1),
    current: s.currentTaskId ?? '',
    focus: s.focused ?? '',
    depth: String(s.focusDepth),
    drawnAt: String(s.firstDrawnAt),
    received: String(s.received),
  };
  // Only when something changed: each attribute set is a change of the page's DOM, which a run's frames would make
  // for nothing.
  if (Object.entries(drawn).every(([key, value]) => s.published[key] === value)) return;
  s.published = drawn;
  s.tell({ type: 'drawn', drawn });
}

/** Starts or stops a harness's record of the gaps between the drawing's animation frames. */
export function recordFrames(s: GraphState, on: boolean): void {
  if (!on) {
    if (s.frameRecord === undefined) return;
    s.frameRecord.on = false;
    const { longest, frames, over50 } = s.frameRecord;
    s.frameRecord = undefined;
    s.tell({ type: 'frames', longest: Math.round(longest * 10) / 10, frames, over50 });
    return;
  }
  const record = { last: performance.now(), longest: 0, frames: 0, over50: 0, on: true };
  s.frameRecord = record;
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
