// The run's deadlines on one timer (server/src/run/deadlines.ts): each item expires at its own time, in time order,
// whatever order they came in; an item that stopped counting never expires.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Deadlines } from '../../server/src/run/deadlines';

const LIMIT = { timeout: 5_000 };

interface Item {
  readonly name: string;
  counts: boolean;
}

/** Deadlines that record what expired, and when, and resolve `all` once `expected` items expired. */
function recorder(expected: number) {
  const expired: { name: string; afterMs: number }[] = [];
  const began = performance.now();
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const deadlines = new Deadlines<Item>(
    (item) => {
      expired.push({ name: item.name, afterMs: performance.now() - began });
      if (expired.length === expected) done();
    },
    (item) => item.counts,
  );
  return { deadlines, expired, all };
}

test('items expire at their own deadlines, in time order, an earlier one added later included', LIMIT, async () => {
  const { deadlines, expired, all } = recorder(3);
  deadlines.add({ name: 'slow', counts: true }, 90);
  deadlines.add({ name: 'fast', counts: true }, 10);
  deadlines.add({ name: 'middle', counts: true }, 40);
  await all;
  assert.deepEqual(
    expired.map(({ name }) => name),
    ['fast', 'middle', 'slow'],
  );
  for (const [k, atLeast] of [10, 40, 90].entries()) assert.ok(expired[k]!.afterMs >= atLeast - 1, `${atLeast} ms`);
  deadlines.clear();
});

test('an item that stopped counting does not expire; the others still do', LIMIT, async () => {
  const { deadlines, expired, all } = recorder(1);
  const done = { name: 'done', counts: true };
  deadlines.add(done, 10);
  deadlines.add({ name: 'late', counts: true }, 30);
  done.counts = false;
  deadlines.dropped();
  await all;
  assert.deepEqual(
    expired.map(({ name }) => name),
    ['late'],
  );
  deadlines.clear();
});

test('dropped entries are let go in bulk and the live ones keep their deadlines', LIMIT, async () => {
  const { deadlines, expired, all } = recorder(2);
  const finished = Array.from({ length: 500 }, (_, k) => ({ name: `finished ${k}`, counts: true }));
  for (const item of finished) deadlines.add(item, 20);
  deadlines.add({ name: 'live 1', counts: true }, 20);
  deadlines.add({ name: 'live 2', counts: true }, 25);
  for (const item of finished) {
    item.counts = false;
    deadlines.dropped();
  }
  await all;
  assert.deepEqual(
    expired.map(({ name }) => name),
    ['live 1', 'live 2'],
  );
  deadlines.clear();
});

test('clear stops the timer: nothing expires after it', LIMIT, async () => {
  const { deadlines, expired } = recorder(1);
  deadlines.add({ name: 'cleared', counts: true }, 5);
  deadlines.clear();
  // A later deadline on a fresh set resolves after the cleared one would have fired.
  const later = recorder(1);
  later.deadlines.add({ name: 'witness', counts: true }, 20);
  await later.all;
  assert.deepEqual(expired, []);
});
