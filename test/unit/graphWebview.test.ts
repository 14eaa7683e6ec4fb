// The graph webview's page script, run in a DOM: whatever text the extension posts (task ids, capabilities, the
// dag_id, run states) is shown as text, never parsed as markup, and nothing it carries creates an element or handler.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, before, describe, test } from 'node:test';
import * as esbuild from 'esbuild';
import { JSDOM, VirtualConsole } from 'jsdom';
import { type FromGraphPage, type ToGraphPage, graphHtml } from '../../client/src/graphPage';
import type { DagGraph } from '../../server/src/protocol/run';
import type { TaskState } from '../../server/src/run/types';

const ROOT = resolve(__dirname, '../..');
const CSP_SOURCE = 'https://file+.vscode-resource.vscode-cdn.net';
const SCRIPT_URI = `${CSP_SOURCE}/ext/dist/graph.js`;
/** jsdom lays nothing out: a text is as wide as this many pixels a character, enough for dagre to place boxes. */
const CHARACTER_WIDTH = 7;

/** Texts that do something when parsed as HTML or SVG. */
const HOSTILE = {
  img: '<img src=x onerror="globalThis.pwned=1">',
  closesText: '</text><script>globalThis.pwned=1</script>',
  svgOnload: '"><svg onload="globalThis.pwned=1">',
  entities: '&lt;b&gt;bold?&lt;/b&gt; &amp; &#60;i&#62;',
  foreignObject: '<foreignObject><iframe srcdoc="<script>parent.pwned=1</script>"></iframe></foreignObject>',
  handler: '<g onclick="globalThis.pwned=1">click</g>',
} as const;

const SVG_NAMESPACE = 'http://www.w3.org/2000/svg';
/** The SVG elements the script draws, and elements no text may become: anything else came from parsed text. */
const SVG_ELEMENTS = new Set(['svg', 'defs', 'marker', 'path', 'g', 'rect', 'text', 'title']);
const FORBIDDEN_ELEMENTS = ['img', 'script', 'foreignObject', 'iframe', 'object', 'embed', 'style', 'a'];

