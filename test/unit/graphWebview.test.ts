// The graph webview's page script, run in a DOM with a recording canvas: whatever text the extension posts (task ids,
// capabilities, the dag_id, run states) is drawn as text or shown as textContent, never parsed as markup, and nothing
// it carries creates an element or handler; the keys, a click and focus mode do what the page says they do.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, before, describe, test } from 'node:test';
import * as esbuild from 'esbuild';
import { JSDOM, VirtualConsole } from 'jsdom';
import {
  type FromGraphPage,
  type ShownState,
  StateChanges,
  type ToGraphPage,
  graphHtml,
  packGraph,
  taskIndexes,
} from '../../client/src/graphPage';
import { BOX_HEIGHT, BOX_WIDTH, layOutTasks } from '../../server/src/dag/layout';
import type { DagGraph } from '../../server/src/protocol/runMessages';

const ROOT = resolve(__dirname, '../..');
const CSP_SOURCE = 'https://file+.vscode-resource.vscode-cdn.net';
const SCRIPT_URI = `${CSP_SOURCE}/ext/dist/graph.js`;
/** jsdom lays nothing out and measures no text: the view is this size, a character this wide. */
const VIEW = { width: 1000, height: 700 };
const CHARACTER_WIDTH = 7;
/** The critical path's colour without VS Code's theme variables (graphPalette.ts). */
const CRITICAL_COLOUR = '#bc05bc';

/** Texts that do something when parsed as HTML or SVG. */
const HOSTILE = {
  img: '<img src=x onerror="globalThis.pwned=1">',
  closesText: '</text><script>globalThis.pwned=1</script>',
  svgOnload: '"><svg onload="globalThis.pwned=1">',
  entities: '&lt;b&gt;bold?&lt;/b&gt; &amp; &#60;i&#62;',
  foreignObject: '<foreignObject><iframe srcdoc="<script>parent.pwned=1</script>"></iframe></foreignObject>',
  handler: '<g onclick="globalThis.pwned=1">click</g>',
} as const;

/** The elements of the page's view: anything else inside it came from parsed text. */
const VIEW_ELEMENTS = ['canvas#graph', 'p#phase', 'canvas#overview', 'div#tooltip'];
const FORBIDDEN_ELEMENTS = ['img', 'script', 'foreignObject', 'iframe', 'object', 'embed', 'style', 'a', 'svg'];

/** The page script, bundled as `npm run build` bundles it (esbuild.mjs), so the test needs no build before it. */
async function bundlePageScript(): Promise<string> {
  const { outputFiles } = await esbuild.build({
    entryPoints: [join(ROOT, 'client/webview/graphPageScript.ts')],
    outdir: join(tmpdir(), 'acmp-graph-webview-test'),
    write: false,
    bundle: true,
    platform: 'browser',
    target: 'es2022',
    format: 'iife',
    mainFields: ['module', 'main'],
    logLevel: 'silent',
    // jsdom has no workers: the page draws in itself.
    define: { GRAPH_WORKER_SCRIPT: '""' },
  });
  const script = outputFiles.find((file) => file.path.endsWith('.js'));
  assert.ok(script, 'esbuild wrote the page script');
  return script.text;
}

type GraphNode = DagGraph['nodes'][number];
type GraphEdge = DagGraph['edges'][number];

const node = (id: string, capability?: string, line = 0): GraphNode => ({ id, capability, line, character: 4 });
const edge = (from: string, to: string, flags: Partial<Pick<GraphEdge, 'cycle' | 'dangling'>> = {}): GraphEdge => ({
  from,
  to,
  cycle: false,
  dangling: false,
  streamEligible: false,
  ...flags,
});
const graphOf = (dagId: string | undefined, nodes: GraphNode[], edges: GraphEdge[] = []): DagGraph => ({
  version: 1,
  parsed: true,
  dagId,
  nodes,
  edges,
});

interface Page {
  readonly window: Window & typeof globalThis;
  readonly document: Document;
  /** What the page posted to the extension. */
  readonly posted: FromGraphPage[];
  /** Every text drawn on a canvas, in order, and the size of its font (CSS pixels at the context's scale). */
  readonly drawnTexts: string[];
  readonly textSizes: number[];
  /** Every path stroked on a canvas, in order. */
  readonly strokes: Stroke[];
  /** Exceptions inside the page (a message handler that threw), which a browser would only log. */
  readonly errors: Error[];
  /** Delivers a message from the extension the way a webview does: a `message` event on the window. */
  send(message: ToGraphPage): void;
  /** Resolves after the page's next animation frame has been drawn. */
  frame(): Promise<void>;
  /** The canvas's data attributes: what the page says it drew. */
  drawn(): DOMStringMap;
  press(key: string): void;
  /** A pointer event at the middle of a box of the drawn graph (by its index in the layout the page shows). */
  pointer(type: string, layout: { readonly boxes: readonly number[] }, n: number): void;
}

