// The result store: the results of completed tasks, kept across runs so that no run pays twice for the same work
// (docs/architecture.md, The result store). One folder, 0700, its files 0600:
// - `<id>.pack`: the results one store writer (one run) kept, a line each: its key, a tab, and its output in canonical
//   form (JCS);
// - `<id>.idx`: that writer's index: where each record is and the facts of its result (`R` lines), and the keys it
//   used (`U` lines), for the least-recently-used order the size bound evicts in;
// - `<id>.open`: there while its writer lives, so that compaction leaves its files alone;
// - `lock/`: held by the one process compacting.
// Writers never share a file, so two runs at once cannot interleave their writes. A reader that finds a pack gone
// (compacted or cleared meanwhile) reads a miss, and a record that does not name the key asked for is a miss too:
// whatever happens to the folder, a lookup answers the stored result or nothing, never another one.
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { type FileHandle, open, readFile, readdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { messageOf } from '../protocol/acmpMessages';
import type { TaskOutput } from '../protocol/report';
import type { StoreStats } from '../protocol/runMessages';
import { canonicalOutput } from './resultKey';
import type { ResultCache, StoredResult } from './types';
import { privateFolder, userCacheFolder } from './privateFolder';

/** The store's bound when none is set: past it, the results used least recently go. */
export const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;
/** Eviction brings the store down to this share of its bound, so that the next runs do not evict again at once. */
const EVICT_TO = 0.8;
/** A use is written when the last one known is older than this: re-runs do not grow the index with every lookup. */
const USE_GRANULARITY_MS = 60 * 60 * 1000;
/** Index files past which closing a store merges them (one per writer otherwise accumulates). */
const MAX_INDEX_FILES = 16;
/** Writes are batched up to this many bytes. */
const WRITE_BATCH_BYTES = 1024 * 1024;
/** A compaction lock older than this was left by a process that died. */
const STALE_LOCK_MS = 5 * 60 * 1000;
/** A pack copied whole on compaction when less than this share of it is still stored. */
const COPY_BELOW_LIVE_SHARE = 0.5;

/** Where the results are: the folder the user named, else `results` in the user's cache folder. */
export function resultStoreFolder(chosen?: string): string {
  return chosen !== undefined && chosen !== '' ? chosen : join(userCacheFolder(), 'results');
}

/** Where one stored result is, and when it was made and last used. */
interface Entry {
  readonly pack: string;
  readonly offset: number;
  readonly length: number;
  readonly madeAtMs: number;
  usedAtMs: number;
  readonly capability: string;
  /** The facts of the result but its output (they are in the index: a record holds its key and output alone). */
  readonly facts: Omit<StoredResult, 'output' | 'capability'>;
  /** A result this store kept, until its record is written: lookups take it from here meanwhile. */
  unwritten?: StoredResult | undefined;
}

/** A pack a store reads records from: by position, or from memory once many were read. */
interface OpenPack {
  readonly fd: number;
  readonly size: number;
  reads: number;
  whole: Buffer | undefined;
}

/** Records read one by one from a pack before it is read whole (when it is no larger than WHOLE_PACK_MAX_BYTES). */
const WHOLE_PACK_AFTER_READS = 32;
const WHOLE_PACK_MAX_BYTES = 64 * 1024 * 1024;

/** What a compaction did. */
export interface PruneOutcome {
  readonly evicted: number;
  readonly kept: number;
  readonly bytesBefore: number;
  readonly bytesAfter: number;
}

export interface StoreOptions {
  readonly folder?: string;
  /** The bound, in bytes of stored results (default DEFAULT_MAX_BYTES). */
  readonly maxBytes?: number;
}

/**
 * The store as one run sees it: the index read when it opened, lookups that read the records they need, and the
 * results the run keeps, written in batches to files of its own. `close` writes what is left and, when the store is
 * past its bound (or its index files are many), compacts it. A failure to read or write is never a run's failure:
 * the store then answers misses and keeps nothing more, and `problem` says why.
 */
export class ResultStore implements ResultCache {
  /** Why the store stopped reading or writing, if it did. */
  problem: string | undefined;
  private readonly id = newId();
  /** The packs this store read from, by id: null when one could not be opened. */
  private readonly packs = new Map<string, OpenPack | null>();
  /** Entries kept since the last write began. */
  private pending: Entry[] = [];
  private packChunks: string[] = [];
  private indexLines: string[] = [];
  private pendingBytes = 0;
  private packBytes = 0;
  private files: { pack: FileHandle; index: FileHandle } | undefined;
  private writes: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(
    readonly folder: string,
    private readonly maxBytes: number,
    /** By key, its entry: an index line until a lookup needs it (a store holds far more than a run asks for). */
    private readonly entries: Map<string, Entry | string>,
    /** By key, its latest use the index files record. */
    private readonly uses: Map<string, number>,
    private readonly indexFiles: number,
  ) {}

  /** Opens the store in `options.folder` (made when absent) and reads its index. */
  static async open(options: StoreOptions = {}): Promise<ResultStore> {
    const folder = resultStoreFolder(options.folder);
    const maxBytes = options.maxBytes !== undefined && options.maxBytes > 0 ? options.maxBytes : DEFAULT_MAX_BYTES;
    let names: string[] = [];
    try {
      names = await readdir(folder);
    } catch {
      // No store yet: the first result kept makes it.
    }
    // Oldest first (a writer's id starts with its time): of two records of one key, the later one is kept.
    const indexes = names.filter((name) => name.endsWith(INDEX)).sort();
    const texts = await Promise.all(indexes.map((name) => readFile(join(folder, name), 'utf8').catch(() => '')));
    const entries = new Map<string, Entry | string>();
    const uses = new Map<string, number>();
    for (const text of texts) {
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; start = end + 1, end = text.indexOf('\n', start)) {
        const keyEnd = text.indexOf('\t', start + 2);
        if (keyEnd === -1 || keyEnd > end || text.charCodeAt(start + 1) !== TAB) continue;
        const key = text.slice(start + 2, keyEnd);
        const kind = text.charCodeAt(start);
        if (kind === RECORD) entries.set(key, text.slice(start, end));
        else if (kind === USE) uses.set(key, Math.max(uses.get(key) ?? 0, Number(text.slice(keyEnd + 1, end)) || 0));
      }
    }
    return new ResultStore(folder, maxBytes, entries, uses, indexes.length);
  }

  lookup(key: string): StoredResult | undefined {
    return this.find(key, true);
  }

  /** The result stored under `key` without counting a use (a plan or a hover asks; no run takes it). */
  peek(key: string): StoredResult | undefined {
    return this.find(key, false);
  }

  /** When the result under `key` was made, without reading it; undefined when none is stored. */
  madeAt(key: string): string | undefined {
    return this.entryOf(key)?.facts.made_at;
  }

  keep(key: string, result: StoredResult, canonical = canonicalOutput(result.output)): void {
    if (this.closed || this.problem !== undefined) return;
    const { run_id, task_id, made_at, cost_cu, provider_id, proof, capability } = result;
    const facts = { run_id, task_id, made_at, cost_cu, provider_id, proof };
    // The output in its canonical form, after its key and a tab: read back, it keys the inputs it becomes without being
    // canonicalized again (resultKey.ts).
    const line = `${key}\t${canonical}\n`;
    const length = Buffer.byteLength(line);
    const madeAtMs = Date.parse(made_at);
    const entry: Entry = {
      pack: this.id,
      offset: this.packBytes,
      length,
      madeAtMs,
      usedAtMs: madeAtMs,
      capability,
      facts,
      unwritten: { ...result, canonicalOutput: canonical },
    };
    this.packBytes += length;
    this.packChunks.push(line);
    this.indexLines.push(recordLine(key, entry));
    this.entries.set(key, entry);
    this.pending.push(entry);
    this.pendingBytes += length;
    if (this.pendingBytes >= WRITE_BATCH_BYTES) this.flush();
  }

  /** Resolves once what was kept so far is written (the next lookups read it back from its file). */
  written(): Promise<void> {
    this.flush();
    return this.writes;
  }

  /** The results stored and their bytes (what the bound counts). */
  get size(): { readonly results: number; readonly bytes: number } {
    let bytes = 0;
    let results = 0;
    for (const key of [...this.entries.keys()]) {
      const entry = this.entryOf(key);
      if (entry === undefined) continue;
      results++;
      bytes += entry.length;
    }
    return { results, bytes };
  }

  /** Writes what is left, closes the files, and compacts the store when it is past its bound or has many indexes. */
  async close(): Promise<PruneOutcome | undefined> {
    if (this.closed) return undefined;
    this.closed = true;
    this.flush();
    await this.writes;
    await this.files?.pack.close().catch(() => undefined);
    await this.files?.index.close().catch(() => undefined);
    for (const pack of this.packs.values()) if (pack !== null) closeSync(pack.fd);
    this.packs.clear();
    if (this.files !== undefined) rmSync(join(this.folder, this.id + OPEN), { force: true });
    const indexFiles = this.indexFiles + (this.files === undefined ? 0 : 1);
    // The packs' sizes bound what is stored: within the bound, nothing needs counting.
    if (packBytes(this.folder) <= this.maxBytes && indexFiles <= MAX_INDEX_FILES) return undefined;
    try {
      return pruneStore(this.folder, this.maxBytes);
    } catch (error) {
      this.problem = `could not compact the result store: ${messageOf(error)}`;
      return undefined;
    }
  }

  /** The entry of `key`, its index line read on first use; undefined when none is stored or its line is malformed. */
  private entryOf(key: string): Entry | undefined {
    const known = this.entries.get(key);
    if (typeof known !== 'string') return known;
    const fields = known.split('\t');
    const entry = fields.length === RECORD_FIELDS ? entryOf(fields) : undefined;
    if (entry === undefined) {
      this.entries.delete(key);
      return undefined;
    }
    entry.usedAtMs = Math.max(entry.usedAtMs, this.uses.get(key) ?? 0);
    this.entries.set(key, entry);
    return entry;
  }

  private find(key: string, use: boolean): StoredResult | undefined {
    const entry = this.entryOf(key);
    if (entry === undefined) return undefined;
    if (entry.unwritten !== undefined) return entry.unwritten;
    const result = this.read(key, entry);
    if (result === undefined) {
      this.entries.delete(key);
      return undefined;
    }
    if (use && Date.now() - entry.usedAtMs > USE_GRANULARITY_MS) {
      entry.usedAtMs = Date.now();
      this.indexLines.push(`U\t${key}\t${entry.usedAtMs}\n`);
    }
    return result;
  }

  /** The record at `entry`, when it is the one stored under `key`. */
  private read(key: string, entry: Entry): StoredResult | undefined {
    let pack = this.packs.get(entry.pack);
    if (pack === undefined) this.packs.set(entry.pack, (pack = this.openPack(entry.pack)));
    if (pack === null) return undefined;
    try {
      let line: string;
      // A record past the copy read whole was written since (to this store's own pack): it is read where it is.
      if (pack.whole !== undefined && entry.offset + entry.length <= pack.whole.length) {
        line = pack.whole.toString('utf8', entry.offset, entry.offset + entry.length);
      } else {
        const bytes = Buffer.allocUnsafe(entry.length);
        if (readSync(pack.fd, bytes, 0, entry.length, entry.offset) !== entry.length) return undefined;
        line = bytes.toString('utf8');
        // A run that reads many records of a pack (a re-run of the DAG that made them) reads it whole, once.
        if (++pack.reads === WHOLE_PACK_AFTER_READS && pack.size <= WHOLE_PACK_MAX_BYTES) {
          pack.whole = readFileSync(pack.fd);
        }
      }
      return recordOf(line, key, entry);
    } catch {
      return undefined;
    }
  }

  private openPack(id: string): OpenPack | null {
    try {
      const fd = openSync(join(this.folder, id + PACK), 'r');
      return { fd, size: fstatSync(fd).size, reads: 0, whole: undefined };
    } catch {
      return null;
    }
  }

  /** Starts writing what was kept and used since the last write (after that write: they go out in order). */
  private flush(): void {
    if (this.packChunks.length === 0 && this.indexLines.length === 0) return;
    const pack = this.packChunks.join('');
    const index = this.indexLines.join('');
    this.packChunks = [];
    this.indexLines = [];
    this.pendingBytes = 0;
    const batch = this.pending;
    this.pending = [];
    this.writes = this.writes.then(async () => {
      try {
        const files = (this.files ??= await this.openFiles());
        // The records before the lines that point at them: a reader never finds an index line ahead of its record.
        if (pack !== '') await files.pack.write(pack);
        if (index !== '') await files.index.write(index);
      } catch (error) {
        this.problem ??= `could not write to the result store in ${this.folder}: ${messageOf(error)}`;
      }
      for (const entry of batch) entry.unwritten = undefined;
    });
  }

  private async openFiles(): Promise<{ pack: FileHandle; index: FileHandle }> {
    privateFolder(this.folder);
    writeFileSync(join(this.folder, this.id + OPEN), ownerMark(), { mode: 0o600 });
    const pack = await open(join(this.folder, this.id + PACK), 'a', 0o600);
    const index = await open(join(this.folder, this.id + INDEX), 'a', 0o600);
    return { pack, index };
  }
}

