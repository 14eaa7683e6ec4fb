// The invoke policy both run drivers follow for one task (design.md §5-§6, Layer 1 §3): which providers may take it and
// in what order, the `acmp/invoke` it is sent as (its carried fields, the default timeout), the retries of a transport
// failure with the same wire id, the refusals that move it to the next provider, and the judgement of the answer
// (its output, cost and proof). The drivers keep what differs between them: how an invoke is sent and waited for
// (deadlines, liveness, streaming, cancels) and where an outcome goes (the machine, the journal).
import type { ProviderConfig } from '../protocol/settings';
import type { CompletionFacts } from './machine';
import { judgeProof } from './proof';
import type { TaskError, TaskOutput } from '../protocol/report';
import {
  ACMP_ERRORS,
  AcmpError,
  type InvokeParams,
  type InvokeResult,
  type OfferRequestParams,
  TransportError,
  messageOf,
} from '../protocol/acmpMessages';
import type { AskedOffer } from './negotiation';
import { type ProviderPool, negotiates } from './routing';
import type { ProviderConnection } from './types';

export const DEFAULT_ATTEMPTS = 3;
export const DEFAULT_BACKOFF_MS = 100;
/** Layer 1 §3.1's default `timeout_ms`. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** The Layer 1 invoke fields a task carries to its provider as written; `input` and the stream flags are ours. */
export const CARRIED_FIELDS = [
  'output_type',
  'input_tokens_est',
  'max_price_cu',
  'preferred_tier',
  'metadata',
  'timeout_ms',
  'escrow_id',
  'proof_method',
] as const;

/** Answers by which a provider declines a task it never started, so the next candidate may take it (design §6). */
export const REFUSALS: readonly number[] = [ACMP_ERRORS.budget_exceeded, ACMP_ERRORS.capability_not_found];

export type Failure = { readonly ok: false; readonly error: TaskError };
/** A provider's answer to an invoke: its result, or the task error it comes to. */
export type Answer = { readonly ok: true; readonly value: InvokeResult } | Failure;

const NONE: readonly never[] = Object.freeze([]);

// Choosing the providers.

/**
 * The providers that may take a task of `capability`, in the order they are tried (design.md §6): those whose
 * `capabilities` list names it, or that list none. Empty when none may: the task fails with `noProviderFor`.
 */
export function chooseProviders(pool: ProviderPool, capability: string): readonly ProviderConfig[] {
  return pool.candidates(capability);
}

export const noProviderFor = (capability: string): TaskError => ({
  code: ACMP_ERRORS.capability_not_found,
  message: `no configured provider offers capability "${capability}"`,
});

// Building the invoke.

/** The task's `timeout_ms`, a hard deadline counted from its first invoke; Layer 1's default when it has none. */
export const timeoutOf = (plain: Record<string, unknown>): number =>
  typeof plain.timeout_ms === 'number' && plain.timeout_ms > 0 ? plain.timeout_ms : DEFAULT_TIMEOUT_MS;

/**
 * The invoke of a task (`plain`: the task as JSON.parse makes it): its carried fields as written (the analysis checked
 * their types), its input (undefined: it streams in through `acmp/inputChunk`), and whether its output streams.
 * `maxPriceCu`, when given, is the `max_price_cu` it carries instead of the task's: an accepted offer's price, or the
 * ceiling a budget set (negotiation.ts).
 */
export function invokeParams(
  wireTaskId: string,
  capability: string,
  plain: Record<string, unknown>,
  input: TaskOutput | undefined,
  stream: boolean,
  maxPriceCu?: number,
): InvokeParams {
  const params: Record<string, unknown> = { task_id: wireTaskId, capability };
  if (input === undefined) params.input_stream = true;
  else params.input = input;
  // Plain reads: no carried field is a property of Object.prototype (a loop, not fromEntries: it is per task).
  for (const field of CARRIED_FIELDS) if (plain[field] !== undefined) params[field] = plain[field];
  if (maxPriceCu !== undefined) params.max_price_cu = maxPriceCu;
  if (stream) params.stream = true;
  return params as unknown as InvokeParams;
}

// Sending it: the providers in order, and the attempts at each.

/** How a driver sends one task's invoke at one provider, for `invokeWithRetries`. */
export interface InvokeAttempts {
  /** Sends the invoke once on `connection`: the answer, a transport failure, or undefined when the task ended. */
  send(connection: ProviderConnection): Promise<Answer | TransportError | undefined>;
  /** Waits `ms` before the next attempt; false when the task ended meanwhile. */
  pause(ms: number): Promise<boolean>;
}