/** The page script, bundled as `npm run build` bundles it (esbuild.mjs), so the test needs no build before it. */
async function bundlePageScript(): Promise<string> {
  const { outputFiles } = await esbuild.build({
    entryPoints: [join(ROOT, 'client/webview/graph.ts')],
    outdir: join(tmpdir(), 'acmp-graph-webview-test'),
    write: false,
    bundle: true,
    platform: 'browser',
    target: 'es2022',
    format: 'iife',
    mainFields: ['module', 'main'],
    logLevel: 'silent',
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
  /** The elements `scrollIntoView` was called on. */
  readonly scrolledTo: Element[];
  /** Exceptions inside the page (a message handler that threw), which a browser would only log. */
  readonly errors: Error[];
  /** Delivers a message from the extension the way a webview does: a `message` event on the window. */
  send(message: ToGraphPage): void;
  /** The drawn boxes (tasks and missing tasks), by the text of their first line. */
  boxes(): Map<string, SVGGElement>;
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
    { url: `${CSP_SOURCE}/ext/index.html`, runScripts: 'dangerously', virtualConsole },
  );
  const window = dom.window as unknown as Window & typeof globalThis;
  openWindows.push(window);
  const { document } = window;
  const posted: FromGraphPage[] = [];
  const scrolledTo: Element[] = [];
  // The webview's API; a clone, because deepEqual compares prototypes and the page's objects are of its own realm.
  Object.assign(window, {
    acquireVsCodeApi: () => ({ postMessage: (message: FromGraphPage) => posted.push(structuredClone(message)) }),
  });
  // What a webview (Chromium) has and jsdom does not: structuredClone (dagre's layout uses it), text measuring and
  // scrolling.
  Object.assign(window, { structuredClone });
  Object.defineProperty(window.SVGElement.prototype, 'getComputedTextLength', {
    value(this: Element): number {
      return CHARACTER_WIDTH * (this.textContent ?? '').length;
    },
  });
  Object.defineProperty(window.Element.prototype, 'scrollIntoView', {
    value(this: Element): void {
      scrolledTo.push(this);
    },
  });

  // The page's own <script src>, run with the bundle's text instead of a fetch.
  const scripts = [...document.querySelectorAll('script')];
  assert.deepEqual(
    scripts.map((script) => script.src),
    [SCRIPT_URI],
  );
  window.eval(pageScript);
  assert.deepEqual(posted, [{ type: 'ready' }]);

  return {
    window,
    document,
    posted,
    scrolledTo,
    errors,
    send: (message) => window.dispatchEvent(new window.MessageEvent('message', { data: message })),
    boxes: () =>
      new Map(
        [...document.querySelectorAll<SVGGElement>('#graph g.task, #graph g.missing')].map((group) => [
          group.querySelector('text')?.textContent ?? '',
          group,
        ]),
      ),
  };
}

/** The lines a box shows, in order. */
const linesOf = (group: SVGGElement | undefined): string[] =>
  [...(group?.querySelectorAll(':scope > text') ?? [])].map((text) => text.textContent ?? '');

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
  const drawn = elements.filter((element) => element.closest('#graph') !== null && element.id !== 'graph');
  assert.deepEqual(
    drawn
      .filter((element) => element.namespaceURI !== SVG_NAMESPACE || !SVG_ELEMENTS.has(element.localName))
      .map((element) => element.outerHTML),
    [],
    'the graph holds only the SVG elements the script draws',
  );
  const handlers = elements.flatMap((element) =>
    [...element.attributes].filter(({ name }) => name.toLowerCase().startsWith('on')).map(({ name }) => name),
  );
  assert.deepEqual(handlers, [], 'no element has an event handler attribute');
  assert.equal((page.window as unknown as { pwned?: unknown }).pwned, undefined, 'no text ran as script');
  assert.deepEqual(page.errors, [], 'the page threw nothing');
}

