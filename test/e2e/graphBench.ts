// The graph view's page seen from the browser. For a UI bench: given a page (VS Code's window, or any page) where a
// graph view has drawn a graph, how long it took to draw it and the longest frame while panning and zooming it with
// real input (playwright's mouse). For the e2e suite: keys pressed on the page and what it then drew. The page says
// what it drew through its canvas's data attributes (client/webview/graphPageScript.ts).
import type { Frame, Page } from 'playwright-core';

export interface GraphFigures {
  /** Tasks in the drawn graph. */
  readonly tasks: number;
  /** From `since` (epoch ms; by default the webview page's start) to the graph's first drawn frame. */
  readonly firstDrawnMs: number;
  /** From `since` until the page showed that it is laying the graph out, and until it showed the count of its tasks. */
  readonly layingOutShownMs: number | undefined;
  readonly countShownMs: number | undefined;
  /** The longest time between two frames while dragging the graph, and while wheel-zooming it. */
  readonly longestPanFrameMs: number;
  readonly longestZoomFrameMs: number;
  /** The frames drawn during each, and how many of them took over 50 ms. */
  readonly panFrames: number;
  readonly zoomFrames: number;
  readonly panFramesOver50Ms: number;
  readonly zoomFramesOver50Ms: number;
}

/**
 * What a frame answers, or `otherwise` when it fails or takes over a second: a frame being torn down (a panel just
 * closed) may never answer.
 */
