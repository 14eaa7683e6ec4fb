// One output stream's chunks in `seq` order (Layer 1 §3.5): early chunks wait for the gap to fill, duplicates and
// anything after the final chunk are dropped. The ordered chunks are what the executor shows, forwards and assembles.
// The early ones are held within a bound: a provider that never sends the missing seq cannot fill the buyer's memory
// until the task's deadline.
import { assembleChunks } from './chunks';
import { MAX_MESSAGE_BYTES } from './messageLimit';
import { jsonSizeWithin } from './spilledOutputs';
import type { ChunkParams } from '../protocol/acmpMessages';
import type { TaskOutput } from '../protocol/report';

/**
 * How much of a stream may wait for a missing chunk, counted as the chunks' JSON text: one message's worth, what a
 * provider may send at once anyway, so that holding back never costs more than a message could.
 */
export const MAX_EARLY_CHUNK_BYTES = MAX_MESSAGE_BYTES;

/** A chunk that came before a missing one, with its size as counted against the bound. */
interface Held {
  readonly chunk: ChunkParams;
  readonly bytes: number;
}

export class ChunkSequencer {
  /** The chunks in order, from seq 0 without a gap. */
  readonly delivered: ChunkParams[] = [];
  /** Why the stream was given up (more held ahead of a missing chunk than the bound); it takes no chunk after. */
  overflow: string | undefined;
  private readonly early = new Map<number, Held>();
  private earlyBytes = 0;

  constructor(private readonly maxEarlyBytes = MAX_EARLY_CHUNK_BYTES) {}

  /** Whether any chunk arrived, in order or not. */
  get started(): boolean {
    return this.delivered.length > 0 || this.early.size > 0;
  }

  /** Whether the final chunk was delivered: the stream is whole. */
  get finished(): boolean {
    return this.delivered[this.delivered.length - 1]?.final === true;
  }

  /** Takes a chunk as it arrived; returns the chunks it makes deliverable, in order (often none or one). */
  accept(chunk: ChunkParams): ChunkParams[] {
    const next = this.delivered.length;
    if (this.finished || this.overflow !== undefined) return [];
    if (!Number.isInteger(chunk.seq) || chunk.seq < next || this.early.has(chunk.seq)) return [];
    if (chunk.seq > next) {
      this.hold(chunk, next);
      return [];
    }
    const ready = [chunk];
    this.delivered.push(chunk);
    let held = this.early.get(next + 1);
    while (held !== undefined && !this.finished) {
      this.early.delete(held.chunk.seq);
      this.earlyBytes -= held.bytes;
      ready.push(held.chunk);
      this.delivered.push(held.chunk);
      held = this.early.get(held.chunk.seq + 1);
    }
    // Anything held past the final chunk is dropped.
    if (this.finished) this.release();
    return ready;
  }

  /** The output the delivered chunks make (meaningful once `finished`). */
  output(): TaskOutput {
    return assembleChunks(this.delivered.map((chunk) => chunk.chunk));
  }

  /** Keeps a chunk that came before the `missing` one, or gives the stream up when that would hold over the bound. */
  private hold(chunk: ChunkParams, missing: number): void {
    const bytes = jsonSizeWithin(chunk, this.maxEarlyBytes);
    if (this.earlyBytes + bytes <= this.maxEarlyBytes) {
      this.early.set(chunk.seq, { chunk, bytes });
      this.earlyBytes += bytes;
      return;
    }
    this.release();
    const mib = this.maxEarlyBytes / 1024 / 1024;
    this.overflow = `sent more than ${mib} MiB of stream chunks ahead of the missing chunk seq ${missing}`;
  }

  private release(): void {
    this.early.clear();
    this.earlyBytes = 0;
  }
}
