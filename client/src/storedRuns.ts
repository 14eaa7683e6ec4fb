// What of the finished runs is kept across a window reload, and where: every run and task, but outputs only within a
// budget, newest runs first (megabytes of outputs would slow every start); an output kept serves Show Output.
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ExtensionContext, Memento } from 'vscode';
import type { RunSnapshot, TaskSnapshot } from './runSnapshot';
import { writeWhole } from './wholeFile';
import { MAX_SENT_OUTPUTS_BYTES, MAX_SENT_OUTPUT_BYTES } from '../../server/src/protocol/runMessages';

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

/** Where the finished runs are kept across a window reload. */
export interface RunsStore {
  read(): RunSnapshot[];
  write(runs: readonly RunSnapshot[]): void;
}

/**
 * A JSON file in the workspace's storage folder (`context.storageUri`), read and written by the extension host alone.
 * Kept in workspaceState, the runs crossed into the window's thread at each run's end (3 MB for 10,000 tasks: 150-200
 * ms of it in a CPU profile of the window) and were read at every start of the window. A file that cannot be read is
 * no runs; one that cannot be written loses the runs at the next reload only.
 */
export function runsFile(file: string): RunsStore {
  return {
    read() {
      try {
        const runs: unknown = JSON.parse(readFileSync(file, 'utf8'));
        return Array.isArray(runs) ? (runs as RunSnapshot[]) : [];
      } catch {
        return [];
      }
    },
    write(runs) {
      try {
        mkdirSync(dirname(file), { recursive: true });
        writeWhole(file, JSON.stringify(runs));
      } catch {
        // Nothing to tell the user at this point: the runs are still listed until the window reloads.
      }
    },
  };
}

/** The key the runs are kept under in workspaceState, where a window without a folder (no storage folder) keeps them. */
const RUNS_STATE_KEY = 'acmp.runs';

/** A window's runs store: a file in its storage folder, or workspaceState in a window without a folder. */
export function runsStore(context: Pick<ExtensionContext, 'storageUri' | 'workspaceState'>): RunsStore {
  const folder = context.storageUri;
  if (folder?.scheme !== 'file') return runsMemento(context.workspaceState);
  // Earlier builds kept them in workspaceState: the window's storage is freed of them (once: not a write per start).
  if (context.workspaceState.keys().includes(RUNS_STATE_KEY))
    void context.workspaceState.update(RUNS_STATE_KEY, undefined);
  return runsFile(join(folder.fsPath, 'runs.json'));
}

function runsMemento(memento: Memento): RunsStore {
  return {
    read: () => memento.get<RunSnapshot[]>(RUNS_STATE_KEY) ?? [],
    write: (runs) => void memento.update(RUNS_STATE_KEY, runs),
  };
}

/** What Show Output says of an output that was not kept across the reload. */
export const outputNotKept = (taskId: string, bytes: number): string =>
  `The output of ${taskId} (${(bytes / 1024 / 1024).toFixed(1)} MB) was not kept across the window reload: outputs ` +
  `over ${MAX_STORED_OUTPUT_BYTES / 1024 / 1024} MB, or beyond ${MAX_STORED_OUTPUTS_BYTES / 1024 / 1024} MB for all ` +
  `kept runs together, are not stored. Run the DAG again to see it.`;

/** What Show Output says of an output the language server did not send (protocol/runMessages.ts: its budget per report). */
export const outputNotSent = (taskId: string, bytes: number): string =>
  `The output of ${taskId} (${(bytes / 1024 / 1024).toFixed(1)} MB) is larger than the editor is sent: outputs over ` +
  `${MAX_SENT_OUTPUT_BYTES / 1024 / 1024} MB, or beyond ${MAX_SENT_OUTPUTS_BYTES / 1024 / 1024} MB for a run, stay ` +
  `with the run. Run it with \`acmp-dag run FILE --json\` to see every output whole.`;
