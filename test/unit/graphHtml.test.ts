// The graph webview's page: a strict Content-Security-Policy, no inline script or style, nothing from the network.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type DrawnGraph, drawnAlike, graphHtml, packGraph, unpackGraph } from '../../client/src/graphPage';
import { layOutTasks } from '../../server/src/dag/layout';
import type { DagGraph } from '../../server/src/protocol/runMessages';

const CSP_SOURCE = 'https://file+.vscode-resource.vscode-cdn.net';
const resources = {
  cspSource: CSP_SOURCE,
  scriptUri: `${CSP_SOURCE}/ext/dist/graph.js`,
  styleUri: `${CSP_SOURCE}/ext/dist/graph.css`,
};
const html = graphHtml(resources);

/** The page with the webview's own resource origin taken out: what is left may reach nothing. */
const withoutWebviewResources = html.replaceAll(CSP_SOURCE, 'WEBVIEW');

describe('the graph webview page', () => {
  test("has a strict Content-Security-Policy: nothing by default, scripts and styles from the webview only, the drawing's worker from the page's own blob", () => {
    const policies = [...html.matchAll(/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/g)];
    assert.equal(policies.length, 1);
    const directives = policies[0]![1]!.split(';').map((directive) => directive.trim());
    assert.deepEqual(directives, [
      `default-src 'none'`,
      `script-src ${CSP_SOURCE}`,
      `style-src ${CSP_SOURCE}`,
      'worker-src blob:',
    ]);
    assert.doesNotMatch(html, /unsafe-inline|unsafe-eval|nonce-/);
  });

  test('loads its script and style sheet from the webview and holds no inline script, style or handler', () => {
    assert.deepEqual(
      [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)].map(([, attributes, body]) => [attributes, body]),
      [[` src="${resources.scriptUri}"`, '']],
    );
    assert.ok(html.includes(`<link rel="stylesheet" href="${resources.styleUri}">`));
    assert.doesNotMatch(html, /<style\b|\sstyle=|\son[a-z]+=/i);
  });

  test('names no http(s) resource besides the webview origin', () => {
    assert.doesNotMatch(withoutWebviewResources, /https?:/);
  });

  test('escapes what it is given into attributes', () => {
    const hostile = graphHtml({ ...resources, scriptUri: '"><script>alert(1)</script>' });
    assert.equal([...hostile.matchAll(/<script\b/g)].length, 1);
    assert.match(hostile, /src="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
  });

  test('a graph reaches the page whole: packed into typed arrays, through a structured clone, unpacked', () => {
    const nodes = [
      { id: 'a', capability: 'echo', line: 3, character: 6 },
      { id: 'b', capability: undefined, line: 9, character: 6 },
      { id: 'c <&>', capability: 'cap:x', line: 14, character: 8 },
    ];
    const edges = [
      { from: 'a', to: 'b', cycle: false, dangling: false, streamEligible: true },
      { from: 'b', to: 'c <&>', cycle: true, dangling: false, streamEligible: false },
      { from: 'c <&>', to: 'b', cycle: true, dangling: false, streamEligible: false },
      { from: 'ghost', to: 'a', cycle: false, dangling: true, streamEligible: false },
      { from: 'b', to: 'b', cycle: true, dangling: false, streamEligible: false },
    ];
    const ids = nodes.map(({ id }) => id);
    const graph: DagGraph = {
      version: 3,
      parsed: true,
      dagId: 'dag_x',
      nodes,
      edges,
      layout: layOutTasks(ids, edges),
      criticalPath: { taskIds: ['a', 'b'], by: 'latency', latencyMs: 1500, unknownLatency: 1 },
    };
    const packed = packGraph(graph);
    assert.deepEqual(packed.names, ['a', 'b', 'c <&>', 'ghost']);
    // A straight route to the next layer down goes without its points; the upward one closing the cycle and the
    // self-loop go with theirs.
    const { routeStarts } = packed.layout!;
    const sentRoutes = Array.from(routeStarts.subarray(1), (end, e) => end > routeStarts[e]!);
    assert.deepEqual(sentRoutes, [false, false, true, false, true]);
    // Coordinates travel in single precision: a self-loop's thirds of a box come back within a thousandth.
    const rounded = (value: unknown): unknown =>
      JSON.parse(JSON.stringify(value), (_, item: unknown) =>
        typeof item === 'number' ? Math.round(item * 100) / 100 : item,
      );
    // What the page draws: the tasks without their positions (the extension reveals a task by its id).
    const drawn = ({ parsed, dagId, nodes: declared, edges: joined, layout, criticalPath }: DagGraph): DrawnGraph => ({
      parsed,
      dagId,
      nodes: declared.map(({ id, capability }) => ({ id, capability })),
      edges: joined,
      ...(layout !== undefined && { layout }),
      ...(criticalPath !== undefined && { criticalPath }),
    });
    assert.deepEqual(rounded(unpackGraph(structuredClone(packed))), rounded(drawn(graph)));
    const withoutLayout: DagGraph = { version: 4, parsed: false, dagId: undefined, nodes, edges };
    assert.deepEqual(unpackGraph(structuredClone(packGraph(withoutLayout))), drawn(withoutLayout));
  });

  test('a graph travels small: indexes in two bytes where they fit, each capability once, no empty routes', () => {
    const ids = Array.from({ length: 1_000 }, (_, n) => `task_${Math.floor(n / 100)}_${n % 100}`);
    const edges = ids.slice(100).map((id, n) => ({
      from: ids[n]!,
      to: id,
      cycle: false,
      dangling: false,
      streamEligible: false,
    }));
    const graph: DagGraph = {
      version: 1,
      parsed: true,
      dagId: 'dag_layers',
      nodes: ids.map((id, n) => ({ id, capability: n % 2 === 0 ? 'echo' : 'text-split', line: n, character: 6 })),
      edges,
      layout: layOutTasks(ids, edges),
    };
    const packed = packGraph(graph);
    assert.ok(packed.edgeEnds instanceof Uint16Array && packed.capabilities instanceof Uint16Array);
    assert.deepEqual(packed.capabilityNames, ['echo', 'text-split']);
    // Every edge goes to the next layer down, straight: no route is sent, nor where each would start.
    assert.deepEqual([packed.layout!.routePoints.length, packed.layout!.routeStarts.length], [0, 0]);
    assert.deepEqual(unpackGraph(structuredClone(packed)).layout!.routes, graph.layout!.routes);
  });

  test('a graph is drawn again only when what is drawn changed: not for text that only moved', () => {
    const graph: DagGraph = {
      version: 1,
      parsed: true,
      dagId: 'dag_x',
      nodes: [
        { id: 'a', capability: 'echo', line: 3, character: 6 },
        { id: 'b', capability: 'echo', line: 9, character: 6 },
      ],
      edges: [{ from: 'a', to: 'b', cycle: false, dangling: false, streamEligible: false }],
      criticalPath: { taskIds: ['a', 'b'], by: 'depth' },
    };
    const moved = { ...graph, version: 2, nodes: graph.nodes.map((node) => ({ ...node, line: node.line + 1 })) };
    assert.equal(drawnAlike(graph, moved), true);
    const changes: DagGraph[] = [
      { ...graph, dagId: 'dag_y' },
      { ...graph, parsed: false },
      { ...graph, nodes: [graph.nodes[0]!, { ...graph.nodes[1]!, capability: 'sentiment-analysis' }] },
      { ...graph, nodes: [...graph.nodes, { id: 'c', capability: 'echo', line: 12, character: 6 }] },
      { ...graph, edges: [{ ...graph.edges[0]!, streamEligible: true }] },
      { ...graph, edges: [{ ...graph.edges[0]!, to: 'c', dangling: true }] },
      { ...graph, criticalPath: { taskIds: ['a', 'b'], by: 'latency', latencyMs: 10, unknownLatency: 0 } },
      { ...graph, criticalPath: undefined },
    ];
    for (const changed of changes) assert.equal(drawnAlike(graph, changed), false, JSON.stringify(changed));
  });
});
