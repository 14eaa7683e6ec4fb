// Outputs by reference: the engine's messages are limited (32 MiB) and its journal is replayed whole at each
// recovery, so an output above a size goes to a file store beside the worker and the journal keeps a reference: the
// store's key (a path relative to its folder, so workers that mount a shared folder elsewhere read the same file),
// the size and the sha256 of the file's text, checked when it is read back.
//
// Nothing a submitter chooses names a file: a run's folder is the sha256 of its run id, a file the task's index in the
// DAG (`<64 hex>/<index>.json`), and a key of any other form is refused, whoever hands it in. The store is private to
// the worker's user (folders 0700, files 0600) and keeps a run's outputs as long as the engine keeps the run: a run's
// folder is refreshed by each task that completes and at the run's end, and swept once untouched for RUN_RETENTION_MS.
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { privateFolder } from '../privateFolder';
import type { TaskOutput } from '../../protocol/report';
import { RUN_RETENTION_MS } from '../../protocol/engineMessages';

/** Outputs up to this many bytes of JSON stay in the journal. */
export const DEFAULT_JOURNAL_OUTPUT_BYTES = 64 * 1024;

/** How often a worker sweeps the store of the outputs of runs the engine no longer keeps. */
export const STORE_SWEEP_INTERVAL_MS = 60 * 60 * 1000;

const PRIVATE_FOLDER = 0o700;
const PRIVATE_FILE = 0o600;
const RUN_FOLDER = /^[0-9a-f]{64}$/;
const KEY = /^[0-9a-f]{64}\/(?:0|[1-9][0-9]{0,8})\.json$/;

/** An output kept in the store: its `type`, and where its `{type, data}` JSON text is. */
export interface OutputRef {
  readonly type: string;
  readonly ref: { readonly key: string; readonly bytes: number; readonly sha256: string };
}

export type JournaledOutput = TaskOutput | OutputRef;

/** The store could not write or give back an output: the task that needed it fails with this message, at once. */
export class OutputStoreError extends Error {}

export const isOutputRef = (output: JournaledOutput): output is OutputRef => 'ref' in output && !('data' in output);

/**
 * Whether a value handed in from outside (an output to reuse, an output to read back) is an output or a reference of
 * the store's own form: a run does not reuse anything else (the task runs again), the read service refuses it.
 */
export function isJournaledOutput(value: unknown): value is JournaledOutput {
  if (typeof value !== 'object' || value === null || typeof (value as { type?: unknown }).type !== 'string')
    return false;
  if ('data' in value) return true;
  const ref = (value as { ref?: unknown }).ref as { key?: unknown; bytes?: unknown; sha256?: unknown } | null;
  return (
    typeof ref === 'object' &&
    ref !== null &&
    typeof ref.key === 'string' &&
    KEY.test(ref.key) &&
    typeof ref.bytes === 'number' &&
    typeof ref.sha256 === 'string'
  );
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The folder of a run's outputs in the store: the run id is the submitter's, so only its hash names a path. */
export const runFolderOf = (runId: string): string => sha256(runId);

/** The key of the output of the task at `task` (its index in the DAG) of the run `runId`. */
export const outputKey = (runId: string, task: number): string => `${runFolderOf(runId)}/${task}.json`;

/** The file of `key` in the store; a key not of the store's own form is refused. */
function pathOf(storeDir: string, key: unknown): string {
  if (typeof key !== 'string' || !KEY.test(key))
    throw new OutputStoreError(`${JSON.stringify(String(key).slice(0, 100))} is not a key of the output store`);
  return join(resolve(storeDir), key);
}

const codeOf = (error: unknown): string =>
  (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));

/**
 * The output as the journal keeps it: itself when small, else a reference to the file it was written to (whole or
 * not at all: written aside, then renamed). OutputStoreError when the store cannot take it.
 */
