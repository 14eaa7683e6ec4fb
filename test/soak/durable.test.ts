// Soak for durable runs: the slower cases, with real processes. A 3-node Restate cluster on 127.0.0.1
// (replication 2, one partition) whose node leading the run is SIGKILLed mid-run: another takes over and the run
// completes, nothing executed twice. Two workers behind one address (a TCP balancer) share the runs, and one killed
// mid-run leaves the other to complete them.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { EngineProcess } from '../../server/src/run/durable/engineProcess';
import type { RunReport } from '../../server/src/protocol/report';
import { Balancer } from '../support/balancer';
import {
  CountingProvider,
  DIAMOND,
  TestEngine,
  assertDiamondOnce,
  cli,
  kill,
  partitionLeader,
  scratchFolder,
  startCluster,
  startWorker,
  workerPort,
} from '../support/durable';

const SUITE_TIMEOUT_MS = 180_000;

describe('a 3-node cluster', { timeout: SUITE_TIMEOUT_MS }, () => {
  const scratch = scratchFolder('acmp-durable-cluster-');
  let nodes: EngineProcess[] = [];
  let provider: CountingProvider;
  let worker: ChildProcess;

  before(async () => {
    // One after the other: when one fails, the other is already assigned for `after` to stop.
    provider = await CountingProvider.start();
    nodes = await startCluster(`${scratch.path}/cluster`, 3);
    const [first] = nodes;
    worker = await startWorker(first!, {
      port: await workerPort(),
      providers: provider.providersFile(scratch),
      store: `${scratch.path}/outputs`,
    });
  });
  after(async () => {
    await Promise.all([kill(worker), provider?.stop(), ...nodes.map((node) => kill(node.child))]);
    scratch.remove();
  });

  test('the node leading the run SIGKILLed mid-run: another takes over, the run completes, nothing runs twice', async () => {
    const file = scratch.file('diamond.acmp-dag.json', DIAMOND);
    const submitted = await cli(['run', file, '--engine', nodes[0]!.ingress, '--detach']);
    assert.equal(submitted.code, 0, submitted.stderr);
    const runId = submitted.stdout.trim();
    await provider.waitFor('executions', 3);
    const leader = await partitionLeader(nodes);
    await kill(nodes[leader]!.child);
    await provider.release();
    const survivor = nodes[(leader + 1) % nodes.length]!;
    const attached = await cli(['attach', runId, '--engine', survivor.ingress, '--json']);
    assert.equal(attached.code, 0, attached.stderr);
    await assertDiamondOnce(provider, JSON.parse(attached.stdout) as RunReport);
  });
});

describe('two workers behind one address', { timeout: SUITE_TIMEOUT_MS }, () => {
  const scratch = scratchFolder('acmp-durable-two-');
  const store = `${scratch.path}/outputs`;
  let engine: TestEngine;
  let provider: CountingProvider;
  let balancer: Balancer;
  const workers: ChildProcess[] = [];

  before(async () => {
    const ports = await Promise.all([workerPort(), workerPort()]);
    [engine, provider, balancer] = await Promise.all([
      TestEngine.start(`${scratch.path}/engine`),
      CountingProvider.start(),
      Balancer.start(ports),
    ]);
    for (const port of ports) {
      const providers = provider.providersFile(scratch);
      workers.push(await startWorker(engine, { port, providers, store, advertise: balancer.url }));
    }
  });
  after(async () => {
    await Promise.all([...workers.map(kill), provider?.stop(), engine?.stop(), balancer?.close()]);
    scratch.remove();
  });

  test('share the runs: with one of them killed mid-run, the other completes every run, nothing runs twice', async () => {
    const file = scratch.file('diamond.acmp-dag.json', DIAMOND);
    // Registration went through the balancer too: only the connections opened for the runs count.
    const registered = new Map(balancer.connections);
    const runIds: string[] = [];
    for (let k = 0; k < 4; k++) {
      const submitted = await cli(['run', file, '--engine', engine.ingress, '--detach']);
      assert.equal(submitted.code, 0, submitted.stderr);
      runIds.push(submitted.stdout.trim());
    }
    await provider.waitFor('executions', 4 * 3);
    for (const [port, count] of balancer.connections) {
      assert.ok(count > (registered.get(port) ?? 0), `the engine opened no connection to the worker at ${port}`);
    }
    await kill(workers[0]!);
    await provider.release();
    for (const runId of runIds) {
      const attached = await cli(['attach', runId, '--engine', engine.ingress, '--json']);
      assert.equal(attached.code, 0, attached.stderr);
      const report = JSON.parse(attached.stdout) as RunReport;
      assert.equal(report.status, 'completed');
    }
    const counts = await provider.counts();
    assert.equal(Object.keys(counts.executions).length, 4 * 4);
    assert.ok(Object.values(counts.executions).every((count) => count === 1));
  });
});
