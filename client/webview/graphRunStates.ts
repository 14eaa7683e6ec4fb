// The graph view's run states: taken in from the extension's messages, kept by task and by shown box, counted for the
// status line, and marked changed for the images that show them (the zoomed-out image's levels, the overview).
import { STATE_CODES, type ToGraphPage } from '../src/graphPage';
import { looksChanged, requestFrame } from './graphPainting';
import { groupStatesChanged } from './graphShapeView';
import type { GraphState, PaintedStates } from './graphState';
import { describe } from './graphViewport';

type StatesMessage = Extract<ToGraphPage, { type: 'states' }>;

/** A run's changes of state are drawn at most this often; in a graph of more than LARGE_GRAPH boxes, this often. */
const STATES_FRAME_MS = 100;
const LARGE_STATES_FRAME_MS = 250;
const LARGE_GRAPH = 1_000;

/**
 * The boxes whose state changed since `image` painted them, at most `limit` of them, marked painted; `image` is
 * marked current when none is left.
 */
export function unpainted(s: GraphState, image: PaintedStates, limit = Infinity): number[] {
  const { changedAt, changes } = s;
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

/** What is shown changed: the whole graph or a neighbourhood, or a new graph. */
export function shownChanged(s: GraphState): void {
  const { shown, taskStates } = s;
  s.cache = undefined;
  const boxes = shown === undefined ? 0 : shown.layout.boxes.length / 2;
  s.changedAt = new Uint32Array(boxes);
  s.changes = 0;
  const boxStates = (s.boxStates = new Uint8Array(boxes));
  const indexes = shown?.taskIndexes;
  if (indexes === undefined) {
    s.boxOfTask = undefined;
    boxStates.set(taskStates.subarray(0, shown?.taskCount ?? 0));
  } else {
    const boxOfTask = (s.boxOfTask = new Int32Array(taskStates.length).fill(-1));
    indexes.forEach((task, n) => {
      boxOfTask[task] = n;
      boxStates[n] = taskStates[task]!;
    });
  }
  groupStatesChanged(s);
  looksChanged(s);
}

/** No task has a state; the graph has this many tasks. */
export function forgetStates(s: GraphState, tasks: number): void {
  if (s.taskStates.length === tasks) s.taskStates.fill(0);
  else s.taskStates = new Uint8Array(tasks);
  s.otherStates.clear();
  s.stateCounts.fill(0);
}

/**
 * Takes in a message's states. The boxes whose state changed are painted again into the image where they are (a run
 * changes thousands of states a second: painting all of the image again for each change would keep a large graph's
 * page busy for the whole run).
 */
export function statesReceived(
  s: GraphState,
  { reset, states: { tasks, codes, others }, running }: StatesMessage,
): void {
  const changes = ++s.changes;
  if (reset) {
    forgetStates(s, s.taskStates.length);
    s.boxStates.fill(0);
    s.changedAt.fill(changes);
  }
  const { taskStates, boxStates, boxOfTask, changedAt, stateCounts, otherStates } = s;
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
  groupStatesChanged(s);
  s.runGoing = running;
  if (s.shown !== undefined) requestStatesFrame(s);
  describe(s);
}

/**
 * A frame for changes of state, at most one in STATES_FRAME_MS (LARGE_STATES_FRAME_MS in a large graph): at a
 * 10,000-task run's end the machine is at its busiest, and each frame costs the compositor too (a trace put
 * Chromium's at 0.4 s of CPU for the drawing's 20 frames of such a run, beside the window's thread).
 */
function requestStatesFrame(s: GraphState): void {
  if (s.frameRequested || s.statesFrameTimer !== undefined) return;
  const interval = s.changedAt.length > LARGE_GRAPH ? LARGE_STATES_FRAME_MS : STATES_FRAME_MS;
  const wait = s.lastDrawnAt + interval - performance.now();
  if (wait <= 0) requestFrame(s);
  else {
    s.statesFrameTimer = setTimeout(() => {
      s.statesFrameTimer = undefined;
      requestFrame(s);
    }, wait);
  }
}
