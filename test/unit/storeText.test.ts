// What Show Result Store and Clear Result Store say: the store's summary and table, the question before clearing it
// and what went.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StoreStats } from '../../server/src/protocol/runMessages';
import { clearQuestion, clearedMessage, storeMarkdown, storeSummary } from '../../client/src/storeText';

const MIB = 1024 * 1024;
const stats: StoreStats = {
  folder: '/home/me/.cache/acmp-dag/results',
  results: 1204,
  bytes: 3.1 * MIB,
  diskBytes: 4.5 * MIB,
  oldestMadeAt: '2026-01-01T10:00:00.000Z',
  lastUsedAt: '2026-01-02T10:00:00.000Z',
  byCapability: [
    { capability: 'sentiment-analysis', results: 1200, bytes: 3 * MIB },
    { capability: 'odd|name', results: 4, bytes: 0.1 * MIB },
  ],
};
const empty: StoreStats = { folder: '/tmp/store', results: 0, bytes: 0, diskBytes: 0, byCapability: [] };

test('the summary counts the results and their size, on disk too when more, and names the folder', () => {
  assert.equal(
    storeSummary(stats),
    'Result store: 1,204 results, 3.1 MiB (4.5 MiB on disk) in /home/me/.cache/acmp-dag/results',
  );
  assert.equal(
    storeSummary({ ...stats, results: 1, diskBytes: stats.bytes }),
    'Result store: 1 result, 3.1 MiB in /home/me/.cache/acmp-dag/results',
  );
  assert.equal(storeSummary(empty), 'The result store in /tmp/store is empty.');
});

test('the details list the results by capability in a table, a pipe in a name escaped', () => {
  const markdown = storeMarkdown(stats);
  assert.match(markdown, /\| sentiment-analysis \| 1,200 \| 3 MiB \|/);
  assert.match(markdown, /\| odd\\\|name \| 4 \| 0\.1 MiB \|/);
  assert.match(markdown, /- oldest result made 2026-01-01T10:00:00\.000Z/);
  assert.doesNotMatch(storeMarkdown(empty), /\| capability \|/);
});

test('clearing asks how many results and MiB go, then says what went and what was written meanwhile', () => {
  assert.equal(clearQuestion(stats), 'Remove 1,204 stored results (4.5 MiB)?');
  assert.equal(clearedMessage(stats, 1204, empty), 'Removed 1,204 results (4.5 MiB) from the result store.');
  assert.equal(
    clearedMessage(stats, 1203, { ...empty, results: 1, diskBytes: 0.5 * MIB }),
    'Removed 1,203 results (4 MiB) from the result store. 1 result written since is left.',
  );
});