/**
 * Compacts the store in `folder`: the results used least recently go until what is stored fits `maxBytes` (to
 * EVICT_TO of it when it had to evict), the indexes of the writers that are done merge into one, and packs mostly
 * evicted are copied down to what is left of them. Undefined when another process compacts it now.
 */
export function pruneStore(folder: string, maxBytes: number): PruneOutcome | undefined {
  if (!takeLock(folder)) return undefined;
  try {
    const names = safeReaddir(folder);
    const { active, folded, entries } = finishedIndexes(folder, names);
    const byRecency = [...entries].sort(([, a], [, b]) => b.usedAtMs - a.usedAtMs);
    let bytesBefore = 0;
    for (const [, entry] of byRecency) bytesBefore += entry.length;
    const budget = bytesBefore > maxBytes ? maxBytes * EVICT_TO : Infinity;
    const kept: [string, Entry][] = [];
    let bytesAfter = 0;
    for (const pair of byRecency) {
      if (bytesAfter + pair[1].length > budget) continue;
      kept.push(pair);
      bytesAfter += pair[1].length;
    }
    const id = newId();
    const { lines, packsKept } = rewrite(folder, id, kept);
    const index = join(folder, id + INDEX);
    writeFileSync(index + '.tmp', lines.join(''), { mode: 0o600 });
    renameSync(index + '.tmp', index);
    for (const name of folded) rmSync(join(folder, name), { force: true });
    for (const name of names) {
      const pack = name.endsWith(PACK) ? name.slice(0, -PACK.length) : undefined;
      if (pack !== undefined && !packsKept.has(pack) && !active.has(pack)) rmSync(join(folder, name), { force: true });
    }
    return { evicted: entries.size - kept.length, kept: kept.length, bytesBefore, bytesAfter };
  } finally {
    releaseLock(folder);
  }
}

