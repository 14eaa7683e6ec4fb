// The output store of durable runs on a real Restate server, as real processes (the server, `acmp-dag worker` with
// the built-in provider, the CLI): a task id that is a path does not steer where its large output goes, the output
// read back for the downstream task and the report; a store that cannot take an output fails that task at once and
// the run ends; the read service refuses a key not of the store's form; what a submitter hands in that is not what it
// should be ends the task or the run with a message, never in the engine's retries.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { EngineClient } from '../../server/src/run/durable/engineClient';
import { outputKey, runFolderOf } from '../../server/src/run/durable/outputStore';
import type { RunRequest } from '../../server/src/protocol/engineMessages';
import type { RunReport } from '../../server/src/protocol/report';
import { TestEngine, cli, kill, scratchFolder, startWorker, workerPort } from '../support/durable';

const EVIL = 'task_/../../sub/evil';
const BIG = 'x'.repeat(200_000);
const DAG = {
  dag_id: 'dag_durable_store',
  tasks: [
    { task_id: EVIL, capability: 'echo', input: { type: 'text', data: BIG } },
    { task_id: 'task_next', capability: 'echo', input: { source: { from_task: EVIL } } },
  ],
  edges: [{ from: EVIL, to: 'task_next' }],
};

describe('the output store of durable runs', { timeout: 120_000 }, () => {
  const scratch = scratchFolder('acmp-durable-store-');
  const store = join(scratch.path, 'outputs');
  let engine: TestEngine;
  let worker: ChildProcess;

  before(async () => {
    const [started, port] = await Promise.all([TestEngine.start(join(scratch.path, 'engine')), workerPort()]);
    engine = started;
    const providers = scratch.file('providers.json', { providers: [{ id: 'builtin', transport: 'builtin' }] });
    worker = await startWorker(engine, { port, providers, store });
  });
  after(async () => {
    await Promise.all([worker === undefined ? undefined : kill(worker), engine?.stop()]);
    scratch.remove();
  });

  const runDag = async (): Promise<{ code: number | null; report: RunReport }> => {
    const result = await cli(['run', scratch.file('store.acmp-dag.json', DAG), '--engine', engine.ingress, '--json']);
    return { code: result.code, report: JSON.parse(result.stdout) as RunReport };
  };

  test('a task id that is a path: its output goes to the run folder by index, private, and reads back', async () => {
    const { code, report } = await runDag();
    assert.equal(code, 0);
    assert.equal(report.result.task_next!.data, BIG);
    const folder = runFolderOf(report.run_id);
    assert.deepEqual(readdirSync(store), [folder]);
    assert.deepEqual(readdirSync(join(store, folder)).sort(), ['0.json', '1.json']);
    assert.equal(statSync(join(store, outputKey(report.run_id, 0))).mode & 0o777, 0o600);
    assert.equal(statSync(join(store, folder)).mode & 0o777, 0o700);
    assert.equal(statSync(store).mode & 0o777, 0o700);
    assert.equal(existsSync(join(dirname(store), 'sub')), false);
  });

  test('the read service refuses a key not of the store form, at once, even of a file it could read', async () => {
    const text = JSON.stringify({ type: 'text', data: 'not an output of a run' });
    writeFileSync(join(store, 'notes.json'), text);
    const sha256 = createHash('sha256').update(text).digest('hex');
    const client = new EngineClient(engine.ingress);
    for (const key of ['notes.json', '../providers.json']) {
      const forged = { type: 'text', ref: { key, bytes: text.length, sha256 } };
      await assert.rejects(client.outputPiece(forged, 0), /not a stored output/);
    }
    rmSync(join(store, 'notes.json'));
  });

  test('bad submissions end: reuse of a non-output runs the task, of a gone output fails its reader, no DAG fails', async () => {
    const client = new EngineClient(engine.ingress);
    const reusing = async (reuse: Record<string, unknown>): Promise<RunReport> => {
      const runId = `run-${randomUUID()}`;
      const request = { dag: JSON.stringify(DAG), policy: 'fail-fast', maxConcurrency: 2, reuse };
      await client.submit(runId, DAG.dag_id, request as RunRequest);
      return client.report(runId);
    };
    const ranAgain = await reusing({ [EVIL]: null, task_next: { ref: { key: '../../etc/passwd' } } });
    assert.equal(ranAgain.status, 'completed');
    assert.deepEqual(
      ranAgain.tasks.map((task) => task.provider_id),
      ['builtin', 'builtin'],
    );
    // Nor does a request without a DAG keep the engine retrying it: the run fails at once.
    const runId = `run-${randomUUID()}`;
    await client.submit(runId, DAG.dag_id, { reuse: {} } as unknown as RunRequest);
    await assert.rejects(client.report(runId), /the run request carries no DAG text/);
    const gone = { type: 'text', ref: { key: outputKey('run-earlier', 0), bytes: 10, sha256: 'ab' } };
    const failed = await reusing({ [EVIL]: gone });
    assert.equal(failed.status, 'failed');
    const next = failed.tasks.find((task) => task.task_id === 'task_next');
    assert.match(next!.error!.message, /^its input cannot be made: the output \S+ is not in the output store/);
  });

  test('a store that cannot take an output fails that task at once with a message, and the run ends', async () => {
    rmSync(store, { recursive: true, force: true });
    writeFileSync(store, 'not a folder');
    try {
      const { code, report } = await runDag();
      assert.equal(code, 1);
      assert.equal(report.status, 'failed');
      const evil = report.tasks.find((task) => task.task_id === EVIL);
      const next = report.tasks.find((task) => task.task_id === 'task_next');
      assert.equal(evil!.state, 'failed');
      assert.match(evil!.error!.message, /could not be written to the output store .* \(ENOTDIR\)/);
      assert.equal(next!.state, 'cancelled');
    } finally {
      rmSync(store, { force: true });
      mkdirSync(store, { mode: 0o700 });
    }
  });
});
