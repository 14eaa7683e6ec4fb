// The key a completed task's result is stored under (resultStore.ts): what determines the output a provider computes.
// The resolved input is canonicalized as Layer 3 canonicalizes what it hashes (RFC 8785, JCS), so a result made from
// the same input is found however the DAG spells it (key order, whitespace, a literal or a reference that resolves
// to the same value). A task's timeout, price ceiling and streaming change how it is bought, not what it computes,
// and stay out; so do the metadata keys Layer 2 reserves for bookkeeping (`requester`, `dag_id`, `priority`).
import { hash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { TaskOutput } from '../protocol/report';

/** Bumped when what the key covers changes: results stored under an older meaning are not found. */
const KEY_FORMAT = 1;
const DEFAULT_OUTPUT_TYPE = 'json';
const BOOKKEEPING_METADATA = new Set(['requester', 'dag_id', 'priority']);

/**
 * `sha256:<hex>` over the canonical form of what determines `capability`'s output for `input`: the task's
 * `output_type` (default `json`), its `preferred_tier`, its metadata but for the bookkeeping keys, and `providerId`
 * when results are tied to the provider that made them. `canonicalInput`: the input's canonical form, when the caller
 * has it (the stored output the input is): a re-run of 10,000 cached tasks makes 10,000 keys, and walking the input
 * was most of a key's cost.
 */
export function resultKey(
  capability: string,
  input: TaskOutput,
  task: Readonly<Record<string, unknown>>,
  providerId?: string,
  canonicalInput = canonicalOutput(input),
): string {
  // The canonical form of `{capability, format, input, metadata?, output_type, preferred_tier?, provider?}`, members
  // in JCS order, made by joining the canonical forms of its members: the library walks the input alone.
  let canonical = `{"capability":${JSON.stringify(capability)},"format":${KEY_FORMAT},"input":`;
  canonical += canonicalInput;
  const metadata = computingMetadata(task.metadata);
  if (metadata !== undefined) canonical += `,"metadata":${canonicalize(metadata) ?? 'null'}`;
  const outputType = typeof task.output_type === 'string' ? task.output_type : DEFAULT_OUTPUT_TYPE;
  canonical += `,"output_type":${JSON.stringify(outputType)}`;
  if (typeof task.preferred_tier === 'string') canonical += `,"preferred_tier":${JSON.stringify(task.preferred_tier)}`;
  if (providerId !== undefined) canonical += `,"provider":${JSON.stringify(providerId)}`;
  // One call rather than a Hash object per key: a re-run of 10,000 tasks makes 10,000 keys.
  return `sha256:${hash('sha256', canonical + '}', 'hex')}`;
}

/** The canonical form (JCS) of `output`'s `{type, data}`. */
export const canonicalOutput = (output: TaskOutput): string =>
  canonicalize({ type: output.type, data: output.data }) ?? 'null';

/** The task's metadata without the bookkeeping keys; undefined when nothing else is left. */
function computingMetadata(metadata: unknown): Record<string, unknown> | undefined {
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return undefined;
  let kept: Record<string, unknown> | undefined;
  for (const [name, value] of Object.entries(metadata)) {
    if (BOOKKEEPING_METADATA.has(name)) continue;
    // No prototype: a key named `__proto__` is a key like any other.
    (kept ??= Object.create(null) as Record<string, unknown>)[name] = value;
  }
  return kept;
}
