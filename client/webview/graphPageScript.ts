// The graph view's page script: the page's part of the graph (its DOM, the user's input, the messages of the
// extension) around the drawing (graphMessages.ts and the files it names), which runs in a worker on the page's
// canvases handed over to it (OffscreenCanvas): a webview's page shares its thread with VS Code's window, which a
// large graph's drawing kept busy. Where there is no worker for it (a DOM without one, as the unit tests'), the drawing runs in the page. The
// DAG's text is only ever drawn as text or set as textContent. A harness reads what is drawn from the canvas's data
// attributes.
import { type FromGraphPage, type ToGraphPage, layingOutText } from '../src/graphPage';
import {
  type FocusSetting,
  type FromGraphCanvas,
  type ToGraphCanvas,
  type ViewSize,
  startGraphCanvas,
} from './graphMessages';
import { type Palette, paletteOf } from './graphPalette';
import { clampDepth } from './graphViewport';
import './graph.css';

declare function acquireVsCodeApi(): { postMessage(message: FromGraphPage): void };
/** The worker's script, which the build puts here (esbuild.mjs); empty where it did not (the unit tests' bundle). */
declare const GRAPH_WORKER_SCRIPT: string;

const KEY_PAN = 80;
const KEY_ZOOM = 1.25;
const DRAG_THRESHOLD = 4;

const page = acquireVsCodeApi();
const element = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const status = element<HTMLParagraphElement>('status');
const canvas = element<HTMLCanvasElement>('graph');
const overview = element<HTMLCanvasElement>('overview');
const tooltip = element<HTMLDivElement>('tooltip');
const phase = element<HTMLParagraphElement>('phase');
const view = element<HTMLDivElement>('view');
const focusBox = element<HTMLInputElement>('focus');
const depthInput = element<HTMLInputElement>('depth');
const shapeSelect = element<HTMLSelectElement>('shape');
const collapseButton = element<HTMLButtonElement>('collapse');
/** A context of the page's own for reading colours (the view's canvases are the drawing's). */
const colourParser = document.createElement('canvas').getContext('2d')!;

/** The overview's size when last shown: hidden, it has none, and the drawing would not paint it when shown again. */
const overviewSize = { width: 0, height: 0 };

function viewSize(): ViewSize {
  if (!overview.hidden) [overviewSize.width, overviewSize.height] = [overview.clientWidth, overview.clientHeight];
  return {
    width: view.clientWidth,
    height: view.clientHeight,
    ratio: window.devicePixelRatio || 1,
    overviewWidth: overviewSize.width,
    overviewHeight: overviewSize.height,
  };
}

function readPalette(): Palette {
  const style = getComputedStyle(document.documentElement);
  return paletteOf((name, fallback) => style.getPropertyValue(name).trim() || fallback, colourParser);
}

/** The levels up and down focus mode shows, as the user typed them. */
const depth = (): number => clampDepth(Number(depthInput.value));
const focusSetting = (): FocusSetting => ({ on: focusBox.checked, depth: depth() });

/** Where the pointer last was over the view (CSS pixels of the page), for the tooltip the drawing answers with. */
const pointer = { x: 0, y: 0 };
/** A harness's wait for the drawing's record of its frames. */
let framesRecorded: ((record: Extract<FromGraphCanvas, { type: 'frames' }>) => void) | undefined;

/**
 * What the page showed of its phase (`laying-out` with its text, then `drawn`) and when it was first painted (epoch
 * ms), for a harness: the laying-out text can be on screen for less than a harness's poll.
 */
const phases: { phase: string; text: string; shownAt: number | undefined }[] = [];

/** Shows the page's phase: `laying-out` (saying so over the canvas) until the drawing's first frame, then `drawn`. */
function showPhase(name: 'laying-out' | 'drawn', text: string): void {
  canvas.dataset.phase = name;
  phase.textContent = text;
  phase.hidden = name === 'drawn';
  const shown = { phase: name, text, shownAt: undefined as number | undefined };
  phases.push(shown);
  // On screen in the next frame painted, unless another phase replaced it before.
  requestAnimationFrame(() => {
    if (phases.at(-1) === shown) shown.shownAt = performance.timeOrigin + performance.now();
  });
}
showPhase('laying-out', phase.textContent ?? '');

