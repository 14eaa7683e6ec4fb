// The result store in the editor (run/resultStore.ts): the store each run reuses and keeps results in, as the
// settings `acmp.cache.*` and the run's arguments say; the views hovers read it through; and the command
// `acmp.resultStore` that tells what it holds, empties or prunes it.
import { ErrorCodes, LSPErrorCodes, ResponseError } from 'vscode-languageserver';
import { messageOf } from '../protocol/acmpMessages';
import type { ResultStoreAnswer, ResultStoreArguments } from '../protocol/runMessages';
import type { Settings } from '../protocol/settings';
import {
  ResultStore,
  type StoreOptions,
  clearStore,
  pruneStore,
  resultStoreFolder,
  storeStats,
} from '../run/resultStore';
import { blockingDiagnostics } from '../run/refused';
import { providerIdsOf, storedResults } from '../run/selection';
import type { ResultReuse, StoredResult } from '../run/types';
import type { DagAnalysis } from '../dag/analyze';
import type { FeatureContext } from './feature';

type CacheSettings = Settings['cache'];

const BYTES_PER_MB = 1024 * 1024;

/** Where the store of these settings is, and its bound. */
export const storeOptionsOf = (cache: CacheSettings): Required<StoreOptions> => ({
  folder: resultStoreFolder(cache.folder),
  maxBytes: Math.round(cache.maxSizeMb * BYTES_PER_MB),
});

/** How a run of these settings reuses and keeps results in `store`; `refresh`: the tasks that run whatever it holds. */
export function resultReuseOf(store: ResultStore, cache: CacheSettings, refresh?: ReadonlySet<string>): ResultReuse {
  return {
    store,
    ...(refresh === undefined || refresh.size === 0 ? {} : { refresh }),
    ...(cache.exclude.length === 0 ? {} : { exclude: new Set(cache.exclude) }),
    ...(cache.perProvider ? { perProvider: true } : {}),
  };
}

/** The DAG as a value, for an analysis without errors. */
export type DagValue = Readonly<Record<string, unknown>> & { readonly tasks: readonly unknown[] };

/** How long a hover's view of the store is reused: results a run in another process keeps show up after it. */
const VIEW_LIFETIME_MS = 10_000;

/**
 * The server's dealings with the result store beside the runs themselves: the read-only views hovers peek into (one
 * opened per folder and reused a few seconds, so that moving over tasks does not read the index each time), and
 * the warnings a store's problems give, each once.
 */
export class ResultStores {
  private view: { readonly key: string; readonly store: Promise<ResultStore | undefined> } | undefined;
  private expiry: ReturnType<typeof setTimeout> | undefined;
  private readonly warned = new Set<string>();
  /**
   * The last analysed text's value: hovers over one document's tasks parse it once. One alone: the editor's analyses
   * keep no value, and keeping every open DAG's would double what the server holds.
   */
  private lastValue: { readonly analysis: DagAnalysis; readonly value: DagValue } | undefined;
  /** What a view held of the last text asked about (a plan and the hovers on its tasks ask alike). */
  private lastStored:
    | {
        readonly analysis: DagAnalysis;
        readonly store: ResultStore;
        readonly settings: string;
        readonly stored: readonly (StoredResult | undefined)[];
      }
    | undefined;

  constructor(private readonly context: FeatureContext) {}

  /** The value of the text of `analysis`, a DAG without errors: the store's keys are made from its tasks. */
  dagValueOf(analysis: DagAnalysis): DagValue {
    if (this.lastValue?.analysis !== analysis) {
      const { text } = analysis.document;
      // A byte order mark is no part of the JSON (the analysis ignored it too).
      const value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as DagValue;
      this.lastValue = { analysis, value };
    }
    return this.lastValue.value;
  }

  /** The store as it is now, to peek into (never to keep in); undefined when the settings turn the cache off. */
  viewOf(cache: CacheSettings): Promise<ResultStore | undefined> {
    if (!cache.enabled) return Promise.resolve(undefined);
    // Unbounded: a view keeps nothing, and closing it must not evict what the runs' bound kept.
    const options = { folder: storeOptionsOf(cache).folder, maxBytes: Number.POSITIVE_INFINITY };
    const key = options.folder;
    if (this.view?.key === key) return this.view.store;
    this.dropView();
    const store = ResultStore.open(options).catch((error: unknown) => {
      this.warn(`could not read the result store in ${options.folder}: ${messageOf(error)}`);
      return undefined;
    });
    this.view = { key, store };
    this.expiry = setTimeout(() => this.dropView(), VIEW_LIFETIME_MS);
    this.expiry.unref();
    return store;
  }

