// What both sides of `npm run bench:ui` know: the DAGs of its workspace, and what the extension host hands the runner.
import type { ProbeResult, RunMeasure } from '../e2e/workbenchProbe';

export const BENCH_SIZES: readonly number[] = [1_000, 10_000];
/** The sizes measured, comma-separated, in the extension host's environment. */
export const SIZES_VARIABLE = 'ACMP_BENCH_UI_SIZES';
/** The DAG of `size` echo tasks ui.ts writes into the workspace (test/support/echoDag.ts). */
export const benchDagFile = (size: number): string => `echo-${size}.acmp-dag.json`;

/**
 * A probe's figures as the extension host hands them to the runner: without the times of its frames and checks (a
 * long run's are more than the console VS Code passes them through carries: the hand-over was lost), with its longest
 * frame net of every probe's checks.
 */
export type HandedProbe = Omit<ProbeResult, 'frameTimes' | 'checkTimes'> & { readonly longestFrameNetMs: number };

/** One measured run. */
export interface RunFigures {
  readonly size: number;
  readonly graph: boolean;
  readonly run: Omit<RunMeasure, 'probes'> & { readonly probes: readonly HandedProbe[] };
}

/**
 * A probe's longest frame less the time every probe (the workbench's, the graph's) spent checking the displays in it:
 * the checks (querying the workbench's DOM, an inline state's computed style) run in the window's thread. A lower
 * bound, printed beside the verdict's figure: the style and layout a check forces would mostly be the frame's anyway.
 */
function longestFrameNetOfChecks(probe: ProbeResult, probes: readonly ProbeResult[]): number {
  const checks = probes.flatMap(({ checkTimes }) =>
    checkTimes.flatMap((start, k) => (k % 2 === 0 ? [[start, checkTimes[k + 1]!] as const] : [])),
  );
  let longest = 0;
  for (let f = 1; f < probe.frameTimes.length; f++) {
    const [from, to] = [probe.frameTimes[f - 1]!, probe.frameTimes[f]!];
    const checking = checks.reduce(
      (sum, [start, end]) => sum + Math.max(0, Math.min(end, to) - Math.max(start, from)),
      0,
    );
    longest = Math.max(longest, to - from - checking);
  }
  return Math.round(longest);
}

/** A measured run's probes as handed over (HandedProbe). */
export const handedProbes = (probes: readonly ProbeResult[]): HandedProbe[] =>
  probes.map(({ frameTimes: _frames, checkTimes: _checks, ...probe }, p) => ({
    ...probe,
    longestFrameNetMs: longestFrameNetOfChecks(probes[p]!, probes),
  }));

/**
 * The DAG of `size` echo tasks whose opening is measured, as an ACMP DAG or, for VS Code alone, as plain JSON (a
 * language this extension does not claim: what VS Code without it does with the same file). Its dag_id is not of the
 * dag_<random> form, so that the extension's diagnostics (one information) show when its analysis arrived.
 */
export const openedDagFile = (size: number, asDag: boolean): string => `opened-${size}${asDag ? '.acmp-dag' : ''}.json`;
export const openedDagId = (size: number): string => `echo_opened_${size}`;
