// Soak: 1,000 runs of the example pipeline in one language-server process over stdio; every run completes, and the
// server's memory (VmRSS) and open file descriptors settle after the warm-up (the figures are printed).
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { RUN_COMMANDS, type RunDagArguments } from '../../server/src/protocol/run';
import type { RunReport } from '../../server/src/run/types';
import { type LspSession, startLspSession } from '../support/lspHarness';
import { residentBytes } from '../support/system';

const PIPELINE = readFileSync(resolve(__dirname, '../../examples/text-pipeline.acmp-dag.json'), 'utf8');
const URI = 'file:///soak/text-pipeline.acmp-dag.json';
const RUNS = 1_000;
const WARM_UP_RUNS = 100;
/** Runs in flight at once, as a user clicking Run again and again would have. */
const IN_FLIGHT = 4;
/** Generous bounds: what grows with the number of runs would exceed them by far over 900 runs. */
const RSS_GROWTH_LIMIT_MB = 100;
const FD_GROWTH_LIMIT = 20;

let session: LspSession;

before(async () => {
  session = await startLspSession();
  await session.open(URI, PIPELINE);
});
after(() => session.stop());

const openFds = (): number => readdirSync(join('/proc', String(session.process.pid), 'fd')).length;

const runDag = (argument: RunDagArguments): Promise<RunReport> =>
  session.connection.sendRequest<RunReport>('workspace/executeCommand', {
    command: RUN_COMMANDS.runDag,
    arguments: [argument],
  });

/** Runs the pipeline `count` times, IN_FLIGHT at once; returns how many runs ended in each status. */
async function runMany(first: number, count: number): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  let next = first;
  const worker = async (): Promise<void> => {
    while (next < first + count) {
      const report = await runDag({ uri: URI, runId: `soak-${next++}` });
      statuses[report.status] = (statuses[report.status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return statuses;
}

test(`${RUNS} runs of the example pipeline all complete; memory and open handles settle`, async () => {
  const fdsBefore = openFds();
  const started = performance.now();
  assert.deepEqual(await runMany(0, WARM_UP_RUNS), { completed: WARM_UP_RUNS });
  const warmRss = residentBytes(session.process.pid!) / 2 ** 20;
  const warmFds = openFds();
  assert.deepEqual(await runMany(WARM_UP_RUNS, RUNS - WARM_UP_RUNS), { completed: RUNS - WARM_UP_RUNS });
  const endRss = residentBytes(session.process.pid!) / 2 ** 20;
  const fdsAfter = openFds();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `soak: ${RUNS} runs in ${seconds} s; server RSS ${warmRss.toFixed(1)} MB after ${WARM_UP_RUNS} runs, ` +
      `${endRss.toFixed(1)} MB at the end; open fds ${fdsBefore} before, ${warmFds} after warm-up, ${fdsAfter} after`,
  );
  assert.ok(endRss - warmRss < RSS_GROWTH_LIMIT_MB, `RSS grew from ${warmRss} MB to ${endRss} MB`);
  assert.ok(fdsAfter - fdsBefore <= FD_GROWTH_LIMIT, `open fds went from ${fdsBefore} to ${fdsAfter}`);
});
