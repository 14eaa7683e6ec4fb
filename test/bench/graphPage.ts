// `npm run bench:graph`: the graph page alone (dist/graph.js, as `npm run build` makes it) in headless Chromium as the
// e2e suite launches it, with VS Code's webview API stubbed, on the 10,000-task echo DAG (or the sizes given): the pan
// and zoom of bench:ui (test/e2e/graphBench.ts), then a run's changes of state, posted as the extension posts them, a
// layer at a time; the longest frame of each. Seconds where bench:ui takes minutes, so it is where the page's own
// drawing is tuned; what VS Code adds (its webview host, the workbench sharing the page's thread, the machine's other
// processes) is bench:ui's to measure. Prints; never fails on a figure.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { graphHtml, packGraph } from '../../client/src/graphPage';
import { analyzeDag } from '../../server/src/dag/analyze';
import { dagGraph } from '../../server/src/features/graph';
import { root } from '../e2e/build';
import { measureGraph } from '../e2e/graphBench';
import { CHROMIUM } from '../e2e/launcher';
import { ECHO_LAYER_WIDTH, echoLayersDag } from '../support/echoDag';

const ORIGIN = 'http://graph.page';
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
      packGraph(graph),
    );
    const figures = await measureGraph(page, posted as number);
    console.log(
      `${size.toLocaleString('en')} tasks: first drawn ${figures.firstDrawnMs} ms after the message was posted (through playwright, not a webview); longest frame panning ${figures.longestPanFrameMs} ms (${figures.panFramesOver50Ms} of ${figures.panFrames} over 50 ms), zooming ${figures.longestZoomFrameMs} ms (${figures.zoomFramesOver50Ms} of ${figures.zoomFrames})`,
    );
    // Fitted again, as a run is mostly watched whole.
    await page.keyboard.press('0');
    const run = await page.evaluate(
      `new Promise((done) => {
        const ids = ${JSON.stringify(graph.nodes.map(({ id }) => id))};
        const post = (running, states) => window.postMessage({ type: 'states', reset: false, running, states }, '*');
        window.postMessage({ type: 'states', reset: true, running: true, states: { pending: ids } }, '*');
        let longest = 0, frames = 0, last = performance.now(), layer = 0, stopped = false;
        const tick = (now) => {
          longest = Math.max(longest, now - last); last = now; frames++;
          if (!stopped) requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
        const next = () => {
          const at = layer * ${ECHO_LAYER_WIDTH};
          if (at > ids.length) {
            setTimeout(() => { stopped = true; done({ longest: Math.round(longest), frames }); }, 500);
            return;
          }
          post(at < ids.length, { running: ids.slice(at, at + ${ECHO_LAYER_WIDTH}), completed: ids.slice(at - ${ECHO_LAYER_WIDTH}, at) });
          layer++;
          setTimeout(next, ${LAYER_MS});
        };
        next();
      })`,
    );
    const { longest, frames } = run as { longest: number; frames: number };
    console.log(`  a run's changes of state, a layer each ${LAYER_MS} ms: longest frame ${longest} ms of ${frames}`);
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
