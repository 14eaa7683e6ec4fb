// The graph view's shape view: when the whole DAG at fit would be boxes too small to name, Fit shows it collapsed
// into groups (graphShape.ts), laid out like the tasks, with each group's task count and run progress; a click on a
// group expands it into its tasks in place. The user's choice of the shape or the tasks sticks.
import { BOX_HEIGHT, BOX_WIDTH, LAYER_GAP, layeredLayout } from '../../server/src/dag/layout';
import { STATE_CODE, STATE_CODES } from '../src/graphPage';
import { shownChanged } from './graphRunStates';
import {
  type GroupBy,
  groupDetail,
  groupLabel,
  groupTasks,
  layersOf,
  layersPerBand,
  shapeGraph,
} from '../src/graphShape';
import { type GraphState, type Shown, type ShownGroup, shownOf } from './graphState';
import { FIT_MARGIN, describe, fit, fitScale } from './graphViewport';

/** Fit shows the shape when the whole graph's boxes at fit would be narrower than this (CSS pixels): no names. */
const SHAPE_BELOW_BOX_PX = 60;
/**
 * A shape whose layers all fit the view's height at this scale (a group's box 80 px wide, its label 11 px high) shows
 * each layer; one of more layers bands consecutive layers into rows, as many as fit at BANDED_SCALE (boxes 100 px
 * wide: a band's count has more digits, and its name must not be cut).
 */
const LEGIBLE_SCALE = 0.4;
const BANDED_SCALE = 0.5;
const LAYER_STEP = BOX_HEIGHT + LAYER_GAP;
const {
  pending: PENDING,
  running: RUNNING,
  completed: COMPLETED,
  cached: CACHED,
  failed: FAILED,
  cancelled: CANCELLED,
} = STATE_CODE;

/**
 * How an edge of the shape names a group at its end: by no box's label (a group's is not unique, and names no task),
 * so that only tasks' edges are found by id.
 */
const GROUP_END = '\u0000';

/** Whether an end of an edge of the shape is a group. */
export const isGroupEnd = (end: string): boolean => end.startsWith(GROUP_END);

/** What the graph shows when focus mode is off: the shape while it is chosen, else every task. */
export function unfocusedShown(s: GraphState): Shown | undefined {
  return s.shape ?? s.whole;
}

/** Whether box n of what is shown is a group of tasks. */
export function isGroup(s: GraphState, n: number): boolean {
  return n >= 0 && s.shown?.groups?.[n] !== undefined;
}

/** The rows of groups the view holds at `scale`. */
function rowsAt(s: GraphState, scale: number): number {
  const room = s.viewSize.height - 2 * FIT_MARGIN + LAYER_GAP * scale;
  return Math.max(3, Math.floor(room / (LAYER_STEP * scale)));
}

/** The shape of the graph as the view is now: its grouping, its expanded groups, banded for the view's height. */
function shapeOf(s: GraphState): Shown | undefined {
  const { graph, whole } = s;
  if (graph === undefined || whole === undefined) return undefined;
  const layers = layersOf(whole.layout, whole.taskCount);
  const layerCount = layers.reduce((most, layer) => Math.max(most, layer + 1), 0);
  const grouping = groupTasks(
    graph.nodes,
    layers,
    s.groupBy,
    layerCount <= rowsAt(s, LEGIBLE_SCALE) ? 1 : layersPerBand(layerCount, rowsAt(s, BANDED_SCALE)),
  );
  const shape = shapeGraph(graph, grouping, s.expandedGroups);
  const named = shape.boxes.slice(0, shape.taskBoxes);
  const ids = named.map((box) =>
    'group' in box ? groupLabel(grouping.groups[box.group]!, s.groupBy) : graph.nodes['task' in box ? box.task : 0]!.id,
  );
  const capabilities = named.map((box) =>
    'group' in box
      ? groupDetail(grouping.groups[box.group]!, s.groupBy)
      : graph.nodes['task' in box ? box.task : 0]!.capability,
  );
  const missing = shape.boxes.slice(shape.taskBoxes).map((box) => ('missing' in box ? box.missing : ''));
  const boxId = (n: number): string => {
    const box = shape.boxes[n]!;
    return 'group' in box
      ? `${GROUP_END}${grouping.groups[box.group]!.id}`
      : n < ids.length
        ? ids[n]!
        : missing[n - ids.length]!;
  };
  const edges = shape.edges.map(({ from, to, cycle, dangling, streamEligible }) => ({
    from: boxId(from),
    to: boxId(to),
    cycle,
    dangling,
    streamEligible,
  }));
  const layout = layeredLayout(shape.boxes.length, shape.edges);
  const groups = named.map((box): ShownGroup | undefined => {
    if (!('group' in box)) return undefined;
    const { id, tasks } = grouping.groups[box.group]!;
    return { id, tasks, stateCounts: new Uint32Array(STATE_CODES.length) };
  });
  return {
    ...shownOf(
      ids,
      capabilities,
      edges,
      { ...layout, missing },
      Int32Array.from(named, (box) => ('task' in box ? box.task : -1)),
    ),
    criticalBoxes: shape.criticalBoxes,
    criticalEdges: shape.criticalEdges,
    groups,
    edgeCounts: Uint32Array.from(shape.edges, ({ count }) => count),
  };
}