function fromCanvas(message: FromGraphCanvas): void {
  switch (message.type) {
    case 'drawn':
      for (const [key, value] of Object.entries(message.drawn)) {
        if (canvas.dataset[key] !== value) canvas.dataset[key] = value;
      }
      shownView(message.drawn);
      if (canvas.dataset.phase === 'laying-out') {
        showPhase('drawn', '');
        page.postMessage({ type: 'drawn' });
      }
      break;
    case 'status':
      status.textContent = message.text;
      break;
    case 'tooltip': {
      if (message.text === undefined) {
        tooltip.hidden = true;
        break;
      }
      tooltip.textContent = message.text;
      const bounds = view.getBoundingClientRect();
      tooltip.style.left = `${pointer.x - bounds.left + 12}px`;
      tooltip.style.top = `${pointer.y - bounds.top + 12}px`;
      tooltip.hidden = false;
      break;
    }
    case 'reveal':
      page.postMessage({ type: 'reveal', taskId: message.taskId });
      break;
    case 'overview':
      overview.hidden = message.hidden;
      break;
    case 'frames':
      framesRecorded?.(message);
      framesRecorded = undefined;
      break;
  }
}

/** Messages sent to the drawing (a harness compares it with those the drawing says it took in before a frame). */
let sent = 0;
/** Tells the drawing: its worker, or the drawing in this page. */
const tellCanvas = ((): ((message: ToGraphCanvas) => void) => {
  const start = { type: 'start', view: viewSize(), palette: readPalette(), focus: focusSetting() } as const;
  if (GRAPH_WORKER_SCRIPT !== '' && typeof Worker === 'function' && 'transferControlToOffscreen' in canvas) {
    // A worker from the bundled script's text: a webview's own scripts come from another origin than its page,
    // which a worker's script may not (the Content-Security-Policy allows blob: workers for this).
    const script = URL.createObjectURL(new Blob([GRAPH_WORKER_SCRIPT], { type: 'text/javascript' }));
    const worker = new Worker(script);
    worker.onmessage = (event: MessageEvent<FromGraphCanvas>) => fromCanvas(event.data);
    const [main, mini] = [canvas.transferControlToOffscreen(), overview.transferControlToOffscreen()];
    worker.postMessage({ ...start, canvas: main, overview: mini }, [main, mini]);
    return (message) => worker.postMessage(message);
  }
  const receive = startGraphCanvas(fromCanvas);
  receive({ ...start, canvas, overview });
  return receive;
})();
// The start message.
sent++;
function toCanvas(message: ToGraphCanvas): void {
  sent++;
  tellCanvas(message);
}

/** The point of an element an event is at, in CSS pixels. */
function pointIn(target: Element, event: MouseEvent): { x: number; y: number } {
  const bounds = target.getBoundingClientRect();
  return { x: event.clientX - bounds.left, y: event.clientY - bounds.top };
}

const focusChanged = (): void => toCanvas({ type: 'focus', ...focusSetting() });

/** The toolbar says what the drawing shows: the shape (and its grouping) or the tasks, and whether any is expanded. */
function shownView(drawn: Readonly<Record<string, string>>): void {
  if (drawn.view === 'shape' || drawn.view === 'tasks') {
    const value = drawn.view === 'shape' ? `shape ${drawn.groupBy}` : 'tasks';
    if (shapeSelect.value !== value) shapeSelect.value = value;
  }
  collapseButton.disabled = drawn.expanded === '0' || drawn.view !== 'shape';
}

/** The user chose the shape (by a grouping) or the tasks in the toolbar. */
function shapeChosen(value: string): void {
  const [view, by] = value.split(' ');
  toCanvas({
    type: 'shape',
    view: view === 'shape' ? 'shape' : 'tasks',
    by: by === 'capability' ? 'capability' : 'prefix',
  });
}

let drag: { x: number; y: number; moved: boolean } | undefined;
canvas.addEventListener('pointerdown', (event) => {
  canvas.setPointerCapture(event.pointerId);
  drag = { x: event.clientX, y: event.clientY, moved: false };
});
canvas.addEventListener('pointermove', (event) => {
  if (drag !== undefined) {
    const [dx, dy] = [event.clientX - drag.x, event.clientY - drag.y];
    if (!drag.moved && Math.hypot(dx, dy) < DRAG_THRESHOLD) return;
    drag = { x: event.clientX, y: event.clientY, moved: true };
    tooltip.hidden = true;
    toCanvas({ type: 'pan', dx, dy });
    return;
  }
  [pointer.x, pointer.y] = [event.clientX, event.clientY];
  toCanvas({ type: 'hover', ...pointIn(canvas, event) });
});
canvas.addEventListener('pointerup', (event) => {
  const clicked = drag !== undefined && !drag.moved;
  drag = undefined;
  if (clicked) toCanvas({ type: 'click', ...pointIn(canvas, event) });
});
canvas.addEventListener('pointerleave', () => {
  tooltip.hidden = true;
  toCanvas({ type: 'leave' });
});
canvas.addEventListener(
  'wheel',
  (event) => {
    event.preventDefault();
    // A pinch arrives as a wheel event with ctrlKey; sideways or shifted wheels pan.
    if (!event.ctrlKey && (event.shiftKey || Math.abs(event.deltaX) > Math.abs(event.deltaY))) {
      toCanvas({ type: 'pan', dx: -(event.shiftKey ? event.deltaY : event.deltaX), dy: 0 });
      return;
    }
    const lines = event.deltaMode === WheelEvent.DOM_DELTA_LINE ? 16 : 1;
    const factor = Math.exp(-event.deltaY * lines * (event.ctrlKey ? 0.01 : 0.002));
    toCanvas({ type: 'zoom', factor, ...pointIn(canvas, event) });
  },
  { passive: false },
);

