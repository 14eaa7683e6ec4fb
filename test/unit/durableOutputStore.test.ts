// Outputs by reference on durable runs (run/durable/outputStore.ts): a small output stays in the journal, a large one
// goes to the store as a reference that reads back checked. Files are named by the hash of the run id and the task's
// index, never by what a submitter wrote; a key of any other form is refused; the store is private to its user; a
// run's folder goes away once untouched for the engine's retention, and a run's end keeps what its report refers to.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, test } from 'node:test';
import {
  type OutputRef,
  OutputStoreError,
  isJournaledOutput,
  isOutputRef,
  keepOutput,
  keepRunOutputs,
  outputKey,
  outputOf,
  prepareOutputStore,
  readOutputText,
  runFolderOf,
  sweepOutputStore,
} from '../../server/src/run/durable/outputStore';
import { RUN_RETENTION_MS } from '../../server/src/protocol/engineMessages';

const scratch = mkdtempSync(join(tmpdir(), 'acmp-durable-store-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let stores = 0;
/** A fresh store, made ready as a worker makes it. */
function freshStore(): string {
  const store = join(scratch, `store-${++stores}`);
  prepareOutputStore(store);
  return store;
}

const big = (data: string) => ({ type: 'text', data: data.repeat(200) });
const modeOf = (path: string) => statSync(path).mode & 0o777;
/** Every file and folder under `dir`, relative to it. */
const everything = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => relative(dir, join(dir, name)))
    .sort();

/** An assertion that a call throws the store's error, with a message that matches `message`. */
const storeError = (message: RegExp) => (error: unknown) =>
  error instanceof OutputStoreError && message.test(error.message);

function stored(output: ReturnType<typeof keepOutput>): OutputRef {
  assert.ok(isOutputRef(output), 'a reference');
  return output;
}

test('an output up to the limit stays as it is; above it, a reference to a file that reads back the same', () => {
  const store = freshStore();
  const small = { type: 'text', data: 'x'.repeat(10) };
  assert.equal(keepOutput(small, store, 'run-1', 0, 100), small);
  const large = { type: 'json', data: { text: 'é'.repeat(100) } };
  const kept = stored(keepOutput(large, store, 'run-1', 1, 100));
  assert.equal(kept.type, 'json');
  assert.equal(kept.ref.key, outputKey('run-1', 1));
  assert.equal(kept.ref.bytes, Buffer.byteLength(JSON.stringify(large)));
  assert.deepEqual(outputOf(kept, store), large);
  // Written aside and renamed: only the output's file is left.
  assert.deepEqual(everything(store), [runFolderOf('run-1'), outputKey('run-1', 1)]);
});

test('no run id can name a path: the file is the hash of the run id and the task index, inside the store', () => {
  const parent = mkdtempSync(join(scratch, 'parent-'));
  const store = join(parent, 'store');
  prepareOutputStore(store);
  for (const runId of ['../../sub/evil', '/etc/evil', '..', 'run/../../x']) {
    const kept = stored(keepOutput(big('y'), store, runId, 7, 100));
    assert.match(kept.ref.key, /^[0-9a-f]{64}\/7\.json$/);
  }
  assert.deepEqual(readdirSync(parent), ['store']);
  assert.equal(readdirSync(store).length, 4);
  assert.ok(readdirSync(store).every((name) => /^[0-9a-f]{64}$/.test(name)));
});

test('the store, its run folders and its files are private to the worker user', () => {
  const store = freshStore();
  const kept = stored(keepOutput(big('p'), store, 'run-private', 0, 100));
  assert.equal(modeOf(store), 0o700);
  assert.equal(modeOf(join(store, runFolderOf('run-private'))), 0o700);
  assert.equal(modeOf(join(store, kept.ref.key)), 0o600);
  // A store left open by an earlier worker is closed at the next worker's start.
  chmodSync(store, 0o755);
  prepareOutputStore(store);
  assert.equal(modeOf(store), 0o700);
});

test('a key not of the store form, a changed file, a missing one: refused with a message saying which', () => {
  const store = freshStore();
  const kept = stored(keepOutput(big('z'), store, 'run-2', 0, 100));
  const withKey = (key: unknown) => ({ ...kept, ref: { ...kept.ref, key } }) as OutputRef;
  const folder = runFolderOf('run-2');
  for (const key of ['../escape.json', '/etc/passwd', 'run-2/0.json', `${folder}/../0.json`, `${folder}/x.json`, 7])
    assert.throws(() => readOutputText(withKey(key), store), storeError(/is not a key of the output store/));
  assert.throws(
    () => readOutputText(withKey(`${folder}/1.json`), store),
    storeError(/is not in the output store .*24 hours after its end.*shared --store/),
  );
  writeFileSync(join(store, kept.ref.key), JSON.stringify(big('w')));
  assert.throws(() => readOutputText(kept, store), storeError(/does not match its reference/));
});

test('a store that cannot take an output says so (OutputStoreError), leaving nothing half written', () => {
  const store = freshStore();
  // A folder where the output's file goes: the rename fails, and the text written aside is removed.
  mkdirSync(join(store, outputKey('run-3', 1)), { recursive: true });
  assert.throws(
    () => keepOutput(big('a'), store, 'run-3', 1, 100),
    storeError(/the output \(\d+ bytes\) could not be written to the output store .* \(EISDIR\)/),
  );
  assert.deepEqual(readdirSync(join(store, runFolderOf('run-3'))), ['1.json']);
  // A file where the store should be.
  const blocked = join(scratch, 'a-file');
  writeFileSync(blocked, '');
  assert.throws(() => keepOutput(big('a'), blocked, 'run-3', 0, 100), storeError(/\(ENOTDIR\)/));
});

test('the sweep removes run folders untouched for the retention and nothing else; a run end keeps what it refers to', () => {
  const store = freshStore();
  const old = Date.now() - RUN_RETENTION_MS - 60_000;
  const ageFolder = (runId: string, at: number) => utimesSync(join(store, runFolderOf(runId)), at / 1000, at / 1000);
  stored(keepOutput(big('o'), store, 'run-expired', 0, 100));
  stored(keepOutput(big('f'), store, 'run-fresh', 0, 100));
  const reused = stored(keepOutput(big('r'), store, 'run-earlier', 0, 100));
  stored(keepOutput(big('e'), store, 'run-ended', 0, 100));
  for (const runId of ['run-expired', 'run-earlier', 'run-ended']) ageFolder(runId, old);
  // Not the store's: an operator's note, a folder of another name, left alone however old.
  writeFileSync(join(store, 'notes.txt'), 'mine');
  mkdirSync(join(store, 'run-by-name'));
  utimesSync(join(store, 'run-by-name'), old / 1000, old / 1000);
  // Of a run folder's name but not a folder: not the store's doing, removed.
  writeFileSync(join(store, runFolderOf('run-not-a-folder')), '');

  // The run that ended now reused an output of the earlier run: both stay as long as its report.
  keepRunOutputs(store, 'run-ended', [{ type: 'text', data: 'small' }, reused, undefined]);
  assert.equal(sweepOutputStore(store), 2);
  assert.deepEqual(
    readdirSync(store).sort(),
    [...['run-fresh', 'run-earlier', 'run-ended'].map(runFolderOf), 'notes.txt', 'run-by-name'].sort(),
  );
  assert.deepEqual(outputOf(reused, store), big('r'));
  // A task of a long run that completes refreshes the run's folder, stored output or not.
  ageFolder('run-fresh', old);
  keepOutput({ type: 'text', data: 'small' }, store, 'run-fresh', 1, 100);
  assert.equal(sweepOutputStore(store), 0);
  // A day on, everything of the store's is swept at a worker's start.
  assert.equal(sweepOutputStore(store, Date.now() + RUN_RETENTION_MS + 60_000), 3);
  assert.deepEqual(readdirSync(store).sort(), ['notes.txt', 'run-by-name']);
});

test('a value handed in as an output to reuse is an output or a reference of the store form, or neither', () => {
  const ref = { type: 'text', ref: { key: outputKey('run-4', 2), bytes: 10, sha256: 'ab' } };
  assert.ok(isJournaledOutput({ type: 'text', data: null }));
  assert.ok(isJournaledOutput(ref));
  for (const value of [
    null,
    'text',
    5,
    { data: 'no type' },
    { type: 'text', ref: null },
    { type: 'text', ref: { ...ref.ref, key: '../../etc/passwd' } },
    { type: 'text', ref: { ...ref.ref, sha256: undefined } },
  ])
    assert.equal(isJournaledOutput(value), false, JSON.stringify(value));
});
