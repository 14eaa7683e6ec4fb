// The result store from the command line: the options `run` and `plan` share (--no-cache, --cache-dir, ...), and
// `acmp-dag cache stats|clear|prune`, which show and manage what it holds. Exit codes of `cache`: 0 done, 1 the store
// could not be changed (another process compacting it, or the file system refused), 2 usage.
import { parseArgs } from 'node:util';
import { messageOf } from '../protocol/acmpMessages';
import type { ResultStoreAnswer, StoreStats } from '../protocol/runMessages';
import { minuteText } from '../run/planText';
import {
  DEFAULT_MAX_BYTES,
  type PruneOutcome,
  ResultStore,
  clearStore,
  pruneStore,
  resultStoreFolder,
  storeStats,
} from '../run/resultStore';
import type { ResultReuse } from '../run/types';
import { UsageError } from './usage';

/** The options of `run` and `plan` that say how the result store is used. */
export const CACHE_OPTIONS = {
  'no-cache': { type: 'boolean', default: false },
  'cache-dir': { type: 'string' },
  'cache-exclude': { type: 'string', multiple: true },
  'cache-per-provider': { type: 'boolean', default: false },
} as const;

/** `run`'s and `prune`'s bound on the store. */
export const CACHE_MAX_OPTION = { 'cache-max-mb': { type: 'string' } } as const;

export interface CacheFlags {
  readonly 'no-cache'?: boolean;
  readonly 'cache-dir'?: string;
  readonly 'cache-exclude'?: string[];
  readonly 'cache-per-provider'?: boolean;
  readonly 'cache-max-mb'?: string;
}

/** The values of a repeatable option, each of which may be a comma-separated list. */
export const listOption = (values: readonly string[] | undefined): string[] =>
  (values ?? []).flatMap((value) => value.split(',').map((item) => item.trim())).filter((item) => item !== '');

/** `--cache-max-mb`: a positive number of MiB (fractions allowed), as bytes; `fallback` when absent. */
export function parseMaxBytes(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const mib = Number(value);
  if (value.trim() === '' || !Number.isFinite(mib) || mib <= 0) {
    throw new UsageError(`--cache-max-mb needs a positive number of MiB, not "${value}"`);
  }
  return Math.max(1, Math.round(mib * 1024 * 1024));
}

/**
 * The store the flags name, opened, and how a run reuses it (`refresh`: the tasks that run again whatever it holds);
 * undefined under --no-cache. `maxBytes`: the bound its closing compacts to (a plan, which keeps nothing, passes
 * Infinity so that it never evicts what a run's larger bound kept).
 */
export async function openResultReuse(
  flags: CacheFlags,
  refresh: ReadonlySet<string> = new Set(),
  maxBytes = parseMaxBytes(flags['cache-max-mb'], DEFAULT_MAX_BYTES),
): Promise<{ store: ResultStore; reuse: ResultReuse } | undefined> {
  if (flags['no-cache'] === true) return undefined;
  const store = await ResultStore.open({ folder: resultStoreFolder(flags['cache-dir']), maxBytes });
  const exclude = listOption(flags['cache-exclude']);
  return {
    store,
    reuse: {
      store,
      ...(refresh.size === 0 ? {} : { refresh }),
      ...(exclude.length === 0 ? {} : { exclude: new Set(exclude) }),
      ...(flags['cache-per-provider'] === true ? { perProvider: true } : {}),
    },
  };
}

/** Writes what is left to the store and closes it; a problem it had is a warning, never the command's failure. */
export async function closeResultStore(store: ResultStore): Promise<void> {
  await store.close();
  if (store.problem !== undefined) process.stderr.write(`acmp-dag: warning: ${store.problem}\n`);
}

