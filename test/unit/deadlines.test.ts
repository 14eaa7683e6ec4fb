// The run's deadlines on one timer (server/src/run/deadlines.ts): each item expires at its own time, in time order,
// whatever order they came in; an item that stopped counting never expires. On a mock clock (test/support/mockClock.ts),
// each test sees the millisecond at which each item expired, however loaded the machine is.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { Deadlines } from '../../server/src/run/deadlines';
import { mockClock } from '../support/mockClock';

interface Item {
  readonly name: string;
  counts: boolean;
}

/** Deadlines on the test's mock clock, recording what expired and at which millisecond. */
function onMockClock(t: TestContext) {
  const { advanceTo } = mockClock(t);
  const expired: { name: string; atMs: number }[] = [];
  const make = () =>
    new Deadlines<Item>(
      (item) => expired.push({ name: item.name, atMs: Date.now() }),
      (item) => item.counts,
    );
  return { deadlines: make(), make, expired, advanceTo };
}

test('items expire at their own deadlines, in time order, an earlier one added later included', async (t) => {
  const { deadlines, expired, advanceTo } = onMockClock(t);
  deadlines.add({ name: 'slow', counts: true }, 90);
  deadlines.add({ name: 'fast', counts: true }, 10);
  deadlines.add({ name: 'middle', counts: true }, 40);
  await advanceTo(200);
  assert.deepEqual(expired, [
    { name: 'fast', atMs: 10 },
    { name: 'middle', atMs: 40 },
    { name: 'slow', atMs: 90 },
  ]);
  deadlines.clear();
});

test('a deadline added while others wait counts from when it was added', async (t) => {
  const { deadlines, expired, advanceTo } = onMockClock(t);
  deadlines.add({ name: 'first', counts: true }, 50);
  await advanceTo(30);
  deadlines.add({ name: 'second', counts: true }, 10);
  deadlines.add({ name: 'third', counts: true }, 40);
  await advanceTo(200);
  assert.deepEqual(expired, [
    { name: 'second', atMs: 40 },
    { name: 'first', atMs: 50 },
    { name: 'third', atMs: 70 },
  ]);
  deadlines.clear();
});

test('an item that stopped counting does not expire; the others still do', async (t) => {
  const { deadlines, expired, advanceTo } = onMockClock(t);
  const done = { name: 'done', counts: true };
  deadlines.add(done, 10);
  deadlines.add({ name: 'late', counts: true }, 30);
  done.counts = false;
  deadlines.dropped();
  await advanceTo(100);
  assert.deepEqual(expired, [{ name: 'late', atMs: 30 }]);
  deadlines.clear();
});

test('dropped entries are let go in bulk and the live ones keep their deadlines', async (t) => {
  const { deadlines, expired, advanceTo } = onMockClock(t);
  const finished = Array.from({ length: 500 }, (_, k) => ({ name: `finished ${k}`, counts: true }));
  for (const item of finished) deadlines.add(item, 20);
  deadlines.add({ name: 'live 1', counts: true }, 20);
  deadlines.add({ name: 'live 2', counts: true }, 25);
  for (const item of finished) {
    item.counts = false;
    deadlines.dropped();
  }
  await advanceTo(100);
  assert.deepEqual(expired, [
    { name: 'live 1', atMs: 20 },
    { name: 'live 2', atMs: 25 },
  ]);
  deadlines.clear();
});

test('clear stops the timer: nothing expires after it', async (t) => {
  const { deadlines, make, expired, advanceTo } = onMockClock(t);
  deadlines.add({ name: 'cleared', counts: true }, 5);
  deadlines.clear();
  // A witness on a fresh set shows that the clock moved past the cleared deadline.
  const witness = make();
  witness.add({ name: 'witness', counts: true }, 20);
  await advanceTo(100);
  assert.deepEqual(expired, [{ name: 'witness', atMs: 20 }]);
  witness.clear();
});

test('clear leaves no timer behind, so a finished run does not keep the process alive', () => {
  const timers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
  const before = timers();
  const deadlines = new Deadlines<Item>(
    () => assert.fail('a cleared deadline expired'),
    () => true,
  );
  deadlines.add({ name: 'long', counts: true }, 60_000);
  assert.equal(timers(), before + 1, 'the deadline armed a timer');
  deadlines.clear();
  assert.equal(timers(), before);
});
