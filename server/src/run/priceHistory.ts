// What providers charged and took in past runs, kept on this machine (docs/market.md, Prices: the third source of a
// plan's figures): by provider id and capability, a moving average of the cost of a task and of its duration. The
// file is a cache: unreadable or corrupt reads as an empty history, and a write that fails loses only what it held.
import { randomUUID } from 'node:crypto';
import { chmod, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DagModel } from '../dag/model';
import type { RunReport } from '../protocol/report';
import { REUSED } from './machine';
import { privateFolder, userCacheFolder } from './privateFolder';

/** What one provider charged and took for one capability. */
export interface HistoryEntry {
  readonly provider_id: string;
  readonly capability: string;
  /** The cost of a task, CU: a moving average over runs; absent when no run reported one. */
  readonly cost_cu?: number;
  /** The duration of a task, ms (started_at to finished_at): a moving average over runs. */
  readonly duration_ms?: number;
  /** Tasks seen, all runs together. */
  readonly tasks: number;
  /** When a run last added to it (ISO-8601). */
  readonly updated_at: string;
}

/** The history by `historyKey(provider_id, capability)`. */
export type PriceHistory = ReadonlyMap<string, HistoryEntry>;

export const historyKey = (providerId: string, capability: string): string => `${providerId}\u0000${capability}`;

export const PRICE_HISTORY_FILE = 'price-history.json';
/** Entries kept at most: the least recently updated go first. */
export const MAX_HISTORY_ENTRIES = 2000;
/** The weight of a run's mean in the moving average: recent prices count most, one odd run does not erase the past. */
const RUN_WEIGHT = 0.5;

const historyFile = (): string => join(userCacheFolder(), PRICE_HISTORY_FILE);

const isFigure = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** An entry of the file when it has the shape of one; anything else is left out. */
function entryOf(value: unknown): HistoryEntry | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const { provider_id, capability, cost_cu, duration_ms, tasks, updated_at } = value as Record<string, unknown>;
  if (typeof provider_id !== 'string' || typeof capability !== 'string' || typeof updated_at !== 'string') {
    return undefined;
  }
  if (!isFigure(tasks) || (cost_cu !== undefined && !isFigure(cost_cu))) return undefined;
  if (duration_ms !== undefined && !isFigure(duration_ms)) return undefined;
  return {
    provider_id,
    capability,
    ...(cost_cu === undefined ? {} : { cost_cu }),
    ...(duration_ms === undefined ? {} : { duration_ms }),
    tasks,
    updated_at,
  };
}

/** The history of past runs on this machine; an absent, unreadable or corrupt file is an empty history. */
export async function readPriceHistory(): Promise<PriceHistory> {
  const history = new Map<string, HistoryEntry>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(historyFile(), 'utf8'));
  } catch {
    return history;
  }
  const entries = (parsed as { entries?: unknown } | null)?.entries;
  if (!Array.isArray(entries)) return history;
  for (const value of entries) {
    const entry = entryOf(value);
    if (entry !== undefined) history.set(historyKey(entry.provider_id, entry.capability), entry);
  }
  return history;
}

/** What one run says of one provider and capability: sums, to be averaged. */
interface RunFigures {
  tasks: number;
  costed: number;
  costSum: number;
  timed: number;
  durationSum: number;
}

/** The completed tasks of `report` by provider and capability (tasks reused from an earlier run or the store left out). */
function figuresOf(
  report: RunReport,
  model: DagModel,
): Map<string, RunFigures & { provider: string; capability: string }> {
  const byKey = new Map<string, RunFigures & { provider: string; capability: string }>();
  for (const task of report.tasks) {
    if (task.state !== 'completed' || task.provider_id === undefined || task.provider_id === REUSED) continue;
    if (task.cached !== undefined) continue;
    const capability = model.taskById.get(task.task_id)?.capability;
    if (capability === undefined) continue;
    const key = historyKey(task.provider_id, capability);
    let figures = byKey.get(key);
    if (figures === undefined) {
      figures = { provider: task.provider_id, capability, tasks: 0, costed: 0, costSum: 0, timed: 0, durationSum: 0 };
      byKey.set(key, figures);
    }
    figures.tasks++;
    if (isFigure(task.cost_cu)) {
      figures.costed++;
      figures.costSum += task.cost_cu;
    }
    const duration = Date.parse(task.finished_at ?? '') - Date.parse(task.started_at ?? '');
    if (isFigure(duration)) {
      figures.timed++;
      figures.durationSum += duration;
    }
  }
  return byKey;
}