/** A path stroked: its colour and width, and how many rectangles and lines (moveTo) it had. */
interface Stroke {
  readonly colour: string;
  readonly width: number;
  readonly rects: number;
  readonly lines: number;
}

/** A 2D context that draws nothing and records the texts it is asked to draw and the paths it strokes. */
function recordingContext(drawnTexts: string[], textSizes: number[], strokes: Stroke[]): CanvasRenderingContext2D {
  const properties = new Map<PropertyKey, unknown>();
  let path = { rects: 0, lines: 0 };
  return new Proxy({} as CanvasRenderingContext2D, {
    get(_, name) {
      if (properties.has(name)) return properties.get(name);
      if (name === 'measureText') return (text: string) => ({ width: CHARACTER_WIDTH * text.length });
      if (name === 'fillText') {
        return (text: string) => {
          drawnTexts.push(text);
          textSizes.push(Number(/(\d+(?:\.\d+)?)px/.exec(String(properties.get('font')))?.[1] ?? 0));
        };
      }
      if (name === 'beginPath') return () => (path = { rects: 0, lines: 0 });
      if (name === 'rect') return () => path.rects++;
      if (name === 'moveTo') return () => path.lines++;
      if (name === 'stroke') {
        return () =>
          strokes.push({
            colour: String(properties.get('strokeStyle')),
            width: Number(properties.get('lineWidth')),
            ...path,
          });
      }
      if (name === 'createImageData') {
        return (width: number, height: number) => ({ width, height, data: new Uint8ClampedArray(4 * width * height) });
      }
      return () => undefined;
    },
    set(_, name, value) {
      properties.set(name, value);
      return true;
    },
  });
}

let pageScript: string;
/** Closed after each test, passed or failed. */
const openWindows: Window[] = [];

/** The real page (graphHtml, its CSP and structure) with the bundled script run in it, after it said it is ready. */
function openPage(): Page {
  const errors: Error[] = [];
  const virtualConsole = new VirtualConsole();
  virtualConsole.on('jsdomError', (error) => errors.push(error));
  // No `resources` option: jsdom fetches nothing (no stylesheet, and no image a parsed text could name).
  const dom = new JSDOM(
    graphHtml({ cspSource: CSP_SOURCE, scriptUri: SCRIPT_URI, styleUri: `${CSP_SOURCE}/ext/dist/graph.css` }),
    { url: `${CSP_SOURCE}/ext/index.html`, runScripts: 'dangerously', pretendToBeVisual: true, virtualConsole },
  );
  const window = dom.window as unknown as Window & typeof globalThis;
  openWindows.push(window);
  const { document } = window;
  const posted: FromGraphPage[] = [];
  const drawnTexts: string[] = [];
  const textSizes: number[] = [];
  const strokes: Stroke[] = [];
  // The webview's API; a clone, because deepEqual compares prototypes and the page's objects are of its own realm.
  Object.assign(window, {
    acquireVsCodeApi: () => ({ postMessage: (message: FromGraphPage) => posted.push(structuredClone(message)) }),
    ResizeObserver: class {
      observe(): void {}
    },
  });
  // What a webview (Chromium) has and jsdom does not: a canvas, a laid-out view, pointer capture.
  Object.defineProperty(window.HTMLCanvasElement.prototype, 'getContext', {
    value: () => recordingContext(drawnTexts, textSizes, strokes),
  });
  Object.defineProperty(window.HTMLElement.prototype, 'clientWidth', { get: () => VIEW.width });
  Object.defineProperty(window.HTMLElement.prototype, 'clientHeight', { get: () => VIEW.height });
  Object.defineProperty(window.Element.prototype, 'setPointerCapture', { value: () => undefined });

  // The page's own <script src>, run with the bundle's text instead of a fetch.
  const scripts = [...document.querySelectorAll('script')];
  assert.deepEqual(
    scripts.map((script) => script.src),
    [SCRIPT_URI],
  );
  window.eval(pageScript);
  assert.deepEqual(posted, [{ type: 'ready' }]);
  const canvas = document.getElementById('graph') as HTMLCanvasElement;

  return {
    window,
    document,
    posted,
    drawnTexts,
    textSizes,
    strokes,
    errors,
    send: (message) => window.dispatchEvent(new window.MessageEvent('message', { data: message })),
    frame: () => new Promise((resolveFrame) => window.requestAnimationFrame(() => resolveFrame())),
    drawn: () => canvas.dataset,
    press: (key) => document.dispatchEvent(new window.KeyboardEvent('keydown', { key, bubbles: true })),
    pointer(type, layout, n) {
      const { scale, x, y } = canvas.dataset;
      const clientX = (layout.boxes[2 * n]! + BOX_WIDTH / 2) * Number(scale) + Number(x);
      const clientY = (layout.boxes[2 * n + 1]! + BOX_HEIGHT / 2) * Number(scale) + Number(y);
      canvas.dispatchEvent(new window.MouseEvent(type, { clientX, clientY, bubbles: true }));
    },
  };
}

