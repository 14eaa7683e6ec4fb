// Inputs far beyond what a person writes: the analysis must answer correctly without touching the call stack.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';

const huge = { limits: { maxTasks: 1e9, maxDepth: 1e9, maxFanOut: 1e9 } };
const task = (i: number, input: unknown) => ({ task_id: `task_${i}`, capability: 'echo', input });

test('a 20,000-task chain is clean', () => {
  const n = 20_000;
  const tasks = Array.from({ length: n }, (_, i) =>
    task(i, i === 0 ? { type: 'text', data: 'x' } : { source: { from_task: `task_${i - 1}` } }),
  );
  const edges = Array.from({ length: n - 1 }, (_, i) => ({ from: `task_${i}`, to: `task_${i + 1}` }));
  assert.deepEqual(analyzeDag(JSON.stringify({ dag_id: 'dag_chain', tasks, edges }), huge).diagnostics, []);
});

test('a 20,000-edge cycle marks every edge, with short messages', () => {
  const n = 20_000;
  const tasks = Array.from({ length: n }, (_, i) => task(i, { type: 'text', data: 'x' }));
  const edges = Array.from({ length: n }, (_, i) => ({ from: `task_${i}`, to: `task_${(i + 1) % n}` }));
  const { diagnostics } = analyzeDag(JSON.stringify({ dag_id: 'dag_ring', tasks, edges }), huge);
  assert.equal(diagnostics.length, n);
  assert.ok(diagnostics.every((d) => d.code === 'cycle' && d.message.length < 500));
  assert.match(diagnostics[0]!.message, /task_0 → task_1 → .*more.* → task_0/);
});

test('input data nested 50,000 deep is fine, and its truncation is one syntax error', () => {
  const depth = 50_000;
  const text = `{"dag_id":"dag_deep","tasks":[{"task_id":"task_a","capability":"echo","input":{"type":"json","data":${'['.repeat(depth)}${']'.repeat(depth)}}}],"edges":[]}`;
  assert.deepEqual(analyzeDag(text).diagnostics, []);
  const truncated = analyzeDag(text.slice(0, text.length / 2)).diagnostics;
  assert.deepEqual(
    truncated.map((d) => d.code),
    ['json-syntax'],
  );
});

test('100,000-deep nesting at the top level gets a diagnostic, not a crash', () => {
  const { diagnostics } = analyzeDag('['.repeat(100_000) + ']'.repeat(100_000));
  assert.deepEqual(
    diagnostics.map((d) => d.code),
    ['schema'],
  );
});