/**
 * The index lines of `kept` after compaction into pack `id`: the records of packs that are mostly evicted are copied
 * there; the packs that keep their records stay as they are.
 */
function rewrite(
  folder: string,
  id: string,
  kept: readonly [string, Entry][],
): { lines: string[]; packsKept: Set<string> } {
  const liveBytes = new Map<string, number>();
  for (const [, entry] of kept) liveBytes.set(entry.pack, (liveBytes.get(entry.pack) ?? 0) + entry.length);
  const copied = new Set<string>();
  for (const [pack, live] of liveBytes) {
    const size = fileSize(join(folder, pack + PACK));
    if (size === undefined) liveBytes.delete(pack);
    else if (live < size * COPY_BELOW_LIVE_SHARE) copied.add(pack);
  }
  const lines: string[] = [];
  const chunks: Buffer[] = [];
  let offset = 0;
  const reads = new Map<string, number>();
  try {
    for (const [key, entry] of kept) {
      if (!liveBytes.has(entry.pack)) continue;
      let placed = entry;
      if (copied.has(entry.pack)) {
        let fd = reads.get(entry.pack);
        if (fd === undefined) reads.set(entry.pack, (fd = openSync(join(folder, entry.pack + PACK), 'r')));
        const bytes = Buffer.allocUnsafe(entry.length);
        if (readSync(fd, bytes, 0, entry.length, entry.offset) !== entry.length) continue;
        chunks.push(bytes);
        placed = { ...entry, pack: id, offset };
        offset += entry.length;
      }
      lines.push(recordLine(key, placed));
      if (placed.usedAtMs > placed.madeAtMs) lines.push(`U\t${key}\t${placed.usedAtMs}\n`);
    }
  } finally {
    for (const fd of reads.values()) closeSync(fd);
  }
  const packsKept = new Set([...liveBytes.keys()].filter((pack) => !copied.has(pack)));
  if (chunks.length > 0) {
    const pack = join(folder, id + PACK);
    writeFileSync(pack + '.tmp', Buffer.concat(chunks), { mode: 0o600 });
    renameSync(pack + '.tmp', pack);
    packsKept.add(id);
  }
  return { lines, packsKept };
}

