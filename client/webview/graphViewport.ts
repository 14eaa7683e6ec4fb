// The graph view's view state: the view transform (fit, zoom, pan), what is shown (the whole graph or, in focus mode,
// the neighbourhood of the cursor's task), the box under the pointer and the selected task, and the status line.
import { BOX_HEIGHT, BOX_WIDTH, layOutTasks } from '../../server/src/dag/layout';
import type { DagGraph } from '../../server/src/protocol/runMessages';
import { type DrawnGraph, STATE_CODE } from '../src/graphPage';
import { formatDuration } from '../src/runText';
import { requestFrame } from './graphPainting';
import { shownChanged } from './graphRunStates';
import { shapeText, unfocusedShown } from './graphShapeView';
import { type GraphState, type Shown, shownOf, stateOf } from './graphState';

const MIN_SCALE = 0.002;
const MAX_SCALE = 4;
export const FIT_MARGIN = 24;
/** Focus mode's fit: boxes at least this scale, where each shows its id (60 px wide; graphPainting.ts labelLook). */
const FOCUS_MIN_SCALE = 0.3;
const { pending: PENDING, running: RUNNING } = STATE_CODE;

// ---- The view transform.

/** The scale at which a layout fits the view, unclamped below. */
export function fitScale(s: GraphState, layout: Shown['layout']): number {
  const { width, height } = s.viewSize;
  return Math.min(
    MAX_SCALE,
    1,
    (width - 2 * FIT_MARGIN) / Math.max(1, layout.width),
    (height - 2 * FIT_MARGIN) / Math.max(1, layout.height),
  );
}

export function fit(s: GraphState): void {
  if (s.shown === undefined) return;
  const { transform } = s;
  const { width, height } = s.viewSize;
  const { layout } = s.shown;
  const scale = fitScale(s, layout);
  // Focus mode is for reading names: its neighbourhood is never fitted smaller than where every box shows its id,
  // centred on the focused task when it is wider than the view.
  const focusedBox = s.focused === undefined ? -1 : s.shown.ids.indexOf(s.focused);
  transform.scale = Math.max(MIN_SCALE, focusedBox >= 0 ? Math.max(scale, FOCUS_MIN_SCALE) : scale);
  transform.x = (width - layout.width * transform.scale) / 2;
  transform.y = Math.max(FIT_MARGIN, (height - layout.height * transform.scale) / 2);
  if (transform.scale > scale && focusedBox >= 0) {
    const centre = layout.boxes[2 * focusedBox]! + BOX_WIDTH / 2;
    transform.x = Math.min(
      FIT_MARGIN,
      Math.max(width - FIT_MARGIN - layout.width * transform.scale, width / 2 - centre * transform.scale),
    );
  }
  requestFrame(s);
}

/** Zooms by `factor` keeping the point (x, y) of the view (CSS pixels) where it is. */
export function zoom(s: GraphState, factor: number, x = s.viewSize.width / 2, y = s.viewSize.height / 2): void {
  const { transform } = s;
  const scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, transform.scale * factor));
  transform.x = x - ((x - transform.x) * scale) / transform.scale;
  transform.y = y - ((y - transform.y) * scale) / transform.scale;
  transform.scale = scale;
  requestFrame(s);
}

export function pan(s: GraphState, dx: number, dy: number): void {
  s.transform.x += dx;
  s.transform.y += dy;
  requestFrame(s);
}

/** Pans so that box n is in view, centring it when it is not. */
export function bringIntoView(s: GraphState, n: number): void {
  if (s.shown === undefined) return;
  const { transform } = s;
  const { width, height } = s.viewSize;
  const [x, y] = [s.shown.layout.boxes[2 * n]!, s.shown.layout.boxes[2 * n + 1]!];
  const left = x * transform.scale + transform.x;
  const top = y * transform.scale + transform.y;
  const [w, h] = [BOX_WIDTH * transform.scale, BOX_HEIGHT * transform.scale];
  if (left >= 0 && top >= 0 && left + w <= width && top + h <= height) return;
  transform.x = width / 2 - (x + BOX_WIDTH / 2) * transform.scale;
  transform.y = height / 2 - (y + BOX_HEIGHT / 2) * transform.scale;
  requestFrame(s);
}

export function centreOverviewAt(s: GraphState, x: number, y: number): void {
  if (s.shown === undefined) return;
  const { layout } = s.shown;
  const { overviewWidth, overviewHeight } = s.viewSize;
  const scale = Math.min(overviewWidth / Math.max(1, layout.width), overviewHeight / Math.max(1, layout.height));
  s.transform.x = s.viewSize.width / 2 - (x / scale) * s.transform.scale;
  s.transform.y = s.viewSize.height / 2 - (y / scale) * s.transform.scale;
  requestFrame(s);
}

// ---- The pointer and the selection.

/** The box at a point of the view (CSS pixels), or -1. */
export function boxAt(s: GraphState, viewX: number, viewY: number): number {
  if (s.shown === undefined) return -1;
  const x = (viewX - s.transform.x) / s.transform.scale;
  const y = (viewY - s.transform.y) / s.transform.scale;
  const { boxes } = s.shown.layout;
  for (let n = 0; n < boxes.length / 2; n++) {
    const [bx, by] = [boxes[2 * n]!, boxes[2 * n + 1]!];
    if (x >= bx && x <= bx + BOX_WIDTH && y >= by && y <= by + BOX_HEIGHT) return n;
  }
  return -1;
}

