// Durable runs reuse the result store through the worker, all as real processes: the Restate server from node_modules,
// `acmp-dag worker` with a result store of its own, the counting provider (which outlives the workers and counts the
// invokes it receives) and the CLI. A DAG run again sends nothing; a worker SIGKILLed mid-run after some tasks were
// served from the store is replaced, and the replay completes them from the journaled lookups, not from the store
// (emptied meanwhile), without invoking any task twice. A request from before runs reused results looks nothing up.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';
import type { RunEvent, RunReport, TaskOutput } from '../../server/src/protocol/report';
import type { RunRequest } from '../../server/src/protocol/engineMessages';
import { startDurableRun } from '../../server/src/run/durable/durableRun';
import { EngineClient } from '../../server/src/run/durable/engineClient';
import { resultKey } from '../../server/src/run/resultKey';
import { ResultStore, storeStats } from '../../server/src/run/resultStore';
import {
  CountingProvider,
  TestEngine,
  cli,
  countsOfRun,
  kill,
  scratchFolder,
  startWorker,
  workerPort,
} from '../support/durable';

const echo = (id: string, input: unknown) => ({ task_id: id, capability: 'echo', input });
const text = (data: string): TaskOutput => ({ type: 'text', data });
const from = (...tasks: string[]) => ({ source: tasks.length === 1 ? { from_task: tasks[0] } : { from_tasks: tasks } });

/**
 * a → b, a → c, b + c → d, all echoes of the counting provider. Each names its step in its metadata: an echo of
 * task_a's output is otherwise the very task task_a is, and the store would serve it task_a's result.
 */
const ECHO_DIAMOND = {
  dag_id: 'dag_durable_cache',
  tasks: [
    echo('task_a', text('cache diamond')),
    echo('task_b', from('task_a')),
    echo('task_c', from('task_a')),
    echo('task_d', from('task_b', 'task_c')),
  ].map((task) => ({ ...task, metadata: { step: task.task_id } })),
  edges: [
    { from: 'task_a', to: 'task_b' },
    { from: 'task_a', to: 'task_c' },
    { from: 'task_b', to: 'task_d' },
    { from: 'task_c', to: 'task_d' },
  ],
};

/**
 * task_a and task_x, whose results the store holds (seeded, with outputs of their own), and task_y, invoked, feed
 * task_b, held by the provider, which feeds task_d: once task_b is at the provider, the three are in the journal.
 */
const MIXED = {
  dag_id: 'dag_durable_cache_crash',
  tasks: [
    echo('task_a', text('mixed a')),
    echo('task_x', text('mixed x')),
    echo('task_y', text('mixed y')),
    { task_id: 'task_b', capability: 'hold', input: from('task_a', 'task_x', 'task_y') },
    echo('task_d', from('task_b')),
  ],
  edges: [
    { from: 'task_a', to: 'task_b' },
    { from: 'task_x', to: 'task_b' },
    { from: 'task_y', to: 'task_b' },
    { from: 'task_b', to: 'task_d' },
  ],
};

const SEEDED_RUN = 'run-seeded-earlier';
const SEEDED_AT = '2025-01-02T03:04:05.000Z';