const blend = (past: number | undefined, sum: number, count: number): number | undefined => {
  if (count === 0) return past;
  const mean = sum / count;
  return past === undefined ? mean : past + RUN_WEIGHT * (mean - past);
};

/** Writes `history` atomically (a private temporary file renamed over the old one), in a 0700 folder, as 0600. */
async function writePriceHistory(history: PriceHistory): Promise<void> {
  const folder = userCacheFolder();
  privateFolder(folder);
  const temporary = join(folder, `.${PRICE_HISTORY_FILE}.${process.pid}.${randomUUID()}.tmp`);
  try {
    await writeFile(temporary, JSON.stringify({ version: 1, entries: [...history.values()] }), {
      mode: 0o600,
      flag: 'wx',
    });
    // The mode of a new file is narrowed by the umask, never widened: this makes sure of 0600 whatever it is.
    await chmod(temporary, 0o600);
    await rename(temporary, join(folder, PRICE_HISTORY_FILE));
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}

/** What runs that ended told, not written yet: each run's figures (small) rather than its report (large). */
let queued: { readonly figures: ReturnType<typeof figuresOf>; readonly at: string }[] = [];
/** The write in progress, then the one after it: one at a time, each taking every run queued by its start. */
let recording: Promise<boolean> = Promise.resolve(true);
let next: Promise<boolean> | undefined;

/**
 * Adds what `report`'s completed tasks cost and took to the history, the capability of each taken from `model` by
 * task id. Never rejects: a history that cannot be written must not fail the run that fed it; resolves to whether it
 * was written. Runs that end while a write is going are written together by the next one (one read and one write for
 * them all, each run still blended in its turn), so that many short runs neither queue writes nor keep their reports.
 */
export function recordRun(report: RunReport, model: DagModel): Promise<boolean> {
  const figures = figuresOf(report, model);
  if (figures.size === 0) return Promise.resolve(true);
  queued.push({ figures, at: report.finished_at || new Date().toISOString() });
  next ??= recording.then(async () => {
    next = undefined;
    const runs = queued;
    queued = [];
    try {
      await writePriceHistory(blendRuns(await readPriceHistory(), runs));
      return true;
    } catch {
      return false;
    }
  });
  recording = next;
  return next;
}

/** `history` with each run's figures blended in, in order; the oldest entries beyond the bound dropped. */
function blendRuns(past: PriceHistory, runs: readonly { figures: ReturnType<typeof figuresOf>; at: string }[]) {
  const history = new Map(past);
  for (const { figures, at } of runs) {
    for (const [key, run] of figures) {
      const before = history.get(key);
      // Deleted first, so that the map's order is the order of last update, oldest first.
      history.delete(key);
      const cost = blend(before?.cost_cu, run.costSum, run.costed);
      const duration = blend(before?.duration_ms, run.durationSum, run.timed);
      history.set(key, {
        provider_id: run.provider,
        capability: run.capability,
        ...(cost === undefined ? {} : { cost_cu: cost }),
        ...(duration === undefined ? {} : { duration_ms: duration }),
        tasks: (before?.tasks ?? 0) + run.tasks,
        updated_at: at,
      });
    }
  }
  for (const key of history.keys()) {
    if (history.size <= MAX_HISTORY_ENTRIES) break;
    history.delete(key);
  }
  return history;
}
