// `npm run bench:ui`: the run view in a real VS Code (code-server and Chromium, as the e2e suite: test/e2e/launcher.ts).
// Runs generated echo DAGs of 1,000 and 10,000 tasks on the built-in provider with the graph closed and open, and
// prints for each how long after the run's end each display showed the final states and the longest frame of the
// window during the run, against issue 15's targets. Prints; never fails on a figure. The machine's load shows in
// every figure: take them as one sample each.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildExtensionAndSuite, benchUiHostFile, Failure } from '../e2e/build';
import { ensureCodeServer, runWindow } from '../e2e/launcher';
import type { Display } from '../e2e/workbenchProbe';
import { echoLayersDag } from '../support/echoDag';
import { BENCH_SIZES, type RunFigures, SIZES_VARIABLE, benchDagFile } from './uiWorkspace';

const TARGETS = { finalAfterMs: 1_000, frameMs: 100 } as const;
const DEADLINE_MS = 20 * 60_000;

const ms = (value: number | undefined): string => (value === undefined ? 'not shown' : `${Math.round(value)} ms`);
const verdict = (value: number | undefined, target: number): string =>
  value !== undefined && value <= target ? 'ok' : 'OVER';

function printRun({ size, graph, run }: RunFigures): void {
  console.log(
    `\n${size.toLocaleString('en')} tasks, graph ${graph ? 'open' : 'closed'}: the server ran it in ${ms(run.runMs)}`,
  );
  const displays: Display[] = [
    'tree',
    'statusBar',
    'notification',
    'decorations',
    ...(graph ? ['graph' as const] : []),
  ];
  const seenRunning = new Set(run.probes.flatMap((probe) => probe.seenRunning));
  for (const display of displays) {
    const after = run.finalAfterMs[display];
    // A display never seen unfinished (the run ended before it drew one) showed nothing stale: say so.
    const seen = seenRunning.has(display) ? '' : ', never seen unfinished';
    console.log(
      `  ${display.padEnd(13)} final states ${ms(after).padStart(10)} after the run's end   (target ≤ ${TARGETS.finalAfterMs} ms: ${verdict(after, TARGETS.finalAfterMs)}${seen})`,
    );
  }
  for (const probe of run.probes) {
    const loaf =
      probe.longestAnimationFrameMs === undefined
        ? ''
        : `, longest animation frame ${ms(probe.longestAnimationFrameMs)}`;
    console.log(
      `  ${`${probe.frame} frame`.padEnd(13)} longest ${ms(probe.longestFrameMs).padStart(10)}, ${probe.framesOver100Ms} of ${probe.frames} over 100 ms${loaf}   (target ≤ ${TARGETS.frameMs} ms: ${verdict(probe.longestFrameMs, TARGETS.frameMs)})`,
    );
    if (probe.frame === 'workbench') {
      const first =
        probe.firstDisagreement === undefined
          ? ''
          : ` (first: status bar ${probe.firstDisagreement.replace(' | ', ', notification ')})`;
      console.log(
        `  counters      status bar and notification differed in ${probe.countersDisagreed} of ${probe.countersCompared} frames showing both${first}`,
      );
    }
  }
}

async function main(): Promise<number> {
  // `npm run bench:ui -- 1000` measures the given sizes only.
  const sizes = process.argv.length > 2 ? process.argv.slice(2).map(Number) : BENCH_SIZES;
  if (sizes.some((size) => !Number.isInteger(size) || size < 1)) throw new Failure('the sizes are task counts');
  const entry = ensureCodeServer();
  await buildExtensionAndSuite();
  const figures: RunFigures[] = [];
  const code = await runWindow(entry, {
    name: 'bench-ui',
    suite: benchUiHostFile,
    trusted: true,
    deadlineMs: DEADLINE_MS,
    prepare: (scratch) => {
      const folder = join(scratch, 'workspace');
      mkdirSync(folder);
      for (const size of sizes)
        writeFileSync(join(folder, benchDagFile(size)), echoLayersDag(size, `dag_echo_${size}`));
      return { folder, env: { [SIZES_VARIABLE]: sizes.join(',') } };
    },
    answers: () => ({ 'run-figures': (argument) => void figures.push(argument as RunFigures) }),
  });
  console.log(
    `bench:ui: run view, built-in provider, echo DAGs (test/support/echoDag.ts); one sample each on a shared machine`,
  );
  for (const figure of figures) printRun(figure);
  return code;
}

main()
  .then((code) => {
    process.exitCode = code;
  })
  .catch((error: unknown) => {
    console.error(`bench:ui: ${error instanceof Failure ? error.message : String(error)}`);
    process.exitCode = 1;
  });
