// Inputs far beyond what a person writes: the analysis must answer correctly without touching the call stack.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';
import { dagIndex } from '../../server/src/dag/dagIndex';
import { garbageCollector } from '../../server/src/idleCollection';

const huge = { limits: { maxTasks: 1e9, maxDepth: 1e9, maxFanOut: 1e9 } };
const task = (i: number, input: unknown) => ({ task_id: `task_${i}`, capability: 'echo', input });

/** A chain of `n` tasks, each reading the one before through a reference and an edge. */
function chain(n: number): string {
  const tasks = Array.from({ length: n }, (_, i) =>
    task(i, i === 0 ? { type: 'text', data: 'x' } : { source: { from_task: `task_${i - 1}` } }),
  );
  const edges = Array.from({ length: n - 1 }, (_, i) => ({ from: `task_${i}`, to: `task_${i + 1}` }));
  return JSON.stringify({ dag_id: 'dag_chain', tasks, edges });
}

test('a 20,000-task chain is clean', () => {
  assert.deepEqual(analyzeDag(chain(20_000), huge).diagnostics, []);
});

test('a 20,000-edge cycle is one error on the edge that closes it, and the graph view marks every edge', () => {
  const n = 20_000;
  const tasks = Array.from({ length: n }, (_, i) => task(i, { type: 'text', data: 'x' }));
  const edges = Array.from({ length: n }, (_, i) => ({ from: `task_${i}`, to: `task_${(i + 1) % n}` }));
  const text = JSON.stringify({ dag_id: 'dag_ring', tasks, edges });
  const { diagnostics, model } = analyzeDag(text, huge);
  assert.deepEqual(
    diagnostics.map((d) => [d.code, text.slice(d.start, d.end)]),
    [['cycle', JSON.stringify(edges[n - 1])]],
  );
  assert.ok(diagnostics[0]!.message.length < 500);
  assert.match(
    diagnostics[0]!.message,
    /task_0 → task_1 → task_2 → … \(19995 more\) … → task_19998 → task_19999 → task_0/,
  );
  assert.equal(diagnostics[0]!.related!.length, 20);
  assert.ok(
    dagIndex(model)
      .edgesOnCycles()
      .every((mark) => mark === 1),
  );
});

test('input data nested 50,000 deep is one limit error, and its truncation one syntax error more', () => {
  const depth = 50_000;
  const text = `{"dag_id":"dag_deep","tasks":[{"task_id":"task_a","capability":"echo","input":{"type":"json","data":${'['.repeat(depth)}${']'.repeat(depth)}}}],"edges":[]}`;
  const whole = analyzeDag(text).diagnostics;
  assert.deepEqual(
    whole.map((d) => [d.code, d.severity]),
    [['limit', 'error']],
  );
  assert.match(whole[0]!.message, /^Task "task_a" nests 50004 levels deep/);
  const truncated = analyzeDag(text.slice(0, text.length / 2)).diagnostics;
  assert.deepEqual(
    truncated.map((d) => d.code),
    ['limit', 'json-syntax'],
  );
});

test('100,000-deep nesting at the top level gets a diagnostic, not a crash', () => {
  const { diagnostics } = analyzeDag('['.repeat(100_000) + ']'.repeat(100_000));
  assert.deepEqual(
    diagnostics.map((d) => [d.code, d.start]),
    [
      ['schema', 0],
      ['limit', 1_000],
    ],
  );
});

test('an analysis keeps its model, not the parsed value of the text', async () => {
  const collect = garbageCollector();
  const parse = JSON.parse;
  let parsed: WeakRef<object> | undefined;
  JSON.parse = (text: string, reviver?: Parameters<typeof parse>[1]): unknown => {
    const value = parse(text, reviver) as unknown;
    if (parsed === undefined && typeof value === 'object' && value !== null) parsed = new WeakRef(value);
    return value;
  };
  let analysis;
  try {
    analysis = analyzeDag(chain(1_000));
  } finally {
    JSON.parse = parse;
  }
  // A WeakRef holds its target until the job that made it ends.
  await new Promise(setImmediate);
  collect();
  assert.notEqual(parsed, undefined);
  assert.equal(parsed!.deref(), undefined, 'the parsed value outlived the analysis');
  assert.equal(analysis.model.tasks.length, 1_000);
  assert.equal(analysis.model.root?.kind, 'object');
});