overview.addEventListener('pointerdown', (event) => {
  overview.setPointerCapture(event.pointerId);
  toCanvas({ type: 'centre', ...pointIn(overview, event) });
});
overview.addEventListener('pointermove', (event) => {
  if (overview.hasPointerCapture(event.pointerId)) toCanvas({ type: 'centre', ...pointIn(overview, event) });
});

document.addEventListener('keydown', (event) => {
  if (event.target instanceof HTMLInputElement && event.target.type === 'number') return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const step = event.shiftKey ? 4 * KEY_PAN : KEY_PAN;
  const actions: Record<string, () => void> = {
    '+': () => toCanvas({ type: 'zoom', factor: KEY_ZOOM }),
    '=': () => toCanvas({ type: 'zoom', factor: KEY_ZOOM }),
    '-': () => toCanvas({ type: 'zoom', factor: 1 / KEY_ZOOM }),
    '0': () => toCanvas({ type: 'fit' }),
    ArrowLeft: () => toCanvas({ type: 'pan', dx: step, dy: 0 }),
    ArrowRight: () => toCanvas({ type: 'pan', dx: -step, dy: 0 }),
    ArrowUp: () => toCanvas({ type: 'pan', dx: 0, dy: step }),
    ArrowDown: () => toCanvas({ type: 'pan', dx: 0, dy: -step }),
    f: () => {
      focusBox.checked = !focusBox.checked;
      focusChanged();
    },
    '[': () => {
      depthInput.value = String(depth() - 1);
      focusChanged();
    },
    ']': () => {
      depthInput.value = String(depth() + 1);
      focusChanged();
    },
    Enter: () => toCanvas({ type: 'enter' }),
    s: () => {
      const byShown = canvas.dataset.groupBy === 'capability' ? 'shape capability' : 'shape prefix';
      shapeChosen(canvas.dataset.view === 'shape' ? 'tasks' : byShown);
    },
  };
  const action = actions[event.key.length === 1 ? event.key.toLowerCase() : event.key] ?? actions[event.key];
  if (action === undefined || (event.key === 'Enter' && event.target !== canvas)) return;
  event.preventDefault();
  action();
});
element('fit').addEventListener('click', () => toCanvas({ type: 'fit' }));
element('zoom-in').addEventListener('click', () => toCanvas({ type: 'zoom', factor: KEY_ZOOM }));
element('zoom-out').addEventListener('click', () => toCanvas({ type: 'zoom', factor: 1 / KEY_ZOOM }));
focusBox.addEventListener('change', focusChanged);
shapeSelect.addEventListener('change', () => shapeChosen(shapeSelect.value));
collapseButton.addEventListener('click', () => toCanvas({ type: 'collapse' }));
depthInput.addEventListener('change', focusChanged);
new ResizeObserver(() => toCanvas({ type: 'size', view: viewSize() })).observe(view);
// VS Code swaps the theme's class on the body and its variables on the root element.
new MutationObserver(() => toCanvas({ type: 'palette', palette: readPalette() })).observe(document.body, {
  attributes: true,
  attributeFilter: ['class'],
});

window.addEventListener('message', (event: MessageEvent<ToGraphPage>) => {
  const message = event.data;
  if (message.type === 'graph' && canvas.dataset.phase === 'laying-out') {
    showPhase('laying-out', layingOutText(message.graph.capabilities.length));
  }
  toCanvas(message);
});

/**
 * For a harness: how many messages the page sent the drawing (a frame whose `data-received` is at least that shows
 * them), and a record of the gaps between the drawing's animation frames until stopped (in a worker, the page's own
 * frames tell nothing of the drawing's).
 */
Object.assign(globalThis, {
  acmpGraph: {
    sent: () => sent,
    phases: () => phases,
    startFrames: () => toCanvas({ type: 'record frames', on: true }),
    stopFrames: () =>
      new Promise((resolve) => {
        framesRecorded = resolve;
        toCanvas({ type: 'record frames', on: false });
      }),
  },
});

page.postMessage({ type: 'ready' });
