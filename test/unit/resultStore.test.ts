// The result store (run/resultStore.ts) in real folders: what is kept reads back the same after a reopen, and within
// the run that kept it once written; a damaged pack or index reads as misses, never as another result; the size bound evicts the results used least recently; two
// processes writing at once leave a consistent store; clearing, compacting, and the files' permissions.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { after, test } from 'node:test';
import { ResultStore, clearStore, pruneStore, storeStats } from '../../server/src/run/resultStore';
import type { StoredResult } from '../../server/src/run/types';
import { storeWriterResult } from '../support/resultStoreWriter';

const scratch = mkdtempSync(join(tmpdir(), 'acmp-result-store-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const freshFolder = (): string => mkdtempSync(join(scratch, 'store-'));

const HOUR_MS = 60 * 60 * 1000;

/** A stored result of `capability` whose output is `data`, made `agoMs` before now. */
function stored(data: string, { capability = 'echo', agoMs = 0 } = {}): StoredResult {
  return {
    run_id: 'run-1',
    task_id: `task_${data}`,
    made_at: new Date(Date.now() - agoMs).toISOString(),
    cost_cu: 0.25,
    output: { type: 'json', data: { said: data } },
    provider_id: 'builtin',
    capability,
    proof: 'verified',
  };
}

/** A result as a lookup gives it back: what was kept, with its output's canonical form. */
const asRead = (result: StoredResult): StoredResult => ({
  ...result,
  canonicalOutput: JSON.stringify({ data: result.output.data, type: result.output.type }),
});

/** Opens the store in `folder`, keeps each of `results` under its key, and closes it. */
async function keepAll(folder: string, results: Readonly<Record<string, StoredResult>>): Promise<void> {
  const store = await ResultStore.open({ folder });
  for (const [key, result] of Object.entries(results)) store.keep(key, result);
  await store.close();
  assert.equal(store.problem, undefined);
}

/** What a fresh store in `folder` finds under each of `keys` (peek: no use counted). */
async function found(folder: string, keys: readonly string[]): Promise<(StoredResult | undefined)[]> {
  const store = await ResultStore.open({ folder });
  try {
    return keys.map((key) => store.peek(key));
  } finally {
    await store.close();
  }
}

const filesEnding = (folder: string, end: string): string[] => readdirSync(folder).filter((name) => name.endsWith(end));

test('a result kept, the store closed and opened again: the lookup gives the same output and facts', async () => {
  const folder = freshFolder();
  const kept = stored('alpha', { agoMs: 5_000 });
  const store = await ResultStore.open({ folder });
  store.keep('key-alpha', kept);
  assert.deepEqual(store.lookup('key-alpha'), asRead(kept), 'found before it is written');
  await store.close();

  const reopened = await ResultStore.open({ folder });
  assert.equal(reopened.size.results, 1);
  assert.equal(reopened.madeAt('key-alpha'), kept.made_at);
  assert.deepEqual(reopened.lookup('key-alpha'), asRead(kept));
  assert.equal(reopened.lookup('key-other'), undefined);
  assert.equal(reopened.madeAt('key-other'), undefined);
  await reopened.close();
});

test('a result this store wrote after it read its own pack whole is found', async () => {
  const folder = freshFolder();
  const store = await ResultStore.open({ folder });
  const madeAt = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const large = (k: number): StoredResult => ({
    ...stored(`${k}`),
    made_at: madeAt,
    output: { type: 'text', data: `${k}:${'y'.repeat(100_000)}` },
  });
  // Eleven results of 100 KB go out in a batch of their own; forty reads of one make the store read the pack whole.
  for (let k = 0; k < 11; k++) store.keep(`key-${k}`, large(k));
  await store.written();
  for (let read = 0; read < 40; read++) assert.equal(store.lookup('key-0')?.task_id, 'task_0');
  for (let k = 11; k < 22; k++) store.keep(`key-${k}`, large(k));
  await store.written();
  assert.deepEqual(store.lookup('key-15')?.output, large(15).output);
  assert.equal(store.size.results, 22);
  await store.close();
});

test('a record whose pack was cut short or deleted reads as a miss; a record at the wrong place is never served', async () => {
  const folder = freshFolder();
  // Records of the same length, so that swapping them puts each at the other's offset.
  const aaaa = stored('aaaa');
  await keepAll(folder, { 'key-aaaa': aaaa, 'key-bbbb': stored('bbbb') });
  const [pack] = filesEnding(folder, '.pack');
  const packPath = join(folder, pack!);
  const [first, second] = readFileSync(packPath, 'utf8').split('\n');
  assert.equal(first!.length, second!.length);

  writeFileSync(packPath, `${second}\n${first}\n`);
  assert.deepEqual(await found(folder, ['key-aaaa', 'key-bbbb']), [undefined, undefined]);

  writeFileSync(packPath, `${first}\n${second}\n`);
  truncateSync(packPath, first!.length + 1 + Math.floor(second!.length / 2));
  assert.deepEqual(await found(folder, ['key-aaaa', 'key-bbbb']), [asRead(aaaa), undefined]);

  rmSync(packPath);
  assert.deepEqual(await found(folder, ['key-aaaa', 'key-bbbb']), [undefined, undefined]);
});

test('corrupt index lines are skipped; the lines around them still count', async () => {
  const folder = freshFolder();
  await keepAll(folder, { 'key-one': stored('one') });
  const [index] = filesEnding(folder, '.idx');
  const text = readFileSync(join(folder, index!), 'utf8');
  writeFileSync(
    join(folder, index!),
    [
      'R\tkey-broken\tnot a pack\t0\t10\t0\t"echo"',
      'garbage',
      'R\tkey-negative\t' + text.split('\t')[2] + '\t-5\t10\t0\t"echo"',
      'U\tkey-one\tnot a time',
      '\u0000\u0001',
    ].join('\n') +
      '\n' +
      text +
      'R\tkey-cut\t',
  );
  const store = await ResultStore.open({ folder });
  assert.equal(store.size.results, 1);
  assert.deepEqual(store.lookup('key-one')?.output, { type: 'json', data: { said: 'one' } });
  for (const key of ['key-broken', 'key-negative', 'key-cut']) assert.equal(store.lookup(key), undefined);
  await store.close();
  assert.equal(storeStats(folder).results, 1);
});

test('past its bound, the store evicts the results used least recently', async () => {
  const folder = freshFolder();
  // Made hours ago, so that a lookup now is a use the store writes down (it notes one use an hour at most).
  await keepAll(folder, {
    'key-a': stored('a', { agoMs: 3 * HOUR_MS }),
    'key-b': stored('b', { agoMs: 2.5 * HOUR_MS }),
    'key-c': stored('c', { agoMs: 2 * HOUR_MS }),
  });
  const record = storeStats(folder).bytes / 3;
  // Fits two results, not three (eviction goes down to 80% of the bound: still two).
  const maxBytes = Math.floor(record * 2.75);
  const store = await ResultStore.open({ folder, maxBytes });
  assert.equal(store.lookup('key-a')?.task_id, 'task_a');
  const pruned = await store.close();
  assert.deepEqual(pruned && { evicted: pruned.evicted, kept: pruned.kept }, { evicted: 1, kept: 2 });
  const [a, b, c] = await found(folder, ['key-a', 'key-b', 'key-c']);
  assert.equal(a?.task_id, 'task_a', 'used an hour or more after it was made: it stays');
  assert.equal(b, undefined, 'the least recently used goes');
  assert.equal(c?.task_id, 'task_c');
  assert.ok(storeStats(folder).bytes <= maxBytes);
});

test('two processes writing at once leave a store where every key reads back its own output, counted once', async () => {
  const folder = freshFolder();
  const writer = resolve(__dirname, '../support/resultStoreWriter.ts');
  // 500 results each, 250 of them the same documents.
  const writers = [0, 250].map((from) =>
    spawn(process.execPath, ['--import', 'tsx', writer, folder, String(from), '500'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    }),
  );
  const closed = writers.map((child) => new Promise((settle) => child.once('close', settle)));
  const lines = writers.map((child) => createInterface({ input: child.stdout })[Symbol.asyncIterator]());
  const next = async (k: number): Promise<string> => (await lines[k]!.next()).value as string;
  assert.deepEqual(await Promise.all([next(0), next(1)]), ['ready', 'ready']);
  for (const child of writers) child.stdin.end('go\n');
  assert.deepEqual(await Promise.all([next(0), next(1)]), ['done', 'done']);
  await Promise.all(closed);

  const store = await ResultStore.open({ folder });
  for (let k = 0; k < 750; k++) {
    const { key, result } = storeWriterResult(k);
    assert.deepEqual(store.lookup(key)?.output, result.output, `document ${k}`);
  }
  await store.close();
  const stats = storeStats(folder);
  assert.equal(stats.results, 750);
  assert.deepEqual(
    stats.byCapability.map((row) => [row.capability, row.results]),
    [['echo', 750]],
  );
  assert.equal(filesEnding(folder, '.open').length, 0, 'no writer is left marked alive');
});

test('clearing the store: everything, or the results of one capability', async () => {
  const folder = freshFolder();
  await keepAll(folder, {
    'key-e1': stored('e1'),
    'key-e2': stored('e2'),
    'key-t1': stored('t1', { capability: 'translation' }),
  });
  await keepAll(folder, { 'key-t2': stored('t2', { capability: 'translation' }) });

  assert.equal(clearStore(folder, 'echo'), 2);
  assert.deepEqual(
    storeStats(folder).byCapability.map((row) => [row.capability, row.results]),
    [['translation', 2]],
  );
  const [e1, e2, t1, t2] = await found(folder, ['key-e1', 'key-e2', 'key-t1', 'key-t2']);
  assert.deepEqual([e1, e2, t1?.task_id, t2?.task_id], [undefined, undefined, 'task_t1', 'task_t2']);
  assert.equal(clearStore(folder, 'echo'), 0);

  assert.equal(clearStore(folder), 2);
  assert.equal(storeStats(folder).results, 0);
  assert.deepEqual([...filesEnding(folder, '.pack'), ...filesEnding(folder, '.idx')], []);
  assert.deepEqual(await found(folder, ['key-t1', 'key-t2']), [undefined, undefined]);
  assert.equal(clearStore(join(folder, 'never-made')), 0);
});

test('compacting merges the index files of many runs into one; every result stays', async () => {
  const folder = freshFolder();
  const keys: string[] = [];
  for (let run = 0; run < 6; run++) {
    const key = `key-run-${run}`;
    keys.push(key);
    await keepAll(folder, { [key]: stored(`run-${run}`) });
  }
  assert.equal(filesEnding(folder, '.idx').length, 6);
  const outcome = pruneStore(folder, 1024 * 1024);
  assert.deepEqual(outcome && { evicted: outcome.evicted, kept: outcome.kept }, { evicted: 0, kept: 6 });
  assert.equal(filesEnding(folder, '.idx').length, 1);
  const results = await found(folder, keys);
  assert.deepEqual(
    results.map((result) => result?.task_id),
    keys.map((_, run) => `task_run-${run}`),
  );
});

test('a store past many index files merges them when it closes', async () => {
  const folder = freshFolder();
  for (let run = 0; run < 17; run++) await keepAll(folder, { [`key-${run}`]: stored(`${run}`) });
  assert.equal(filesEnding(folder, '.idx').length, 1);
  assert.equal(storeStats(folder).results, 17);
});

test("the store's folder is 0700 and its files 0600, those compaction writes included", async () => {
  const folder = join(freshFolder(), 'results');
  await keepAll(folder, { 'key-a': stored('a'), 'key-b': stored('b'), 'key-c': stored('c') });
  const modes = (): string[] =>
    readdirSync(folder)
      .map((name) => `${name.slice(name.lastIndexOf('.'))} ${(statSync(join(folder, name)).mode & 0o777).toString(8)}`)
      .sort();
  assert.equal((statSync(folder).mode & 0o777).toString(8), '700');
  assert.deepEqual(modes(), ['.idx 600', '.pack 600']);
  const written = readdirSync(folder);
  // Keeps one of the three: its record is copied to a pack of the compaction's own, with an index of its own.
  const outcome = pruneStore(folder, Math.floor((storeStats(folder).bytes / 3) * 1.5));
  assert.equal(outcome?.kept, 1);
  assert.deepEqual(
    readdirSync(folder).filter((name) => written.includes(name)),
    [],
    'the compaction wrote new files',
  );
  assert.deepEqual(modes(), ['.idx 600', '.pack 600']);
});
