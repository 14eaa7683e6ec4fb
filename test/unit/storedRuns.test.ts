// What of the finished runs survives a window reload: every run and task, outputs only within the budget, newest
// runs first; what Show Output then says of an output left out.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunSnapshot, TaskSnapshot } from '../../client/src/runSnapshot';
import {
  MAX_STORED_OUTPUTS_BYTES,
  MAX_STORED_OUTPUT_BYTES,
  outputNotKept,
  outputNotSent,
  runsFile,
  storedRuns,
} from '../../client/src/storedRuns';

/** A text output whose JSON takes `bytes` bytes. */
const outputOf = (bytes: number) => {
  const overhead = JSON.stringify({ type: 'text', data: '' }).length;
  return { type: 'text', data: 'x'.repeat(bytes - overhead) };
};

const task = (taskId: string, outputBytes?: number): TaskSnapshot => ({
  taskId,
  state: 'completed',
  costCu: 0.001,
  ...(outputBytes !== undefined && { output: outputOf(outputBytes) }),
});

const run = (runId: string, tasks: TaskSnapshot[]): RunSnapshot => ({
  runId,
  uri: 'file:///work/pipeline.acmp-dag.json',
  dagId: 'dag_pipeline',
  status: 'completed',
  startedAt: '2026-12-03T10:00:00.000Z',
  finishedAt: '2026-12-03T10:00:01.000Z',
  costCu: 0.001 * tasks.length,
  tasks,
  finishedTasks: tasks.length,
});

/** Per task of each run: the bytes of the output kept, or `not kept (N)`, or `none`. */
const kept = (runs: readonly RunSnapshot[]) =>
  runs.map((stored) =>
    stored.tasks.map((entry) =>
      entry.output !== undefined
        ? JSON.stringify(entry.output).length
        : entry.outputNotKeptBytes !== undefined
          ? `not kept (${entry.outputNotKeptBytes})`
          : 'none',
    ),
  );

test('outputs within the budget are kept as they are, with every other field', () => {
  const runs = [run('run_new', [task('task_a', 1_000), task('task_b')]), run('run_old', [task('task_c', 2_000)])];
  assert.deepEqual(storedRuns(runs), runs);
});

test('an output over 1 MB is left out, its size noted; the task keeps its state and cost', () => {
  const over = MAX_STORED_OUTPUT_BYTES + 1;
  const [stored] = storedRuns([run('run_one', [task('task_big', over), task('task_small', 100)])]);
  assert.deepEqual(kept([stored!]), [[`not kept (${over})`, 100]]);
  assert.equal(stored!.tasks[0]!.state, 'completed');
  assert.equal(stored!.tasks[0]!.costCu, 0.001);
  assert.deepEqual(
    JSON.parse(JSON.stringify(stored!.tasks[0])),
    { taskId: 'task_big', state: 'completed', costCu: 0.001, outputNotKeptBytes: over },
    'stored as JSON, the output is gone',
  );
});

test('all runs together keep at most 8 MB of outputs, the newest runs first', () => {
  const mb = MAX_STORED_OUTPUT_BYTES;
  const runs = Array.from({ length: 5 }, (_, n) => run(`run_${n}`, [task('task_a', mb), task('task_b', mb)]));
  const stored = storedRuns(runs);
  assert.equal(MAX_STORED_OUTPUTS_BYTES, 8 * mb);
  assert.deepEqual(kept(stored), [
    [mb, mb],
    [mb, mb],
    [mb, mb],
    [mb, mb],
    [`not kept (${mb})`, `not kept (${mb})`],
  ]);
});

test('the runs given are not changed (the window keeps every output until it closes)', () => {
  const runs = [run('run_big', [task('task_big', MAX_STORED_OUTPUT_BYTES + 1)])];
  const before = JSON.stringify(runs);
  storedRuns(runs);
  assert.equal(JSON.stringify(runs), before);
});

test('Show Output says why an output the server did not send is missing, and how to see it', () => {
  assert.equal(
    outputNotSent('task_big', 3 * 1024 * 1024 + 200_000),
    'The output of task_big (3.2 MB) is larger than the editor is sent: outputs over 1 MB, or beyond 8 MB for a run, ' +
      'stay with the run. Run it with `acmp-dag run FILE --json` to see every output whole.',
  );
});

test('Show Output names the task, the size and why the output is gone', () => {
  assert.equal(
    outputNotKept('task_big', 3 * 1024 * 1024 + 200_000),
    'The output of task_big (3.2 MB) was not kept across the window reload: outputs over 1 MB, or beyond 8 MB for all ' +
      'kept runs together, are not stored. Run the DAG again to see it.',
  );
});

test('the runs file: written whole, read back as written; missing, unreadable or not a list, it is no runs', (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'acmp-runs-file-'));
  t.after(() => rmSync(folder, { recursive: true, force: true }));
  // The storage folder does not exist until the first run is stored.
  const store = runsFile(join(folder, 'workspace', 'runs.json'));
  assert.deepEqual(store.read(), []);
  const runs = [run('run_new', [task('task_a', 1_000), task('task_b')]), run('run_old', [task('task_c')])];
  store.write(runs);
  assert.deepEqual(runsFile(join(folder, 'workspace', 'runs.json')).read(), runs);
  for (const text of ['{"runs": [', '{"runId": "run_new"}', '']) {
    writeFileSync(join(folder, 'workspace', 'runs.json'), text);
    assert.deepEqual(store.read(), [], text);
  }
  // A file where the folder should be: nothing is written, and nothing throws.
  writeFileSync(join(folder, 'blocked'), '');
  const blocked = runsFile(join(folder, 'blocked', 'runs.json'));
  blocked.write(runs);
  assert.deepEqual(blocked.read(), []);
});
