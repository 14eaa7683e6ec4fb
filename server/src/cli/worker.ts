// `acmp-dag worker --engine ADDRESS`: serves the durable-run workflow (run/durable/workflow.ts) as a Restate
// deployment on 127.0.0.1 and registers it with the engine's admin API. It takes only requests the engine signed with
// its request-identity key (requestIdentity.ts): anything else that reaches its port is refused with 401. A worker keeps nothing of its own between requests (the
// journal is in the engine, large outputs in the output store), so a crashed worker is replaced by starting another
// at the same address, and several may serve one deployment behind one address (--advertise). Its runs reuse and
// keep results in the result store (--cache-dir, default the user's; --cache-max-mb; --no-cache for none), opened by
// each run and closed at its end, so that runs in memory and on other workers sharing the folder see each other's.
import '../run/durable/withResolvers';
import { createEndpointHandler } from '@restatedev/restate-sdk';
import { type Http2Server, type Http2Session, createServer } from 'node:http2';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { connectProvider } from '../run/connect';
import {
  DEFAULT_JOURNAL_OUTPUT_BYTES,
  STORE_SWEEP_INTERVAL_MS,
  prepareOutputStore,
  sweepOutputStore,
} from '../run/durable/outputStore';
import { durableServices } from '../run/durable/workflow';
import { runSecrets } from '../run/redaction';
import type { ProviderConfig } from '../protocol/settings';
import { ProviderPool } from '../run/routing';
import { EngineUnreachable, engineRequest, parseEngineAddress } from '../run/durable/engineHttp';
import { DEFAULT_MAX_BYTES, resultStoreFolder } from '../run/resultStore';
import { parseMaxBytes } from './cache';
import { addressOption, adminUrlFor, engineOption, identityKeyFor } from './engineUrl';
import { loadProviders } from './providersFile';
import { UsageError } from './usage';

/** The worker's default port: a restarted worker at the same address takes over the runs of the one before. */
export const DEFAULT_WORKER_PORT = 9080;
/** The output store beside the worker by default. */
export const DEFAULT_STORE_DIR = '.acmp-outputs';