/** How often an invoke is sent at one provider, and the pause before the first retry (it doubles with each). */
export interface RetryPolicy {
  readonly attempts: number;
  readonly backoffMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: DEFAULT_ATTEMPTS, backoffMs: DEFAULT_BACKOFF_MS };

/** The attempts a driver made already at a provider: the next one's number, and the connection that failed and why. */
export interface AttemptsMade {
  readonly attempt: number;
  readonly connection: ProviderConnection;
  readonly failure: string;
}

/**
 * One invoke at one provider, sent again with the same wire id on a fresh connection after a transport failure
 * (bounded, doubling backoff): a provider that honours idempotency never runs it twice (design.md §5). Undefined when
 * the task ended meanwhile.
 */
export async function invokeWithRetries(
  pool: ProviderPool,
  provider: ProviderConfig,
  retry: RetryPolicy,
  attempts: InvokeAttempts,
  made?: AttemptsMade,
): Promise<Answer | undefined> {
  let connection = made?.connection;
  let failure = made?.failure ?? '';
  for (let attempt = made?.attempt ?? 0; attempt < retry.attempts; attempt++) {
    if (attempt > 0 && !(await attempts.pause(retry.backoffMs * 2 ** (attempt - 1)))) return undefined;
    try {
      // An open connection is taken as it is: awaiting it would cost every task a turn of the event loop's queue.
      connection =
        connection === undefined
          ? (pool.opened(provider) ?? (await pool.connection(provider)))
          : await pool.reconnect(provider, connection);
    } catch (error) {
      failure = messageOf(error);
      continue;
    }
    const answer = await attempts.send(connection);
    if (!(answer instanceof TransportError)) return answer;
    if (!answer.retryable) return { ok: false, error: internalError(answer.message) };
    failure = answer.message;
  }
  return {
    ok: false,
    error: internalError(`provider "${provider.id}" unreachable after ${retry.attempts} attempt(s): ${failure}`),
  };
}

/**
 * Asks `connection` for an offer, unless it does not advertise quotes (Layer 1 §1: a buyer relies on no feature it
 * cannot read), waiting at most `timeoutMs`; never rejects. The caller judges what came (negotiation.ts `judgeQuote`)
 * at the time it chooses.
 */
