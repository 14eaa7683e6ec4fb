// The Layer 3 `result-hash` proof: sha256 over the RFC 8785 (JCS) canonical form of `{type, data}`. The built-in
// provider makes it; the run checks a provider's against the output it received and, where it carries `input_hash`,
// against the input it sent.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { ProofStatus, TaskOutput } from '../protocol/report';

export const RESULT_HASH = 'result-hash';

/** `sha256:<hex>` of the canonical form of `{type, data}` (only those two members, as Layer 3 defines). */
export function resultHash(output: TaskOutput): string {
  const canonical = canonicalize({ type: output.type, data: output.data }) ?? '';
  return `sha256:${createHash('sha256').update(canonical, 'utf8').digest('hex')}`;
}

/** A result's proof as a result carries it (Layer 3 §3.1). */
export interface ResultProof {
  readonly method: string;
  readonly hash: string;
  readonly input_hash?: string;
}

/** A proof checked: whether it holds, and the report's violation for each of its hashes that fails. */
export interface ProofCheck {
  readonly status: ProofStatus;
  readonly violations: readonly string[];
}

const OUTPUT_HASH_FAILED = 'the result-hash proof does not match the output';
const INPUT_HASH_FAILED = "the result-hash proof's input_hash does not match the input sent";

const ABSENT: ProofCheck = Object.freeze({ status: 'absent', violations: Object.freeze([]) });
const VERIFIED: ProofCheck = Object.freeze({ status: 'verified', violations: Object.freeze([]) });

/**
 * Checks a result's proof: its `hash` against `output` and, when it carries `input_hash` and the input sent is known
 * (`input`), that against `input`. Absent when the provider sent no result-hash; a mismatch when either hash fails.
 */
export function judgeProof(
  proof: ResultProof | undefined,
  output: TaskOutput,
  input: TaskOutput | undefined,
): ProofCheck {
  if (proof?.method !== RESULT_HASH || typeof proof.hash !== 'string') return ABSENT;
  const violations: string[] = [];
  if (proof.hash !== resultHash(output)) violations.push(OUTPUT_HASH_FAILED);
  const inputHash = proof.input_hash;
  if (typeof inputHash === 'string' && input !== undefined && inputHash !== resultHash(input)) {
    violations.push(INPUT_HASH_FAILED);
  }
  return violations.length === 0 ? VERIFIED : { status: 'mismatch', violations };
}

/** judgeProof's status: whether a result's proof commits to `output` (and to `input`, when given). */
export function checkProof(proof: ResultProof | undefined, output: TaskOutput, input?: TaskOutput): ProofStatus {
  return judgeProof(proof, output, input).status;
}