/** What the store in `folder` holds. */
export function storeStats(folder: string): StoreStats {
  const names = safeReaddir(folder);
  const entries = new Map<string, Entry>();
  readIndexes(
    names.filter((name) => name.endsWith(INDEX)).map((name) => safeRead(join(folder, name))),
    entries,
  );
  let diskBytes = 0;
  for (const name of names) diskBytes += fileSize(join(folder, name)) ?? 0;
  let bytes = 0;
  let oldest = Infinity;
  let lastUsed = -Infinity;
  const byCapability = new Map<string, { capability: string; results: number; bytes: number }>();
  for (const entry of entries.values()) {
    bytes += entry.length;
    oldest = Math.min(oldest, entry.madeAtMs);
    lastUsed = Math.max(lastUsed, entry.usedAtMs);
    let row = byCapability.get(entry.capability);
    if (row === undefined)
      byCapability.set(entry.capability, (row = { capability: entry.capability, results: 0, bytes: 0 }));
    row.results++;
    row.bytes += entry.length;
  }
  return {
    folder,
    results: entries.size,
    bytes,
    diskBytes,
    ...(entries.size === 0
      ? {}
      : { oldestMadeAt: new Date(oldest).toISOString(), lastUsedAt: new Date(lastUsed).toISOString() }),
    byCapability: [...byCapability.values()].sort(
      (a, b) => b.results - a.results || a.capability.localeCompare(b.capability),
    ),
  };
}