describe('the graph webview, rendered in a DOM', () => {
  before(async () => {
    pageScript = await bundlePageScript();
  });
  afterEach(() => {
    for (const window of openWindows.splice(0)) window.close();
  });

  test('shows hostile task ids, capabilities and the dag_id as text, exactly as written', () => {
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
    page.send({ type: 'graph', graph: graphOf(dagId, nodes, edges), stale: false });
    assertNothingInterpreted(page);

    const status = page.document.getElementById('status')!.textContent ?? '';
    assert.ok(status.startsWith(`${dagId}: 6 tasks, 5 edges`), status);
    const boxes = page.boxes();
    assert.deepEqual([...boxes.keys()].sort(), nodes.map(({ id }) => id).sort());
    for (const { id, capability } of nodes) {
      const group = boxes.get(id);
      const lines = capability === undefined ? [id] : [id, capability];
      assert.deepEqual(linesOf(group), lines, `the box of ${id}`);
      assert.equal(group?.querySelector('title')?.textContent, lines.join('\n'), `the tooltip of ${id}`);
      assert.equal(group?.getAttribute('aria-label'), lines.join(', '), `the label of ${id}`);
    }
    assert.equal(page.document.querySelectorAll('#graph path.edge.plain').length, 5);
  });

  test('a dangling edge shows the missing id as text in a "no such task" box', () => {
    const page = openPage();
    const missing = `${HOSTILE.svgOnload}${HOSTILE.entities}`;
    page.send({
      type: 'graph',
      graph: graphOf(undefined, [node(HOSTILE.img, 'echo')], [edge(HOSTILE.img, missing, { dangling: true })]),
      stale: true,
    });
    assertNothingInterpreted(page);

    const status = page.document.getElementById('status')!.textContent ?? '';
    assert.match(status, /^DAG without a dag_id: 1 tasks, 1 edges · 1 to a missing task · the file is not valid JSON/);
    const box = page.boxes().get(missing);
    assert.equal(box?.getAttribute('class'), 'missing');
    assert.deepEqual(linesOf(box), [missing, 'no such task']);
    assert.equal(page.document.querySelectorAll('#graph path.edge.dangling').length, 1);
  });

  test('a cycle, a self-loop among them, is drawn between boxes that show their hostile ids as text', () => {
    const page = openPage();
    const [a, b] = [HOSTILE.closesText, HOSTILE.foreignObject];
    page.send({
      type: 'graph',
      graph: graphOf(
        HOSTILE.handler,
        [node(a, HOSTILE.img), node(b, HOSTILE.svgOnload)],
        [edge(a, b, { cycle: true }), edge(b, a, { cycle: true }), edge(b, b, { cycle: true })],
      ),
      stale: false,
    });
    assertNothingInterpreted(page);

    assert.equal(
      page.document.getElementById('status')!.textContent,
      `${HOSTILE.handler}: 2 tasks, 3 edges · 3 on a cycle`,
    );
    const boxes = page.boxes();
    assert.deepEqual(linesOf(boxes.get(a)), [a, HOSTILE.img]);
    assert.deepEqual(linesOf(boxes.get(b)), [b, HOSTILE.svgOnload]);
    assert.equal(page.document.querySelectorAll('#graph path.edge.cycle').length, 3);
  });

  test('run states and the cursor mark the right hostile-named task; its tooltip shows the state as text', () => {
    const page = openPage();
    const [a, b, c] = [HOSTILE.img, HOSTILE.entities, HOSTILE.closesText];
    // What the extension posts on `ready`: the graph, every state, the cursor.
    page.send({ type: 'graph', graph: graphOf('dag_states', [node(a, 'echo'), node(b), node(c)]), stale: false });
    page.send({ type: 'states', states: { [a]: 'running', [b]: 'pending' } });
    page.send({ type: 'cursor', taskId: b });
    page.send({ type: 'state', taskId: a, state: 'failed' });
    // The type allows five states only; a string the page is given must still never be parsed.
    page.send({ type: 'state', taskId: c, state: HOSTILE.svgOnload as TaskState });
    assertNothingInterpreted(page);

    const boxes = page.boxes();
    assert.equal(boxes.get(a)?.getAttribute('class'), 'task state-failed');
    assert.equal(boxes.get(a)?.querySelector('title')?.textContent, `${a}\necho\nfailed`);
    assert.equal(boxes.get(b)?.getAttribute('class'), 'task state-pending current');
    assert.equal(boxes.get(b)?.querySelector('title')?.textContent, `${b}\npending`);
    assert.equal(boxes.get(c)?.querySelector('title')?.textContent, `${c}\n${HOSTILE.svgOnload}`);
    assert.equal(boxes.get(c)?.getAttribute('aria-label'), `${c}, ${HOSTILE.svgOnload}`);
    assert.deepEqual(page.scrolledTo, [boxes.get(b)], 'the cursor task is scrolled into view');
  });

  test('clicking or pressing Enter on a task asks to reveal it by its exact id', () => {
    const page = openPage();
    const ids = [HOSTILE.svgOnload, HOSTILE.handler];
    const nodes = ids.map((id) => node(id));
    page.send({ type: 'graph', graph: graphOf('dag_reveal', nodes), stale: false });
    assertNothingInterpreted(page);

    const boxes = page.boxes();
    boxes.get(ids[0]!)?.dispatchEvent(new page.window.MouseEvent('click', { bubbles: true }));
    boxes.get(ids[1]!)?.dispatchEvent(new page.window.KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    assert.deepEqual(page.posted, [
      { type: 'ready' },
      { type: 'reveal', taskId: ids[0] },
      { type: 'reveal', taskId: ids[1] },
    ]);
  });
});
