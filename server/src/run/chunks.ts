// How stream chunks make one output, declared once: the built-in provider streams by this rule and the executor
// reassembles by it, so streaming never changes a result. Layer 1 leaves the composition to the capability; ours:
// strings concatenate, arrays concatenate, anything else becomes the array of the chunks' data.
import type { TaskOutput } from '../protocol/report';

export function assembleChunks(chunks: readonly TaskOutput[]): TaskOutput {
  const type = chunks[0]?.type ?? 'json';
  const data = chunks.map((chunk) => chunk.data);
  if (data.length > 0 && data.every((part) => typeof part === 'string')) return { type, data: data.join('') };
  if (data.length > 0 && data.every(Array.isArray)) return { type, data: data.flat(1) };
  return { type, data };
}