/**
 * Removes every result in `folder` (of `capability` alone when given: their index lines go, their records with the
 * next compaction). Returns how many went.
 */
export function clearStore(folder: string, capability?: string): number {
  const names = safeReaddir(folder);
  if (capability === undefined) {
    const { results } = storeStats(folder);
    for (const name of names) {
      if (name.endsWith(PACK) || name.endsWith(INDEX) || name.endsWith(OPEN) || name.endsWith('.tmp')) {
        rmSync(join(folder, name), { force: true });
      }
    }
    return results;
  }
  if (!takeLock(folder)) throw new Error('another process is compacting the result store; try again in a moment');
  try {
    const { folded, entries } = finishedIndexes(folder, names);
    const lines: string[] = [];
    let removed = 0;
    for (const [key, entry] of entries) {
      if (entry.capability === capability) removed++;
      else
        lines.push(
          recordLine(key, entry),
          ...(entry.usedAtMs > entry.madeAtMs ? [`U\t${key}\t${entry.usedAtMs}\n`] : []),
        );
    }
    const index = join(folder, newId() + INDEX);
    writeFileSync(index + '.tmp', lines.join(''), { mode: 0o600 });
    renameSync(index + '.tmp', index);
    for (const name of folded) rmSync(join(folder, name), { force: true });
    return removed;
  } finally {
    releaseLock(folder);
  }
}

