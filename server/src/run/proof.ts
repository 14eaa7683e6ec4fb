// The Layer 3 `result-hash` proof: sha256 over the RFC 8785 (JCS) canonical form of `{type, data}`. The built-in
// provider makes it; the executor checks a provider's against the output it received.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { ProofStatus, TaskOutput } from '../protocol/report';

export const RESULT_HASH = 'result-hash';

/** `sha256:<hex>` of the canonical form of `{type, data}` (only those two members, as Layer 3 defines). */
export function resultHash(output: TaskOutput): string {
  const canonical = canonicalize({ type: output.type, data: output.data }) ?? '';
  return `sha256:${createHash('sha256').update(canonical, 'utf8').digest('hex')}`;
}

/** Whether a result's proof commits to `output`: absent when the provider sent no result-hash. */
export function checkProof(proof: { method: string; hash: string } | undefined, output: TaskOutput): ProofStatus {
  if (proof?.method !== RESULT_HASH || typeof proof.hash !== 'string') return 'absent';
  return proof.hash === resultHash(output) ? 'verified' : 'mismatch';
}
