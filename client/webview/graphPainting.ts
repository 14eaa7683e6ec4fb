// The graph view's painting: the frames asked for and drawn, each of the edges, boxes and labels in view (or, zoomed
// out, the zoomed-out image: graphCache.ts) with the hovered and the cursor's boxes highlighted, the overview, and
// what the page is told a frame shows.
import { BOX_HEIGHT, BOX_WIDTH } from '../../server/src/dag/layout';
import type { ShownState } from '../src/graphPage';
import { CACHE_COLUMN, currentLevel, newCanvas, paintCache } from './graphCache';
import { type Palette, rgbOf } from './graphPalette';
import { unpainted } from './graphRunStates';
import { type Context, type GraphState, stateOf } from './graphState';

/** Below these scales a box shows no text, then only its id. */
const ID_SCALE = 0.4;
const DETAIL_SCALE = 0.7;
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
const FONT = `13px sans-serif`;
const DETAIL_FONT = `11px sans-serif`;
const PADDING = 8;
const STATE_GLYPH: Record<ShownState, string> = {
  pending: '…',
  running: '▶',
  completed: '✓',
  // A store's cylinder: the output came from the result store.
  cached: '⛁',
  failed: '✕',
  cancelled: '⊘',
};

interface WorldRect {
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}

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

/** A label cut with an ellipsis to fit a box, measured once per text and font. */
function fitted(s: GraphState, n: number, line: 0 | 1): string {
  const shown = s.shown!;
  const text = (line === 0 ? shown.ids[n] : shown.capabilities[n]) ?? '';
  const key = `${line}:${n}`;
  let cut = shown.labels.get(key);
  if (cut === undefined) {
    const room = BOX_WIDTH - 2 * PADDING - 16;
    cut = text;
    if (s.context.measureText(text).width > room) {
      let [low, high] = [0, text.length];
      while (low < high) {
        const middle = (low + high + 1) >> 1;
        if (s.context.measureText(`${text.slice(0, middle)}…`).width <= room) low = middle;
        else high = middle - 1;
      }
      cut = `${text.slice(0, low)}…`;
    }
    shown.labels.set(key, cut);
  }
  return cut;
}

