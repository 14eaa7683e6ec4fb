// The graph view's zoomed-out image: the whole graph painted once at a few small scales (levels), in the background,
// so that a frame zoomed out that far draws this image instead of every edge again (what keeps panning 10,000 tasks
// under 50 ms a frame). Painted again, when idle, after what is shown or its colours change; the boxes whose state
// changed are painted again into it a few at a time.
import { BOX_WIDTH } from '../../server/src/dag/layout';
import type { GraphLayout } from '../../server/src/protocol/runMessages';
import type { DrawingCanvas } from './graphMessages';
import { paint, paintBoxes, requestFrame } from './graphPainting';
import { unpainted } from './graphRunStates';
import type { Context, GraphState, PaintedStates, Shown } from './graphState';

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
export const CACHE_COLUMN = 128;
/**
 * At most this many boxes whose state changed are painted again into the image a frame, the rest in the next: in the
 * worker, with a 250 ms states frame, 2,500 made frames of 33-67 ms during bench:graph's run, 1,000 frames of 17 ms.
 */
const CHANGED_BOXES_A_FRAME = 1_000;

/** A level of the image: the whole graph at one scale. */
export interface CacheLevel extends PaintedStates {
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
export function currentLevel(s: GraphState, level: CacheLevel): CacheLevel {
  const { boxes } = s.shown!.layout;
  const byColumn = new Map<number, number[]>();
  for (const n of unpainted(s, level, CHANGED_BOXES_A_FRAME)) {
    // The box and the margin paintBoxes paints over its old outline, in the columns they cross.
    const first = Math.floor((boxes[2 * n]! * level.scale - 2) / CACHE_COLUMN);
    const last = Math.floor(((boxes[2 * n]! + BOX_WIDTH) * level.scale + 2) / CACHE_COLUMN);
    for (let c = Math.max(0, first); c <= Math.min(last, level.columns.length - 1); c++) {
      let list = byColumn.get(c);
      if (list === undefined) byColumn.set(c, (list = []));
      list.push(n);
    }
  }
  for (const [c, list] of byColumn) paintBoxes(s, columnContext(level, c), list, 1 / level.scale, 0, true);
  if (level.paintedThrough !== s.changes) requestFrame(s);
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

/** A canvas of the drawing's own: offscreen where there is OffscreenCanvas (always in a worker). */
export function newCanvas(width: number, height: number): DrawingCanvas {
  if (typeof OffscreenCanvas === 'function') return new OffscreenCanvas(width, height);
  return Object.assign(document.createElement('canvas'), { width, height });
}

function newColumn(level: CacheLevel, c: number): DrawingCanvas {
  const column = newCanvas(Math.min(CACHE_COLUMN, level.width - c * CACHE_COLUMN), level.height);
  level.columns[c] = column;
  return column;
}

/** The image of a shown graph being painted: its steps, and what a level painted does. */
interface CachePainting {
  readonly s: GraphState;
  readonly painted: Shown;
  readonly steps: (() => void)[];
  readonly levelPainted: (level: CacheLevel) => void;
}

/** A level of the image of what is shown at `scale`, showing the states as they are now; no column yet. */
function newLevel({ s, painted }: CachePainting, scale: number): CacheLevel {
  return {
    scale,
    width: Math.ceil(painted.layout.width * scale) + 2,
    height: Math.ceil(painted.layout.height * scale) + 2,
    columns: [],
    paintedAt: s.changedAt.slice(),
    paintedThrough: s.changes,
  };
}

/** Steps that paint a level from the graph, in stripes of about CACHE_STRIPE_BOXES boxes were they spread evenly. */
function paintLevel(painting: CachePainting, scale: number): CacheLevel {
  const { s, painted, steps, levelPainted } = painting;
  const level = newLevel(painting, scale);
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
        target.rect(left, -1, right - left, painted.layout.height + 2);
        target.clip();
        paint(s, target, scale, { left: left - BOX_WIDTH, top: -Infinity, right, bottom: Infinity }, 0);
        target.restore();
        target.getImageData(0, 0, 1, 1);
        if (c === columns - 1 && stripe === stripes - 1) levelPainted(level);
      });
    }
  }
  return level;
}

/** Steps that halve a level into one of half its scale, a column a step (after the larger one's steps). */
function halveLevel(painting: CachePainting, larger: CacheLevel): CacheLevel {
  const { steps, levelPainted } = painting;
  const level = newLevel(painting, larger.scale / 2);
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
}

/** The scales of the image's levels, from the largest, and which of them is painted first. */
function levelScales({ width, height }: GraphLayout): { scales: number[]; first: number } {
  const largest = Math.min(
    CACHE_MAX_SCALE,
    Math.sqrt(CACHE_MAX_PIXELS / Math.max(1, width * height)),
    CACHE_MAX_SIDE / Math.max(1, width),
    CACHE_MAX_SIDE / Math.max(1, height),
  );
  const fits = (scale: number, side: number): boolean => width * scale <= side && height * scale <= side;
  const scales = [largest];
  while (!fits(scales.at(-1)!, CACHE_MIN_SIDE)) scales.push(scales.at(-1)! / 2);
  return { scales, first: scales.findIndex((scale) => fits(scale, CACHE_FIRST_SIDE)) };
}

/**
 * Paints the image's levels in the background (inBackground), in steps of a few milliseconds: a stripe of a
 * column of a level, flushed to pixels (a frame can come between two steps), or a column of a level halved from the
 * larger one. The level that shows the whole graph in about a screen comes first, then the smaller ones halved from
 * it, then the largest, then those between halved from that: each is drawn from as soon as it is painted. (Before,
 * the largest came first and none was used until all were; input put the painting off, so zooming out meanwhile
 * painted all 10,000 boxes and their edges in a frame: 117-133 ms in VS Code.)
 */
export function paintCache(s: GraphState): void {
  if (s.shown === undefined) return;
  const painted = s.shown;
  const generation = ++s.cacheGeneration;
  const { scales, first } = levelScales(painted.layout);
  const levels: CacheLevel[] = [];
  const painting: CachePainting = {
    s,
    painted,
    steps: [],
    levelPainted: (level) => {
      levels.push(level);
      levels.sort((a, b) => b.scale - a.scale);
      s.cache = { levels: [...levels] };
      requestFrame(s);
    },
  };
  // Painting a level costs about the same at any scale (the edges are stroked again for each), halving one little.
  let smaller = paintLevel(painting, scales[first]!);
  for (let n = first + 1; n < scales.length; n++) smaller = halveLevel(painting, smaller);
  if (first > 0) {
    let larger = paintLevel(painting, scales[0]!);
    for (let n = 1; n < first; n++) larger = halveLevel(painting, larger);
  }

  const { steps } = painting;
  let next = 0;
  const run = (): void => {
    if (generation !== s.cacheGeneration || s.shown !== painted) return;
    steps[next++]!();
    if (next < steps.length) inBackground(run);
  };
  // After the next frame: a new graph is drawn first.
  requestAnimationFrame(() => inBackground(run));
}