export function keepOutput(
  output: TaskOutput,
  storeDir: string,
  runId: string,
  task: number,
  limitBytes: number,
): JournaledOutput {
  const text = JSON.stringify(output);
  const bytes = Buffer.byteLength(text);
  const folder = join(resolve(storeDir), runFolderOf(runId));
  if (bytes <= limitBytes) {
    // The run goes on: its stored outputs must outlive the sweep however long it lasts.
    if (existsSync(folder)) refresh(folder);
    return output;
  }
  const key = outputKey(runId, task);
  const path = join(resolve(storeDir), key);
  const partial = `${path}.${randomBytes(6).toString('hex')}.partial`;
  try {
    mkdirSync(folder, { recursive: true, mode: PRIVATE_FOLDER });
    writeFileSync(partial, text, { mode: PRIVATE_FILE, flag: 'wx' });
    renameSync(partial, path);
  } catch (error) {
    removeQuietly(partial);
    throw new OutputStoreError(
      `the output (${bytes} bytes) could not be written to the output store ${storeDir} (${codeOf(error)})`,
      { cause: error },
    );
  }
  return { type: output.type, ref: { key, bytes, sha256: sha256(text) } };
}

/** The JSON text of a stored output, checked against its reference. OutputStoreError when it cannot be. */
export function readOutputText(ref: OutputRef, storeDir: string): string {
  const path = pathOf(storeDir, ref.ref.key);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new OutputStoreError(
      `the output ${ref.ref.key} is not in the output store ${storeDir} (${codeOf(error)}): a run's outputs are kept ${RUN_RETENTION_MS / 3_600_000} hours after its end, and workers on several machines need a shared --store`,
      { cause: error },
    );
  }
  if (sha256(text) !== ref.ref.sha256)
    throw new OutputStoreError(`the stored output ${ref.ref.key} does not match its reference`);
  return text;
}

/** The output itself, read back from the store when it is a reference. OutputStoreError when it cannot be. */
export function outputOf(output: JournaledOutput, storeDir: string): TaskOutput {
  if (!isOutputRef(output)) return output;
  const text = readOutputText(output, storeDir);
  try {
    return JSON.parse(text) as TaskOutput;
  } catch {
    throw new OutputStoreError(`the stored output ${output.ref.key} is not JSON`);
  }
}

/**
 * A run ended: the store keeps its outputs, and those of earlier runs it reused (its report refers to them), for the
 * retention from now on. Never throws: a folder already gone stays gone.
 */
export function keepRunOutputs(storeDir: string, runId: string, outputs: Iterable<JournaledOutput | undefined>): void {
  const root = resolve(storeDir);
  const folders = new Set([runFolderOf(runId)]);
  for (const output of outputs)
    if (output !== undefined && isOutputRef(output)) folders.add(output.ref.key.slice(0, output.ref.key.indexOf('/')));
  for (const folder of folders) if (existsSync(join(root, folder))) refresh(join(root, folder));
}

function removeQuietly(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // The next sweep removes what is left.
  }
}

function refresh(folder: string): void {
  const now = new Date();
  try {
    utimesSync(folder, now, now);
  } catch {
    // Swept or removed meanwhile: a later read of it says so.
  }
}

/**
 * Makes the store ready at a worker's start: created, or an existing one made private to the worker's user (0700),
 * and swept. Throws with a message when the store cannot be made private (not the user's, not a folder).
 */
export function prepareOutputStore(storeDir: string): void {
  try {
    privateFolder(storeDir);
  } catch (error) {
    throw new Error(`the output store ${storeDir} cannot be made a folder of this user's only (${codeOf(error)})`, {
      cause: error,
    });
  }
  sweepOutputStore(storeDir);
}

/**
 * Removes the run folders untouched for RUN_RETENTION_MS (the engine no longer keeps those runs), and anything of a
 * run folder's name that is not a folder; leaves every other name alone. Returns how many it removed; never throws.
 */
export function sweepOutputStore(storeDir: string, now = Date.now()): number {
  let names: string[];
  try {
    names = readdirSync(storeDir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (!RUN_FOLDER.test(name)) continue;
    const path = join(storeDir, name);
    try {
      const stat = lstatSync(path);
      if (stat.isDirectory() && now - stat.mtimeMs <= RUN_RETENTION_MS) continue;
      rmSync(path, { recursive: true, force: true });
      removed++;
    } catch {
      // Another worker sharing the store swept it first, or it cannot be removed: the next sweep tries again.
    }
  }
  return removed;
}
