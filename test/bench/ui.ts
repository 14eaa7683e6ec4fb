// `npm run bench:ui`: the graph and the run view in a real VS Code (code-server and Chromium, as the e2e suite:
// test/e2e/launcher.ts). Opens the largest generated echo DAG as an ACMP DAG and as plain JSON (VS Code alone) and
// compares the window's longest frames; opens the graph of generated echo DAGs of 1,000 and 10,000 tasks (time until
// it says it is laying out, to its first frame, the longest frame while panning and zooming), then runs each on the
// built-in provider with the graph closed and open, and prints for each run how long after its end each display showed
// the final states and the longest frame of the window during it, against the targets. Prints; never fails on a figure. The machine's load shows in
// every figure: take them as one sample each.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildExtensionAndSuite, benchUiHostFile, Failure } from '../e2e/build';
import { type GraphFigures, firstDrawn, measureGraph } from '../e2e/graphBench';
import { ensureCodeServer, runWindow } from '../e2e/launcher';
import { type Display, type ProbeResult, probeResult, startProbe } from '../e2e/workbenchProbe';
import { echoLayersDag } from '../support/echoDag';
import { BENCH_SIZES, type RunFigures, SIZES_VARIABLE, benchDagFile, openedDagFile, openedDagId } from './uiWorkspace';

const TARGETS = { finalAfterMs: 1_000, graphDrawnMs: 2_000, graphFrameMs: 50, openBeyondVsCodeMs: 500 } as const;
/** The longest frame of the window a run may take: 100 ms up to 1,000 tasks, 200 ms beyond (10,000, graph open). */
const runFrameTargetMs = (size: number): number => (size <= 1_000 ? 100 : 200);
const DEADLINE_MS = 20 * 60_000;

const ms = (value: number | undefined): string => (value === undefined ? 'not shown' : `${Math.round(value)} ms`);
const verdict = (value: number | undefined, target: number): string =>
  value !== undefined && value <= target ? 'ok' : 'OVER';

function printGraph({ size, figures }: { size: number; figures: GraphFigures }): void {
  console.log(`\ngraph of ${size.toLocaleString('en')} tasks (${figures.tasks} drawn):`);
  console.log(`  "laying out"  ${ms(figures.layingOutShownMs).padStart(10)} after Show Graph`);
  console.log(`  with count    ${ms(figures.countShownMs).padStart(10)} after Show Graph`);
  console.log(
    `  first drawn   ${ms(figures.firstDrawnMs).padStart(10)} after Show Graph   (target ≤ ${TARGETS.graphDrawnMs} ms: ${verdict(figures.firstDrawnMs, TARGETS.graphDrawnMs)})`,
  );
  for (const [what, longest, frames, over] of [
    ['panning', figures.longestPanFrameMs, figures.panFrames, figures.panFramesOver50Ms],
    ['zooming', figures.longestZoomFrameMs, figures.zoomFrames, figures.zoomFramesOver50Ms],
  ] as const) {
    console.log(
      `  ${what.padEnd(13)} longest frame ${ms(longest).padStart(10)}, ${over} of ${frames} over 50 ms   (target ≤ ${TARGETS.graphFrameMs} ms: ${verdict(longest, TARGETS.graphFrameMs)})`,
    );
  }
}

/** The window's longest frame while the largest DAG opened as plain JSON and as an ACMP DAG. */
interface FileOpenFigures {
  readonly size: number;
  readonly asJson?: ProbeResult;
  readonly asDag?: ProbeResult;
}

/** A frame's scripts, forced layout and rendering (of the Long Animation Frames API), when the browser told them. */
function printFrameParts(parts: ProbeResult['longestAnimationFrame']): void {
  if (parts === undefined) return;
  const scripts = parts.scripts.map(({ source, ms: scriptMs }) => `${source} ${ms(scriptMs)}`).join('; ');
  console.log(
    `                that frame: scripts ${ms(parts.scriptsMs)} (${scripts || 'none'}), forced style and layout ${ms(parts.forcedLayoutMs)}, rendering ${ms(parts.renderingMs)}`,
  );
}