const PACK = '.pack';
const INDEX = '.idx';
const OPEN = '.open';
const LOCK = 'lock';

/** A writer's id: time first, so that names sort by age, then random bits, so that two never meet. */
const newId = (): string => `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`;

/** An index line of a record: where it is, and the facts of its result. */
function recordLine(key: string, { pack, offset, length, madeAtMs, capability, facts }: Entry): string {
  const { run_id, task_id, made_at, cost_cu, provider_id, proof } = facts;
  const texts = [capability, run_id, task_id, made_at, provider_id].map(field).join('\t');
  return `R\t${key}\t${pack}\t${offset}\t${length}\t${madeAtMs}\t${texts}\t${cost_cu}\t${proof}\n`;
}

/** A text as an index field: as it is when it is plain, else as a JSON string (which starts with a quote). */
const field = (text: string): string => (text === '' || /["\\\t\n\r]/.test(text) ? JSON.stringify(text) : text);

/** An index field's text, or undefined when it is malformed. */
function fieldText(written: string): string | undefined {
  if (!written.startsWith('"')) return written;
  try {
    const text: unknown = JSON.parse(written);
    return typeof text === 'string' ? text : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads index texts into `entries`: a key's location is its latest record (two runs that made the same result at once
 * each keep one; either serves), its use the latest known. Malformed or cut-off lines are skipped.
 */
function readIndexes(texts: readonly string[], entries: Map<string, Entry>): void {
  const uses = new Map<string, number>();
  for (const text of texts) {
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; start = end + 1, end = text.indexOf('\n', start)) {
      const fields = text.slice(start, end).split('\t');
      if (fields[0] === 'U' && fields.length === 3) {
        const usedAtMs = Number(fields[2]);
        if (Number.isFinite(usedAtMs)) uses.set(fields[1]!, Math.max(uses.get(fields[1]!) ?? 0, usedAtMs));
        continue;
      }
      if (fields[0] !== 'R' || fields.length !== RECORD_FIELDS) continue;
      const entry = entryOf(fields);
      if (entry === undefined) continue;
      const key = fields[1]!;
      const known = entries.get(key);
      if (known === undefined || known.madeAtMs <= entry.madeAtMs) {
        entry.usedAtMs = Math.max(entry.usedAtMs, known?.usedAtMs ?? 0);
        entries.set(key, entry);
      }
    }
  }
  for (const [key, usedAtMs] of uses) {
    const entry = entries.get(key);
    if (entry !== undefined && usedAtMs > entry.usedAtMs) entry.usedAtMs = usedAtMs;
  }
}

const RECORD_FIELDS = 13;
const RECORD = 'R'.charCodeAt(0);
const USE = 'U'.charCodeAt(0);

/** The entry an index line's fields describe, when they are well formed. */
function entryOf(fields: readonly string[]): Entry | undefined {
  const pack = fields[2]!;
  const offset = Number(fields[3]);
  const length = Number(fields[4]);
  const madeAtMs = Number(fields[5]);
  const cost_cu = Number(fields[11]);
  const proof = fields[12] === 'verified' ? 'verified' : fields[12] === 'absent' ? 'absent' : undefined;
  if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length <= 0) return undefined;
  if (!Number.isFinite(madeAtMs) || !Number.isFinite(cost_cu)) return undefined;
  if (proof === undefined) return undefined;
  if (!PACK_ID.test(pack)) return undefined;
  const capability = fieldText(fields[6]!);
  const run_id = fieldText(fields[7]!);
  const task_id = fieldText(fields[8]!);
  const made_at = fieldText(fields[9]!);
  const provider_id = fieldText(fields[10]!);
  if (
    capability === undefined ||
    run_id === undefined ||
    task_id === undefined ||
    made_at === undefined ||
    provider_id === undefined
  ) {
    return undefined;
  }
  const facts: Entry['facts'] = { run_id, task_id, made_at, cost_cu, provider_id, proof };
  return { pack, offset, length, madeAtMs, usedAtMs: madeAtMs, capability, facts };
}

const PACK_ID = /^[0-9a-z]+-[0-9a-f]+$/;

/** A record read back (its key, a tab, its output), when it is the result stored under `key`. */
function recordOf(line: string, key: string, { capability, facts }: Entry): StoredResult | undefined {
  if (!line.endsWith('\n') || line.charCodeAt(key.length) !== TAB || !line.startsWith(key)) return undefined;
  const canonical = line.slice(key.length + 1, -1);
  const output = JSON.parse(canonical) as Record<string, unknown> | null;
  if (output === null || typeof output !== 'object' || typeof output.type !== 'string' || !('data' in output)) {
    return undefined;
  }
  const { run_id, task_id, made_at, cost_cu, provider_id, proof } = facts;
  // Members in the order outputs have everywhere else (the canonical form sorts them).
  const stored: TaskOutput = { type: output.type, data: output.data };
  return {
    run_id,
    task_id,
    made_at,
    cost_cu,
    provider_id,
    proof,
    capability,
    output: stored,
    canonicalOutput: canonical,
  };
}

const TAB = 9;

/**
 * The index files of the writers that are done (those of writers alive are left alone), and the entries they hold:
 * what a compaction or a clear by capability rewrites.
 */
function finishedIndexes(
  folder: string,
  names: readonly string[],
): { active: Set<string>; folded: string[]; entries: Map<string, Entry> } {
  const active = activeWriters(folder, names);
  const folded = names.filter((name) => name.endsWith(INDEX) && !active.has(name.slice(0, -INDEX.length)));
  const entries = new Map<string, Entry>();
  readIndexes(
    folded.map((name) => safeRead(join(folder, name))),
    entries,
  );
  return { active, folded, entries };
}

/** `<host>\t<pid>`: whose an `.open` file is. */
const ownerMark = (): string => `${hostname()}\t${process.pid}`;

/** The writers whose `.open` file says they live (on another host: whose file is less than a day old). */
function activeWriters(folder: string, names: readonly string[]): Set<string> {
  const active = new Set<string>();
  for (const name of names) {
    if (!name.endsWith(OPEN)) continue;
    const path = join(folder, name);
    const [host, pid] = safeRead(path).split('\t');
    const alive = host === hostname() ? isAlive(Number(pid)) : Date.now() - (fileTime(path) ?? 0) < 24 * 60 * 60 * 1000;
    if (alive) active.add(name.slice(0, -OPEN.length));
    else rmSync(path, { force: true });
  }
  return active;
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function takeLock(folder: string): boolean {
  privateFolder(folder);
  const lock = join(folder, LOCK);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      mkdirSync(lock, { mode: 0o700 });
      return true;
    } catch {
      if (Date.now() - (fileTime(lock) ?? Date.now()) < STALE_LOCK_MS) return false;
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return false;
}

function releaseLock(folder: string): void {
  try {
    rmdirSync(join(folder, LOCK));
  } catch {
    // Gone already: a stale-lock breaker took it.
  }
}

function safeReaddir(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** The bytes of the packs in `folder`. */
function packBytes(folder: string): number {
  let bytes = 0;
  for (const name of safeReaddir(folder)) if (name.endsWith(PACK)) bytes += fileSize(join(folder, name)) ?? 0;
  return bytes;
}

function fileSize(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

function fileTime(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}
