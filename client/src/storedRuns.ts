// What of the finished runs is kept across a window reload (workspaceState): every run and task, but outputs only
// within a budget, newest runs first. The state is read at every window start, so megabytes of outputs would slow it;
// an output kept serves Show Output and Re-run Failed (which runs a completed task again when its output is gone).
import type { RunSnapshot, TaskSnapshot } from './runs';
import { MAX_SENT_OUTPUTS_BYTES, MAX_SENT_OUTPUT_BYTES } from '../../server/src/protocol/run';

/** An output larger than this (as JSON, in UTF-8) is not kept across a reload. */
export const MAX_STORED_OUTPUT_BYTES = 1024 * 1024;
/** The outputs kept across a reload, all runs together, stay under this. */
export const MAX_STORED_OUTPUTS_BYTES = 8 * 1024 * 1024;

/** The runs as they are stored: outputs over the budget are left out, their size noted in `outputNotKeptBytes`. */
export function storedRuns(runs: readonly RunSnapshot[]): RunSnapshot[] {
  let budget = MAX_STORED_OUTPUTS_BYTES;
  const stored = (task: TaskSnapshot): TaskSnapshot => {
    if (task.output === undefined) return task;
    const bytes = Buffer.byteLength(JSON.stringify(task.output));
    if (bytes <= MAX_STORED_OUTPUT_BYTES && bytes <= budget) {
      budget -= bytes;
      return task;
    }
    return { ...task, output: undefined, outputNotKeptBytes: bytes };
  };
  return runs.map((run) => ({ ...run, tasks: run.tasks.map(stored) }));
}

/** What Show Output says of an output that was not kept across the reload. */
export const outputNotKept = (taskId: string, bytes: number): string =>
  `The output of ${taskId} (${(bytes / 1024 / 1024).toFixed(1)} MB) was not kept across the window reload: outputs ` +
  `over ${MAX_STORED_OUTPUT_BYTES / 1024 / 1024} MB, or beyond ${MAX_STORED_OUTPUTS_BYTES / 1024 / 1024} MB for all ` +
  `kept runs together, are not stored. Run the DAG again to see it.`;

/** What Show Output says of an output the language server did not send (protocol/run.ts: its budget per report). */
export const outputNotSent = (taskId: string, bytes: number): string =>
  `The output of ${taskId} (${(bytes / 1024 / 1024).toFixed(1)} MB) is larger than the editor is sent: outputs over ` +
  `${MAX_SENT_OUTPUT_BYTES / 1024 / 1024} MB, or beyond ${MAX_SENT_OUTPUTS_BYTES / 1024 / 1024} MB for a run, stay ` +
  `with the run. Run it with \`acmp-dag run FILE --json\` to see every output whole.`;
