// The outputs of a run within a memory budget: past it, outputs go to a folder of the run under the system's temporary
// directory as JSON text, read back when a downstream task or the report needs them. An output is wanted by the
// downstream tasks that read it until they have made their inputs, then only by the report: those go to disk first.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type JsonFileRef, writeJsonFile } from './jsonText';
import type { TaskOutput } from '../protocol/report';

/** Bytes of outputs (as compact JSON) a run keeps in memory by default. */
export const DEFAULT_OUTPUT_MEMORY_BYTES = 32 * 1024 * 1024;

/**
 * The run option of ACMP_RUN_MEMORY_BUDGET_BYTES, the bytes of outputs a run of the CLI or the language server keeps
 * in memory; none when it is not set; an Error naming it when it is not a whole number.
 */
export function outputMemoryFromEnvironment(): { outputMemoryBytes?: number } {
  const value = process.env.ACMP_RUN_MEMORY_BUDGET_BYTES;
  if (value === undefined || value === '') return {};
  const bytes = Number(value);
  if (!Number.isInteger(bytes) || bytes < 0) {
    throw new Error(`ACMP_RUN_MEMORY_BUDGET_BYTES needs a whole number of bytes, not "${value}"`);
  }
  return { outputMemoryBytes: bytes };
}

/**
 * An output kept on disk. Its `data` is read from the file at each access (keep the result rather than ask again);
 * JSON.stringify reads it whole through toJSON, and `writeJson` (jsonText.ts) copies its text without reading it.
 */
export class StoredOutput implements TaskOutput, JsonFileRef {
  constructor(
    readonly type: string,
    readonly path: string,
    /** The size of its JSON text (JSON.stringify(output, null, 2)) in UTF-8. */
    readonly bytes: number,
  ) {}

  get data(): unknown {
    return this.read().data;
  }

  read(): TaskOutput {
    return JSON.parse(this.text()) as TaskOutput;
  }

  /** Its JSON text. */
  text(): string {
    return readFileSync(this.path, 'utf8');
  }

  toJSON(): TaskOutput {
    return this.read();
  }
}

/** The StoredOutput a value is, for `writeJson`'s `fileOf`. */
export const storedFile = (value: object): JsonFileRef | undefined =>
  value instanceof StoredOutput ? value : undefined;

/** Characters of a value as compact JSON, roughly (strings count their UTF-16 length), counted up to `cap` and past. */
export function jsonSizeWithin(value: unknown, cap: number): number {
  const flat = flatObjectSize(value);
  if (flat >= 0) return flat;
  let size = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && size <= cap) {
    const next = pending.pop();
    if (typeof next === 'string') size += next.length + 2;
    else if (next === null || typeof next !== 'object') size += 5;
    else if (Array.isArray(next)) {
      size += 1 + next.length;
      for (const element of next) pending.push(element);
    } else {
      size += 1;
      for (const key in next) {
        if (!Object.hasOwn(next, key)) continue;
        size += key.length + 4;
        pending.push((next as Record<string, unknown>)[key]);
      }
    }
  }
  return size;
}

/**
 * jsonSizeWithin's count for an object whose members are all strings or other primitives (most outputs: `{type, data}`
 * with a text), without its list of values to visit; -1 for anything else.
 */
function flatObjectSize(value: unknown): number {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return -1;
  let size = 1;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const member: unknown = (value as Record<string, unknown>)[key];
    if (typeof member === 'string') size += key.length + 6 + member.length;
    else if (member === null || typeof member !== 'object') size += key.length + 9;
    else return -1;
  }
  return size;
}

interface Entry {
  /** In memory until it goes to disk. */
  output: TaskOutput | undefined;
  stored: StoredOutput | undefined;
  /** Its size as measured when kept (counted against the budget while in memory). */
  readonly bytes: number;
  /** Downstream tasks that have yet to make their inputs from it. */
  readers: number;
}

/** Folders of stores not released yet, removed when the process exits. */
const liveFolders = new Set<string>();
let exitHooked = false;

/** One run's outputs, by task id. */
export class OutputStore {
  private readonly entries = new Map<string, Entry>();
  /**
   * The entries kept, oldest first, from `head` on: those gone to disk are skipped (one Map less to keep 10,000s of
   * outputs in).
   */
  private readonly kept: Entry[] = [];
  private head = 0;
  private memoryBytes = 0;
  private folder: string | undefined;
  private files = 0;

  constructor(private readonly budgetBytes: number = DEFAULT_OUTPUT_MEMORY_BYTES) {}

  /** Keeps a task's output, which `readers` downstream tasks will read. */
  /** Keeps `output` for `readers` downstream tasks; `bytes`, its size as JSON when the caller knows it. */
  keep(taskId: string, output: TaskOutput, readers: number, bytes = jsonSizeWithin(output, this.budgetBytes)): void {
    const entry: Entry = { output, stored: undefined, bytes, readers };
    this.entries.set(taskId, entry);
    this.kept.push(entry);
    this.memoryBytes += entry.bytes;
    this.fit();
  }

  has(taskId: string): boolean {
    return this.entries.has(taskId);
  }

  /** The output for a downstream task's input: from memory, or read back from its file. */
  read(taskId: string): TaskOutput {
    const entry = this.entries.get(taskId)!;
    return entry.output ?? entry.stored!.read();
  }

  /** A downstream task has made its input (or will never make it): one reader fewer. */
  release(taskId: string): void {
    const entry = this.entries.get(taskId);
    if (entry !== undefined && entry.readers > 0) entry.readers--;
  }

  /** The output as the report gives it: the value in memory, or its StoredOutput. */
  reported(taskId: string): TaskOutput | undefined {
    const entry = this.entries.get(taskId);
    return entry === undefined ? undefined : (entry.output ?? entry.stored);
  }

  /** Removes the files; a StoredOutput of this store cannot be read after. */
  dispose(): void {
    if (this.folder === undefined) return;
    rmSync(this.folder, { recursive: true, force: true });
    liveFolders.delete(this.folder);
    this.folder = undefined;
  }

  /** Moves outputs to disk until those in memory fit the budget: those only the report wants first, oldest first. */
  private fit(): void {
    while (this.memoryBytes > this.budgetBytes) {
      while (this.kept[this.head]!.output === undefined) this.head++;
      let victim: Entry | undefined;
      for (let at = this.head; at < this.kept.length && victim === undefined; at++) {
        const candidate = this.kept[at]!;
        if (candidate.output !== undefined && candidate.readers === 0) victim = candidate;
      }
      this.spill(victim ?? this.kept[this.head]!);
    }
    // The head of the queue is dropped in batches, not one shift per output gone to disk.
    if (this.head >= 1_000 && this.head * 2 >= this.kept.length) {
      this.kept.splice(0, this.head);
      this.head = 0;
    }
  }

  private spill(entry: Entry): void {
    const output = entry.output!;
    const path = join(this.folderPath(), `${this.files++}.json`);
    entry.stored = new StoredOutput(output.type, path, writeJsonFile(path, output));
    entry.output = undefined;
    this.memoryBytes -= entry.bytes;
  }

  private folderPath(): string {
    if (this.folder === undefined) {
      this.folder = mkdtempSync(join(tmpdir(), 'acmp-run-outputs-'));
      liveFolders.add(this.folder);
      if (!exitHooked) {
        exitHooked = true;
        process.once('exit', () => {
          for (const folder of liveFolders) rmSync(folder, { recursive: true, force: true });
        });
      }
    }
    return this.folder;
  }
}
