// The graph view's shape (client/webview/graphShape.ts): tasks grouped by layer and id prefix or capability, layers
// banded when there are more than a view holds, edges between groups with their counts, the critical path's groups and
// group edges, and a group expanded into its tasks among the others.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  groupDetail,
  groupLabel,
  groupTasks,
  idPrefix,
  layersOf,
  layersPerBand,
  shapeGraph,
} from '../../client/src/graphShape';
import { layOutTasks } from '../../server/src/dag/layout';
import type { DagGraph } from '../../server/src/protocol/runMessages';

type Node = DagGraph['nodes'][number];

/** A graph of tasks and edges by id; each task's capability from `capabilityOf`. */
function graphOf(
  ids: readonly string[],
  links: readonly (readonly [string, string])[],
  capabilityOf: (id: string) => string | undefined = () => 'echo',
  criticalPath?: readonly string[],
): Pick<DagGraph, 'nodes' | 'edges' | 'criticalPath'> & { layers: Int32Array } {
  const nodes: Node[] = ids.map((id) => ({ id, capability: capabilityOf(id), line: 0, character: 0 }));
  const edges = links.map(([from, to]) => ({
    from,
    to,
    cycle: false,
    dangling: !ids.includes(to),
    streamEligible: false,
  }));
  return {
    nodes,
    edges,
    layers: layersOf(layOutTasks(ids, edges), ids.length),
    ...(criticalPath !== undefined && { criticalPath: { taskIds: criticalPath, by: 'depth' as const } }),
  };
}

/** `layers` layers of `width` tasks `task_<layer>_<k>`, each task reading three of the layer above (as echoDag.ts). */
function layered(layers: number, width: number) {
  const ids: string[] = [];
  const links: [string, string][] = [];
  for (let layer = 0; layer < layers; layer++) {
    for (let k = 0; k < width; k++) {
      ids.push(`task_${layer}_${k}`);
      if (layer === 0) continue;
      for (const from of new Set([k, (k + 1) % width, (k + 7) % width])) {
        links.push([`task_${layer - 1}_${from}`, `task_${layer}_${k}`]);
      }
    }
  }
  return { ids, links };
}

