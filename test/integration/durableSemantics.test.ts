// The semantics table (test/support/semanticsTable.ts) against the Restate driver: a real server from node_modules,
// and the workflow served from this process (so the table's scripted providers serve its tasks), registered once.
import '../../server/src/run/durable/withResolvers';
import { createEndpointHandler } from '@restatedev/restate-sdk';
import { createServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe } from 'node:test';
import { EngineClient } from '../../server/src/run/durable/engineClient';
import { engineRequest, parseEngineAddress } from '../../server/src/run/durable/engineHttp';
import { startDurableRun } from '../../server/src/run/durable/durableRun';
import { DEFAULT_JOURNAL_OUTPUT_BYTES } from '../../server/src/run/durable/outputStore';
import { type WorkerContext, durableServices } from '../../server/src/run/durable/workflow';
import { ProviderPool } from '../../server/src/run/routing';
import { TestEngine, scratchFolder } from '../support/durable';
import { testSemantics } from '../support/semanticsTable';

describe('the semantics table on the Restate driver', { timeout: 180_000 }, () => {
  const scratch = scratchFolder('acmp-durable-semantics-');
  let engine: TestEngine;
  // Each case brings its providers: the worker's pool is the one of the run started last (one run at a time).
  let pool = new ProviderPool([], () => Promise.reject(new Error('no case is running')));
  const worker: WorkerContext = {
    get pool() {
      return pool;
    },
    storeDir: `${scratch.path}/outputs`,
    journalLimitBytes: DEFAULT_JOURNAL_OUTPUT_BYTES,
  };
  // The SDK logs each invocation at INFO; the test's output keeps what is wrong.
  process.env.RESTATE_LOGGING ??= 'WARN';
  let server: ReturnType<typeof createServer>;

  before(async () => {
    engine = await TestEngine.start(`${scratch.path}/engine`);
    server = createServer(
      createEndpointHandler({ services: durableServices(worker), identityKeys: [engine.identityKey] }),
    );
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const registered = await engineRequest(parseEngineAddress(engine.admin), 'deployments', {
      body: JSON.stringify({ uri, force: true }),
    });
    if (registered.status !== 201 && registered.status !== 200)
      throw new Error(`registration failed: ${registered.status} ${registered.text}`);
  });
  after(async () => {
    await engine?.stop();
    server.close();
    scratch.remove();
  });

  testSemantics({
    name: 'restate',
    start: (analysis, options) => {
      pool = new ProviderPool(options.providers, options.connect);
      return startDurableRun(new EngineClient(engine.ingress), analysis, options);
    },
  });
});