export async function workerCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      engine: { type: 'string' },
      admin: { type: 'string' },
      providers: { type: 'string' },
      port: { type: 'string' },
      store: { type: 'string' },
      advertise: { type: 'string' },
      'identity-key': { type: 'string' },
      'cache-dir': { type: 'string' },
      'cache-max-mb': { type: 'string' },
      'no-cache': { type: 'boolean', default: false },
    },
  });
  if (positionals.length > 0) throw new UsageError('worker takes no FILE');
  const engine = engineOption(values.engine);
  const identityKey = identityKeyFor(engine, values['identity-key']);
  const port = values.port === undefined ? DEFAULT_WORKER_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port needs a port number, not "${values.port}"`);
  const results = values['no-cache']
    ? undefined
    : {
        folder: resolve(resultStoreFolder(values['cache-dir'])),
        maxBytes: parseMaxBytes(values['cache-max-mb'], DEFAULT_MAX_BYTES),
      };
  const providers = await loadProviders(values.providers);
  const pool = new ProviderPool(providers, connectProvider);
  const storeDir = resolve(values.store ?? DEFAULT_STORE_DIR);
  if (!(await reachProviders(pool, providers)) || !prepareStore(storeDir)) {
    await pool.closeAll();
    return 1;
  }
  // Runs the engine no longer keeps leave the store too (at start, then hourly).
  const sweeper = setInterval(() => sweepOutputStore(storeDir), STORE_SWEEP_INTERVAL_MS);
  sweeper.unref();
  // The SDK logs each invocation's start and end at INFO: a worker serving 10,000s of steps says only what is wrong.
  process.env.RESTATE_LOGGING ??= 'WARN';
  const handler = createEndpointHandler({
    services: durableServices({
      pool,
      storeDir,
      journalLimitBytes: journalLimit(),
      secrets: runSecrets(providers),
      ...(results === undefined ? {} : { results }),
    }),
    identityKeys: [identityKey],
  });
  const { server, sessions, ownUrl } = await listen(handler, port);
  const uri = values.advertise ?? ownUrl;
  const admin = values.admin === undefined ? adminUrlFor(engine) : addressOption(values.admin, '--admin');
  try {
    await register(admin, uri);
  } catch (error) {
    process.stderr.write(`acmp-dag worker: ${(error as Error).message}\n`);
    server.close();
    await pool.closeAll();
    return error instanceof EngineUnreachable ? 3 : 1;
  }
  process.stdout.write(
    `acmp-dag worker: serving durable runs at ${ownUrl}, registered as ${uri} with ${admin} (outputs in ${storeDir}, ${results === undefined ? 'no result store' : `results in ${results.folder}`})\n`,
  );
  await new Promise((stop) => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, stop);
  });
  clearInterval(sweeper);
  server.close();
  for (const session of sessions) session.destroy();
  await pool.closeAll();
  // What the SDK may still hold (its timers, a session closing) must not keep a stopped worker alive.
  setTimeout(() => process.exit(0), 1_000).unref();
  return 0;
}

/** Connects to every provider: one the worker cannot reach is said now, not as the failure of every task sent to it. */
async function reachProviders(pool: ProviderPool, providers: readonly ProviderConfig[]): Promise<boolean> {
  for (const provider of providers) {
    try {
      await pool.connection(provider);
    } catch (error) {
      process.stderr.write(`acmp-dag worker: cannot reach provider "${provider.id}": ${(error as Error).message}\n`);
      return false;
    }
  }
  return true;
}

/** Prepares the output store; false (said on stderr) when it cannot be used. */
function prepareStore(storeDir: string): boolean {
  try {
    prepareOutputStore(storeDir);
    return true;
  } catch (error) {
    process.stderr.write(`acmp-dag worker: ${(error as Error).message}\n`);
    return false;
  }
}

/** The worker's HTTP/2 server listening on 127.0.0.1:`port`, with its sessions and its own URL. */
async function listen(
  handler: ReturnType<typeof createEndpointHandler>,
  port: number,
): Promise<{ server: Http2Server; sessions: Set<Http2Session>; ownUrl: string }> {
  const server = createServer(handler);
  // The engine keeps its HTTP/2 sessions open: stopping ends them, and the engine sends what was in flight again.
  const sessions = new Set<Http2Session>();
  server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  await new Promise<void>((listening, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => listening());
  });
  const address = server.address();
  const ownUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : port}`;
  return { server, sessions, ownUrl };
}

/** ACMP_JOURNAL_OUTPUT_BYTES: outputs above this size go to the output store (default 64 KiB). */
function journalLimit(): number {
  const value = process.env.ACMP_JOURNAL_OUTPUT_BYTES;
  if (value === undefined || value === '') return DEFAULT_JOURNAL_OUTPUT_BYTES;
  const bytes = Number(value);
  if (!Number.isInteger(bytes) || bytes < 0)
    throw new UsageError(`ACMP_JOURNAL_OUTPUT_BYTES needs a whole number of bytes, not "${value}"`);
  return bytes;
}

/** Registers (again: `force`) the deployment at `uri` with the engine's admin API. */
async function register(admin: string, uri: string): Promise<void> {
  let answer;
  try {
    answer = await engineRequest(parseEngineAddress(admin), 'deployments', {
      body: JSON.stringify({ uri, force: true }),
    });
  } catch (error) {
    if (!(error instanceof EngineUnreachable)) throw error;
    throw new EngineUnreachable(
      `cannot reach the engine's admin API at ${admin} (start one with \`acmp-dag engine start\`, or pass --admin ADDRESS)`,
    );
  }
  if (answer.status < 200 || answer.status >= 300)
    throw new Error(`the engine refused the deployment ${uri}: ${answer.status} ${answer.text.slice(0, 500)}`);
}