/** Shows what is chosen when focus mode is off; `keep`: the box whose place on the screen stays where it is. */
function showUnfocused(s: GraphState, keep?: { readonly box: number; readonly tasks: readonly number[] }): void {
  if (s.focused !== undefined) {
    describe(s);
    return;
  }
  const before = keep === undefined ? undefined : screenCentreOf(s, [keep.box]);
  s.shown = unfocusedShown(s);
  s.hovered = -1;
  shownChanged(s);
  if (before !== undefined && keep !== undefined && s.shown?.taskIndexes !== undefined) {
    // Expanded in place: the middle of its tasks where the group's was.
    const wanted = new Set(keep.tasks);
    const boxes: number[] = [];
    s.shown.taskIndexes.forEach((task, n) => {
      if (wanted.has(task)) boxes.push(n);
    });
    const after = screenCentreOf(s, boxes);
    if (after !== undefined) {
      s.transform.x += before.x - after.x;
      s.transform.y += before.y - after.y;
    }
  }
  describe(s);
}

/** The middle of the boxes' bounds on the screen (their top for many rows: the first row stays in sight). */
function screenCentreOf(s: GraphState, boxes: readonly number[]): { x: number; y: number } | undefined {
  if (s.shown === undefined || boxes.length === 0) return undefined;
  const { boxes: at } = s.shown.layout;
  let [left, right, top] = [Infinity, -Infinity, Infinity];
  for (const n of boxes) {
    left = Math.min(left, at[2 * n]!);
    right = Math.max(right, at[2 * n]! + BOX_WIDTH);
    top = Math.min(top, at[2 * n + 1]!);
  }
  const { scale, x, y } = s.transform;
  return { x: ((left + right) / 2) * scale + x, y: (top + BOX_HEIGHT / 2) * scale + y };
}

/**
 * Fit: the shape or the tasks, as the user chose, or, until they chose, the shape when the whole graph at fit would
 * show no names; then fits what is shown.
 */
export function fitView(s: GraphState): void {
  const { whole } = s;
  const sized = s.viewSize.width > 0 && s.viewSize.height > 0;
  if (s.focused === undefined && whole !== undefined && sized) {
    const shape = s.shapeChosen ?? (BOX_WIDTH * fitScale(s, whole.layout) < SHAPE_BELOW_BOX_PX ? 'shape' : 'tasks');
    // Again: the view's height sets the bands.
    s.shape = shape === 'shape' ? shapeOf(s) : undefined;
    showUnfocused(s);
  }
  fit(s);
  s.fittedTransform = { ...s.transform };
}

/** Whether the view is as Fit left it: not zoomed, panned or refocused since. */
export function stillFitted(s: GraphState): boolean {
  const { fittedTransform: fitted, transform } = s;
  return (
    fitted !== undefined && fitted.scale === transform.scale && fitted.x === transform.x && fitted.y === transform.y
  );
}

