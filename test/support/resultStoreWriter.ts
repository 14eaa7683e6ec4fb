// A run's writes to the result store as a process of its own, for the test of two writers at once: opens the store in
// FOLDER, prints `ready` and waits for a line on stdin (so that two of them start together), keeps COUNT results of
// documents FROM.. (storeWriterResult), closes the store and prints `done`, or the store's problem.
//   node --import tsx test/support/resultStoreWriter.ts FOLDER FROM COUNT
import { createInterface } from 'node:readline';
import type { TaskOutput } from '../../server/src/protocol/report';
import { resultKey } from '../../server/src/run/resultKey';
import { ResultStore } from '../../server/src/run/resultStore';
import type { StoredResult } from '../../server/src/run/types';

/** A few KiB each, so that a writer's results go out in several batches. */
const FILLER = 'x'.repeat(4096);

/** The key and the result of document `k`: the same whichever writer keeps it, so that any copy reads back right. */
export function storeWriterResult(k: number): { key: string; result: StoredResult } {
  const input: TaskOutput = { type: 'text', data: `document ${k}` };
  return {
    key: resultKey('echo', input, {}),
    result: {
      run_id: 'run-writer',
      task_id: `task_${k}`,
      made_at: new Date().toISOString(),
      cost_cu: 0.001,
      output: { type: 'text', data: `${k}:${FILLER}` },
      provider_id: 'builtin',
      capability: 'echo',
      proof: 'verified',
    },
  };
}

async function main(): Promise<void> {
  const [folder, from, count] = process.argv.slice(2);
  const store = await ResultStore.open({ folder: folder! });
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once('line', () => resolve()));
  for (let k = Number(from); k < Number(from) + Number(count); k++) {
    const { key, result } = storeWriterResult(k);
    store.keep(key, result);
    // A turn of the event loop now and then: the batches written so far go out while the other writer writes.
    if (k % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await store.close();
  process.stdout.write(store.problem === undefined ? 'done\n' : `problem: ${store.problem}\n`);
}

if (require.main === module) void main();
