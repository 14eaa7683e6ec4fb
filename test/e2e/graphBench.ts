// The graph view's page-side figures, for a UI bench: given a browser page (VS Code's window, or any page) where a
// graph view has drawn a graph, how long it took to draw it and the longest frame while panning and zooming it with
// real input (playwright's mouse). The page says what it drew through its canvas's data attributes (graph.ts).
import type { Frame, Page } from 'playwright-core';

export interface GraphFigures {
  /** Tasks in the drawn graph. */
  readonly tasks: number;
  /** From `since` (epoch ms; by default the webview page's start) to the graph's first drawn frame. */
  readonly firstDrawnMs: number;
  /** The longest time between two frames while dragging the graph, and while wheel-zooming it. */
  readonly longestPanFrameMs: number;
  readonly longestZoomFrameMs: number;
  /** The frames drawn during each, and how many of them took over 50 ms. */
  readonly panFrames: number;
  readonly zoomFrames: number;
  readonly panFramesOver50Ms: number;
  readonly zoomFramesOver50Ms: number;
}

/** The frame whose document holds the graph view's canvas, once it has drawn a graph. */
export async function graphFrame(page: Page, timeoutMs = 60_000): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const frame of page.frames()) {
      const drawn = await frame
        .locator('canvas#graph[data-drawn-at]')
        .count()
        .catch(() => 0);
      if (drawn > 0) return frame;
    }
    if (Date.now() > deadline) throw new Error(`no graph view drew a graph within ${timeoutMs} ms`);
    await page.waitForTimeout(100);
  }
}

/** Starts recording the gaps between animation frames in the frame; the returned function stops and reads them. */
async function recordFrames(frame: Frame): Promise<() => Promise<{ longest: number; frames: number; over50: number }>> {
  await frame.evaluate(`(() => {
    const record = { last: performance.now(), longest: 0, frames: 0, over50: 0, on: true };
    globalThis.acmpFrameRecord = record;
    const tick = (now) => {
      if (!record.on) return;
      record.longest = Math.max(record.longest, now - record.last);
      if (now - record.last > 50) record.over50++;
      record.last = now;
      record.frames++;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  })()`);
  return () =>
    frame.evaluate(`(() => {
      const record = globalThis.acmpFrameRecord;
      record.on = false;
      return { longest: Math.round(record.longest * 10) / 10, frames: record.frames, over50: record.over50 };
    })()`);
}

export async function measureGraph(page: Page, since?: number): Promise<GraphFigures> {
  const frame = await graphFrame(page);
  const canvas = frame.locator('canvas#graph');
  const data = await canvas.evaluate((element: HTMLCanvasElement) => ({
    tasks: Number(element.dataset.tasks),
    drawnAt: Number(element.dataset.drawnAt),
    pageStart: performance.timeOrigin,
  }));
  const box = await canvas.boundingBox();
  if (box === null) throw new Error('the graph canvas is not visible');
  const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];

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
    tasks: data.tasks,
    firstDrawnMs: Math.round(data.drawnAt - (since ?? data.pageStart)),
    longestPanFrameMs: pan.longest,
    longestZoomFrameMs: zoom.longest,
    panFrames: pan.frames,
    zoomFrames: zoom.frames,
    panFramesOver50Ms: pan.over50,
    zoomFramesOver50Ms: zoom.over50,
  };
}
