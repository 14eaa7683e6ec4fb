// Layer 1 on the wire, declared once for the buyer (the executor's transports), the built-in provider and `serve`:
// the `acmp` capability, the messages and the error codes (spec/layer-1-transport.md). The payloads and errors
// themselves are the run's too, declared in protocol/report.ts.
import type { TaskError, TaskOutput } from './report';

/** The `acmp` capability a provider advertises in its MCP `initialize` answer (Layer 1 §1). */
export interface AcmpCapability {
  readonly version: string;
  readonly role?: string;
  readonly accepts: readonly string[];
  readonly emits: readonly string[];
  readonly features: {
    readonly output_streaming?: boolean;
    readonly input_streaming?: boolean;
    readonly heartbeat_interval_ms?: number;
  };
}

export const ACMP_VERSION = '0.1.0';

export const METHODS = {
  invoke: 'acmp/invoke',
  cancel: 'acmp/cancel',
  inputChunk: 'acmp/inputChunk',
  streamChunk: 'acmp/streamChunk',
  heartbeat: 'acmp/heartbeat',
  offerRequest: 'acmp/offerRequest',
  accept: 'acmp/accept',
} as const;

/** `acmp/invoke` params (Layer 1 §3.1): the task's fields, resolved to a literal input, and the Layer 1 extras. */
export interface InvokeParams {
  readonly task_id: string;
  readonly capability: string;
  /** Omitted when the input streams in through `acmp/inputChunk`. */
  readonly input?: TaskOutput;
  readonly output_type?: string;
  readonly input_tokens_est?: number;
  readonly max_price_cu?: number;
  readonly preferred_tier?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly timeout_ms?: number;
  readonly stream?: boolean;
  readonly input_stream?: boolean;
  readonly escrow_id?: string;
  readonly proof_method?: string;
}

/** The `acmp/result` of an invoke (Layer 1 §3.2). */
export interface InvokeResult {
  readonly task_id: string;
  /** Absent when `output_streamed` (the output came as chunks). */
  readonly output?: TaskOutput;
  readonly output_streamed?: boolean;
  readonly tokens_used: number;
  readonly cost_cu: number;
  readonly proof?: { readonly method: string; readonly hash: string; readonly input_hash?: string };
  readonly provider_id?: string;
}

/** `acmp/offerRequest` params (Layer 6 §2.1). */
export interface OfferRequestParams {
  readonly capability: string;
  readonly input_tokens_est?: number;
  readonly max_price_cu?: number;
  readonly max_latency_ms?: number;
  readonly preferred_tier?: string;
  readonly proof_method?: string;
  readonly challenge_window_ms?: number;
  readonly offer_valid_ms?: number;
}

/** The Offer a provider quotes (Layer 6 §2.1): single-use, valid until `valid_until_ms` (epoch ms). */
export interface Offer {
  readonly offer_id: string;
  readonly capability: string;
  readonly price_cu: number;
  readonly valid_until_ms: number;
  readonly latency_sla_ms?: number;
  readonly proof_method?: string;
  readonly challenge_window_ms?: number;
  readonly sig?: unknown;
}

/** `acmp/accept` params and its Ack (Layer 6 §2.2). */
export interface AcceptParams {
  readonly offer_id: string;
  readonly escrow_id?: string;
}
export interface AcceptResult {
  readonly offer_id: string;
  readonly escrow_id?: string;
  readonly price_cu: number;
}

/** `acmp/streamChunk` and `acmp/inputChunk` params (Layer 1 §3.4, §3.5). */
export interface ChunkParams {
  readonly task_id: string;
  readonly seq: number;
  readonly chunk: TaskOutput;
  readonly final: boolean;
}

/** `acmp/heartbeat` params (Layer 1 §3.6). */
export interface HeartbeatParams {
  readonly task_id: string;
  readonly progress?: number;
  readonly detail?: string;
}

/** `acmp/cancel` params (Layer 1 §3.7). */
export interface CancelParams {
  readonly task_id: string;
  readonly reason?: string;
}

/** The ACMP error codes (Layer 1 §3.3). */
export const ACMP_ERRORS = {
  budget_exceeded: -33001,
  capability_not_found: -33002,
  timeout: -33003,
  cancelled: -33004,
  escrow_invalid: -33005,
  proof_unsupported: -33006,
  feature_unsupported: -33007,
  internal: -33099,
  offer_not_found: -34001,
  offer_expired: -34002,
  already_accepted: -34003,
} as const;

/** JSON-RPC "Method not found": to `acmp/offerRequest`, a provider that does not negotiate (direct mode only). */
export const METHOD_NOT_FOUND = -32601;

/** A provider answered an invoke with a JSON-RPC error. */
export class AcmpError extends Error implements TaskError {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'AcmpError';
  }
}

/**
 * The connection failed before an answer came (process exited, socket closed, HTTP request failed): the invoke may
 * be sent again with the same task_id, which the provider treats as an idempotency key (Layer 1 §3.1.1), unless
 * `retryable` is false: the failure would only come again (a message over the size limit).
 */
export class TransportError extends Error {
  readonly retryable: boolean;

  constructor(message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(message, options);
    this.name = 'TransportError';
    this.retryable = options?.retryable ?? true;
  }
}

/** The message of anything thrown. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