export function select(s: GraphState, taskId: string): void {
  // The highlight moves at once; the editor's cursor follows.
  s.currentTaskId = taskId;
  s.tell({ type: 'reveal', taskId });
  if (s.focusOn) show(s);
  requestFrame(s);
}

export function hover(s: GraphState, n: number): void {
  if (n !== s.hovered) {
    s.hovered = n;
    requestFrame(s);
  }
  if (n < 0) {
    s.tell({ type: 'tooltip', text: undefined });
    return;
  }
  const shown = s.shown!;
  const state = n < shown.taskCount ? stateOf(s, n) : undefined;
  const said = state === 'cached' ? 'completed from the result store' : state;
  const text = [shown.ids[n], shown.capabilities[n], said].filter((line) => line !== undefined).join('\n');
  s.tell({ type: 'tooltip', text });
}

// ---- What is shown: the whole graph or a neighbourhood; the status line.

/** The levels up and down focus mode shows, from what the user typed. */
export function clampDepth(value: number): number {
  return Math.max(1, Math.min(50, Math.round(value) || 1));
}

/** The tasks at most `depth` edges up or down from a task, and the edges between them, laid out on their own. */
function neighbourhood(graph: DrawnGraph, of: string, levels: number): Shown {
  const { nodes, edges } = graph;
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
    graph.criticalPath?.taskIds,
  );
}

export function show(s: GraphState): void {
  const wanted = s.focusOn && s.currentTaskId !== undefined ? s.currentTaskId : undefined;
  const levels = s.focusDepth;
  const { graph } = s;
  if (wanted !== undefined && graph !== undefined && graph.nodes.some((node) => node.id === wanted)) {
    if (s.focused === undefined) s.wholeTransform = { ...s.transform };
    s.focused = wanted;
    s.shown = neighbourhood(graph, wanted, levels);
    s.hovered = -1;
    shownChanged(s);
    fit(s);
  } else if (s.focused !== undefined || s.shown !== unfocusedShown(s)) {
    s.focused = undefined;
    s.shown = unfocusedShown(s);
    s.hovered = -1;
    shownChanged(s);
    if (s.wholeTransform !== undefined) Object.assign(s.transform, s.wholeTransform);
    else fit(s);
    s.wholeTransform = undefined;
  }
  describe(s);
  requestFrame(s);
}

/** What the status line says of a graph (counted once: a run's states change it many times a second). */
/** `critical path: 4 tasks, 3.2 s`; `≥ 3.2 s` while some task on it has no known latency; by depth when none has. */
function criticalPathText(path: DagGraph['criticalPath']): string | undefined {
  if (path === undefined) return undefined;
  const tasks = `critical path: ${path.taskIds.length} task${path.taskIds.length === 1 ? '' : 's'}`;
  if (path.by === 'depth' || path.latencyMs === undefined) return `${tasks} (the longest chain: no latency known)`;
  return `${tasks}, ${(path.unknownLatency ?? 0) > 0 ? '≥ ' : ''}${formatDuration(path.latencyMs)}`;
}

export function summaryOf(graph: DrawnGraph, stale: boolean): string {
  const cycles = graph.edges.filter((edge) => edge.cycle).length;
  const dangling = graph.edges.filter((edge) => edge.dangling).length;
  const parts = [`${graph.dagId ?? 'DAG without a dag_id'}: ${graph.nodes.length} tasks, ${graph.edges.length} edges`];
  if (cycles > 0) parts.push(`${cycles} on a cycle`);
  if (dangling > 0) parts.push(`${dangling} to a missing task`);
  const critical = criticalPathText(graph.criticalPath);
  if (critical !== undefined) parts.push(critical);
  if (stale) parts.push('the file is not valid JSON now: this is the last graph that parsed');
  return parts.join(' · ');
}

/** Tells the page the status line, when it changed. */
export function describe(s: GraphState): void {
  if (s.graph === undefined) return;
  const { focused, focusDepth, stateCounts } = s;
  const parts = [s.graphSummary];
  if (focused !== undefined) {
    parts.push(
      `focus: ${focused}, ${focusDepth} level${focusDepth === 1 ? '' : 's'} up and down (${s.shown!.taskCount} tasks)`,
    );
  } else if (s.focusOn) {
    parts.push('focus: put the cursor in a task');
  }
  const shape = shapeText(s);
  if (shape !== undefined) parts.push(shape);
  const tasksInRun = stateCounts.reduce((sum, tasks) => sum + tasks, 0);
  if (tasksInRun > 0) {
    const running = stateCounts[RUNNING]!;
    const finished = tasksInRun - running - stateCounts[PENDING]!;
    parts.push(
      `${s.runGoing ? 'run' : 'last run'}: ${finished}/${tasksInRun} finished${running > 0 ? `, ${running} running` : ''}`,
    );
  }
  const text = parts.join(' · ');
  if (text !== s.described) s.tell({ type: 'status', text: (s.described = text) });
}
