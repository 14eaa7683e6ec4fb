// Durable runs on a real Restate server, all as real processes: the server from node_modules on unix sockets in a
// temporary data folder, `acmp-dag worker`, the counting provider and the CLI. A worker or the
// server SIGKILLed mid-run and started again: the run completes, no completed task is invoked again, no task executes
// twice (the provider counts invokes and executions by wire task id). Cancelling a task on the engine cancels its
// downstream tasks (BFS) while an independent branch goes on. The CLI's failures have their messages and exit codes.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { outputKey } from '../../server/src/run/durable/outputStore';
import { engineHealthy } from '../../server/src/run/durable/engineProcess';
import type { RunReport } from '../../server/src/protocol/report';
import {
  CHAIN_AND_APART,
  CountingProvider,
  DEAL_DIAMOND,
  DIAMOND,
  TestEngine,
  assertDiamondOnce,
  cli,
  countsOfRun,
  kill,
  scratchFolder,
  startWorker,
  workerPort,
} from '../support/durable';

const SUITE_TIMEOUT_MS = 120_000;
const PIPELINE = 'examples/text-pipeline.acmp-dag.json';

const runIdOf = (stderr: string): string => /durable run (\S+) submitted/.exec(stderr)![1]!;

describe('durable runs on a Restate engine', { timeout: SUITE_TIMEOUT_MS }, () => {
  const scratch = scratchFolder('acmp-durable-');
  let engine: TestEngine;
  let provider: CountingProvider;
  let port: number;
  let worker: ChildProcess;
  const store = `${scratch.path}/outputs`;

  before(async () => {
    [engine, provider, port] = await Promise.all([
      TestEngine.start(`${scratch.path}/engine`),
      CountingProvider.start(),
      workerPort(),
    ]);
    worker = await startWorker(engine, { port, providers: provider.providersFile(scratch), store });
  });
  after(async () => {
    await Promise.all([kill(worker), provider?.stop(), engine?.stop()]);
    scratch.remove();
  });

  /** Submits `dag` detached, waits until `inFlight` more tasks reached the provider, then `crash`es something. */
  async function crashMidRun(
    name: string,
    dag: object,
    inFlight: number,
    crash: () => Promise<void>,
  ): Promise<RunReport> {
    const file = scratch.file(name, dag);
    const earlier = Object.keys((await provider.counts()).executions).length;
    const submitted = await cli(['run', file, '--engine', engine.ingress, '--detach']);
    assert.equal(submitted.code, 0, submitted.stderr);
    const runId = submitted.stdout.trim();
    await provider.waitFor('executions', earlier + inFlight);
    await crash();
    await provider.release();
    const attached = await cli(['attach', runId, '--engine', engine.ingress, '--json']);
    assert.equal(attached.code, 0, attached.stderr);
    return JSON.parse(attached.stdout) as RunReport;
  }

  test('a worker SIGKILLed mid-run: another at its address completes the run, nothing runs twice', async () => {
    // task_a completed, task_b and task_c are in flight at the provider.
    const report = await crashMidRun('diamond-worker.acmp-dag.json', DIAMOND, 3, async () => {
      await kill(worker);
      worker = await startWorker(engine, { port, providers: provider.providersFile(scratch), store });
    });
    await assertDiamondOnce(provider, report);
  });

  test('a worker SIGKILLed right after an accept: that offer is accepted once, the spend log is whole, the budget holds', async () => {
    // echo costs 0.001 CU and deal 0.002 (PRICES_CU): task_a, task_b and task_c come to 0.005 CU, and task_d's
    // 0.001 more would bring the run over its 0.0055 CU.
    const file = scratch.file('deal.acmp-dag.json', DEAL_DIAMOND);
    const earlier = await provider.counts();
    const newIds = (table: Record<string, number>, before: Record<string, number>) =>
      Object.keys(table).filter((id) => before[id] === undefined);
    const submitted = await cli(['run', file, '--engine', engine.ingress, '--detach', '--max-cost', '0.0055']);
    assert.equal(submitted.code, 0, submitted.stderr);
    // task_a's accept answered, task_b's and task_c's received and granted, their answers held by the provider: the
    // worker sent them and cannot have journaled them.
    await provider.waitFor('accepted', Object.keys(earlier.accepted).length + 3);
    await kill(worker);
    worker = await startWorker(engine, { port, providers: provider.providersFile(scratch), store });
    const attached = await cli(['attach', submitted.stdout.trim(), '--engine', engine.ingress, '--json']);
    await provider.release();
    assert.equal(attached.code, 1, attached.stderr);
    const report = JSON.parse(attached.stdout) as RunReport;
    assert.deepEqual(
      report.tasks.map((task) => [task.task_id, task.state]),
      [
        ['task_a', 'completed'],
        ['task_b', 'completed'],
        ['task_c', 'completed'],
        ['task_d', 'cancelled'],
      ],
    );
    const counts = await provider.counts();
    // The restarted worker sent the journaled accepts again (answered -34003), and quoted nothing again.
    const accepted = newIds(counts.accepted, earlier.accepted);
    assert.equal(accepted.length, 3);
    for (const offerId of accepted) assert.equal(counts.accepted[offerId], 1);
    assert.deepEqual(
      accepted.map((offerId) => counts.accepts[offerId]),
      [1, 2, 2],
    );
    assert.equal(newIds(counts.offers, earlier.offers).length, 4);
    // The spend log: one accept per completed task, for the offer the provider granted, each charged once.
    const spend = report.spend!;
    // Task by task: task_b's and task_c's steps ended in either order.
    const entries = (kind: string) =>
      spend.filter((entry) => entry.kind === kind).sort((a, b) => a.task_id.localeCompare(b.task_id));
    assert.deepEqual(
      entries('accept').map((entry) => [entry.task_id, entry.offer_id, entry.outcome]),
      report.tasks.slice(0, 3).map((task) => [task.task_id, task.accepted!.offer_id, 'reserved']),
    );
    assert.deepEqual(
      entries('accept')
        .map((entry) => entry.offer_id)
        .sort(),
      [...accepted].sort(),
    );
    assert.deepEqual(
      entries('invoke').map((entry) => [entry.task_id, entry.amount_cu, entry.outcome]),
      [
        ['task_a', 0.001, 'charged'],
        ['task_b', 0.002, 'charged'],
        ['task_c', 0.002, 'charged'],
      ],
    );
    assert.deepEqual(
      entries('quote').map((entry) => [entry.task_id, entry.outcome]),
      ['task_a', 'task_b', 'task_c', 'task_d'].map((task) => [task, 'offered']),
    );
    // The budget, rebuilt from the journal by the restarted worker, denied task_d.
    assert.deepEqual(
      entries('denial').map((entry) => [entry.task_id, entry.amount_cu]),
      [['task_d', 0.001]],
    );
    assert.deepEqual(report.tasks[3]!.error?.data, { reason: 'budget' });
    assert.equal(report.budget?.stopped, true);
    assert.deepEqual(report.budget?.denied_tasks, ['task_d']);
    assert.ok(Math.abs((report.budget?.spent_cu ?? 0) - 0.005) < 1e-9);
    assert.ok(Math.abs(report.totals.cost_cu - 0.005) < 1e-9);
  });

  test('the server SIGKILLed mid-run and started again: the run completes, nothing runs twice', async () => {
    const report = await crashMidRun('diamond-server.acmp-dag.json', DIAMOND, 3, () => engine.restart());
    await assertDiamondOnce(provider, report);
  });

  test('cancelling a task on the engine cancels what depends on it; the independent branch completes', async () => {
    const file = scratch.file('cancel.acmp-dag.json', CHAIN_AND_APART);
    const counts = await provider.counts();
    const submitted = await cli(['run', file, '--engine', engine.ingress, '--detach']);
    const runId = submitted.stdout.trim();
    await provider.waitFor('executions', Object.keys(counts.executions).length + 3);
    const cancelled = await cli(['cancel', runId, '--task', 'task_b', '--engine', engine.ingress]);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    await provider.waitFor('cancels', Object.keys(counts.cancels).length + 1);
    await provider.release();
    const attached = await cli(['report', runId, '--engine', engine.ingress, '--json']);
    assert.equal(attached.code, 1, attached.stderr);
    const report = JSON.parse(attached.stdout) as RunReport;
    assert.equal(report.status, 'cancelled');
    assert.deepEqual(
      report.tasks.map((task) => [task.task_id, task.state]),
      [
        ['task_a', 'completed'],
        ['task_b', 'cancelled'],
        ['task_c', 'cancelled'],
        ['task_x', 'completed'],
      ],
    );
    assert.match(report.tasks[2]!.error!.message, /cancelled with upstream task "task_b"/);
    const runCounts = await countsOfRun(provider, report);
    assert.equal(runCounts.cancels.task_b, 1);
    assert.equal(runCounts.invokes.task_c, undefined);
  });

  test('Ctrl-C detaches from a durable run: the run goes on, and attach follows it to its end', async () => {
    const file = scratch.file('detach.acmp-dag.json', DIAMOND);
    const earlier = Object.keys((await provider.counts()).executions).length;
    let child: ChildProcess | undefined;
    const running = cli(['run', file, '--engine', engine.ingress], (started) => (child = started));
    await provider.waitFor('executions', earlier + 3);
    child!.kill('SIGINT');
    const detached = await running;
    assert.equal(detached.code, 130, detached.stderr);
    assert.match(detached.stderr, /detached; the run goes on\. Follow it again with: acmp-dag attach run-/);
    await provider.release();
    const attached = await cli(['attach', runIdOf(detached.stderr), '--engine', engine.ingress]);
    assert.equal(attached.code, 0, attached.stderr);
    assert.match(attached.stdout, /completed in \d+ ms: 4 completed, 0 failed, 0 cancelled/);
  });

  test('the example pipeline runs durably, is listed, and its report and events can be read again', async () => {
    const run = await cli(['run', PIPELINE, '--engine', engine.ingress]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /completed in \d+ ms: 4 completed, 0 failed, 0 cancelled/);
    const runId = runIdOf(run.stderr);
    const runs = await cli(['runs', '--engine', engine.ingress]);
    assert.equal(runs.code, 0, runs.stderr);
    assert.match(runs.stdout, new RegExp(`${runId}  dag_f4e2a1  completed  4/4  0.006 CU`));
    const attached = await cli(['attach', runId, '--engine', engine.ingress]);
    assert.equal(attached.code, 0, attached.stderr);
    assert.match(attached.stdout, /✓ {2}task_agg_03 +completed/);
    const report = JSON.parse((await cli(['report', runId, '--engine', engine.ingress, '--json'])).stdout) as RunReport;
    assert.equal(report.run_id, runId);
    assert.equal((report.result.task_agg_03!.data as { count: number }).count, 2);
  });

  test('an output above the journal size is stored by reference and the report streams it back', async () => {
    const big = 'x'.repeat(200_000);
    const dag = scratch.file('big.acmp-dag.json', {
      dag_id: 'dag_durable_big',
      tasks: [{ task_id: 'task_big', capability: 'echo', input: { type: 'text', data: big } }],
      edges: [],
    });
    const run = await cli(['run', dag, '--engine', engine.ingress, '--json']);
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout) as RunReport;
    assert.equal(report.result.task_big!.data, big);
    assert.ok(statSync(join(store, outputKey(report.run_id, 0))).size > big.length);
  });

  test('failures say what is wrong, with their exit codes', async () => {
    const closed = `http://127.0.0.1:${await workerPort()}`;
    const unreachable = await cli(['runs', '--engine', closed]);
    assert.equal(unreachable.code, 3);
    assert.match(unreachable.stderr, new RegExp(`cannot reach the Restate engine at ${closed}.*acmp-dag engine start`));
    const unknown = await cli(['attach', 'run-nope', '--engine', engine.ingress]);
    assert.equal(unknown.code, 4);
    assert.match(unknown.stderr, /knows no run "run-nope"/);
    const broken = scratch.file('broken.acmp-dag.json', {
      ...DIAMOND,
      edges: [...DIAMOND.edges, { from: 'task_d', to: 'task_a' }],
    });
    const refused = await cli(['run', broken, '--engine', engine.ingress]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /cycle/);
    assert.doesNotMatch(refused.stderr, /submitted/);
    const noProvider = scratch.file('unreachable.json', {
      providers: [{ id: 'gone', transport: 'http', url: `${closed}/mcp` }],
    });
    const lonely = await cli([
      'worker',
      '--engine',
      engine.ingress,
      '--admin',
      engine.admin,
      '--port',
      '0',
      '--providers',
      noProvider,
    ]);
    assert.equal(lonely.code, 1);
    assert.match(lonely.stderr, /cannot reach provider "gone"/);
  });
});

