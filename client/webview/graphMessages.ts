// The graph view's drawing: the layout the language server computed on a canvas with a view transform (zoom, pan,
// fit, an overview), only what is in view and with detail by zoom level, so that 10,000 tasks pan smoothly; focus
// mode lays out the neighbourhood of the cursor's task on its own. Run states colour the boxes; the cursor's task is
// highlighted. It runs in a worker on the page's canvases (OffscreenCanvas), off the thread the page shares with VS
// Code's window, or in the page where there is none (graph.ts); it touches none of the page's DOM, and tells the page
// what to show (the status line, a tooltip, what a harness reads) in messages. The DAG's text is only ever drawn as
// text (fillText).
//
// This file: the messages between the page and the drawing, and what the drawing does on each. Its state is one
// GraphState (graphState.ts); the view (graphView.ts), the run's states (graphRunStates.ts), the painting
// (graphPainting.ts) and the zoomed-out image (graphCache.ts) are the others.
import { layOutTasks } from '../../server/src/dag/layout';
import { type DrawnGraph, type ToGraphPage, unpackGraph } from '../src/graphPage';
import { forgetStates, shownChanged, statesReceived } from './graphRunStates';
import { looksChanged, recordFrames, requestFrame } from './graphPainting';
import type { Palette } from './graphPalette';
import type { GroupBy } from '../src/graphShape';
import {
  chooseView,
  collapseGroups,
  expandGroup,
  fitView,
  isGroup,
  shapeGraphChanged,
  stillFitted,
  unfocusedShown,
} from './graphShapeView';
import { GraphState, shownOf } from './graphState';
import {
  bringIntoView,
  boxAt,
  centreOverviewAt,
  clampDepth,
  hover,
  pan,
  select,
  show,
  summaryOf,
  zoom,
} from './graphViewport';

/** A canvas of the page's, in the page or handed to a worker, or one of the drawing's own. */
export type DrawingCanvas = HTMLCanvasElement | OffscreenCanvas;

/** The page's view, in CSS pixels, and its device pixel ratio. */
export interface ViewSize {
  readonly width: number;
  readonly height: number;
  readonly ratio: number;
  readonly overviewWidth: number;
  readonly overviewHeight: number;
}

/** The focus checkbox, and the levels up and down it shows. */
export interface FocusSetting {
  readonly on: boolean;
  readonly depth: number;
}

/** What the user did, as the page passes it on. */
type UserInput =
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
  | { readonly type: 'record frames'; readonly on: boolean }
  /** The toolbar's choice: the shape (grouped by `by`) or every task; collapse the expanded groups. */
  | { readonly type: 'shape'; readonly view: 'shape' | 'tasks'; readonly by: GroupBy }
  | { readonly type: 'collapse' };

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
  | UserInput;

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

/** Starts the drawing: its messages go to `post`. */
export function startGraphCanvas(post: (message: FromGraphCanvas) => void): (message: ToGraphCanvas) => void {
  const s = new GraphState(post);
  return (message) => receive(s, message);
}

function receive(s: GraphState, message: ToGraphCanvas): void {
  s.received++;
  switch (message.type) {
    case 'start':
      s.canvas = message.canvas;
      s.overview = message.overview;
      s.context = s.canvas.getContext('2d') as GraphState['context'];
      s.overviewContext = s.overview.getContext('2d') as GraphState['context'];
      s.viewSize = message.view;
      s.palette = message.palette;
      s.focusOn = message.focus.on;
      s.focusDepth = clampDepth(message.focus.depth);
      break;
    case 'graph':
      graphReceived(s, message);
      break;
    case 'states':
      statesReceived(s, message);
      break;
    case 'criticalPath':
      if (s.graph === undefined) break;
      graphShown(s, { ...s.graph, criticalPath: message.criticalPath });
      show(s);
      break;
    case 'cursor':
      s.currentTaskId = message.taskId;
      if (s.focusOn) show(s);
      else if (s.shown !== undefined && s.currentTaskId !== undefined) {
        const n = s.shown.ids.indexOf(s.currentTaskId);
        if (n >= 0) bringIntoView(s, n);
      }
      requestFrame(s);
      break;
    default:
      inputReceived(s, message);
  }
}

function graphReceived(s: GraphState, message: Extract<ToGraphPage, { type: 'graph' }>): void {
  const first = s.whole === undefined;
  const graph = unpackGraph(message.graph);
  s.stale = message.stale;
  // Its states follow, in its tasks' indexes.
  forgetStates(s, graph.nodes.length);
  graphShown(s, graph);
  s.firstDrawnAt = undefined;
  if (first) fitView(s);
  show(s);
}

/** Shows `graph`, a new one or the one shown with another critical path, as the view is: its states kept. */
function graphShown(s: GraphState, graph: DrawnGraph): void {
  s.graph = graph;
  s.graphSummary = summaryOf(graph, s.stale);
  const ids = graph.nodes.map((node) => node.id);
  s.whole = shownOf(
    ids,
    graph.nodes.map((node) => node.capability),
    graph.edges,
    graph.layout ?? layOutTasks(ids, graph.edges),
    undefined,
    graph.criticalPath?.taskIds,
  );
  shapeGraphChanged(s);
  if (s.focused === undefined) s.shown = unfocusedShown(s);
  shownChanged(s);
}

function inputReceived(s: GraphState, message: UserInput): void {
  switch (message.type) {
    case 'size': {
      // A graph that came while the view had no size yet (a panel still being laid out) is fitted once it has one; a
      // view still as Fit left it is fitted again (the status line above it wraps once it says more).
      const unsized = s.viewSize.width === 0 || s.viewSize.height === 0;
      const fitted = stillFitted(s);
      s.viewSize = message.view;
      if ((unsized || fitted) && s.focused === undefined && s.whole !== undefined) fitView(s);
      requestFrame(s);
      break;
    }
    case 'palette':
      s.palette = message.palette;
      looksChanged(s);
      break;
    case 'focus':
      s.focusOn = message.on;
      s.focusDepth = clampDepth(message.depth);
      show(s);
      break;
    case 'fit':
      fitView(s);
      break;
    case 'zoom':
      zoom(s, message.factor, message.x, message.y);
      break;
    case 'pan':
      pan(s, message.dx, message.dy);
      break;
    case 'centre':
      centreOverviewAt(s, message.x, message.y);
      break;
    case 'hover':
      hover(s, boxAt(s, message.x, message.y));
      break;
    case 'leave':
      hover(s, -1);
      break;
    case 'click': {
      const n = boxAt(s, message.x, message.y);
      if (isGroup(s, n)) expandGroup(s, n);
      else if (n >= 0 && n < s.shown!.taskCount) select(s, s.shown!.ids[n]!);
      break;
    }
    case 'enter':
      // On a group under the pointer, Enter expands it, as a click does.
      if (isGroup(s, s.hovered)) expandGroup(s, s.hovered);
      else if (s.currentTaskId !== undefined) s.tell({ type: 'reveal', taskId: s.currentTaskId });
      break;
    case 'record frames':
      recordFrames(s, message.on);
      break;
    case 'shape':
      chooseView(s, message.view, message.by);
      break;
    case 'collapse':
      collapseGroups(s);
      break;
  }
}