/** The user chose the shape (grouped by `by`) or the tasks: it sticks; a change of grouping collapses every group. */
export function chooseView(s: GraphState, view: 'shape' | 'tasks', by: GroupBy): void {
  s.shapeChosen = view;
  if (by !== s.groupBy) s.expandedGroups.clear();
  s.groupBy = by;
  fitView(s);
}

/** Collapses every expanded group again. */
export function collapseGroups(s: GraphState): void {
  if (s.expandedGroups.size === 0) return;
  s.expandedGroups.clear();
  fitView(s);
}

/** Expands box n, a group, into its tasks where it is. */
export function expandGroup(s: GraphState, n: number): void {
  const group = s.shown?.groups?.[n];
  if (group === undefined) return;
  s.expandedGroups.add(group.id);
  s.shape = shapeOf(s);
  showUnfocused(s, { box: n, tasks: group.tasks });
}

/** A new version of the graph: its shape, when the shape is shown (its expanded groups kept where they still are). */
export function shapeGraphChanged(s: GraphState): void {
  if (s.shape !== undefined) s.shape = shapeOf(s);
}

/**
 * Counts the states of each group's tasks and gives its box the state that tells most about them: failed when one
 * failed, running while one runs, completed when all did, then cancelled, pending. Marks the boxes whose counts changed.
 */
export function groupStatesChanged(s: GraphState): void {
  const groups = s.shown?.groups;
  if (groups === undefined) return;
  const { taskStates, boxStates, changedAt } = s;
  groups.forEach((group, n) => {
    if (group === undefined) return;
    const counts = new Uint32Array(STATE_CODES.length);
    for (const task of group.tasks) counts[taskStates[task] ?? 0]!++;
    const done = counts[COMPLETED]! + counts[CACHED]!;
    const state =
      counts[FAILED]! > 0
        ? FAILED
        : counts[RUNNING]! > 0
          ? RUNNING
          : done === group.tasks.length
            ? counts[CACHED] === group.tasks.length
              ? CACHED
              : COMPLETED
            : counts[CANCELLED]! > 0
              ? CANCELLED
              : counts[PENDING]! > 0 || done > 0
                ? PENDING
                : 0;
    if (boxStates[n] === state && counts.every((count, code) => count === group.stateCounts[code])) return;
    group.stateCounts.set(counts);
    boxStates[n] = state;
    changedAt[n] = s.changes;
  });
}

/** What the status line says of the shape shown. */
export function shapeText(s: GraphState): string | undefined {
  const groups = s.shown?.groups;
  if (groups === undefined || s.focused !== undefined) return undefined;
  let [groupBoxes, grouped] = [0, 0];
  for (const group of groups) {
    if (group === undefined) continue;
    groupBoxes++;
    grouped += group.tasks.length;
  }
  const by = s.groupBy === 'prefix' ? 'id prefix' : 'capability';
  const expanded = s.shown!.taskCount - groupBoxes;
  const groupsText = `${groupBoxes} group${groupBoxes === 1 ? '' : 's'}`;
  const expandedText = expanded > 0 ? `, ${expanded.toLocaleString('en')} tasks expanded` : '';
  return `shape: ${grouped.toLocaleString('en')} tasks in ${groupsText} by ${by}${expandedText}`;
}

/** The tasks what is shown stands for: a group counts its tasks. */
export function tasksShown(s: GraphState): number {
  const shown = s.shown;
  if (shown === undefined) return 0;
  if (shown.groups === undefined) return shown.taskCount;
  return shown.groups.reduce((sum, group) => sum + (group === undefined ? 1 : group.tasks.length), 0);
}

/** What a harness reads of the shape: the view shown, its groups, the grouping, the groups expanded. */
export function shapeAttributes(s: GraphState): Record<string, string> {
  const groups = s.shown?.groups;
  return {
    view: s.focused !== undefined ? 'focus' : groups !== undefined ? 'shape' : 'tasks',
    groups: String(groups?.filter((group) => group !== undefined).length ?? 0),
    groupBy: s.groupBy,
    expanded: String(s.expandedGroups.size),
  };
}