describe('the graph shape', () => {
  test("a task id's prefix drops its trailing number and the separators in and after it", () => {
    assert.equal(idPrefix('task_472'), 'task_');
    assert.equal(idPrefix('task_3_42'), 'task_');
    assert.equal(idPrefix('task_sent_02'), 'task_sent_');
    assert.equal(idPrefix('task_split_01a'), 'task_split_01a');
    assert.equal(idPrefix('step-7.2'), 'step-');
    assert.equal(idPrefix('42'), '');
  });

  test('1,000 tasks of 10 layers of 100 are 10 groups of 100, one a layer, 300 edges between each two', () => {
    const { ids, links } = layered(10, 100);
    const graph = graphOf(ids, links);
    const grouping = groupTasks(graph.nodes, graph.layers, 'prefix');
    assert.deepEqual(
      grouping.groups.map((group) => [group.firstLayer, group.tasks.length, groupLabel(group, 'prefix')]),
      Array.from({ length: 10 }, (_, layer) => [layer, 100, 'task_… ×100']),
    );
    assert.equal(groupDetail(grouping.groups[0]!, 'prefix'), 'echo', 'the capability all its tasks share');
    const shape = shapeGraph(graph, grouping, new Set());
    assert.equal(shape.boxes.length, 10);
    assert.deepEqual(
      shape.edges.map(({ from, to, count }) => [from, to, count]),
      Array.from({ length: 9 }, (_, layer) => [layer, layer + 1, 300]),
    );
  });

  test('grouped by capability, tasks of a layer split by what they do; fan-out and fan-in are the edge counts', () => {
    // One source fans out to 3 sentiment and 2 summarize tasks, which all fan in to one join.
    const ids = ['task_src', 'task_a_1', 'task_a_2', 'task_a_3', 'task_b_1', 'task_b_2', 'task_join'];
    const links = ids.slice(1, 6).flatMap((id): [string, string][] => [
      ['task_src', id],
      [id, 'task_join'],
    ]);
    const capability = (id: string) =>
      id.startsWith('task_a') ? 'sentiment' : id.startsWith('task_b') ? 'summarize' : undefined;
    const graph = graphOf(ids, links, capability);
    const grouping = groupTasks(graph.nodes, graph.layers, 'capability');
    assert.deepEqual(
      grouping.groups.map((group) => groupLabel(group, 'capability')),
      ['no capability ×1', 'sentiment ×3', 'summarize ×2', 'no capability ×1'],
    );
    const shape = shapeGraph(graph, grouping, new Set());
    // A group of one task is shown as that task.
    assert.deepEqual(shape.boxes, [{ task: 0 }, { group: 1 }, { group: 2 }, { task: 6 }]);
    assert.deepEqual(
      shape.edges.map(({ from, to, count }) => [from, to, count]),
      [
        [0, 1, 3],
        [1, 3, 3],
        [0, 2, 2],
        [2, 3, 2],
      ],
    );
    // By prefix, the middle layer's two kinds of id are two groups too, each naming the capability its tasks share.
    const byPrefix = groupTasks(graph.nodes, graph.layers, 'prefix');
    assert.deepEqual(
      byPrefix.groups
        .filter((group) => group.tasks.length > 1)
        .map((group) => [group.key, groupDetail(group, 'prefix')]),
      [
        ['task_a_', 'sentiment'],
        ['task_b_', 'summarize'],
      ],
    );
  });

  test('more layers than rows are banded: 100 layers in 10 rows are groups of 10 layers', () => {
    const { ids, links } = layered(100, 5);
    const graph = graphOf(ids, links);
    const bandLayers = layersPerBand(100, 10);
    assert.equal(bandLayers, 10);
    const grouping = groupTasks(graph.nodes, graph.layers, 'prefix', bandLayers);
    assert.equal(grouping.groups.length, 10);
    assert.deepEqual(
      [grouping.groups[0]!.tasks.length, groupDetail(grouping.groups[3]!, 'prefix')],
      [50, 'layers 31–40 · echo'],
    );
    const shape = shapeGraph(graph, grouping, new Set());
    // The edges within a band are inside its group; between two bands, those of the layers they meet at.
    assert.deepEqual(
      shape.edges.map(({ from, to, count }) => [from, to, count]),
      Array.from({ length: 9 }, (_, band) => [band, band + 1, 15]),
    );
  });

  test("the critical path's groups and the group edges its steps cross are marked", () => {
    const ids = ['task_a_1', 'task_a_2', 'task_b_1', 'task_b_2', 'task_c_1'];
    const links: [string, string][] = [
      ['task_a_1', 'task_b_1'],
      ['task_a_2', 'task_b_2'],
      ['task_b_1', 'task_c_1'],
    ];
    const graph = graphOf(ids, links, () => 'echo', ['task_a_1', 'task_b_1', 'task_c_1']);
    const shape = shapeGraph(graph, groupTasks(graph.nodes, graph.layers, 'prefix'), new Set());
    assert.deepEqual(shape.boxes, [{ group: 0 }, { group: 1 }, { task: 4 }]);
    assert.deepEqual([...shape.criticalBoxes], [1, 1, 1]);
    assert.deepEqual(
      shape.edges.map(({ from, to, count }, e) => [from, to, count, shape.criticalEdges[e]]),
      [
        [0, 1, 2, 1],
        [1, 2, 1, 1],
      ],
    );
  });

  test('an expanded group is its tasks among the other groups, with their own edges to them', () => {
    const { ids, links } = layered(3, 4);
    const graph = graphOf(ids, links);
    const grouping = groupTasks(graph.nodes, graph.layers, 'prefix');
    const middle = grouping.groups[1]!;
    const shape = shapeGraph(graph, grouping, new Set([middle.id]));
    assert.deepEqual(shape.boxes, [{ group: 0 }, { task: 4 }, { task: 5 }, { task: 6 }, { task: 7 }, { group: 2 }]);
    assert.deepEqual([...shape.boxOfTask.subarray(4, 8)], [1, 2, 3, 4]);
    // Each task of the middle layer reads three of the first (one edge of count 3 from the group) and is read by three
    // of the last (task_1_k feeds task_2_k, task_2_(k-1) and task_2_(k-7 mod 4)).
    for (const box of [1, 2, 3, 4]) {
      assert.deepEqual(
        shape.edges.filter(({ to }) => to === box).map(({ from, count }) => [from, count]),
        [[0, 3]],
      );
      assert.deepEqual(
        shape.edges.filter(({ from }) => from === box).map(({ to, count }) => [to, count]),
        [[5, 3]],
      );
    }
  });

  test('an edge to an id no task declares goes to a box of its own after the groups', () => {
    const graph = graphOf(
      ['task_1', 'task_2'],
      [
        ['task_1', 'task_9'],
        ['task_2', 'task_9'],
      ],
    );
    const shape = shapeGraph(graph, groupTasks(graph.nodes, graph.layers, 'prefix'), new Set());
    assert.deepEqual(shape.boxes, [{ group: 0 }, { missing: 'task_9' }]);
    assert.equal(shape.taskBoxes, 1);
    assert.deepEqual(
      shape.edges.map(({ from, to, count, dangling }) => [from, to, count, dangling]),
      [[0, 1, 2, true]],
    );
  });
});