  /**
   * What `store` (a view) holds of each task of `analysis`, by position, as a run with `settings` would find it;
   * undefined for a DAG with errors (its inputs are not known). Worked out once for a text, view and settings: on
   * 10,000 tasks it takes a few hundred milliseconds, and hovers over its tasks ask again and again.
   */
  storedIn(
    store: ResultStore,
    analysis: DagAnalysis,
    settings: Settings,
  ): readonly (StoredResult | undefined)[] | undefined {
    if (blockingDiagnostics(analysis).length > 0) return undefined;
    const asked = JSON.stringify([settings.cache, settings.providers]);
    const last = this.lastStored;
    if (last?.analysis === analysis && last.store === store && last.settings === asked) return last.stored;
    const reuse = resultReuseOf(store, settings.cache);
    const plainTasks = this.dagValueOf(analysis).tasks;
    const stored = storedResults(analysis.model, plainTasks, reuse, providerIdsOf(settings.providers));
    this.lastStored = { analysis, store, settings: asked, stored };
    return stored;
  }

  /** A run kept results: the next hover reads the store again. */
  changed(): void {
    this.dropView();
  }

  /** Opens the store a run of these settings uses; undefined when the cache is off or the store cannot be opened. */
  async openForRun(cache: CacheSettings, noCache: boolean): Promise<ResultStore | undefined> {
    if (!cache.enabled || noCache) return undefined;
    const options = storeOptionsOf(cache);
    try {
      return await ResultStore.open(options);
    } catch (error) {
      this.warn(`could not open the result store in ${options.folder}; the run reuses no results: ${messageOf(error)}`);
      return undefined;
    }
  }

  /** Writes what the run kept; a problem the store had is a warning in the server's log, never the run's failure. */
  async closeAfterRun(store: ResultStore): Promise<void> {
    try {
      await store.close();
    } catch (error) {
      store.problem ??= messageOf(error);
    }
    if (store.problem !== undefined) this.warn(store.problem);
    this.changed();
  }

  /** Logs `problem` as a warning, once: every run of a store that cannot be written would say the same. */
  private warn(problem: string): void {
    if (this.warned.has(problem)) return;
    this.warned.add(problem);
    this.context.connection.console.warn(`Result store: ${problem}`);
  }

  private dropView(): void {
    clearTimeout(this.expiry);
    const dropped = this.view;
    this.view = undefined;
    // What it held of a text goes with it: the results' outputs are no longer the server's to keep.
    this.lastStored = undefined;
    // A view never keeps anything: closing it releases the packs it read.
    void dropped?.store.then((store) => store?.close()).catch(() => undefined);
  }
}

const storesByContext = new WeakMap<FeatureContext, ResultStores>();

/** The result stores of the server `context` belongs to (runs and hovers share them). */
export function resultStoresOf(context: FeatureContext): ResultStores {
  let stores = storesByContext.get(context);
  if (stores === undefined) {
    stores = new ResultStores(context);
    storesByContext.set(context, stores);
  }
  return stores;
}

const ACTIONS: ReadonlySet<string> = new Set<ResultStoreArguments['action']>(['stats', 'clear', 'prune']);

/**
 * `acmp.resultStore`: what the store of the settings (of `uri`'s folder, else the workspace's) holds, after emptying
 * it (`clear`, of one capability when named) or bringing it within `acmp.cache.maxSizeMb` (`prune`).
 */
export async function resultStoreCommand(context: FeatureContext, argument: unknown): Promise<ResultStoreAnswer> {
  const { action, capability, uri } = (argument ?? {}) as Partial<Record<keyof ResultStoreArguments, unknown>>;
  if (typeof action !== 'string' || !ACTIONS.has(action)) {
    throw new ResponseError(ErrorCodes.InvalidParams, 'expected "action": "stats", "clear" or "prune"');
  }
  if (capability !== undefined && (typeof capability !== 'string' || action !== 'clear')) {
    throw new ResponseError(ErrorCodes.InvalidParams, '"capability" (a string) goes with "action": "clear" only');
  }
  if (uri !== undefined && typeof uri !== 'string')
    throw new ResponseError(ErrorCodes.InvalidParams, '"uri": a string');
  const { cache } = await context.settingsFor(uri ?? '');
  const { folder, maxBytes } = storeOptionsOf(cache);
  let removed: number | undefined;
  try {
    if (action === 'clear') removed = clearStore(folder, capability);
    if (action === 'prune') {
      const outcome = pruneStore(folder, maxBytes);
      if (outcome === undefined)
        throw new Error('another process is compacting the result store; try again in a moment');
      removed = outcome.evicted;
    }
    const answer: ResultStoreAnswer = { stats: storeStats(folder), ...(removed === undefined ? {} : { removed }) };
    return answer;
  } catch (error) {
    throw new ResponseError(LSPErrorCodes.RequestFailed, `Result store in ${folder}: ${messageOf(error)}`);
  } finally {
    resultStoresOf(context).changed();
  }
}
