// `npm run bench:graph`: the graph page alone (dist/graph.js, as `npm run build` makes it) in headless Chromium as the
// e2e suite launches it, with VS Code's webview API stubbed, on the 10,000-task echo DAG (or the sizes given): the pan
// and zoom of bench:ui (test/e2e/graphBench.ts), then a run's changes of state, posted as the extension posts them, a
// layer at a time; the longest frame of each. Seconds where bench:ui takes minutes, so it is where the page's own
// drawing is tuned; what VS Code adds (its webview host, the workbench sharing the page's thread, the machine's other
// processes) is bench:ui's to measure. Prints; never fails on a figure. ACMP_BENCH_PROFILE=DIR writes a CPU profile of
// the run's part (test/e2e/cpuProfiler.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { STATE_CODES, graphHtml, packGraph } from '../../client/src/graphPage';
import { analyzeDag } from '../../server/src/dag/analyze';
import { dagGraph } from '../../server/src/features/graphRequest';
import { root } from '../e2e/build';
import { cpuProfiler } from '../e2e/cpuProfiler';
import { drawsInWorker, measureGraph } from '../e2e/graphBench';
import { CHROMIUM } from '../e2e/launcher';
import { ECHO_LAYER_WIDTH, echoLayersDag } from '../support/echoDag';

const ORIGIN = 'http://graph.page';
/**
 * `ACMP_GRAPH_THROTTLE=4 npm run bench:graph`: the page's thread slowed this many times (Chromium's CPU throttling),
 * as in VS Code at a 10,000-task run's end, where it shares its thread with the workbench and two cores with the
 * extension host and the server; a page alone is fast enough to hide what a frame costs there.
 */
const THROTTLE = Number(process.env.ACMP_GRAPH_THROTTLE ?? 1);
/** The run's layers come this often, each one's tasks running and the layer before it completed. */
const LAYER_MS = 5;

async function benchSize(size: number): Promise<void> {
  const text = echoLayersDag(size);
  const graph = dagGraph(
    TextDocument.create('file:///echo.acmp-dag.json', 'acmp-dag', 1, text),
    analyzeDag(text),
    true,
  );
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    if (THROTTLE > 1) {
      const session = await page.context().newCDPSession(page);
      await session.send('Emulation.setCPUThrottlingRate', { rate: THROTTLE });
    }
    const stub = 'window.acquireVsCodeApi = () => ({ postMessage() {} });\n';
    await page.route(`${ORIGIN}/**`, (route) => {
      const file = new URL(route.request().url()).pathname;
      if (file === '/graph.js') {
        return route.fulfill({
          contentType: 'text/javascript',
          body: stub + readFileSync(join(root, 'dist/graph.js'), 'utf8'),
        });
      }
      if (file === '/graph.css') return route.fulfill({ contentType: 'text/css', path: join(root, 'dist/graph.css') });
      const html = graphHtml({ cspSource: ORIGIN, scriptUri: `${ORIGIN}/graph.js`, styleUri: `${ORIGIN}/graph.css` });
      return route.fulfill({ contentType: 'text/html', body: html });
    });
    await page.goto(`${ORIGIN}/`);
    const posted = await page.evaluate('performance.timeOrigin + performance.now()');
    await page.evaluate(
      (packed) => window.postMessage({ type: 'graph', graph: packed, stale: false }, '*'),
      packGraph({ ...graph, version: 1 }),
    );
    const figures = await measureGraph(page, posted as number);
    console.log(`the drawing runs ${(await drawsInWorker(page)) ? 'in a worker' : 'in the page'}`);
    console.log(
      `${size.toLocaleString('en')} tasks: first drawn ${figures.firstDrawnMs} ms after the message was posted (through playwright, not a webview); longest frame panning ${figures.longestPanFrameMs} ms (${figures.panFramesOver50Ms} of ${figures.panFrames} over 50 ms), zooming ${figures.longestZoomFrameMs} ms (${figures.zoomFramesOver50Ms} of ${figures.zoomFrames})`,
    );
    // Fitted again, as a run is mostly watched whole.
    await page.keyboard.press('0');
    // By the tasks' indexes, as the extension posts them (StateChanges).
    const [pending, running, completed] = (['pending', 'running', 'completed'] as const).map((state) =>
      STATE_CODES.indexOf(state),
    );
    const profiler = cpuProfiler(page);
    await profiler.start();
    await page.evaluate('globalThis.acmpGraph.startFrames()');
    const run = await page.evaluate(
      `new Promise((done) => {
        const count = ${graph.nodes.length};
        const states = (from, to, code) => {
          const tasks = new Uint32Array(Math.max(0, Math.min(to, count) - Math.max(from, 0)));
          tasks.forEach((_, k) => (tasks[k] = Math.max(from, 0) + k));
          return { tasks, codes: new Uint8Array(tasks.length).fill(code) };
        };
        const post = (running, reset, ...lists) => {
          const tasks = new Uint32Array(lists.reduce((sum, list) => sum + list.tasks.length, 0));
          const codes = new Uint8Array(tasks.length);
          let at = 0;
          for (const list of lists) {
            tasks.set(list.tasks, at);
            codes.set(list.codes, at);
            at += list.tasks.length;
          }
          window.postMessage({ type: 'states', reset, running, states: { tasks, codes, others: [] } }, '*');
        };
        post(true, true, states(0, count, ${pending}));
        let longest = 0, frames = 0, last = performance.now(), layer = 0, stopped = false;
        const tick = (now) => {
          longest = Math.max(longest, now - last); last = now; frames++;
          if (!stopped) requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
        const next = () => {
          const at = layer * ${ECHO_LAYER_WIDTH};
          if (at > count) {
            setTimeout(() => { stopped = true; done({ longest: Math.round(longest), frames }); }, 500);
            return;
          }
          post(at < count, false, states(at, at + ${ECHO_LAYER_WIDTH}, ${running}), states(at - ${ECHO_LAYER_WIDTH}, at, ${completed}));
          layer++;
          setTimeout(next, ${LAYER_MS});
        };
        next();
      })`,
    );
    const drawing = await page.evaluate<{ longest: number; frames: number }>('globalThis.acmpGraph.stopFrames()');
    await profiler.stop(`graph-page-run-${size}`);
    const { longest, frames } = run as { longest: number; frames: number };
    console.log(
      `  a run's changes of state, a layer each ${LAYER_MS} ms: longest frame of the page ${longest} ms of ${frames}, of the drawing ${drawing.longest} ms of ${drawing.frames}`,
    );
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  const sizes = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [10_000];
  for (const size of sizes) await benchSize(size);
}

main().catch((error: unknown) => {
  console.error(`bench:graph: ${String(error)}`);
  process.exitCode = 1;
});
