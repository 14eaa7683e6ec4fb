// Outputs by reference on durable runs (run/durable/outputStore.ts): a small output stays in the journal, a large one
// goes to the store as a reference that reads back checked; a key that would lead out of the store is refused.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { isOutputRef, keepOutput, outputOf, readOutputText } from '../../server/src/run/durable/outputStore';

const store = mkdtempSync(join(tmpdir(), 'acmp-durable-store-'));
after(() => rmSync(store, { recursive: true, force: true }));

test('an output up to the limit stays as it is; above it, a reference to a file that reads back the same', () => {
  const small = { type: 'text', data: 'x'.repeat(10) };
  assert.equal(keepOutput(small, store, 'run-1/small.json', 100), small);
  const large = { type: 'json', data: { text: 'é'.repeat(100) } };
  const kept = keepOutput(large, store, 'run-1/large.json', 100);
  assert.ok(isOutputRef(kept));
  assert.deepEqual(kept.type, 'json');
  assert.equal(kept.ref.bytes, Buffer.byteLength(JSON.stringify(large)));
  assert.deepEqual(outputOf(kept, store), large);
});

test('a stored output changed on disk, missing, or keyed out of the store is refused with a message', () => {
  const kept = keepOutput({ type: 'text', data: 'y'.repeat(200) }, store, 'run-2/out.json', 100);
  assert.ok(isOutputRef(kept));
  writeFileSync(join(store, 'run-2/out.json'), JSON.stringify({ type: 'text', data: 'z'.repeat(200) }));
  assert.throws(() => readOutputText(kept, store), /does not match its reference/);
  assert.throws(
    () => readOutputText({ ...kept, ref: { ...kept.ref, key: 'run-2/gone.json' } }, store),
    /shared --store/,
  );
  assert.throws(() => readOutputText({ ...kept, ref: { ...kept.ref, key: '../escape.json' } }, store), /leads out/);
  assert.throws(() => keepOutput({ type: 'text', data: 'y'.repeat(200) }, store, '/etc/escape.json', 100), /leads out/);
});