export async function askOffer(
  connection: ProviderConnection,
  params: OfferRequestParams,
  timeoutMs: number,
): Promise<AskedOffer> {
  if (!negotiates(connection.acmp)) return 'not advertised';
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
  const asked = connection.offerRequest(params).then(
    (value): AskedOffer => ({ ok: true, value }),
    (error: unknown): AskedOffer => ({ ok: false, error }),
  );
  try {
    return await Promise.race([asked, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Where trying the candidates starts: at `candidate`, after the refusals of those before it. */
export interface CandidatesFrom {
  readonly candidate: number;
  readonly refusals: TaskError[];
}

/** What trying the candidates came to: the answer of the provider that took the task, or why none did. */
export type Taking =
  | { readonly ok: true; readonly provider: ProviderConfig; readonly value: InvokeResult }
  | { readonly ok: false; readonly provider?: ProviderConfig; readonly error: TaskError };

/**
 * Tries `candidates` (not empty) in order until one takes the task: its answer, or the error of the last refusal with
 * every refusal listed. `invokeAt` sends the invoke at one candidate (undefined: the task ended, and so does this);
 * `moveOn` tells the errors after which the next candidate is tried (the refusals, unless the driver knows better).
 */
export function tryCandidates(
  candidates: readonly ProviderConfig[],
  invokeAt: (candidate: number) => Promise<Answer>,
  moveOn?: (error: TaskError) => boolean,
  from?: CandidatesFrom,
): Promise<Taking>;
export function tryCandidates(
  candidates: readonly ProviderConfig[],
  invokeAt: (candidate: number) => Promise<Answer | undefined>,
  moveOn?: (error: TaskError) => boolean,
  from?: CandidatesFrom,
): Promise<Taking | undefined>;
export async function tryCandidates(
  candidates: readonly ProviderConfig[],
  invokeAt: (candidate: number) => Promise<Answer | undefined>,
  moveOn: (error: TaskError) => boolean = isRefusal,
  from: CandidatesFrom = { candidate: 0, refusals: [] },
): Promise<Taking | undefined> {
  const { refusals } = from;
  for (let candidate = from.candidate; candidate < candidates.length; candidate++) {
    const provider = candidates[candidate]!;
    const answer = await invokeAt(candidate);
    if (answer === undefined) return answer;
    if (answer.ok || !moveOn(answer.error)) return { ...answer, provider };
    refusals.push(refusalOf(provider, answer.error));
  }
  return { ok: false, error: noProviderTook(refusals) };
}

/** The task error when every provider tried refused it (`refusals`: not empty), each refusal listed. */
export function noProviderTook(refusals: readonly TaskError[]): TaskError {
  const last = refusals[refusals.length - 1]!;
  return { ...last, message: `no provider took the task: ${refusals.map((refusal) => refusal.message).join('; ')}` };
}

// Judging the answer.

/** Whether the provider declined a task it never started, so that the next candidate may take it. */
export const isRefusal = (error: TaskError): boolean => REFUSALS.includes(error.code);

/** A provider's refusal, named for the message that lists why no provider took the task. */
export const refusalOf = (provider: ProviderConfig, error: TaskError): TaskError => ({
  ...error,
  message: `provider "${provider.id}": ${error.message}`,
});

/** What an invoke's rejection means: the provider's error answer, a transport failure, or a fault of the provider. */
export function outcomeOf(error: unknown, connection: ProviderConnection): Failure | TransportError {
  if (error instanceof TransportError) return error;
  if (error instanceof AcmpError) {
    return {
      ok: false,
      error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) },
    };
  }
  return { ok: false, error: internalError(`provider "${connection.providerId}": ${messageOf(error)}`) };
}

/** The output `{type, data}` a result carries (not streamed), or what is wrong with it. */
export function resultOutput(result: InvokeResult): TaskOutput | string {
  const output: unknown = result.output;
  if (output === null || typeof output !== 'object' || !('data' in output) || !('type' in output)) {
    return 'the result has no output {type, data}';
  }
  return typeof output.type === 'string' ? { type: output.type, data: output.data } : 'the output has no string type';
}

/** A provider's result judged: the output it delivers, with the report's facts of it, or why it fails the task. */
export type Verdict = { readonly ok: true; readonly output: TaskOutput; readonly facts: CompletionFacts } | Failure;

/**
 * Judges the result `providerId` sent for a task: `output` is what it delivers (resultOutput, or the output a driver
 * assembled from its stream) or what is wrong with it, which fails the task. Its cost and proof are checked
 * (completionFacts; `input`: the input the task was sent, undefined when the driver does not have it): a violation is
 * reported and does not fail the task.
 */
export function judgeResult(
  providerId: string | undefined,
  result: InvokeResult,
  output: TaskOutput | string,
  maxPriceCu: number | undefined,
  input: TaskOutput | undefined,
): Verdict {
  if (typeof output === 'string') return { ok: false, error: internalError(`provider "${providerId}": ${output}`) };
  return { ok: true, output, facts: completionFacts(result, output, maxPriceCu, input) };
}

/** Whether a cost is above the task's `max_price_cu`: a protocol violation of its provider (design.md §5). */
export const aboveMaxPrice = (costCu: number, maxPriceCu: number | undefined): boolean =>
  maxPriceCu !== undefined && costCu > maxPriceCu;

/**
 * The report's facts of a completed invoke: its cost and tokens, its proof (its `input_hash` checked against `input`,
 * the input sent, when known), and the protocol violations.
 */
export function completionFacts(
  result: InvokeResult,
  output: TaskOutput,
  maxPriceCu: number | undefined,
  input: TaskOutput | undefined,
): CompletionFacts {
  const costCu = finiteOrZero(result.cost_cu);
  const proof = judgeProof(result.proof, output, input);
  let violations: readonly string[] = NONE;
  if (aboveMaxPrice(costCu, maxPriceCu)) violations = [`cost_cu ${costCu} is above max_price_cu ${maxPriceCu}`];
  if (proof.violations.length > 0) violations = [...violations, ...proof.violations];
  return { costCu, tokensUsed: finiteOrZero(result.tokens_used), proof: proof.status, violations };
}

// The task errors the policy's rules come to.

export const internalError = (message: string): TaskError => ({ code: ACMP_ERRORS.internal, message });

export const timedOut = (timeoutMs: number): TaskError => ({
  code: ACMP_ERRORS.timeout,
  message: `no result within timeout_ms (${timeoutMs} ms)`,
});

/** The provider sent neither heartbeat nor chunk within its liveness window (routing.ts `livenessWindow`). */
export const wentSilent = (providerId: string, windowMs: number): TaskError => ({
  code: ACMP_ERRORS.timeout,
  message: `provider "${providerId}" went silent: no heartbeat for ${windowMs} ms (3 × heartbeat_interval_ms)`,
});

const finiteOrZero = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