/** `1.2 MiB`, `512 KiB`, `37 B`. */
export function bytesText(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : Number(value.toFixed(1))} ${units[unit]}`;
}

/** Capabilities listed by `cache stats` at most; the rest are counted. */
const TOP_CAPABILITIES = 10;

function statsText(stats: StoreStats): string[] {
  const lines = [`Result store: ${stats.folder}`];
  if (stats.results === 0) {
    lines.push(`  empty (${bytesText(stats.diskBytes)} on disk)`);
    return lines;
  }
  lines.push(
    `  results:     ${stats.results}, ${bytesText(stats.bytes)} (${bytesText(stats.diskBytes)} on disk)`,
    `  oldest made: ${minuteText(stats.oldestMadeAt!)}`,
    `  last used:   ${minuteText(stats.lastUsedAt!)}`,
    '  by capability:',
  );
  const top = stats.byCapability.slice(0, TOP_CAPABILITIES);
  const width = Math.max(...top.map((row) => row.capability.length));
  const countWidth = Math.max(...top.map((row) => String(row.results).length));
  for (const row of top) {
    lines.push(
      `    ${row.capability.padEnd(width)}  ${String(row.results).padStart(countWidth)}  ${bytesText(row.bytes)}`,
    );
  }
  const more = stats.byCapability.length - top.length;
  if (more > 0) lines.push(`    … and ${more} more capabilit${more === 1 ? 'y' : 'ies'}`);
  return lines;
}

const plural = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`;

/** `acmp-dag cache stats|clear|prune` (the store's functions are synchronous; the command table takes promises). */
export const cacheCommand = (args: string[]): Promise<number> => Promise.resolve(cache(args));

function cache(args: string[]): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      'cache-dir': { type: 'string' },
      ...CACHE_MAX_OPTION,
      capability: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [action, ...rest] = positionals;
  if (action !== 'stats' && action !== 'clear' && action !== 'prune') {
    throw new UsageError(
      action === undefined ? 'cache needs stats, clear or prune' : `unknown cache action "${action}"`,
    );
  }
  if (rest.length > 0) throw new UsageError(`cache ${action} takes no FILE (${rest.join(' ')})`);
  if (values.capability !== undefined && action !== 'clear') {
    throw new UsageError('--capability goes with cache clear');
  }
  if (values['cache-max-mb'] !== undefined && action !== 'prune') {
    throw new UsageError('--cache-max-mb goes with cache prune');
  }
  const folder = resultStoreFolder(values['cache-dir']);
  const print = (answer: ResultStoreAnswer, lines: readonly string[]): number => {
    process.stdout.write(`${values.json ? JSON.stringify(answer, null, 2) : lines.join('\n')}\n`);
    return 0;
  };
  const failed = (why: string): number => {
    process.stderr.write(`acmp-dag: could not ${action} the result store in ${folder}: ${why}\n`);
    return 1;
  };
  if (action === 'stats') {
    const stats = storeStats(folder);
    return print({ stats }, statsText(stats));
  }
  if (action === 'clear') {
    const capability = values.capability;
    let removed: number;
    try {
      removed = clearStore(folder, capability);
    } catch (error) {
      return failed(messageOf(error));
    }
    const what = capability === undefined ? '' : ` of ${capability}`;
    return print({ stats: storeStats(folder), removed }, [
      `Removed ${plural(removed, 'result')}${what} from ${folder}`,
    ]);
  }
  const maxBytes = parseMaxBytes(values['cache-max-mb'], DEFAULT_MAX_BYTES);
  let outcome: PruneOutcome | undefined;
  try {
    outcome = pruneStore(folder, maxBytes);
  } catch (error) {
    return failed(messageOf(error));
  }
  if (outcome === undefined) return failed('another process is compacting it now; try again in a moment');
  return print({ stats: storeStats(folder), removed: outcome.evicted }, [
    `Pruned ${folder} to ${bytesText(maxBytes)}: evicted ${plural(outcome.evicted, 'result')}, kept ${outcome.kept} (${bytesText(outcome.bytesBefore)} → ${bytesText(outcome.bytesAfter)})`,
  ]);
}