describe('acmp-dag engine start / stop', { timeout: SUITE_TIMEOUT_MS }, () => {
  const scratch = scratchFolder('acmp-engine-');
  after(() => scratch.remove());

  test('starts a local server, prints its addresses and the worker to start, and stops it', async () => {
    const started = await cli(['engine', 'start', '--dir', scratch.path]);
    assert.equal(started.code, 0, started.stderr);
    const ingress = /^ingress (\S+)$/m.exec(started.stdout)![1]!;
    const admin = /^admin +(\S+)$/m.exec(started.stdout)![1]!;
    assert.equal(ingress, `unix:${join(scratch.path, 'n1', 'ingress.sock')}`);
    assert.equal(await engineHealthy(ingress, admin), true);
    // The worker it suggests finds this engine's admin API and identity key from its address alone.
    assert.match(started.stdout, new RegExp(`Next: acmp-dag worker --engine ${ingress} `));
    // No worker registered yet: a run is refused with what to do, not a stack.
    const early = await cli(['run', PIPELINE, '--engine', ingress]);
    assert.equal(early.code, 3);
    assert.match(early.stderr, new RegExp(`no worker is registered with the engine at ${ingress}.*acmp-dag worker`));
    assert.doesNotMatch(early.stderr, /\n\s+at /);
    const stopped = await cli(['engine', 'stop', '--dir', scratch.path]);
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.equal(await engineHealthy(ingress, admin), false);
  });
});
