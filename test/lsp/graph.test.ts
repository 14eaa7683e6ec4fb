// The request `acmp/graph` over stdio: the tasks with where they are declared, the edges with their cycle, dangling and
// stream flags, and whether the text parsed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ErrorCodes, ResponseError } from 'vscode-jsonrpc';
import { type DagGraph, GRAPH_REQUEST, type GraphParams } from '../../server/src/protocol/runMessages';
import { DIAMOND, diamondWith } from '../support/diamond';
import { type LspSession, startLspSession } from '../support/lspHarness';

/** The 0-based line and character where `needle` first starts in `text`. */
function positionOf(text: string, needle: string): { line: number; character: number } {
  const before = text.slice(0, text.indexOf(needle));
  return { line: before.split('\n').length - 1, character: before.length - before.lastIndexOf('\n') - 1 };
}

describe('acmp/graph over stdio', () => {
  let session: LspSession;
  let counter = 0;
  before(async () => {
    session = await startLspSession();
  });
  after(() => session.stop());

  async function graphOf(text: string, params: Omit<GraphParams, 'uri'> = {}): Promise<DagGraph> {
    const uri = `file:///graph-${++counter}.acmp-dag.json`;
    await session.open(uri, text);
    try {
      return await session.connection.sendRequest<DagGraph>(GRAPH_REQUEST, { uri, ...params });
    } finally {
      await session.close(uri);
    }
  }

  test('without waiting for the plan, the critical path is a longest chain of the tasks', async () => {
    const chain = (ids: string[]): string =>
      JSON.stringify({
        dag_id: 'dag_chain',
        tasks: ids.map((id) => ({ task_id: id, capability: 'echo', input: { type: 'text', data: id } })),
        edges: ids.slice(1).map((id, n) => ({ from: ids[n], to: id })),
      });
    const graph = await graphOf(chain(['task_a', 'task_b', 'task_c']), { waitForPlan: false });
    assert.deepEqual(graph.criticalPath?.taskIds, ['task_a', 'task_b', 'task_c']);
  });

  test('the tasks with their capabilities and task_id positions, and the edges', async () => {
    const graph = await graphOf(DIAMOND);
    assert.equal(graph.parsed, true);
    assert.equal(graph.dagId, 'dag_diamond');
    assert.deepEqual(
      graph.nodes.map(({ id, capability }) => [id, capability]),
      [
        ['task_split', 'text-split'],
        ['task_left', 'sentiment-analysis'],
        ['task_right', 'sentiment-analysis'],
        ['task_join', 'result-aggregation'],
        ['task_note', 'echo'],
      ],
    );
    for (const { id, line, character } of graph.nodes) {
      assert.deepEqual({ line, character }, positionOf(DIAMOND, `"${id}", "capability"`), id);
    }
    const plain = { cycle: false, dangling: false, streamEligible: false };
    assert.deepEqual(graph.edges, [
      { from: 'task_split', to: 'task_left', ...plain },
      { from: 'task_split', to: 'task_right', ...plain },
      { from: 'task_left', to: 'task_join', ...plain },
      { from: 'task_right', to: 'task_join', ...plain },
    ]);
  });

  test('edges on a cycle (a self-loop too), dangling edges and stream_eligible edges are flagged', async () => {
    const text = diamondWith(
      '{ "from": "task_split", "to": "task_left" },',
      `{ "from": "task_split", "to": "task_left", "stream_eligible": true },
    { "from": "task_join", "to": "task_left" },
    { "from": "task_note", "to": "task_note" },
    { "from": "task_right", "to": "task_gone" },`,
    );
    const graph = await graphOf(text);
    const flags = graph.edges.map(({ from, to, cycle, dangling, streamEligible }) => {
      const marks = [cycle && 'cycle', dangling && 'dangling', streamEligible && 'stream'].filter(Boolean);
      return `${from} → ${to}${marks.length > 0 ? ` (${marks.join(', ')})` : ''}`;
    });
    assert.deepEqual(flags, [
      'task_split → task_left (stream)',
      'task_join → task_left (cycle)',
      'task_note → task_note (cycle)',
      'task_right → task_gone (dangling)',
      'task_split → task_right',
      'task_left → task_join (cycle)',
      'task_right → task_join',
    ]);
  });

  test('a task id declared twice is one node, at its first declaration', async () => {
    const text = diamondWith(
      '{ "task_id": "task_note", "capability": "echo"',
      '{ "task_id": "task_split", "capability": "echo"',
    );
    const graph = await graphOf(text);
    const splits = graph.nodes.filter((node) => node.id === 'task_split');
    assert.equal(splits.length, 1);
    assert.equal(splits[0]!.capability, 'text-split');
    assert.equal(splits[0]!.line, positionOf(text, '"task_split", "capability": "text-split"').line);
  });

  test('a text that is not JSON answers parsed: false, with what could still be read', async () => {
    const graph = await graphOf(DIAMOND.replace('"edges": [', '"edges": [[,'));
    assert.equal(graph.parsed, false);
    assert.ok(graph.nodes.some((node) => node.id === 'task_join'));
  });

  test('a document the client has not opened is refused', async () => {
    await assert.rejects(
      session.connection.sendRequest(GRAPH_REQUEST, { uri: 'file:///never-opened.acmp-dag.json' }),
      (error) => error instanceof ResponseError && error.code === ErrorCodes.InvalidParams,
    );
  });
});
