// The shape view's own painting (graphShapeView.ts), over what graphPainting.ts paints of any box and edge: edges
// between groups as wide as the log of the task edges they stand for, with that count beside them where there is
// room, and each group's progress during a run, a bar of its tasks' states by colour.
import { BOX_HEIGHT, BOX_WIDTH, LAYER_GAP } from '../../server/src/dag/layout';
import { STATE_CODE } from '../src/graphPage';
import { MIN_TEXT_PX, trace } from './graphPainting';
import { isGroupEnd } from './graphShapeView';
import { type Context, type GraphState, type Shown, type WorldRect, edgeCrosses } from './graphState';

/** An edge of one task edge is this wide (CSS pixels); each tenfold more adds EDGE_PX_PER_DECADE. */
const EDGE_MIN_PX = 1;
const EDGE_PX_PER_DECADE = 2.5;
/** A group's progress bar: its height in CSS pixels at most and as a share of its box, its inset in world units. */
const BAR_MAX_PX = 6;
const BAR_SHARE = 0.16;
const BAR_INSET = 6;
/** The states a bar shows, in its order left to right: what is done first. */
const BAR_STATES = (['completed', 'cached', 'failed', 'cancelled', 'running', 'pending'] as const).map((state) => ({
  state,
  code: STATE_CODE[state],
}));

/** The width in CSS pixels of an edge standing for `count` task edges. */
export function edgeWidthPx(count: number): number {
  return EDGE_MIN_PX + EDGE_PX_PER_DECADE * Math.log10(Math.max(1, count));
}

/** Whether edge e of what is shown stands for task edges enough to be stroked by its count (paintShapeEdges). */
export function strokedByCount(shown: Shown, e: number): boolean {
  const count = shown.edgeCounts?.[e] ?? 0;
  return count >= 2 && !shown.edges[e]!.cycle && !shown.edges[e]!.dangling;
}

/** Strokes the shape's edges in `rect` by their counts, on a context transformed to `scale`; under the boxes. */
export function paintShapeEdges(s: GraphState, target: Context, scale: number, rect: WorldRect): void {
  const shown = s.shown!;
  const { edgeCounts, criticalEdges } = shown;
  if (edgeCounts === undefined) return;
  const pixel = 1 / scale;
  target.lineCap = 'round';
  edgeCounts.forEach((count, e) => {
    if (!strokedByCount(shown, e) || !edgeCrosses(shown, e, rect)) return;
    trace(s, target, [e]);
    target.strokeStyle = criticalEdges[e] === 1 ? s.palette.critical : s.palette.edge;
    target.lineWidth = edgeWidthPx(count) * pixel;
    target.stroke();
  });
  target.lineCap = 'butt';
}

/** Paints each visible group's progress bar at its box's foot, on a context transformed to 1 / `pixel`. */
export function paintGroupProgress(s: GraphState, target: Context, visible: readonly number[], pixel: number): void {
  const { groups, layout } = s.shown!;
  if (groups === undefined) return;
  const height = Math.min(BAR_MAX_PX * pixel, BAR_SHARE * BOX_HEIGHT);
  const width = BOX_WIDTH - 2 * BAR_INSET;
  for (const n of visible) {
    const group = groups[n];
    if (group === undefined) continue;
    const stated = group.stateCounts.reduce((sum, count, code) => sum + (code === 0 ? 0 : count), 0);
    if (stated === 0) continue;
    const [x, y] = [layout.boxes[2 * n]! + BAR_INSET, layout.boxes[2 * n + 1]! + BOX_HEIGHT - BAR_INSET / 2 - height];
    target.fillStyle = s.palette.background;
    target.fillRect(x, y, width, height);
    let left = x;
    for (const { state, code } of BAR_STATES) {
      const share = (group.stateCounts[code]! / group.tasks.length) * width;
      if (share === 0) continue;
      target.fillStyle = s.palette.states[state];
      target.fillRect(left, y, share, height);
      left += share;
    }
  }
}

/**
 * Writes beside each edge between two groups in view the count of task edges it stands for (`×300`), in CSS pixels,
 * where the gap between layers is tall enough for the text: fan-out and fan-in read from them. (An expanded group's
 * tasks' edges go unlabelled: a row of them would be a row of small counts.)
 */
export function paintEdgeCounts(s: GraphState): void {
  const shown = s.shown!;
  const { edgeCounts, groups, edges } = shown;
  const { context, transform, palette, viewSize } = s;
  const gap = LAYER_GAP * transform.scale;
  if (edgeCounts === undefined || groups === undefined || gap < MIN_TEXT_PX + 4) return;
  const { routes } = shown.layout;
  const betweenGroups = (e: number): boolean => isGroupEnd(edges[e]!.from) && isGroupEnd(edges[e]!.to);
  context.save();
  context.setTransform(viewSize.ratio, 0, 0, viewSize.ratio, 0, 0);
  context.font = `${MIN_TEXT_PX}px ${palette.font}`;
  context.textBaseline = 'middle';
  context.fillStyle = palette.description;
  edgeCounts.forEach((count, e) => {
    if (count < 2 || !betweenGroups(e)) return;
    const route = routes[e]!;
    // Beside its first segment, in the gap below the box it leaves.
    const [x0, y0, x1, y1] = [route[0]!, route[1]!, route[2]!, route[3]!];
    const x = ((x0 + x1) / 2) * transform.scale + transform.x;
    const y = ((y0 + y1) / 2) * transform.scale + transform.y;
    if (x < -50 || y < 0 || x > viewSize.width || y > viewSize.height) return;
    context.fillText(`×${count}`, x + edgeWidthPx(count) / 2 + 3, y);
  });
  context.restore();
}
