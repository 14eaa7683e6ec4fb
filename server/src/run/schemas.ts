// Layer 1 and Layer 6 messages as zod schemas: what a transport checks in what a peer sent before trusting it (the provider
// side checks the buyer's params, the buyer side the provider's results and notifications).
import { z } from 'zod';
import type { AcmpCapability } from '../protocol/acmpMessages';

export const TaskOutputSchema = z.looseObject({ type: z.string(), data: z.unknown() });

export const InvokeParamsSchema = z.looseObject({
  task_id: z.string().min(1),
  capability: z.string(),
  input: TaskOutputSchema.optional(),
  output_type: z.string().optional(),
  input_tokens_est: z.number().optional(),
  max_price_cu: z.number().optional(),
  preferred_tier: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  timeout_ms: z.number().positive().optional(),
  stream: z.boolean().optional(),
  input_stream: z.boolean().optional(),
  escrow_id: z.string().optional(),
  proof_method: z.string().optional(),
});

export const InvokeResultSchema = z.looseObject({
  task_id: z.string(),
  output: TaskOutputSchema.optional(),
  output_streamed: z.boolean().optional(),
  tokens_used: z.number(),
  cost_cu: z.number(),
  proof: z.looseObject({ method: z.string(), hash: z.string(), input_hash: z.string().optional() }).optional(),
  provider_id: z.string().optional(),
});

/** A provider's quote (Layer 6 §2.1); `sig` is not checked (Layer 7 signatures are not verified here). */
export const OfferSchema = z.looseObject({
  offer_id: z.string().min(1),
  capability: z.string(),
  price_cu: z.number().nonnegative(),
  valid_until_ms: z.number(),
  latency_sla_ms: z.number().nonnegative().optional(),
  proof_method: z.string().optional(),
  challenge_window_ms: z.number().nonnegative().optional(),
  sig: z.unknown().optional(),
});

/** A provider's Ack of `acmp/accept` (Layer 6 §2.2). */
export const AcceptResultSchema = z.looseObject({
  offer_id: z.string(),
  escrow_id: z.string().optional(),
  price_cu: z.number().nonnegative(),
});

/** What a provider checks of a buyer's `acmp/offerRequest`. */
export const OfferRequestParamsSchema = z.looseObject({
  capability: z.string(),
  input_tokens_est: z.number().nonnegative().optional(),
  max_price_cu: z.number().optional(),
  max_latency_ms: z.number().nonnegative().optional(),
  preferred_tier: z.string().optional(),
  proof_method: z.string().optional(),
  challenge_window_ms: z.number().nonnegative().optional(),
  offer_valid_ms: z.number().positive().optional(),
});

/** What a provider checks of a buyer's `acmp/accept`. */
export const AcceptParamsSchema = z.looseObject({ offer_id: z.string(), escrow_id: z.string().optional() });

export const ChunkParamsSchema = z.looseObject({
  task_id: z.string(),
  seq: z.int().nonnegative(),
  chunk: TaskOutputSchema,
  final: z.boolean(),
});

export const HeartbeatParamsSchema = z.looseObject({
  task_id: z.string(),
  progress: z.number().optional(),
  detail: z.string().optional(),
});

export const CancelParamsSchema = z.looseObject({ task_id: z.string(), reason: z.string().optional() });

/** A malformed advertisement counts as none: a buyer relies on no feature it cannot read (Layer 1 §1). */
const AcmpCapabilitySchema = z.looseObject({
  version: z.string(),
  role: z.string().optional(),
  accepts: z.array(z.string()).catch([]),
  emits: z.array(z.string()).catch([]),
  features: z
    .looseObject({
      output_streaming: z.boolean().optional().catch(undefined),
      input_streaming: z.boolean().optional().catch(undefined),
      heartbeat_interval_ms: z.number().positive().optional().catch(undefined),
    })
    .catch({}),
});

/** The `acmp` capability of an `initialize` answer's `capabilities`, or undefined when absent or unreadable. */
export function readAcmpCapability(capabilities: unknown): AcmpCapability | undefined {
  const acmp = (capabilities as { acmp?: unknown } | null | undefined)?.acmp;
  const parsed = AcmpCapabilitySchema.safeParse(acmp);
  return parsed.success ? parsed.data : undefined;
}

/** The first problem zod found, as `path: message`, for an error a user reads. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid';
  return issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}
