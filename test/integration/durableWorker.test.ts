// What a worker's runs leave behind, with a real server from node_modules and the workflow served from this process
// (the retention shortened to seconds; a day otherwise): a run leaves the engine's run index when the engine forgets
// it, and its report shows no token of the worker's providers, though the downstream task got the output as sent.
import '../../server/src/run/durable/withResolvers';
import { createEndpointHandler } from '@restatedev/restate-sdk';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';
import { connectProvider } from '../../server/src/run/connect';
import { startDurableRun } from '../../server/src/run/durable/durableRun';
import { EngineClient } from '../../server/src/run/durable/engineClient';
import { engineRequest, parseEngineAddress } from '../../server/src/run/durable/engineHttp';
import { DEFAULT_JOURNAL_OUTPUT_BYTES } from '../../server/src/run/durable/outputStore';
import { durableServices } from '../../server/src/run/durable/workflow';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import { runSecrets } from '../../server/src/run/redaction';
import { ProviderPool } from '../../server/src/run/routing';
import { ROOT, TestEngine, scratchFolder } from '../support/durable';

const RETENTION_MS = 2_000;
const TOKEN_ENV = 'ACMP_DURABLE_WORKER_TEST_TOKEN';
const TOKEN = `acmp_tok_worker_${randomUUID()}`;

const PROVIDERS: ProviderConfig[] = [
  { id: 'builtin', transport: 'builtin' },
  {
    id: 'tokens',
    transport: 'stdio',
    command: process.execPath,
    args: ['--import', 'tsx', join(ROOT, 'test/fixtures/providers/quotes-token.ts')],
    capabilities: ['token-echo', 'token-check'],
    tokenEnv: TOKEN_ENV,
  },
];

describe("a worker's runs", { timeout: 60_000 }, () => {
  const scratch = scratchFolder('acmp-durable-worker-');
  let engine: TestEngine;
  process.env.RESTATE_LOGGING ??= 'WARN';
  process.env[TOKEN_ENV] = TOKEN;
  const pool = new ProviderPool(PROVIDERS, connectProvider);
  const server = createServer();

  before(async () => {
    engine = await TestEngine.start(`${scratch.path}/engine`);
    const services = durableServices({
      pool,
      storeDir: `${scratch.path}/outputs`,
      journalLimitBytes: DEFAULT_JOURNAL_OUTPUT_BYTES,
      runRetentionMs: RETENTION_MS,
      secrets: runSecrets(PROVIDERS),
    });
    server.on('request', createEndpointHandler({ services, identityKeys: [engine.identityKey] }));
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const registered = await engineRequest(parseEngineAddress(engine.admin), 'deployments', {
      body: JSON.stringify({ uri, force: true }),
    });
    assert.ok(registered.status === 200 || registered.status === 201, registered.text);
  });
  after(async () => {
    await engine?.stop();
    server.close();
    await pool.closeAll();
    scratch.remove();
  });

  test('a token a provider echoes in its output is blanked out of the report, not out of the downstream input', async () => {
    const dag = JSON.stringify({
      dag_id: 'dag_worker_tokens',
      tasks: [
        { task_id: 'task_echo', capability: 'token-echo', input: { type: 'text', data: 'echo' } },
        { task_id: 'task_check', capability: 'token-check', input: { source: { from_task: 'task_echo' } } },
      ],
      edges: [{ from: 'task_echo', to: 'task_check' }],
    });
    // `listed`: the fixture provider answers no offer request (it never negotiated), so it is not quoted.
    const run = await startDurableRun(new EngineClient(engine.ingress), analyzeDag(dag), { routing: 'listed' });
    const report = await run.done;
    const echo = report.tasks.find((task) => task.task_id === 'task_echo')!;
    assert.deepEqual(echo.output, {
      type: 'json',
      data: { echoed: 'Bearer [token]', '[token]': 'as a key', nested: [['[token]']] },
    });
    assert.equal(echo.output_redacted, true);
    assert.deepEqual(report.result.task_check, { type: 'text', data: 'input held the token' });
    assert.ok(!JSON.stringify(report).includes(TOKEN));
  });

  test('listed while the engine keeps it, gone from `runs` once the engine forgot it', async () => {
    const client = new EngineClient(engine.ingress);
    const text = readFileSync(join(ROOT, 'examples/text-pipeline.acmp-dag.json'), 'utf8');
    const run = await startDurableRun(client, analyzeDag(text), {});
    assert.equal((await run.done).status, 'completed');
    assert.ok(
      (await client.list()).some((entry) => entry.run_id === run.runId),
      'listed after its end',
    );
    // Nothing tells a client that the engine forgot a run: the index is asked again until it has (a bounded wait).
    let listed = true;
    for (const deadline = Date.now() + 30_000; listed && Date.now() < deadline; await delay(250)) {
      listed = (await client.list()).some((entry) => entry.run_id === run.runId);
    }
    assert.equal(listed, false, 'still listed long after the retention');
  });
});