describe('durable runs and the result store', { timeout: 120_000 }, () => {
  const scratch = scratchFolder('acmp-durable-cache-');
  const store = `${scratch.path}/outputs`;
  const results = `${scratch.path}/results`;
  let engine: TestEngine;
  let provider: CountingProvider;
  let port: number;
  let worker: ChildProcess;
  const startOurWorker = async () =>
    (worker = await startWorker(engine, { port, providers: provider.providersFile(scratch), store, cache: results }));

  before(async () => {
    [engine, provider, port] = await Promise.all([
      TestEngine.start(`${scratch.path}/engine`),
      CountingProvider.start(),
      workerPort(),
    ]);
    await startOurWorker();
  });
  after(async () => {
    await Promise.all([kill(worker), provider?.stop(), engine?.stop()]);
    scratch.remove();
  });

  const runByCli = async (name: string, dag: object, ...flags: string[]): Promise<RunReport> => {
    const run = await cli(['run', scratch.file(name, dag), '--engine', engine.ingress, '--json', ...flags]);
    assert.equal(run.code, 0, run.stderr);
    return JSON.parse(run.stdout) as RunReport;
  };

  test('the same DAG run again sends no invoke: every task is cached, at cost 0, from the first run', async () => {
    const first = await runByCli('diamond.acmp-dag.json', ECHO_DIAMOND);
    assert.equal(first.status, 'completed');
    assert.deepEqual((await countsOfRun(provider, first)).invokes, { task_a: 1, task_b: 1, task_c: 1, task_d: 1 });
    assert.equal(first.totals.cached, undefined);

    const events: RunEvent[] = [];
    const run = await startDurableRun(new EngineClient(engine.ingress), analyzeDag(JSON.stringify(ECHO_DIAMOND)), {
      onEvent: (event) => events.push(event),
    });
    const second = await run.done;
    assert.equal(second.status, 'completed');
    assert.deepEqual((await countsOfRun(provider, second)).invokes, {});
    for (const [at, task] of second.tasks.entries()) {
      assert.equal(task.state, 'completed');
      assert.equal(task.cost_cu, 0);
      assert.equal(task.provider_id, 'counting');
      assert.deepEqual(task.cached, {
        run_id: first.run_id,
        task_id: task.task_id,
        made_at: first.tasks[at]!.finished_at,
        cost_cu: first.tasks[at]!.cost_cu,
      });
    }
    assert.deepEqual(second.result, first.result);
    assert.equal(second.totals.cost_cu, 0);
    assert.deepEqual(second.totals.cached, { tasks: 4, saved_cu: first.totals.cost_cu });
    const completed = events.filter((event) => event.type === 'task-state' && event.state === 'completed');
    assert.deepEqual(
      completed.map((event) => event.type === 'task-state' && event.cached?.run_id),
      [first.run_id, first.run_id, first.run_id, first.run_id],
    );

    // Refreshed tasks run again whatever the store holds; their new results replace the stored ones.
    const refreshed = await runByCli('diamond-refresh.acmp-dag.json', ECHO_DIAMOND, '--refresh', 'task_d');
    assert.deepEqual((await countsOfRun(provider, refreshed)).invokes, { task_d: 1 });
    assert.equal(refreshed.tasks[3]!.cached, undefined);
    const again = await runByCli('diamond-again.acmp-dag.json', ECHO_DIAMOND);
    assert.equal(again.tasks[3]!.cached?.run_id, refreshed.run_id);
  });

  test('a worker SIGKILLed mid-run: the replay completes the cached tasks from its journal, invokes none twice', async () => {
    // The store holds task_a's and task_x's results, with outputs no echo of theirs would give.
    const seeded = await ResultStore.open({ folder: results });
    for (const task of MIXED.tasks.filter((each) => each.task_id === 'task_a' || each.task_id === 'task_x')) {
      seeded.keep(resultKey('echo', task.input as TaskOutput, task), {
        run_id: SEEDED_RUN,
        task_id: task.task_id,
        made_at: SEEDED_AT,
        cost_cu: 0.001,
        output: text(`stored for ${task.task_id}`),
        provider_id: 'counting',
        capability: 'echo',
        proof: 'absent',
      });
    }
    await seeded.close();

    const earlier = Object.keys((await provider.counts()).executions).length;
    const submitted = await cli([
      'run',
      scratch.file('mixed.acmp-dag.json', MIXED),
      '--engine',
      engine.ingress,
      '--detach',
    ]);
    assert.equal(submitted.code, 0, submitted.stderr);
    // task_y executed, and task_b, launched once task_a and task_x were served from the store, is held in flight.
    await provider.waitFor('executions', earlier + 2);
    await kill(worker);
    // Whatever the store holds now, the replay takes the lookups' answers from the journal.
    rmSync(results, { recursive: true, force: true });
    await startOurWorker();
    await provider.release();
    const attached = await cli(['attach', submitted.stdout.trim(), '--engine', engine.ingress, '--json']);
    assert.equal(attached.code, 0, attached.stderr);
    const report = JSON.parse(attached.stdout) as RunReport;

    assert.equal(report.status, 'completed');
    const byId = new Map(report.tasks.map((task) => [task.task_id, task]));
    for (const id of ['task_a', 'task_x']) {
      assert.equal(byId.get(id)!.state, 'completed');
      assert.equal(byId.get(id)!.cost_cu, 0);
      assert.deepEqual(byId.get(id)!.cached, { run_id: SEEDED_RUN, task_id: id, made_at: SEEDED_AT, cost_cu: 0.001 });
    }
    for (const id of ['task_b', 'task_d', 'task_y']) assert.equal(byId.get(id)!.cached, undefined);
    assert.deepEqual(report.result.task_d, {
      type: 'json',
      data: [text('stored for task_a'), text('stored for task_x'), text('mixed y')],
    });
    assert.deepEqual(report.totals.cached, { tasks: 2, saved_cu: 0.002 });
    const counts = await countsOfRun(provider, report);
    assert.deepEqual(counts.executions, { task_b: 1, task_d: 1, task_y: 1 });
    // task_b, in flight at the crash, was sent again (the provider executed it once); the others were sent once.
    assert.deepEqual({ ...counts.invokes, task_b: 1 }, { task_b: 1, task_d: 1, task_y: 1 });
    // What the run paid for is in the store, the result the killed worker kept but never wrote included.
    assert.equal(storeStats(results).results, 3);
  });

  test('a request that names no cache field (from before runs reused results) looks nothing up; --no-cache neither', async () => {
    const client = new EngineClient(engine.ingress);
    // The store holds every task's result.
    await runByCli('diamond-stored.acmp-dag.json', ECHO_DIAMOND);
    const before = `run-cache-before-${randomUUID()}`;
    await client.submit(before, ECHO_DIAMOND.dag_id, {
      dag: JSON.stringify(ECHO_DIAMOND),
      policy: 'fail-fast',
      maxConcurrency: 4,
    });
    const noCache = await runByCli('diamond-no-cache.acmp-dag.json', ECHO_DIAMOND, '--no-cache');
    for (const report of [await client.report(before), noCache]) {
      assert.equal(report.status, 'completed');
      assert.ok(report.tasks.every((task) => task.cached === undefined));
      assert.deepEqual((await countsOfRun(provider, report)).invokes, { task_a: 1, task_b: 1, task_c: 1, task_d: 1 });
    }
    const runId = `run-cache-bad-${randomUUID()}`;
    await client.submit(runId, ECHO_DIAMOND.dag_id, {
      dag: JSON.stringify(ECHO_DIAMOND),
      policy: 'fail-fast',
      maxConcurrency: 4,
      refresh: 'task_a',
    } as unknown as RunRequest);
    await assert.rejects(client.report(runId), /the run request's refresh is not a list of names/);
  });
});
