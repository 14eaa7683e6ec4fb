// `npm run test:e2e`: the extension-host suite inside a real VS Code (code-server driven by Chromium, launcher.ts).
// Three phases, each a fresh code-server and browser profile: the main suite in a trusted window, a small suite in a
// window that opens a folder in Restricted Mode, and durable runs on a Restate engine the runner starts, across a
// window reload (`npm run test:e2e -- untrusted` runs one phase only).
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import { CountingProvider, DIAMOND, TestEngine, kill, startWorker, workerPort } from '../support/durable';
import { DURABLE_E2E_DAGS } from './durableDags';
import { Failure, buildExtensionAndSuite, durableSuiteFile, suiteFile, untrustedSuiteFile, workspace } from './build';
import { type PreparedWindow, type WindowOptions, ensureCodeServer, runWindow, screenshots } from './launcher';

/** Each phase's suite, window start-up included, must finish within this. */
const SUITE_DEADLINE_MS = 5 * 60_000;

/**
 * A folder no profile has trusted, whose settings name a stdio provider that writes a marker file when started, and
 * an engine (a stand-in on loopback) that writes another when anything asks it; the suite looks for the markers
 * (outside the folder) at ACMP_E2E_PROVIDER_MARKER and ACMP_E2E_ENGINE_MARKER.
 */
async function untrustedWorkspace(scratch: string): Promise<PreparedWindow> {
  const folder = join(scratch, 'workspace');
  const marker = join(scratch, 'provider-ran');
  const engineMarker = join(scratch, 'engine-asked');
  const provider: ProviderConfig = {
    id: 'marker',
    transport: 'stdio',
    command: process.execPath,
    args: ['-e', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`],
  };
  const engine = createServer((request, response) => {
    writeFileSync(engineMarker, `${request.method} ${request.url}`);
    response.writeHead(404).end();
  });
  await new Promise<void>((listening) => engine.listen(0, '127.0.0.1', listening));
  const engineUrl = `http://127.0.0.1:${(engine.address() as AddressInfo).port}`;
  mkdirSync(join(folder, '.vscode'), { recursive: true });
  writeFileSync(
    join(folder, '.vscode', 'settings.json'),
    JSON.stringify({ 'acmp.providers': [provider], 'acmp.engine.url': engineUrl }, null, 2),
  );
  return {
    folder,
    env: { ACMP_E2E_PROVIDER_MARKER: marker, ACMP_E2E_ENGINE_MARKER: engineMarker },
    stop: () => new Promise<void>((closed) => engine.close(() => closed())),
  };
}

/**
 * A folder whose settings name a Restate engine (`acmp.engine.url`) the runner starts with a worker and the counting
 * provider (its `hold` tasks answer when the suite asks the runner to `release` them), all stopped after the window.
 * The suite keeps what it must know across the window's reload in ACMP_E2E_DURABLE_STATE, outside the folder.
 */
async function durableWorkspace(scratch: string): Promise<PreparedWindow> {
  const folder = join(scratch, 'workspace');
  mkdirSync(join(folder, '.vscode'), { recursive: true });
  const [engine, provider] = await Promise.all([TestEngine.start(join(scratch, 'engine')), CountingProvider.start()]);
  const stopAll = async (): Promise<void> => {
    await Promise.all([provider.stop(), engine.stop()]);
  };
  try {
    const inScratch = {
      file: (name: string, value: unknown): string => {
        writeFileSync(join(scratch, name), JSON.stringify(value));
        return join(scratch, name);
      },
    };
    const providers = provider.providersFile(inScratch);
    const worker = await startWorker(engine, { port: await workerPort(), providers, store: join(scratch, 'outputs') });
    writeFileSync(join(folder, '.vscode', 'settings.json'), JSON.stringify({ 'acmp.engine.url': engine.ingress }));
    // In the folder from the start: the language server's first scan knows the DAG files the runs are of.
    for (const name of DURABLE_E2E_DAGS) {
      writeFileSync(join(folder, `${name}.acmp-dag.json`), JSON.stringify({ ...DIAMOND, dag_id: `dag_e2e_${name}` }));
    }
    return {
      folder,
      env: { ACMP_E2E_DURABLE_STATE: join(scratch, 'durable-state.json') },
      answers: {
        /** Once the provider executed this many tasks in all (the held ones among them), they answer. */
        release: async (argument) => {
          await provider.waitFor('executions', (argument as { executions: number }).executions);
          await provider.release();
        },
      },
      stop: async () => {
        await kill(worker);
        await stopAll();
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

const PHASES: readonly WindowOptions[] = [
  {
    name: 'trusted',
    suite: suiteFile,
    trusted: true,
    deadlineMs: SUITE_DEADLINE_MS,
    prepare: () => ({ folder: workspace }),
  },
  {
    name: 'untrusted',
    suite: untrustedSuiteFile,
    trusted: false,
    deadlineMs: SUITE_DEADLINE_MS,
    prepare: untrustedWorkspace,
  },
  {
    name: 'durable',
    suite: durableSuiteFile,
    trusted: true,
    deadlineMs: SUITE_DEADLINE_MS,
    prepare: durableWorkspace,
  },
];

async function main(): Promise<number> {
  const named = process.argv.slice(2);
  const unknown = named.filter((name) => !PHASES.some((phase) => phase.name === name));
  if (unknown.length > 0) {
    throw new Failure(`no phase ${unknown.join(', ')}; the phases: ${PHASES.map((phase) => phase.name).join(', ')}`);
  }
  const phases = named.length === 0 ? PHASES : PHASES.filter((phase) => named.includes(phase.name));
  const entry = ensureCodeServer();
  await buildExtensionAndSuite();

  // Every phase runs, so that one failing does not hide the other's result.
  let exitCode = 0;
  const summary: string[] = [];
  for (const phase of phases) {
    const started = Date.now();
    const { code, failed } = await runWindow(entry, phase);
    const line = `e2e: ${phase.name} phase: exit code ${code} after ${Math.round((Date.now() - started) / 1000)} s`;
    console.log(line);
    summary.push(line, ...failed.map((test) => `  failed: ${test.title}: ${test.message}`));
    if (code !== 0) exitCode = code;
  }
  console.log(`e2e: screenshots in ${screenshots}`);
  // Last, so that a log's tail says which phase and which tests failed.
  for (const line of summary) console.log(line);
  return exitCode;
}

main()
  .then((code) => {
    process.exitCode = code;
  })
  .catch((error: unknown) => {
    console.error(`e2e: ${error instanceof Failure ? error.message : String(error)}`);
    process.exitCode = 1;
  });