/** Nothing any text carried became an element, an attribute handler or ran. */
function assertNothingInterpreted(page: Page): void {
  const elements = [...page.document.querySelectorAll('*')];
  const forbidden = elements.filter((element) => FORBIDDEN_ELEMENTS.includes(element.localName));
  // The page's one script is the page script itself.
  assert.deepEqual(
    forbidden.map((element) => element.outerHTML),
    [`<script src="${SCRIPT_URI}"></script>`],
    'no text became an element',
  );
  const inView = [...page.document.querySelectorAll('#view *')].map((element) => `${element.localName}#${element.id}`);
  assert.deepEqual(inView, VIEW_ELEMENTS, 'the view holds only its canvases and tooltip');
  const handlers = elements.flatMap((element) =>
    [...element.attributes].filter(({ name }) => name.toLowerCase().startsWith('on')).map(({ name }) => name),
  );
  assert.deepEqual(handlers, [], 'no element has an event handler attribute');
  assert.equal((page.window as unknown as { pwned?: unknown }).pwned, undefined, 'no text ran as script');
  assert.deepEqual(page.errors, [], 'the page threw nothing');
}

/** A `states` message as the extension makes it for a graph: tasks and their new states (none: no state). */
function statesOf(
  graph: DagGraph,
  reset: boolean,
  changes: readonly (readonly [taskId: string, state?: ShownState])[],
  running: boolean,
): ToGraphPage {
  const changed = new StateChanges(taskIndexes(graph));
  for (const [taskId, state] of changes) changed.add(taskId, state);
  return { type: 'states', reset, states: changed.posted(), running };
}

/** The graph the server sends: with its layout. */
function laidOut(graph: DagGraph): DagGraph {
  return {
    ...graph,
    layout: layOutTasks(
      graph.nodes.map(({ id }) => id),
      graph.edges,
    ),
  };
}

const status = (page: Page): string => page.document.getElementById('status')!.textContent ?? '';
const tooltip = (page: Page): string => page.document.getElementById('tooltip')!.textContent ?? '';