function printFileOpen({ size, asJson, asDag }: FileOpenFigures): void {
  console.log(
    `\nopening the ${size.toLocaleString('en')}-task file, from the open command until the editor shows it, its diagnostics came and the window settled:`,
  );
  for (const [what, probe] of [
    ['VS Code alone (the same text as plain JSON)', asJson],
    ['with the extension (an ACMP DAG)', asDag],
  ] as const) {
    console.log(
      `  ${what.padEnd(44)} longest frame ${ms(probe?.longestFrameMs).padStart(10)}, ${probe?.framesOver100Ms ?? '?'} of ${probe?.frames ?? '?'} over 100 ms`,
    );
    printFrameParts(probe?.longestAnimationFrame);
  }
  const beyond = asJson === undefined || asDag === undefined ? undefined : asDag.longestFrameMs - asJson.longestFrameMs;
  console.log(
    `  the extension's longest frame beyond VS Code's ${ms(beyond).padStart(10)}   (target ≤ ${TARGETS.openBeyondVsCodeMs} ms: ${verdict(beyond, TARGETS.openBeyondVsCodeMs)})`,
  );
}

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
  if (run.cpuMs !== undefined) {
    const server = run.cpuMs.server === undefined ? '' : `, the language server ${ms(run.cpuMs.server)}`;
    console.log(
      `  CPU from the run's start until the displays were final: the extension host ${ms(run.cpuMs.extensionHost)}${server}`,
    );
  }
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
    const net = probe.longestFrameNetMs;
    const target = runFrameTargetMs(size);
    console.log(
      `  ${`${probe.frame} frame`.padEnd(13)} longest ${ms(probe.longestFrameMs).padStart(10)}, ${probe.framesOver100Ms} of ${probe.frames} over 100 ms${loaf}; net of the probes' own checks ${ms(net)}   (target ≤ ${target} ms: ${verdict(probe.longestFrameMs, target)})`,
    );
    printFrameParts(probe.longestAnimationFrame);
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
  const graphs: { size: number; figures: GraphFigures }[] = [];
  let firstWebview: { tasks: number; firstDrawnMs: number } | undefined;
  let fileOpen: FileOpenFigures | undefined;
  const { code } = await runWindow(entry, {
    name: 'bench-ui',
    suite: benchUiHostFile,
    trusted: true,
    deadlineMs: DEADLINE_MS,
    prepare: (scratch) => {
      const folder = join(scratch, 'workspace');
      mkdirSync(folder);
      // Every task of every run invokes its provider: each makes a result of its own, and none is kept between runs
      // (a run of stored results would measure the result store, not the views following a run).
      for (const size of sizes) {
        const dag = echoLayersDag(size, `dag_echo_${size}`, { distinctResults: true });
        writeFileSync(join(folder, benchDagFile(size)), dag);
      }
      mkdirSync(join(folder, '.vscode'));
      writeFileSync(join(folder, '.vscode', 'settings.json'), JSON.stringify({ 'acmp.cache.enabled': false }));
      const largest = Math.max(...sizes);
      for (const asDag of [false, true])
        writeFileSync(join(folder, openedDagFile(largest, asDag)), echoLayersDag(largest, openedDagId(largest)));
      return { folder, env: { [SIZES_VARIABLE]: sizes.join(',') } };
    },
    answers: (page) => ({
      'graph-figures': async (argument) => {
        const { size, since } = argument as { size: number; since: number };
        graphs.push({ size, figures: await measureGraph(page, since) });
      },
      'first-webview': async (argument) => {
        firstWebview = await firstDrawn(page, (argument as { since: number }).since);
      },
      'run-figures': (argument) => void figures.push(argument as RunFigures),
      // The window's frames while a file opens: the probe of a run, watching no display.
      'open-probe-start': () => startProbe(page.mainFrame(), { fileName: '', dagId: '', displays: [] }, false),
      'open-probe-result': async (argument) => {
        const { size, asDag } = argument as { size: number; asDag: boolean };
        const probe = await probeResult(page.mainFrame(), 0);
        fileOpen = { ...fileOpen, size, [asDag ? 'asDag' : 'asJson']: probe };
      },
    }),
  });
  console.log(
    `bench:ui: run view, built-in provider, echo DAGs (test/support/echoDag.ts); one sample each on a shared machine`,
  );
  if (firstWebview !== undefined) {
    console.log(
      `\nthe window's first webview (a graph of ${firstWebview.tasks.toLocaleString('en')} tasks) first drawn ${ms(firstWebview.firstDrawnMs)} after Show Graph: VS Code's webview host starting (not against the target)`,
    );
  }
  if (fileOpen !== undefined) printFileOpen(fileOpen);
  for (const graph of graphs) printGraph(graph);
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
