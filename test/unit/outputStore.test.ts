// Outputs past the run's memory budget go to disk and come back unchanged, for downstream inputs and for the report;
// the report streams as the bytes of JSON.stringify(report, null, 2), whatever its size and nesting.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';
import type { RunReport } from '../../server/src/protocol/report';
import { connectProvider } from '../../server/src/run/connect';
import { startRun } from '../../server/src/run/executor';
import { jsonPieces, writeJson } from '../../server/src/run/jsonText';
import { OutputStore, StoredOutput, storedFile } from '../../server/src/run/spilledOutputs';
import { sentReport } from '../../server/src/features/runDag';
import { MAX_SENT_OUTPUT_BYTES } from '../../server/src/protocol/runMessages';

/** Two roots, a whole-output echo, a field path and a from_tasks aggregation of echoes: every way to read an output. */
const DAG = JSON.stringify({
  dag_id: 'dag_store',
  tasks: [
    { task_id: 'a', capability: 'echo', input: { type: 'json', data: { items: ['x', { deep: [1, 2.5, null] }] } } },
    { task_id: 'b', capability: 'echo', input: { type: 'text', data: 'two\nlines "quoted" \u2028' } },
    { task_id: 'whole', capability: 'echo', input: { source: { from_task: 'a' } } },
    { task_id: 'field', capability: 'echo', input: { source: { from_task: 'a', field: 'data.items[1]' } } },
    { task_id: 'both', capability: 'echo', input: { source: { from_tasks: ['whole', 'b', 'field'] } } },
  ],
  edges: [
    { from: 'a', to: 'whole' },
    { from: 'a', to: 'field' },
    { from: 'whole', to: 'both' },
    { from: 'b', to: 'both' },
    { from: 'field', to: 'both' },
  ],
});

async function run(outputMemoryBytes?: number) {
  const started = startRun(analyzeDag(DAG), {
    providers: [],
    connect: connectProvider,
    ...(outputMemoryBytes === undefined ? {} : { outputMemoryBytes }),
  });
  return { run: started, report: await started.done };
}

/** The text of a value without file pieces. */
const textOf = (value: unknown): string =>
  [...jsonPieces(value)].map((piece) => (typeof piece === 'string' ? piece : assert.fail('a file piece'))).join('');

/** The report without what differs from run to run. */
const comparable = (report: RunReport): string =>
  JSON.stringify(report, (key, value: unknown) =>
    key === 'run_id' || key === 'wire_task_id' || key.endsWith('_at') ? undefined : value,
  );

async function streamed(report: RunReport): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  await writeJson(out, report, storedFile);
  return Buffer.concat(chunks).toString('utf8');
}

test('outputs over the budget go to disk and come back the same, for downstream inputs and for the report', async () => {
  const kept = await run();
  const spilled = await run(0);
  assert.equal(spilled.report.status, 'completed');
  const stored = spilled.report.tasks.map((task) => task.output);
  assert.ok(stored.every((output) => output instanceof StoredOutput));
  assert.ok(kept.report.tasks.every((task) => !(task.output instanceof StoredOutput)));
  // The downstream echoes show their inputs: made from outputs read back, they equal those made from memory.
  assert.equal(comparable(spilled.report), comparable(kept.report));
  const files = stored.map((output) => output.path);
  assert.ok(files.every((file) => existsSync(file)));
  spilled.run.releaseOutputs();
  assert.ok(!existsSync(dirname(files[0]!)));
  kept.run.releaseOutputs();
});

test('the streamed report is byte for byte JSON.stringify(report, null, 2), outputs in memory or on disk', async () => {
  const kept = await run();
  assert.equal(await streamed(kept.report), JSON.stringify(kept.report, null, 2));
  const spilled = await run(0);
  // JSON.stringify reads each stored output whole (toJSON); the stream copies its file.
  assert.equal(await streamed(spilled.report), JSON.stringify(spilled.report, null, 2));
  spilled.run.releaseOutputs();
});

test('only what no downstream task still reads goes to disk while that is enough', () => {
  const store = new OutputStore(100);
  const output = (k: number) => ({ type: 'text', data: String(k).repeat(40) });
  store.keep('read', output(1), 1);
  store.keep('done', output(2), 0);
  store.keep('third', output(3), 0);
  assert.ok(!(store.reported('read') instanceof StoredOutput), 'the output a task will read stays in memory');
  assert.ok(store.reported('done') instanceof StoredOutput);
  assert.deepEqual(store.read('done'), output(2));
  store.dispose();
});

test('JSON text of any nesting and of what JSON.stringify leaves out or changes', () => {
  const values: unknown[] = [
    { a: undefined, b: () => 1, c: [undefined, NaN, -0, Infinity], d: {}, e: [], f: { toJSON: () => 'g' } },
    [new Date(0), Object.assign(Object.create(null) as object, { x: 1 }), 'a\u2028\ud800"\\'],
    JSON.parse('{"__proto__": {"y": [[], {}]}}'),
    undefined,
    'top',
  ];
  for (const value of values) assert.equal(textOf(value), JSON.stringify(value, null, 2) ?? '');
  // Deeper than JSON.stringify's recursion goes (pretty text grows with the square of the depth: a few thousand).
  const depth = 6_000;
  let deep: unknown = 'leaf';
  for (let k = 0; k < depth; k++) deep = { k: deep };
  assert.throws(() => JSON.stringify(deep, null, 2), RangeError);
  let parsed = JSON.parse(textOf(deep)) as unknown;
  for (let k = 0; k < depth; k++) parsed = (parsed as { k: unknown }).k;
  assert.equal(parsed, 'leaf');
});

test('the language server sends outputs within its budget: larger ones, or those on disk, only by their size', async () => {
  const spilled = await run(0);
  const big = { type: 'text', data: 'x'.repeat(MAX_SENT_OUTPUT_BYTES) };
  const report = {
    ...spilled.report,
    tasks: [
      ...spilled.report.tasks,
      { task_id: 'big', state: 'completed' as const, proof: 'absent' as const, output: big },
    ],
    result: { ...spilled.report.result, big },
  };
  const sent = sentReport(report);
  assert.ok(sent.tasks.every((task) => task.output === undefined && task.output_not_sent_bytes! > 0));
  assert.deepEqual(sent.result, {});
  // What is sent is JSON of bounded size, without reading a stored output.
  assert.ok(JSON.stringify(sent).length < 10_000);
  spilled.run.releaseOutputs();
  const kept = await run();
  assert.equal(sentReport(kept.report), kept.report);
});
