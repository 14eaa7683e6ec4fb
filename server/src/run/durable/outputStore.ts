// Outputs by reference (issue 17): the engine's messages are limited (32 MiB) and its journal is replayed whole at each
// recovery, so an output above a size goes to a file store beside the worker and the journal keeps a reference: the
// store's key (a path relative to its folder, so workers that mount a shared folder elsewhere read the same file),
// the size and the sha256 of the file's text, checked when it is read back.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import type { TaskOutput } from '../protocol';

/** Outputs up to this many bytes of JSON stay in the journal. */
export const DEFAULT_JOURNAL_OUTPUT_BYTES = 64 * 1024;

/** An output kept in the store: its `type`, and where its `{type, data}` JSON text is. */
export interface OutputRef {
  readonly type: string;
  readonly ref: { readonly key: string; readonly bytes: number; readonly sha256: string };
}

export type JournaledOutput = TaskOutput | OutputRef;

export const isOutputRef = (output: JournaledOutput): output is OutputRef => 'ref' in output && !('data' in output);

/** The file of `key` in the store; a key that would lead out of it (`..`, an absolute path) is refused. */
function pathIn(storeDir: string, key: string): string {
  const root = resolve(storeDir);
  const path = resolve(root, key);
  if (!path.startsWith(root + sep)) throw new Error(`the output key ${JSON.stringify(key)} leads out of the store`);
  return path;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The output as the journal keeps it: itself when small, else a reference to the file it was written to. */
export function keepOutput(output: TaskOutput, storeDir: string, key: string, limitBytes: number): JournaledOutput {
  const text = JSON.stringify(output);
  const bytes = Buffer.byteLength(text);
  if (bytes <= limitBytes) return output;
  const path = pathIn(storeDir, key);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return { type: output.type, ref: { key, bytes, sha256: sha256(text) } };
}

/** The JSON text of a stored output, checked against its reference. */
export function readOutputText(ref: OutputRef, storeDir: string): string {
  const path = pathIn(storeDir, ref.ref.key);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(
      `the output ${ref.ref.key} is not in the output store ${storeDir} (${(error as NodeJS.ErrnoException).code ?? ''}): workers on several machines need a shared --store`,
      { cause: error },
    );
  }
  if (sha256(text) !== ref.ref.sha256) throw new Error(`the stored output ${ref.ref.key} does not match its reference`);
  return text;
}

/** The output itself, read back from the store when it is a reference. */
export const outputOf = (output: JournaledOutput, storeDir: string): TaskOutput =>
  isOutputRef(output) ? (JSON.parse(readOutputText(output, storeDir)) as TaskOutput) : output;
