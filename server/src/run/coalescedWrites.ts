// Messages written to a pipe from one event (and the promise callbacks it set off) go out in one system call. Each
// write to a provider's stdin (or a buyer's stdout) wakes the process at the other end; a negotiated task sends
// several messages at once (a quote to each provider, then other tasks' as answers come in), and on a loaded machine
// those wake-ups, not the bytes, were the largest cost of a message.
import type { Writable } from 'node:stream';

/**
 * Returns the call to make before each write to `stream`: it holds the writes until the current event's callbacks
 * are done (a tick, not a turn of the event loop: a lone message waits no longer than before).
 */
export function coalesceWrites(stream: Writable): () => void {
  let corked = false;
  const flush = (): void => {
    corked = false;
    stream.uncork();
  };
  return () => {
    if (corked) return;
    corked = true;
    stream.cork();
    process.nextTick(flush);
  };
}