async function frameAnswer<T>(answer: Promise<T>, otherwise: T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      answer.catch(() => otherwise),
      new Promise<T>((resolve) => (timer = setTimeout(() => resolve(otherwise), 1_000))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The frame whose document holds the graph view's canvas, once it has drawn a graph (of `tasks` tasks, when given: a
 * panel closed just before can still be in the page for a moment, showing its own graph).
 */
export async function graphFrame(
  page: Page,
  { tasks, timeoutMs = 60_000 }: { tasks?: number; timeoutMs?: number } = {},
): Promise<Frame> {
  const selector = `canvas#graph[data-drawn-at]${tasks === undefined ? '' : `[data-tasks="${tasks}"]`}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const frame of page.frames()) {
      if (frame.isDetached()) continue;
      if ((await frameAnswer(frame.locator(selector).count(), 0)) > 0) return frame;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `no graph view drew a graph${tasks === undefined ? '' : ` of ${tasks} tasks`} within ${timeoutMs} ms; ${await graphPages(page)}`,
      );
    }
    await page.waitForTimeout(100);
  }
}

/** What each graph page of the window shows (for a failure's message): its canvas's data attributes and status line. */
async function graphPages(page: Page): Promise<string> {
  const pages: string[] = [];
  for (const frame of page.frames()) {
    if (frame.isDetached()) continue;
    const shown = await frameAnswer(
      frame.evaluate<string | undefined>(
        `(() => {
          const canvas = document.getElementById('graph');
          if (canvas === null) return undefined;
          return JSON.stringify({
            ...canvas.dataset,
            sent: globalThis.acmpGraph?.sent(),
            visibility: document.visibilityState,
            status: document.getElementById('status')?.textContent,
          });
        })()`,
      ),
      undefined,
    );
    if (shown !== undefined) pages.push(shown);
  }
  return pages.length === 0 ? 'no graph page found' : `graph pages: ${pages.join(', ')}`;
}

/**
 * Starts recording the gaps between the graph's animation frames (the drawing's, in its worker: the page's own frames
 * say nothing of it); the returned function stops and reads them.
 */
async function recordFrames(frame: Frame): Promise<() => Promise<{ longest: number; frames: number; over50: number }>> {
  await frame.evaluate('globalThis.acmpGraph.startFrames()');
  return () => frame.evaluate('globalThis.acmpGraph.stopFrames()');
}

/** A phase the graph page showed (client/webview/graphPageScript.ts): its text, and when it was first painted. */
export interface PhaseShown {
  readonly phase: 'laying-out' | 'drawn';
  readonly text: string;
  /** Epoch ms; none if no frame was painted while it showed. */
  readonly shownAt: number | undefined;
}

/** The phases the graph page in `frame` showed so far, in order. */
const phasesIn = (frame: Frame): Promise<PhaseShown[]> => frame.evaluate('globalThis.acmpGraph.phases()');

type Drawn = Pick<GraphFigures, 'tasks' | 'firstDrawnMs' | 'layingOutShownMs' | 'countShownMs'>;

/** How many tasks the graph page drew, and how long after `since` (by default the page's start) it first drew. */
export async function firstDrawn(page: Page, since?: number): Promise<Drawn> {
  return drawnIn(await graphFrame(page), since);
}

async function drawnIn(frame: Frame, since?: number): Promise<Drawn> {
  const data = await frame.evaluate<{ tasks: number; drawnAt: number; pageStart: number }>(`(() => {
    const { dataset } = document.getElementById('graph');
    return { tasks: Number(dataset.tasks), drawnAt: Number(dataset.drawnAt), pageStart: performance.timeOrigin };
  })()`);
  const start = since ?? data.pageStart;
  const phases = await phasesIn(frame);
  const shownMs = (found: PhaseShown | undefined): number | undefined =>
    found?.shownAt === undefined ? undefined : Math.round(found.shownAt - start);
  return {
    tasks: data.tasks,
    firstDrawnMs: Math.round(data.drawnAt - start),
    layingOutShownMs: shownMs(phases.find(({ phase }) => phase === 'laying-out')),
    countShownMs: shownMs(phases.find(({ phase, text }) => phase === 'laying-out' && /\d/.test(text))),
  };
}

export async function measureGraph(page: Page, since?: number): Promise<GraphFigures> {
  const frame = await graphFrame(page);
  const drawn = await drawnIn(frame, since);
  const canvas = frame.locator('canvas#graph');
  const box = await canvas.boundingBox();
  if (box === null) throw new Error('the graph canvas is not visible');
  const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];

  // The tasks rather than the shape Fit shows a large graph as: theirs are the costly frames.
  const view = (): Promise<string | undefined> => frame.evaluate("document.getElementById('graph').dataset.view");
  if ((await view()) === 'shape') {
    await canvas.press('s');
    const deadline = Date.now() + 20_000;
    while ((await view()) === 'shape') {
      if (Date.now() > deadline) throw new Error('S did not show the tasks within 20 s');
      await page.waitForTimeout(20);
    }
  }
  // Zoomed in to where labels show (the costliest level to draw), then dragged around.
  await page.mouse.move(x, y);
  for (let step = 0; step < 12; step++) await page.mouse.wheel(0, -120);
  let stop = await recordFrames(frame);
  await page.mouse.down();
  for (let step = 0; step < 60; step++) {
    const angle = (step / 60) * 2 * Math.PI;
    await page.mouse.move(x + 150 * Math.sin(angle), y + 100 * Math.sin(2 * angle), { steps: 2 });
  }
  await page.mouse.up();
  const pan = await stop();

  stop = await recordFrames(frame);
  for (let step = 0; step < 40; step++) await page.mouse.wheel(0, step < 20 ? 120 : -120);
  const zoom = await stop();

  return {
    ...drawn,
    longestPanFrameMs: pan.longest,
    longestZoomFrameMs: zoom.longest,
    panFrames: pan.frames,
    zoomFrames: zoom.frames,
    panFramesOver50Ms: pan.over50,
    zoomFramesOver50Ms: zoom.over50,
  };
}

/** One step of a probe of the graph page, as the e2e suite asks for it (suite/screenshots.ts). */
export type ProbeStep =
  /** Waits until the page shows a graph of this many tasks. */
  | { readonly tasks: number }
  /** Waits until the page highlights this task. */
  | { readonly current: string }
  /** Presses a key on the graph's canvas and waits for the next frame. */
  | { readonly press: string }
  /** Clicks the graph's canvas at this point (CSS pixels of the canvas) and waits for the next frame. */
  | { readonly click: { readonly x: number; readonly y: number } }
  /** Waits until the page has the theme of this kind (its body's class: `vscode-light`, `vscode-dark`) and drew it. */
  | { readonly themeKind: string }
  /** Zooms (a pinch, around the view's middle) to where a box is this many CSS pixels wide, and waits for the frame. */
  | { readonly boxWidth: number }
  /** Reads what the page drew (its canvas's data attributes and the status line). */
  | { readonly read: true }
  /** Reads the phases the page showed so far (PhaseShown). */
  | { readonly phases: true }
  | { readonly screenshot: string }
  | { readonly measure: true };

/** What a `read` step answers. */
export interface DrawnView {
  readonly tasks: number;
  readonly scale: number;
  readonly x: number;
  readonly y: number;
  readonly current: string;
  readonly focus: string;
  /** A box's width at this zoom (CSS pixels), the boxes in sight and how many of them show their id. */
  readonly boxWidth: number;
  readonly visibleBoxes: number;
  readonly labelledBoxes: number;
  /** What is shown: `shape` (groups of tasks), `tasks` or `focus`; the groups shown, the groups expanded. */
  readonly view: string;
  readonly groups: number;
  readonly expanded: number;
  readonly status: string;
  /** Whether the drawing runs in a worker: the page's canvas was handed to it and has no context of the page's. */
  readonly inWorker: boolean;
}

/** Whether the graph page's drawing runs in a worker: its canvas was handed over and has no context of the page's. */
export const drawsInWorker = (target: Page | Frame): Promise<boolean> =>
  target.evaluate(
    "(() => { try { return document.getElementById('graph').getContext('2d') === null; } catch { return true; } })()",
  );

/** Runs the steps on the graph page of a VS Code window; answers what the `read` and `measure` steps found. */
export async function probeGraph(
  page: Page,
  steps: readonly ProbeStep[],
  screenshotPath: (name: string) => string,
): Promise<(DrawnView | GraphFigures | PhaseShown[])[]> {
  const found: (DrawnView | GraphFigures | PhaseShown[])[] = [];
  const first = steps[0];
  const frame = await graphFrame(page, first !== undefined && 'tasks' in first ? { tasks: first.tasks } : {});
  const canvas = frame.locator('canvas#graph');
  // Whether the drawing has drawn a frame since it took in all the page sent it: the drawing is in a worker.
  const drawnSinceSent = (): Promise<boolean> =>
    frame.evaluate("Number(document.getElementById('graph').dataset.received) >= globalThis.acmpGraph.sent()");
  const drawnSince = async (input: string): Promise<void> => {
    const deadline = Date.now() + 20_000;
    while (!(await drawnSinceSent())) {
      if (Date.now() > deadline) throw new Error(`the graph drew no frame within 20 s of ${input}`);
      await page.waitForTimeout(20);
    }
  };
  for (const step of steps) {
    if ('tasks' in step) {
      await frame.waitForSelector(`canvas#graph[data-tasks="${step.tasks}"]`, { timeout: 60_000 });
    } else if ('current' in step) {
      // Polled: a string predicate (waitForFunction) is an eval, which the page's Content-Security-Policy refuses.
      const deadline = Date.now() + 20_000;
      while ((await frame.evaluate("document.getElementById('graph').dataset.current")) !== step.current) {
        if (Date.now() > deadline) throw new Error(`the graph did not highlight ${step.current} within 20 s`);
        await page.waitForTimeout(50);
      }
    } else if ('press' in step) {
      await canvas.press(step.press);
      await drawnSince(step.press);
    } else if ('click' in step) {
      await canvas.click({ position: step.click });
      await drawnSince(`a click at ${step.click.x}, ${step.click.y}`);
    } else if ('themeKind' in step) {
      const deadline = Date.now() + 20_000;
      while (!(await frame.evaluate(`document.body.classList.contains(${JSON.stringify(step.themeKind)})`))) {
        if (Date.now() > deadline) throw new Error(`the graph page did not take the ${step.themeKind} theme in 20 s`);
        await page.waitForTimeout(50);
      }
      await drawnSince(`the ${step.themeKind} theme`);
    } else if ('boxWidth' in step) {
      // A pinch is a wheel event with ctrlKey, which zooms by exp(-deltaY / 100) (graphPageScript.ts).
      await frame.evaluate(`(() => {
        const canvas = document.getElementById('graph');
        const deltaY = -100 * Math.log(${step.boxWidth} / Number(canvas.dataset.boxWidth));
        const bounds = canvas.getBoundingClientRect();
        const [clientX, clientY] = [bounds.left + bounds.width / 2, bounds.top + bounds.height / 2];
        canvas.dispatchEvent(new WheelEvent('wheel', { deltaY, ctrlKey: true, clientX, clientY, cancelable: true }));
      })()`);
      await drawnSince(`a zoom to ${step.boxWidth} px boxes`);
    } else if ('read' in step) {
      found.push({
        inWorker: await drawsInWorker(frame),
        ...(await frame.evaluate<Omit<DrawnView, 'inWorker'>>(`(() => {
          const { dataset } = document.getElementById('graph');
          return {
            tasks: Number(dataset.tasks),
            scale: Number(dataset.scale),
            x: Number(dataset.x),
            y: Number(dataset.y),
            current: dataset.current ?? '',
            focus: dataset.focus ?? '',
            boxWidth: Number(dataset.boxWidth),
            visibleBoxes: Number(dataset.visibleBoxes),
            labelledBoxes: Number(dataset.labelledBoxes),
            view: dataset.view ?? '',
            groups: Number(dataset.groups),
            expanded: Number(dataset.expanded),
            status: document.getElementById('status').textContent ?? '',
          };
        })()`)),
      });
    } else if ('phases' in step) {
      found.push(await phasesIn(frame));
    } else if ('screenshot' in step) {
      await page.screenshot({ path: screenshotPath(step.screenshot) });
    } else {
      found.push(await measureGraph(page));
    }
  }
  return found;
}
