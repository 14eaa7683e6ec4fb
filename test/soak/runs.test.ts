// Soak: runs of the example pipeline in one language-server process over stdio; every run completes, and the
// server's memory (VmRSS, and the heap after a full collection) and open file descriptors settle after the warm-up
// (the figures are printed). 1,000 runs on the built-in provider, and 100 on a stdio provider, whose connection (three
// pipes to its process) every run must close.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import { RUN_COMMANDS, type RunDagArguments } from '../../server/src/protocol/runMessages';
import type { RunReport } from '../../server/src/protocol/report';
import { type LspSession, startLspSession } from '../support/lspHarness';
import { residentBytes } from '../support/system';

/** The bundle `npm run build` makes; ACMP_CLI_BUNDLE points elsewhere (a separate build while developing). */
const CLI_BUNDLE = process.env.ACMP_CLI_BUNDLE ?? resolve(__dirname, '../../dist/cli.js');
const PIPELINE = readFileSync(resolve(__dirname, '../../examples/text-pipeline.acmp-dag.json'), 'utf8');
const URI = 'file:///soak/text-pipeline.acmp-dag.json';
/** Runs in flight at once, as a user clicking Run again and again would have. */
const IN_FLIGHT = 4;
/** Generous bounds: what grows with the number of runs would exceed them by far over the runs after the warm-up. */
const RSS_GROWTH_LIMIT_MB = 100;
/** A connection left open keeps three pipes per run. */
const FD_GROWTH_LIMIT = 20;
/** The heap in use after a full collection: a few kilobytes kept per run (a report, say) exceed it over 900 runs. */
const HEAP_GROWTH_LIMIT_MB = 1;

const openFds = (session: LspSession): number => readdirSync(join('/proc', String(session.process.pid), 'fd')).length;

/** Runs the pipeline `count` times, IN_FLIGHT at once; returns how many runs ended in each status. */
async function runMany(session: LspSession, first: number, count: number): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  let next = first;
  const runDag = (argument: RunDagArguments): Promise<RunReport> =>
    session.connection.sendRequest<RunReport>('workspace/executeCommand', {
      command: RUN_COMMANDS.runDag,
      arguments: [argument],
    });
  const worker = async (): Promise<void> => {
    while (next < first + count) {
      const report = await runDag({ uri: URI, runId: `soak-${next++}` });
      statuses[report.status] = (statuses[report.status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return statuses;
}

/** `runs` runs in a fresh server configured with `providers`; the figures after `warmUp` runs are the baseline. */
async function soak(label: string, providers: ProviderConfig[], runs: number, warmUp: number): Promise<void> {
  const session = await startLspSession({ providers }, { heapProbe: true });
  try {
    await session.open(URI, PIPELINE);
    const pid = session.process.pid!;
    const fdsBefore = openFds(session);
    const started = performance.now();
    assert.deepEqual(await runMany(session, 0, warmUp), { completed: warmUp });
    const warmRss = residentBytes(pid) / 2 ** 20;
    const warmHeap = (await session.heapUsed()) / 2 ** 20;
    const warmFds = openFds(session);
    assert.deepEqual(await runMany(session, warmUp, runs - warmUp), { completed: runs - warmUp });
    const endRss = residentBytes(pid) / 2 ** 20;
    const endHeap = (await session.heapUsed()) / 2 ** 20;
    const fdsAfter = openFds(session);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `soak (${label}): ${runs} runs in ${seconds} s; server RSS ${warmRss.toFixed(1)} MB after ${warmUp} runs, ` +
        `${endRss.toFixed(1)} MB at the end; heap after a full collection ${warmHeap.toFixed(2)} MB, then ` +
        `${endHeap.toFixed(2)} MB; open fds ${fdsBefore} before, ${warmFds} after warm-up, ${fdsAfter} after`,
    );
    assert.ok(endRss - warmRss < RSS_GROWTH_LIMIT_MB, `RSS grew from ${warmRss} MB to ${endRss} MB`);
    assert.ok(fdsAfter - warmFds <= FD_GROWTH_LIMIT, `open fds went from ${warmFds} to ${fdsAfter}`);
    assert.ok(
      endHeap - warmHeap < HEAP_GROWTH_LIMIT_MB,
      `the heap grew from ${warmHeap.toFixed(2)} MB to ${endHeap.toFixed(2)} MB`,
    );
  } finally {
    await session.stop();
  }
}

test('1,000 runs on the built-in provider all complete; memory and open handles settle', () =>
  soak('built-in', [], 1_000, 100));

test('100 runs on a stdio provider all complete; memory and open handles settle', { timeout: 300_000 }, () =>
  soak(
    'stdio',
    [{ id: 'served', transport: 'stdio', command: process.execPath, args: [CLI_BUNDLE, 'serve', '--stdio'] }],
    100,
    10,
  ),
);
