// Durable runs over LSP, all real: the built server over stdio, a Restate engine from node_modules on free
// loopback ports, `acmp-dag worker`, the counting provider and the CLI. With `acmp.engine.url` set, acmp.runDag
// submits a durable run and streams its events to the end; acmp/durableRuns lists a run the CLI submitted and
// follows it (its events sent for the workspace's DAG file); a cancel of a task goes to the engine; a restarted
// server (a window reload) replays the runs the client did not keep; an engine that does not answer is said once.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  DURABLE_RUNS_REQUEST,
  type DurableRunsParams,
  type DurableRunsResult,
  RUN_COMMANDS,
  RUN_EVENTS_NOTIFICATION,
  type RunDagArguments,
  type RunEventsParams,
} from '../../server/src/protocol/runMessages';
import type { RunEvent, RunReport } from '../../server/src/protocol/report';
import {
  CHAIN_AND_APART,
  CountingProvider,
  DIAMOND,
  TestEngine,
  cli,
  kill,
  scratchFolder,
  startWorker,
  workerPort,
} from '../support/durable';
import { type LspSession, startLspSession } from '../support/lspHarness';
import { freePort } from '../support/system';

const SUITE_TIMEOUT_MS = 120_000;

describe('durable runs over LSP', { timeout: SUITE_TIMEOUT_MS }, () => {
  const scratch = scratchFolder('acmp-lsp-durable-');
  let engine: TestEngine;
  let provider: CountingProvider;
  let worker: ChildProcess;
  let session: LspSession;
  /** The run the CLI submitted that the second test followed to its end. */
  let keptRunId: string;
  const batches: RunEventsParams[] = [];
  const messages: string[] = [];
  const waiters: { accept: (params: RunEventsParams) => boolean; resolve: () => void }[] = [];

  before(async () => {
    let port: number;
    [engine, provider, port] = await Promise.all([
      TestEngine.start(`${scratch.path}/engine`),
      CountingProvider.start(),
      workerPort(),
    ]);
    const providers = provider.providersFile(scratch);
    worker = await startWorker(engine, { port, providers, store: `${scratch.path}/outputs` });
    session = await startLspSession({ engine: { url: engine.ingress } }, { workspaceFolder: scratch.path });
    session.connection.onNotification(RUN_EVENTS_NOTIFICATION, (params: RunEventsParams) => {
      batches.push(params);
      for (const waiter of [...waiters]) {
        if (!waiter.accept(params)) continue;
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    });
    session.connection.onNotification('window/showMessage', ({ message }: { message: string }) =>
      messages.push(message),
    );
  });
  after(async () => {
    await session?.stop();
    await Promise.all([worker && kill(worker), provider?.stop(), engine?.stop()]);
    scratch.remove();
  });

  const eventsOf = (runId: string): { uri: string; engine: string | undefined; event: RunEvent }[] =>
    batches.flatMap((params) =>
      params.events
        .filter((event) => event.run_id === runId)
        .map((event) => ({ uri: params.uri, engine: params.engine, event })),
    );
  /** Resolves once a batch has an event of the run that `accept` takes. */
  const eventSeen = (runId: string, accept: (event: RunEvent) => boolean): Promise<void> =>
    new Promise((resolveSeen) => {
      const matches = (params: RunEventsParams) =>
        params.events.some((event) => event.run_id === runId && accept(event));
      if (batches.some(matches)) resolveSeen();
      else waiters.push({ accept: matches, resolve: resolveSeen });
    });
  const finished = (runId: string) => eventSeen(runId, (event) => event.type === 'run-finished');
  const listRuns = (params: DurableRunsParams = {}) =>
    session.connection.sendRequest<DurableRunsResult>(DURABLE_RUNS_REQUEST, params);
  const execute = <T>(command: string, argument: object) =>
    session.connection.sendRequest<T>('workspace/executeCommand', { command, arguments: [argument] });

  /** The provider's executions so far: a run's held tasks are released once this many more reached it. */
  const executions = async () => Object.keys((await provider.counts()).executions).length;
  const releaseAfter = async (from: number, count: number) => {
    await provider.waitFor('executions', from + count);
    await provider.release();
  };

  /** Submits `dag` (written to the workspace as `name`, as the file watcher tells) from the CLI, detached. */
  async function submitFromCli(name: string, dag: object): Promise<{ runId: string; uri: string }> {
    const file = scratch.file(name, dag);
    await session.filesChanged([{ uri: pathToFileURL(file).href, type: 1 }]);
    const submitted = await cli(['run', file, '--engine', engine.ingress, '--detach']);
    assert.equal(submitted.code, 0, submitted.stderr);
    return { runId: submitted.stdout.trim(), uri: pathToFileURL(file).href };
  }

  test('acmp.runDag submits a durable run, streams its events marked with the engine, and answers with its report', async () => {
    const uri = pathToFileURL(scratch.file('diamond.acmp-dag.json', DIAMOND)).href;
    const runId = 'run-lsp-durable-1';
    const from = await executions();
    const answer = execute<RunReport>(RUN_COMMANDS.runDag, {
      uri,
      runId,
      eventBatches: true,
    } satisfies RunDagArguments);
    // task_a done, task_b and task_c held at the provider until released.
    await releaseAfter(from, 3);
    const report = await answer;
    assert.equal(report.status, 'completed');
    assert.equal(report.run_id, runId);
    const events = eventsOf(runId);
    assert.equal(events[0]!.event.type, 'run-started');
    assert.ok(
      !events.some(({ event }) => event.type === 'run-finished'),
      'in batches the report is in the answer only',
    );
    assert.ok(events.every((sent) => sent.uri === uri && sent.engine === engine.ingress));
    const states = events.flatMap(({ event }) =>
      event.type === 'task-state' ? [`${event.task_id}:${event.state}`] : [],
    );
    for (const task of ['task_a', 'task_b', 'task_c', 'task_d']) assert.ok(states.includes(`${task}:completed`), task);
  });

  test('acmp/durableRuns lists a run the CLI submitted, durable, and follows it to its end for its DAG file', async () => {
    const from = await executions();
    const { runId, uri } = await submitFromCli('cli-diamond.acmp-dag.json', { ...DIAMOND, dag_id: 'dag_cli_diamond' });
    const ended = finished(runId);
    const listed = await listRuns();
    assert.equal(listed.engine, engine.ingress);
    const entry = listed.runs.find((run) => run.runId === runId);
    assert.ok(entry, `listed: ${JSON.stringify(listed.runs)}`);
    assert.equal(entry.durable, true);
    assert.equal(entry.dagId, 'dag_cli_diamond');
    assert.equal(entry.uri, uri);
    await releaseAfter(from, 3);
    await ended;
    keptRunId = runId;
    const events = eventsOf(runId);
    assert.equal(events[0]!.event.type, 'run-started');
    const last = events.at(-1)!.event;
    assert.ok(last.type === 'run-finished' && last.report.status === 'completed');
    assert.ok(events.every((sent) => sent.uri === uri && sent.engine === engine.ingress));
    // The run the server submitted itself was not followed a second time.
    const own = eventsOf('run-lsp-durable-1').filter(({ event }) => event.type === 'run-started');
    assert.equal(own.length, 1);
  });

  test('acmp.cancelTask on a durable run the CLI started cancels the task and its downstream through the engine', async () => {
    const from = await executions();
    const { runId } = await submitFromCli('cli-cancel.acmp-dag.json', CHAIN_AND_APART);
    const held = eventSeen(runId, (e) => e.type === 'task-state' && e.task_id === 'task_b' && e.state === 'running');
    const ended = finished(runId);
    // Followed once the next poll of the index sees it.
    await held;
    const answer = await execute<{ cancelled: boolean }>(RUN_COMMANDS.cancelTask, { runId, taskId: 'task_b' });
    assert.equal(answer.cancelled, true);
    await eventSeen(runId, (e) => e.type === 'task-state' && e.task_id === 'task_c' && e.state === 'cancelled');
    // task_x, apart, goes on: held (with task_a done and task_b cancelled) until released.
    await releaseAfter(from, 3);
    await ended;
    const last = eventsOf(runId).at(-1)!.event;
    assert.ok(last.type === 'run-finished');
    const states = Object.fromEntries(last.report.tasks.map((task) => [task.task_id, task.state]));
    assert.deepEqual(states, { task_a: 'completed', task_b: 'cancelled', task_c: 'cancelled', task_x: 'completed' });
  });

  test('a restarted server lists the runs again: a run the client kept is not replayed, a running one is from its start', async () => {
    const from = await executions();
    const { runId } = await submitFromCli('cli-restart.acmp-dag.json', { ...DIAMOND, dag_id: 'dag_cli_restart' });
    await eventSeen(runId, (e) => e.type === 'task-state' && e.task_id === 'task_b' && e.state === 'running');
    // What a window reload does: a new server, asked by a client that kept the end of the run it had finished.
    const restarted = await startLspSession({ engine: { url: engine.ingress } }, { workspaceFolder: scratch.path });
    try {
      const replayed: RunEvent[] = [];
      const ended = new Promise<void>((resolveEnded) =>
        restarted.connection.onNotification(RUN_EVENTS_NOTIFICATION, (params: RunEventsParams) => {
          replayed.push(...params.events);
          if (params.events.some((event) => event.run_id === runId && event.type === 'run-finished')) resolveEnded();
        }),
      );
      const listed = await restarted.connection.sendRequest<DurableRunsResult>(DURABLE_RUNS_REQUEST, {
        known: [keptRunId],
      } satisfies DurableRunsParams);
      const statuses = new Map(listed.runs.map((run) => [run.runId, run.status]));
      assert.equal(statuses.get(keptRunId), 'completed');
      assert.equal(statuses.get(runId), 'running');
      await releaseAfter(from, 3);
      await ended;
      const ofRun = replayed.filter((event) => event.run_id === runId);
      assert.equal(ofRun[0]!.type, 'run-started');
      assert.ok(ofRun.some((e) => e.type === 'task-state' && e.task_id === 'task_a' && e.state === 'completed'));
      assert.ok(!replayed.some((event) => event.run_id === keptRunId), 'the kept run is not replayed');
    } finally {
      await restarted.stop();
    }
  });

  test('an engine that does not answer is said once, with its URL and how to start one', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const before = messages.length;
    await session.configure({ engine: { url: closed } });
    const first = await listRuns();
    const second = await listRuns();
    assert.deepEqual(first.runs, []);
    assert.match(
      first.error ?? '',
      /cannot reach the Restate engine at http:\/\/127\.0\.0\.1:\d+.*acmp-dag engine start/,
    );
    assert.equal(second.error, first.error);
    // Notifications come in order: the second answer came after any message its failure would have sent.
    const said = messages.slice(before);
    assert.equal(said.length, 1, said.join('\n'));
    assert.ok(said[0]!.includes(closed));
    await session.configure({ engine: { url: engine.ingress } });
  });
});