/** Traces the routes of edges, with an arrowhead along the last segment of each when asked. */
function trace(s: GraphState, target: Context, list: readonly number[], arrows: boolean): void {
  const { routes } = s.shown!.layout;
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

function traceBoxes(s: GraphState, target: Context, list: readonly number[]): void {
  const { boxes } = s.shown!.layout;
  target.beginPath();
  for (const n of list) target.rect(boxes[2 * n]!, boxes[2 * n + 1]!, BOX_WIDTH, BOX_HEIGHT);
}

/**
 * Paints the edges and boxes inside `rect` (world coordinates) on a context already transformed to `scale`, with
 * text when it is large enough to read; returns whether a running task's moving outline was painted.
 */
export function paint(s: GraphState, target: Context, scale: number, rect: WorldRect, now: number): boolean {
  const pixel = 1 / scale;
  paintEdges(s, target, scale, rect);
  const { boxes } = s.shown!.layout;
  const visible: number[] = [];
  for (let n = 0; n < boxes.length / 2; n++) {
    const x = boxes[2 * n]!;
    const y = boxes[2 * n + 1]!;
    if (x > rect.right || x < rect.left || y > rect.bottom || y < rect.top) continue;
    visible.push(n);
  }
  const running = paintBoxes(s, target, visible, pixel, now);
  paintCriticalRings(s, target, visible, pixel);
  if (scale >= ID_SCALE) paintLabels(s, target, visible, scale >= DETAIL_SCALE);
  s.visibleBoxes = visible.length;
  return running;
}

/** How each kind of edge is stroked: its colour, and its width in pixels (at least; more when zoomed in). */
const EDGE_LOOK: Record<
  'plain' | 'critical' | 'cycle' | 'dangling',
  { colour: (p: Palette) => string; width: number }
> = {
  plain: { colour: (palette) => palette.foreground, width: 1 },
  critical: { colour: (palette) => palette.critical, width: 3 },
  cycle: { colour: (palette) => palette.cycle, width: 1.5 },
  dangling: { colour: (palette) => palette.warning, width: 1.5 },
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

/** Paints the edges whose routes cross `rect` (world coordinates) on a context transformed to `scale`. */
function paintEdges(s: GraphState, target: Context, scale: number, rect: WorldRect): void {
  const pixel = 1 / scale;
  const { palette } = s;
  const { edges, edgeBounds } = s.shown!;
  const { criticalEdges } = s.shown!;
  const kinds = { plain: [] as number[], critical: [] as number[], cycle: [] as number[], dangling: [] as number[] };
  const streams: number[] = [];
  edges.forEach((edge, e) => {
    const b = 4 * e;
    if (edgeBounds[b]! > rect.right || edgeBounds[b + 2]! < rect.left) return;
    if (edgeBounds[b + 1]! > rect.bottom || edgeBounds[b + 3]! < rect.top) return;
    const kind = edge.cycle ? 'cycle' : edge.dangling ? 'dangling' : criticalEdges[e] === 1 ? 'critical' : 'plain';
    kinds[kind].push(e);
    if (edge.streamEligible) streams.push(e);
  });
  // A stream_eligible edge is a double line: drawn wide in its colour, then its middle in the background's.
  const isStream = (e: number): boolean => edges[e]!.streamEligible;
  for (const [kind, list] of Object.entries(kinds) as [keyof typeof kinds, number[]][]) {
    target.strokeStyle = EDGE_LOOK[kind].colour(palette);
    target.setLineDash(kind === 'dangling' ? [5 * pixel, 4 * pixel] : []);
    target.lineWidth = EDGE_LOOK[kind].width * Math.max(pixel, 1);
    trace(s, target, list, scale >= ARROW_SCALE);
    target.stroke();
    if (scale < ARROW_SCALE) continue;
    target.lineWidth = 5 * pixel;
    trace(s, target, list.filter(isStream), false);
    target.stroke();
  }
  target.setLineDash([]);
  if (scale >= ARROW_SCALE) {
    target.lineWidth = 2 * pixel;
    target.strokeStyle = palette.background;
    trace(s, target, streams, false);
    target.stroke();
  }
}

/** Paints the boxes' text: each id and state glyph, and, with `detail`, its capability. */
function paintLabels(s: GraphState, target: Context, visible: readonly number[], detail: boolean): void {
  const { palette } = s;
  const shown = s.shown!;
  const { boxes } = shown.layout;
  target.textBaseline = 'middle';
  for (const n of visible) {
    const x = boxes[2 * n]! + PADDING;
    const y = boxes[2 * n + 1]!;
    target.font = FONT;
    target.fillStyle = palette.foreground;
    target.fillText(fitted(s, n, 0), x, detail ? y + 15 : y + BOX_HEIGHT / 2);
    const state = stateOf(s, n);
    if (state !== undefined) {
      target.fillStyle = palette.states[state];
      target.fillText(STATE_GLYPH[state], boxes[2 * n]! + BOX_WIDTH - PADDING - 10, y + 15);
    }
    if (detail && shown.capabilities[n] !== undefined) {
      target.font = DETAIL_FONT;
      target.fillStyle = palette.description;
      target.fillText(fitted(s, n, 1), x, y + 31);
    }
  }
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
    // The world rectangle in view, a box wider so that outlines at the edge are drawn.
    running = paint(
      s,
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
  highlight(s);
  drawOverview(s);
  publish(s);
  clearTimeout(s.animation);
  if (running) s.animation = setTimeout(() => requestFrame(s), ANIMATION_MS);
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
    tasks: String(s.shown?.taskCount ?? 0),
    visibleBoxes: String(s.visibleBoxes),
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
