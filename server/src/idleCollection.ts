// A minor garbage collection while the server is idle. An analysis of a 10,000-task file allocates about 10 MB, most
// of it alive until it ends (the parsed value, then the model): a scavenge during it copies all of that, about half
// of the analysis's time. Node has no idle-time collection (Chromium has), so the server asks for one itself once a
// document's diagnostics are out, and the next analysis starts with the young generation empty.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options?: { type: 'minor' | 'major' }) => void;

let collect: Collect | undefined;

/**
 * V8's `gc` (a full collection, or a minor one with `{ type: 'minor' }`), reached without a flag at Node's start: it
 * exists in a context made after the flag is set. Where the runtime has none, a function that does nothing.
 */
export function garbageCollector(): Collect {
  try {
    setFlagsFromString('--expose-gc');
    const found: unknown = runInNewContext('gc');
    if (typeof found === 'function') return found as Collect;
  } catch {
    // A runtime without it collects as it would anyway.
  }
  return () => undefined;
}

/** Collects the young generation soon, after whatever the event loop has to do now. */
export function collectYoungGarbageSoon(): void {
  collect ??= garbageCollector();
  setImmediate(collect, { type: 'minor' });
}
