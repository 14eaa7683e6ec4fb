// One output stream's chunks in `seq` order (Layer 1 §3.5): early chunks wait for the gap to fill, duplicates and
// anything after the final chunk are dropped. The ordered chunks are what the executor shows, forwards and assembles.
import { assembleChunks } from './chunks';
import type { ChunkParams, TaskOutput } from './protocol';

export class ChunkSequencer {
  /** The chunks in order, from seq 0 without a gap. */
  readonly delivered: ChunkParams[] = [];
  private readonly early = new Map<number, ChunkParams>();

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
    if (this.finished || !Number.isInteger(chunk.seq) || chunk.seq < next || this.early.has(chunk.seq)) return [];
    this.early.set(chunk.seq, chunk);
    const ready: ChunkParams[] = [];
    for (let found = this.early.get(next); found !== undefined; found = this.early.get(next + ready.length)) {
      this.early.delete(found.seq);
      ready.push(found);
      this.delivered.push(found);
      if (found.final) {
        this.early.clear();
        break;
      }
    }
    return ready;
  }

  /** The output the delivered chunks make (meaningful once `finished`). */
  output(): TaskOutput {
    return assembleChunks(this.delivered.map((chunk) => chunk.chunk));
  }
}
