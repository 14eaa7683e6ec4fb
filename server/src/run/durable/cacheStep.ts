// The result store on the durable driver (run/resultStore.ts): a task's lookup is a step of its own (`cache <task
// id>`, before its quote or invoke) whose answer the journal keeps, so a replay completes the task from the same
// answer whatever the store holds by then. A hit's output goes where the run's outputs go (outputStore.ts): in the
// journal when small, else by reference. The results a run pays for are kept outside the journal, as the run hands
// them to the machine: a replay hands them in again, and a result the store holds already is not written twice.
import type { CachedFrom } from '../../protocol/report';
import type { InputResolution } from '../inputs';
import { resultKey } from '../resultKey';
import { ResultStore, type StoreOptions } from '../resultStore';
import type { StoredResult } from '../types';
import { type JournaledOutput, OutputStoreError, keepOutput } from './outputStore';

/** How a run uses the result store: RunRequest's cache fields, checked. */
export interface CacheUse {
  /**
   * Whether its tasks take a `cache` step: false for a request that names none of the cache fields (submitted before
   * runs reused results), whose journal has no such step to replay.
   */
  readonly lookups: boolean;
  readonly refresh: ReadonlySet<string>;
  readonly exclude: ReadonlySet<string>;
  readonly perProvider: boolean;
}

/** A `cache` step's journaled outcome: the stored result the task completes with, or a miss. `at`: when it ended. */
export type CacheOutcome =
  | { readonly hit: false; readonly at: string }
  | {
      readonly hit: true;
      readonly at: string;
      /** The provider that made the result, and its proof then. */
      readonly providerId: string;
      readonly proof: StoredResult['proof'];
      readonly cached: CachedFrom;
      readonly output: JournaledOutput;
    };

export interface CacheLookup {
  readonly runId: string;
  /** The task's index in the DAG: the name of its output in the output store. */
  readonly task: number;
  readonly capability: string;
  /** The task as JSON.parse makes it from the DAG's text. */
  readonly plain: Record<string, unknown>;
  readonly input: InputResolution;
  /** With results tied to their providers: those the task may go to, in order (the first one's result serves). */
  readonly providerIds?: readonly string[];
}

/** Where a hit's output goes: the output store, above the journal's size. */
export interface OutputPlace {
  readonly storeDir: string;
  readonly journalLimitBytes: number;
}

const nowIso = (): string => new Date().toISOString();

/**
 * A `cache` step: the task's result from `results`, or a miss (no store, an input that cannot be made, nothing
 * stored, or an output the output store cannot take: the task then runs as it would have).
 */
export function lookUpResult(results: RunResults | undefined, lookup: CacheLookup, place: OutputPlace): CacheOutcome {
  const stored = results?.lookup(lookup);
  if (stored === undefined) return { hit: false, at: nowIso() };
  let output: JournaledOutput;
  try {
    output = keepOutput(stored.output, place.storeDir, lookup.runId, lookup.task, place.journalLimitBytes);
  } catch (error) {
    if (!(error instanceof OutputStoreError)) throw error;
    return { hit: false, at: nowIso() };
  }
  const { run_id, task_id, made_at, cost_cu } = stored;
  return {
    hit: true,
    at: nowIso(),
    providerId: stored.provider_id,
    proof: stored.proof,
    cached: { run_id, task_id, made_at, cost_cu },
    output,
  };
}

/**
 * The result store as one attempt of a run's workflow sees it: opened when the attempt starts, closed when the run
 * ends or the attempt does (the engine suspended it, or the worker lost the engine), so that what the run kept
 * reaches the disk, the next run sees it, and no file stays open. A store that cannot be opened is none: every
 * lookup misses, nothing is kept.
 */
export class RunResults {
  private closing: Promise<void> | undefined;

  private constructor(private readonly store: ResultStore) {}

  static async open(options: StoreOptions, attemptEnded: AbortSignal): Promise<RunResults | undefined> {
    let store: ResultStore;
    try {
      store = await ResultStore.open(options);
    } catch {
      return undefined;
    }
    const results = new RunResults(store);
    if (attemptEnded.aborted) void results.close();
    else attemptEnded.addEventListener('abort', () => void results.close(), { once: true });
    return results;
  }

  /** The stored result for the task, its first key that has one; undefined once closed or when the input failed. */
  lookup(lookup: CacheLookup): StoredResult | undefined {
    if (this.closing !== undefined || !lookup.input.ok) return undefined;
    const { capability, plain, providerIds } = lookup;
    const input = lookup.input.input;
    if (providerIds === undefined) return this.store.lookup(resultKey(capability, input, plain));
    for (const providerId of providerIds) {
      const stored = this.store.lookup(resultKey(capability, input, plain, providerId));
      if (stored !== undefined) return stored;
    }
    return undefined;
  }

  /** Whether the store holds the result under `key` made at `madeAt`: kept already, by this run before a replay. */
  holds(key: string, madeAt: string): boolean {
    return this.store.madeAt(key) === madeAt;
  }

  keep(key: string, result: StoredResult): void {
    if (this.closing === undefined) this.store.keep(key, result);
  }

  /** Writes what was kept and closes the store; at most once, whoever asks (the run's end, the attempt's). */
  close(): Promise<void> {
    return (this.closing ??= this.store.close().then(
      () => undefined,
      () => undefined,
    ));
  }
}
