// The layered layout of the graph views (server/src/dag/layout.ts): layers downwards, document order among equals,
// no edge through a box, the same layout for the same graph, and 10,000 tasks laid out.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BOX_HEIGHT, BOX_WIDTH, layOutTasks } from '../../server/src/dag/layout';
import type { GraphLayout } from '../../server/src/protocol/runMessages';
import { marketDag } from '../support/marketDag';

interface Box {
  readonly x: number;
  readonly y: number;
}

const boxOf = (layout: GraphLayout, n: number): Box => ({ x: layout.boxes[2 * n]!, y: layout.boxes[2 * n + 1]! });

/** Whether the segment from (x0, y0) to (x1, y1) passes through the inside of the box (its border excluded). */
function segmentCrossesBox(x0: number, y0: number, x1: number, y1: number, { x, y }: Box): boolean {
  // Liang–Barsky clipping against the box shrunk by a pixel, so that touching an edge's own box does not count.
  const [left, right, top, bottom] = [x + 1, x + BOX_WIDTH - 1, y + 1, y + BOX_HEIGHT - 1];
  let [t0, t1] = [0, 1];
  const dx = x1 - x0;
  const dy = y1 - y0;
  for (const [p, q] of [
    [-dx, x0 - left],
    [dx, right - x0],
    [-dy, y0 - top],
    [dy, bottom - y0],
  ] as const) {
    if (p === 0) {
      if (q < 0) return false;
      continue;
    }
    const t = q / p;
    if (p < 0) t0 = Math.max(t0, t);
    else t1 = Math.min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

function layOutMarket(size: number, backEdges = 0): { ids: string[]; layout: GraphLayout } {
  const dag = marketDag(size, { backEdges });
  const ids = dag.tasks.map((task) => task.task_id);
  return { ids, layout: layOutTasks(ids, dag.edges ?? []) };
}

describe('the layered graph layout', () => {
  test('every edge goes down a layer or more; siblings stay in document order', () => {
    const ids = ['task_root', 'task_02a', 'task_02b', 'task_02c', 'task_join'];
    const edges = [
      { from: 'task_root', to: 'task_02a' },
      { from: 'task_root', to: 'task_02b' },
      { from: 'task_root', to: 'task_02c' },
      { from: 'task_02a', to: 'task_join' },
      { from: 'task_02c', to: 'task_join' },
    ];
    const layout = layOutTasks(ids, edges);
    const [root, a, b, c, join] = ids.map((_, n) => boxOf(layout, n));
    assert.ok(a!.y > root!.y && a!.y === b!.y && b!.y === c!.y && join!.y > a!.y, 'three layers');
    assert.ok(a!.x < b!.x && b!.x < c!.x, 'task_02a, task_02b, task_02c left to right');
    for (const route of layout.routes) assert.ok(route[1]! < route[route.length - 1]!, 'downwards');
  });

  test('an edge that closes a cycle points upwards, a self-loop sits right of its box, a missing end gets a box', () => {
    const layout = layOutTasks(
      ['task_a', 'task_b'],
      [
        { from: 'task_a', to: 'task_b' },
        { from: 'task_b', to: 'task_a' },
        { from: 'task_b', to: 'task_b' },
        { from: 'task_b', to: 'task_gone' },
      ],
    );
    assert.deepEqual(layout.missing, ['task_gone']);
    assert.equal(layout.boxes.length, 6);
    const [a, b, gone] = [0, 1, 2].map((n) => boxOf(layout, n));
    assert.ok(a!.y < b!.y && b!.y < gone!.y);
    const up = layout.routes[1]!;
    assert.ok(up[1]! > up[up.length - 1]!, 'task_b → task_a goes up');
    const loop = layout.routes[2]!;
    assert.ok(loop.every((value, p) => p % 2 === 1 || value >= b!.x + BOX_WIDTH));
  });

  test('no edge passes through a box, at 300 tasks with cycles', () => {
    const { ids, layout } = layOutMarket(300, 3);
    const boxes = ids.map((_, n) => boxOf(layout, n));
    layout.routes.forEach((route, e) => {
      for (let p = 0; p + 3 < route.length; p += 2) {
        const [x0, y0, x1, y1] = route.slice(p, p + 4) as [number, number, number, number];
        const crossed = boxes.findIndex((box) => segmentCrossesBox(x0, y0, x1, y1, box));
        assert.equal(crossed, -1, `edge ${e} crosses the box of ${ids[crossed]}`);
      }
    });
    // Boxes do not overlap either.
    const byLayer = new Map<number, Box[]>();
    for (const box of boxes) byLayer.set(box.y, [...(byLayer.get(box.y) ?? []), box]);
    for (const row of byLayer.values()) {
      const xs = row.map((box) => box.x).sort((x0, x1) => x0 - x1);
      xs.slice(1).forEach((x, index) => assert.ok(x >= xs[index]! + BOX_WIDTH));
    }
  });

  test('the same graph gets the same layout', () => {
    assert.deepEqual(layOutMarket(1_000).layout, layOutMarket(1_000).layout);
  });

  test('10,000 tasks are laid out, each box inside the layout', () => {
    const { ids, layout } = layOutMarket(10_000);
    assert.equal(layout.boxes.length, 2 * ids.length);
    for (let n = 0; n < ids.length; n++) {
      const { x, y } = boxOf(layout, n);
      assert.ok(x >= 0 && x + BOX_WIDTH <= layout.width && y >= 0 && y + BOX_HEIGHT <= layout.height);
    }
  });
});
