// What both sides of `npm run bench:ui` know: the DAGs of its workspace, and what the extension host hands the runner.
import type { RunMeasure } from '../e2e/workbenchProbe';

export const BENCH_SIZES: readonly number[] = [1_000, 10_000];
/** The sizes measured, comma-separated, in the extension host's environment. */
export const SIZES_VARIABLE = 'ACMP_BENCH_UI_SIZES';
/** The DAG of `size` echo tasks ui.ts writes into the workspace (test/support/echoDag.ts). */
export const benchDagFile = (size: number): string => `echo-${size}.acmp-dag.json`;

/** One measured run. */
export interface RunFigures {
  readonly size: number;
  readonly graph: boolean;
  readonly run: RunMeasure;
}