describe('the graph webview, rendered in a DOM', () => {
  before(async () => {
    pageScript = await bundlePageScript();
  });
  afterEach(() => {
    for (const window of openWindows.splice(0)) window.close();
  });

  test('draws hostile task ids, capabilities and the dag_id as text, cut to fit, and shows them whole on hover', async () => {
    const page = openPage();
    const dagId = `${HOSTILE.img}${HOSTILE.closesText}`;
    const nodes = [
      node(HOSTILE.img, HOSTILE.closesText, 1),
      node(HOSTILE.closesText, HOSTILE.svgOnload, 2),
      node(HOSTILE.svgOnload, HOSTILE.entities, 3),
      node(HOSTILE.entities, HOSTILE.foreignObject, 4),
      node(HOSTILE.foreignObject, HOSTILE.handler, 5),
      node(HOSTILE.handler, undefined, 6),
    ];
    const edges = nodes.slice(1).map((to, index) => edge(nodes[index]!.id, to.id));
    const graph = laidOut(graphOf(dagId, nodes, edges));
    page.send({ type: 'graph', graph: packGraph(graph), stale: false });
    await page.frame();
    assertNothingInterpreted(page);

    assert.ok(status(page).startsWith(`${dagId}: 6 tasks, 5 edges`), status(page));
    assert.equal(page.drawn().tasks, '6');
    // Every line of every box was drawn: the text itself, or its beginning and end around an ellipsis.
    const cutFrom = (text: string, line: string): boolean => {
      const [head, tail] = text.split('…') as [string, string | undefined];
      return tail !== undefined && head.length + tail.length > 0 && line.startsWith(head) && line.endsWith(tail);
    };
    for (const { id, capability } of nodes) {
      for (const line of capability === undefined ? [id] : [id, capability]) {
        assert.ok(
          page.drawnTexts.some((text) => text === line || cutFrom(text, line)),
          `drawn: ${line}`,
        );
      }
    }
    nodes.forEach(({ id, capability }, n) => {
      page.pointer('pointermove', graph.layout!, n);
      assert.equal(tooltip(page), capability === undefined ? id : `${id}\n${capability}`, `the tooltip of ${id}`);
    });
    assertNothingInterpreted(page);
  });

  test('says it is laying the graph out, with its task count once it has the graph, until the first frame', async () => {
    const page = openPage();
    const phase = page.document.getElementById('phase')!;
    const shown = (): [string | undefined, string, boolean] => [
      page.drawn().phase,
      phase.textContent ?? '',
      phase.hidden,
    ];
    assert.deepEqual(shown(), ['laying-out', 'Laying out the graph…', false]);
    const nodes = Array.from({ length: 1_200 }, (_, n) => node(`task_${n}`, 'echo', n));
    const edges = nodes.slice(1).map((to, n) => edge(nodes[n]!.id, to.id));
    page.send({ type: 'graph', graph: packGraph(laidOut(graphOf('dag_big', nodes, edges))), stale: false });
    assert.deepEqual(shown(), ['laying-out', 'Laying out 1,200 tasks…', false]);
    await page.frame();
    assert.deepEqual(shown(), ['drawn', '', true]);
    assert.equal(page.drawn().tasks, '1200');
  });

  test('a dangling edge shows the missing id as text in a "no such task" box', async () => {
    const page = openPage();
    const missing = `${HOSTILE.svgOnload}${HOSTILE.entities}`;
    const graph = laidOut(
      graphOf(undefined, [node(HOSTILE.img, 'echo')], [edge(HOSTILE.img, missing, { dangling: true })]),
    );
    page.send({ type: 'graph', graph: packGraph(graph), stale: true });
    await page.frame();
    assertNothingInterpreted(page);

    assert.match(
      status(page),
      /^DAG without a dag_id: 1 tasks, 1 edges · 1 to a missing task · the file is not valid JSON/,
    );
    page.pointer('pointermove', graph.layout!, 1);
    assert.equal(tooltip(page), `${missing}\nno such task`);
  });

  test('a cycle, a self-loop among them, is counted in the status line', async () => {
    const page = openPage();
    const [a, b] = [HOSTILE.closesText, HOSTILE.foreignObject];
    page.send({
      type: 'graph',
      graph: packGraph(
        laidOut(
          graphOf(
            HOSTILE.handler,
            [node(a, HOSTILE.img), node(b, HOSTILE.svgOnload)],
            [edge(a, b, { cycle: true }), edge(b, a, { cycle: true }), edge(b, b, { cycle: true })],
          ),
        ),
      ),
      stale: false,
    });
    await page.frame();
    assertNothingInterpreted(page);
    assert.equal(status(page), `${HOSTILE.handler}: 2 tasks, 3 edges · 3 on a cycle`);
  });

  test('run states arrive as changes, show in tooltips and the status line; the cursor marks its task', async () => {
    const page = openPage();
    const [a, b, c] = [HOSTILE.img, HOSTILE.entities, HOSTILE.closesText];
    const graph = laidOut(graphOf('dag_states', [node(a, 'echo'), node(b), node(c)]));
    page.send({ type: 'graph', graph: packGraph(graph), stale: false });
    // A task of the run the graph does not have (a run of another version of the text) counts, by its id.
    page.send(
      statesOf(
        graph,
        true,
        [
          [a, 'running'],
          [b, 'pending'],
          [HOSTILE.svgOnload, 'completed'],
        ],
        true,
      ),
    );
    page.send({ type: 'cursor', taskId: b });
    page.send(statesOf(graph, false, [[a, 'failed'], [b]], false));
    // A number that is no state, and an index the graph does not have: c has no state, nothing else changes.
    page.send({
      type: 'states',
      reset: false,
      states: { tasks: Uint32Array.of(2, 7), codes: Uint8Array.of(99, 3), others: [] },
      running: false,
    });
    await page.frame();
    assertNothingInterpreted(page);

    assert.equal(page.drawn().current, b);
    page.pointer('pointermove', graph.layout!, 0);
    assert.equal(tooltip(page), `${a}\necho\nfailed`);
    page.pointer('pointermove', graph.layout!, 1);
    assert.equal(tooltip(page), b, 'a state sent as none is gone');
    page.pointer('pointermove', graph.layout!, 2);
    assert.equal(tooltip(page), c);
    assert.match(status(page), / · last run: 2\/2 finished$/);

    // A new graph forgets the states until its own follow, by its own indexes.
    const reordered = laidOut(graphOf('dag_states', [node(c), node(a, 'echo')]));
    page.send({ type: 'graph', graph: packGraph(reordered), stale: false });
    page.send(statesOf(reordered, true, [[a, 'completed']], false));
    await page.frame();
    page.pointer('pointermove', reordered.layout!, 1);
    assert.equal(tooltip(page), `${a}\necho\ncompleted`);
    page.pointer('pointermove', reordered.layout!, 0);
    assert.equal(tooltip(page), c);
    assert.match(status(page), / · last run: 1\/1 finished$/);
  });

  test('a task completed from the result store is told from one that ran, and counts as finished', async () => {
    const page = openPage();
    const graph = laidOut(graphOf('dag_cached', [node('task_split'), node('task_score')]));
    page.send({ type: 'graph', graph: packGraph(graph), stale: false });
    page.send(
      statesOf(
        graph,
        true,
        [
          ['task_split', 'cached'],
          ['task_score', 'completed'],
        ],
        false,
      ),
    );
    await page.frame();
    page.pointer('pointermove', graph.layout!, 0);
    assert.equal(tooltip(page), 'task_split\ncompleted from the result store');
    page.pointer('pointermove', graph.layout!, 1);
    assert.equal(tooltip(page), 'task_score\ncompleted');
    assert.match(status(page), / · last run: 2\/2 finished$/);
    assert.ok(
      [...page.window.document.querySelectorAll('#legend li')].some((item) => item.textContent === 'cached'),
      'the legend shows how a cached task looks',
    );
  });

  test('states reach the boxes of focus mode, and the whole graph keeps them', async () => {
    const page = openPage();
    const ids = Array.from({ length: 10 }, (_, n) => `task_${n}`);
    const edges = ids.slice(1).map((id, n) => edge(ids[n]!, id));
    const graph = laidOut(
      graphOf(
        'dag_chain',
        ids.map((id) => node(id)),
        edges,
      ),
    );
    page.send({ type: 'graph', graph: packGraph(graph), stale: false });
    page.send(statesOf(graph, true, [[ids[5]!, 'running']], true));
    page.send({ type: 'cursor', taskId: ids[5] });
    page.press('[');
    page.press('f');
    await page.frame();
    assert.equal(page.drawn().tasks, '3', 'task_4 to task_6');
    page.send(
      statesOf(
        graph,
        false,
        [
          [ids[6]!, 'completed'],
          [ids[0]!, 'failed'],
        ],
        true,
      ),
    );
    await page.frame();
    const near = ids.slice(4, 7);
    const focusLayout = layOutTasks(
      near,
      edges.filter((candidate) => near.includes(candidate.from) && near.includes(candidate.to)),
    );
    const expected = [`${ids[4]}`, `${ids[5]}\nrunning`, `${ids[6]}\ncompleted`];
    for (const [n, text] of expected.entries()) {
      page.pointer('pointermove', focusLayout, n);
      assert.equal(tooltip(page), text);
    }
    page.press('f');
    await page.frame();
    for (const [n, text] of [
      [0, `${ids[0]}\nfailed`],
      [6, `${ids[6]}\ncompleted`],
    ] as const) {
      page.pointer('pointermove', graph.layout!, n);
      assert.equal(tooltip(page), text);
    }
    assert.match(status(page), / · run: 2\/3 finished, 1 running$/);
  });

  test('clicking a task asks to reveal it by its exact id and moves the highlight at once', async () => {
    const page = openPage();
    const ids = [HOSTILE.svgOnload, HOSTILE.handler];
    const graph = laidOut(
      graphOf(
        'dag_reveal',
        ids.map((id) => node(id)),
      ),
    );
    page.send({ type: 'graph', graph: packGraph(graph), stale: false });
    page.send({ type: 'cursor', taskId: ids[0] });
    await page.frame();

    page.pointer('pointerdown', graph.layout!, 1);
    page.pointer('pointerup', graph.layout!, 1);
    await page.frame();
    assert.equal(page.drawn().current, ids[1]);
    assert.deepEqual(page.posted, [{ type: 'ready' }, { type: 'drawn' }, { type: 'reveal', taskId: ids[1] }]);
    assertNothingInterpreted(page);
  });

  test('the critical path: its boxes ringed and its edges thick in its own colour, named in the status line', async () => {
    // a → b → c is the critical path; a → d is not on it.
    const nodes = ['task_a', 'task_b', 'task_c', 'task_d'].map((id) => node(id));
    const edges = [edge('task_a', 'task_b'), edge('task_b', 'task_c'), edge('task_a', 'task_d')];
    const plain = laidOut(graphOf('dag_critical', nodes, edges));
    const critical: DagGraph = {
      ...plain,
      criticalPath: { taskIds: ['task_a', 'task_b', 'task_c'], by: 'latency', latencyMs: 3200, unknownLatency: 0 },
    };
    const page = openPage();
    page.send({ type: 'graph', graph: packGraph(critical), stale: false });
    await page.frame();
    assert.equal(status(page), 'dag_critical: 4 tasks, 3 edges · critical path: 3 tasks, 3.2 s');
    // The theme's colour where it has one; the page's fallback in a DOM without VS Code's styles.
    const inColour = page.strokes.filter((stroke) => stroke.colour === CRITICAL_COLOUR);
    assert.ok(
      inColour.some((stroke) => stroke.rects === 3),
      `the three boxes on it ringed: ${JSON.stringify(inColour)}`,
    );
    const thickEdges = inColour.filter((stroke) => stroke.rects === 0 && stroke.lines > 0);
    const plainWidth = Math.max(
      ...page.strokes
        .filter((stroke) => stroke.colour !== CRITICAL_COLOUR && stroke.rects === 0 && stroke.lines > 0)
        .map((stroke) => stroke.width),
    );
    assert.ok(
      thickEdges.length > 0 && thickEdges.every((stroke) => stroke.width >= 2 * plainWidth),
      'its edges drawn thick',
    );
    // Its two edges, each a line: a → d is drawn with the others.
    assert.equal(thickEdges[0]!.lines, 2);

    const without = openPage();
    without.send({ type: 'graph', graph: packGraph(plain), stale: false });
    await without.frame();
    assert.equal(status(without), 'dag_critical: 4 tasks, 3 edges');
    assert.deepEqual(
      without.strokes.filter((stroke) => stroke.colour === CRITICAL_COLOUR && stroke.lines + stroke.rects > 0),
      [],
    );

    // Unknown latencies on it: at least that long; none known: the longest chain.
    const partly = { ...critical, criticalPath: { ...critical.criticalPath!, unknownLatency: 1 } };
    page.send({ type: 'graph', graph: packGraph(partly), stale: false });
    await page.frame();
    assert.match(status(page), / · critical path: 3 tasks, ≥ 3\.2 s$/);
    const byDepth = { ...critical, criticalPath: { taskIds: ['task_a', 'task_b', 'task_c'], by: 'depth' as const } };
    page.send({ type: 'graph', graph: packGraph(byDepth), stale: false });
    await page.frame();
    assert.match(status(page), / · critical path: 3 tasks \(the longest chain: no latency known\)$/);
    assertNothingInterpreted(page);
  });

  test("the plan's critical path, following the first graph's longest chain, is drawn with the run's states kept", async () => {
    const nodes = ['task_a', 'task_b', 'task_c', 'task_d'].map((id) => node(id));
    const edges = [edge('task_a', 'task_b'), edge('task_b', 'task_c'), edge('task_a', 'task_d')];
    const graph: DagGraph = {
      ...laidOut(graphOf('dag_critical', nodes, edges)),
      criticalPath: { taskIds: ['task_a', 'task_b', 'task_c'], by: 'depth' },
    };
    const page = openPage();
    page.send({ type: 'graph', graph: packGraph(graph), stale: false });
    page.send(
      statesOf(
        graph,
        true,
        [
          ['task_a', 'completed'],
          ['task_d', 'running'],
        ],
        true,
      ),
    );
    await page.frame();
    assert.deepEqual(page.posted, [{ type: 'ready' }, { type: 'drawn' }], 'the first frame is told, once');
    assert.match(
      status(page),
      / · critical path: 3 tasks \(the longest chain: no latency known\) · run: 1\/2 finished, 1 running$/,
    );

    // The plan finds a → d the longest by latency.
    page.send({
      type: 'criticalPath',
      criticalPath: { taskIds: ['task_a', 'task_d'], by: 'latency', latencyMs: 5000, unknownLatency: 0 },
    });
    page.strokes.length = 0;
    await page.frame();
    assert.match(status(page), / · critical path: 2 tasks, 5\.0 s · run: 1\/2 finished, 1 running$/);
    const ringed = page.strokes.filter((stroke) => stroke.colour === CRITICAL_COLOUR && stroke.rects > 0);
    assert.deepEqual(
      ringed.map((stroke) => stroke.rects),
      [2],
      'the two boxes of the new path ringed',
    );
    assert.deepEqual(page.posted, [{ type: 'ready' }, { type: 'drawn' }], 'not a first frame again');
    assertNothingInterpreted(page);
  });

  test('every box in view shows its id, cut in the middle, from 60 px wide and in text of 11 px or more; none below', async () => {
    const page = openPage();
    // Three layers of ten, each task reading one of the layer above.
    const ids = Array.from({ length: 30 }, (_, n) => `task_sentiment_${String(n).padStart(4, '0')}`);
    const graph = laidOut(
      graphOf(
        'dag_layers',
        ids.map((id) => node(id, 'sentiment-analysis')),
        ids.slice(10).map((id, n) => edge(ids[n]!, id)),
      ),
    );
    page.send({ type: 'graph', graph: packGraph(graph), stale: false });
    await page.frame();
    const boxWidth = (): number => Number(page.drawn().boxWidth);
    const zoomUntil = async (key: string, done: () => boolean): Promise<void> => {
      for (let presses = 0; !done(); presses++) {
        assert.ok(presses < 40, `zoomed by ${key} to ${boxWidth()} px boxes`);
        page.press(key);
        await page.frame();
      }
    };
    await zoomUntil('-', () => boxWidth() < 45);
    page.drawnTexts.length = 0;
    page.press('-');
    await page.frame();
    assert.equal(page.drawn().labelledBoxes, '0', `no text on ${boxWidth()} px boxes`);
    assert.deepEqual(page.drawnTexts, []);

    await zoomUntil('+', () => boxWidth() >= 55);
    page.drawnTexts.length = 0;
    page.textSizes.length = 0;
    page.press('+');
    page.press('-');
    await page.frame();
    assert.ok(boxWidth() >= 55 && boxWidth() <= 80, `boxes of about 60 px: ${boxWidth()}`);
    const { visibleBoxes, labelledBoxes } = page.drawn();
    assert.ok(Number(visibleBoxes) > 0);
    assert.equal(labelledBoxes, visibleBoxes, 'every box in view labelled');
    // Cut near the start: the ends that tell ids apart are kept.
    assert.ok(
      page.drawnTexts.some((text) => /^t\w*…\w*\d{4}$/.test(text)),
      `ids cut in the middle: ${page.drawnTexts.slice(0, 5).join(', ')}`,
    );
    assert.ok(Math.min(...page.textSizes) >= 11, `text sizes: ${[...new Set(page.textSizes)].join(', ')}`);
    assertNothingInterpreted(page);
  });

  test('the overview shows only while part of the graph is out of sight: never over a small graph it would cover', async () => {
    const page = openPage();
    const ids = ['task_a', 'task_b', 'task_c', 'task_d'];
    const graph = laidOut(
      graphOf(
        'dag_small',
        ids.map((id) => node(id)),
        [edge('task_a', 'task_b')],
      ),
    );
    page.send({ type: 'graph', graph: packGraph(graph), stale: false });
    await page.frame();
    const overview = page.document.getElementById('overview')!;
    assert.equal(overview.hidden, true, 'all of it in sight at fit');
    for (let press = 0; press < 8; press++) page.press('+');
    await page.frame();
    assert.equal(overview.hidden, false, 'zoomed in: part of it out of sight');
    page.press('0');
    await page.frame();
    assert.equal(overview.hidden, true, 'fitted again');
  });

  test("the hovered task's edges are drawn strong, with arrowheads, over the light ones", async () => {
    const page = openPage();
    const ids = ['task_a', 'task_b', 'task_c', 'task_d'];
    const graph = laidOut(
      graphOf(
        'dag_fan',
        ids.map((id) => node(id)),
        [edge('task_a', 'task_b'), edge('task_a', 'task_c'), edge('task_c', 'task_d')],
      ),
    );
    page.send({ type: 'graph', graph: packGraph(graph), stale: false });
    await page.frame();
    const edgeStrokes = (): Stroke[] => page.strokes.filter((stroke) => stroke.rects === 0 && stroke.lines > 0);
    const [light] = edgeStrokes();
    assert.equal(light!.lines, 3, 'every edge, one line each: no arrowheads');
    assert.equal(page.drawn().visibleBoxes, '4');
    page.strokes.length = 0;
    page.pointer('pointermove', graph.layout!, 2);
    await page.frame();
    // (The zoomed-out image is painted between frames too, in the light colour.)
    const strong = edgeStrokes().filter((stroke) => stroke.colour !== light!.colour);
    assert.ok(strong.every((stroke) => stroke.width > light!.width));
    // task_c's two edges, each a line and an arrowhead.
    assert.deepEqual(
      strong.map((stroke) => stroke.lines),
      [4],
    );
  });

  test('keys zoom and fit; focus shows the tasks n levels around the cursor', async () => {
    const page = openPage();
    // A chain task_0 → task_1 → ... → task_9.
    const ids = Array.from({ length: 10 }, (_, n) => `task_${n}`);
    const graph = laidOut(
      graphOf(
        'dag_chain',
        ids.map((id) => node(id)),
        ids.slice(1).map((id, n) => edge(ids[n]!, id)),
      ),
    );
    page.send({ type: 'graph', graph: packGraph(graph), stale: false });
    await page.frame();
    const fitted = Number(page.drawn().scale);
    page.press('+');
    await page.frame();
    assert.ok(Number(page.drawn().scale) > fitted, 'zoomed in');
    page.press('0');
    await page.frame();
    assert.equal(Number(page.drawn().scale), fitted, 'fitted again');

    page.send({ type: 'cursor', taskId: 'task_5' });
    page.press('f');
    await page.frame();
    assert.equal(page.drawn().focus, 'task_5');
    assert.equal(page.drawn().tasks, '5', 'task_3 to task_7: two levels up and down');
    page.press('[');
    await page.frame();
    assert.equal(page.drawn().tasks, '3');
    assert.match(status(page), /focus: task_5, 1 level up and down \(3 tasks\)/);
    page.press('f');
    await page.frame();
    assert.equal(page.drawn().focus, '');
    assert.equal(page.drawn().tasks, '10');
    assertNothingInterpreted(page);
  });

  test('Fit shows 1,000 tasks as their shape, groups labelled legibly; a click expands one, S and the toolbar switch', async () => {
    const page = openPage();
    // Ten layers of 100, each task reading one of the layer above.
    const ids = Array.from({ length: 1_000 }, (_, n) => `task_${Math.floor(n / 100)}_${n % 100}`);
    const graph = laidOut(
      graphOf(
        'dag_layers',
        ids.map((id) => node(id, 'echo')),
        ids.slice(100).map((id, n) => edge(ids[n]!, id)),
      ),
    );
    page.send({ type: 'graph', graph: packGraph(graph), stale: false });
    await page.frame();
    assert.deepEqual([page.drawn().view, page.drawn().groups, page.drawn().tasks], ['shape', '10', '1000']);
    assert.match(status(page), /shape: 1,000 tasks in 10 groups by id prefix/);
    const select = page.document.getElementById('shape') as HTMLSelectElement;
    assert.equal(select.value, 'shape prefix', 'the toolbar says what is shown');
    const labels = page.drawnTexts.flatMap((text, k) => (text.startsWith('task_') ? [[text, page.textSizes[k]]] : []));
    assert.equal(labels.length, 10, `every group labelled: ${JSON.stringify(labels)}`);
    assert.ok(
      labels.every(([text, size]) => text === 'task_… ×100' && Number(size) >= 11),
      JSON.stringify(labels),
    );
    assert.ok(page.drawnTexts.includes('×100'), 'the edges between groups say how many task edges they are');

    // The shape's layout: one group a layer, in a column.
    const column = { boxes: Array.from({ length: 10 }, (_, layer) => [0, layer * (BOX_HEIGHT + 56)]).flat() };
    // During a run a group takes the state that tells most of its tasks': one running, the group runs.
    page.send(
      statesOf(
        graph,
        true,
        [
          ['task_0_0', 'completed'],
          ['task_0_1', 'running'],
          ['task_1_0', 'pending'],
        ],
        true,
      ),
    );
    await page.frame();
    page.pointer('pointermove', column, 0);
    assert.equal(tooltip(page), 'task_… ×100\necho\nrunning');
    page.pointer('pointermove', column, 1);
    assert.equal(tooltip(page), 'task_… ×100\necho\npending');
    page.pointer('pointerdown', column, 3);
    page.pointer('pointerup', column, 3);
    await page.frame();
    assert.deepEqual([page.drawn().groups, page.drawn().expanded, page.drawn().tasks], ['9', '1', '1000']);
    assert.match(status(page), /shape: 900 tasks in 9 groups by id prefix, 100 tasks expanded/);
    assert.deepEqual(page.posted, [{ type: 'ready' }, { type: 'drawn' }], 'a group is expanded, not revealed');

    page.press('s');
    await page.frame();
    assert.deepEqual([page.drawn().view, page.drawn().groups], ['tasks', '0']);
    page.press('0');
    await page.frame();
    assert.equal(page.drawn().view, 'tasks', "Fit keeps the user's choice");
    select.value = 'shape capability';
    select.dispatchEvent(new page.window.Event('change'));
    await page.frame();
    assert.deepEqual([page.drawn().view, page.drawn().groupBy, page.drawn().expanded], ['shape', 'capability', '0']);
    assert.match(status(page), /shape: 1,000 tasks in 10 groups by capability/);
    assertNothingInterpreted(page);
  });
});
