// One task of a durable run, as the durable step that carries it out (one `ctx.run` of the workflow): its invoke at
// the providers that may take it, in order, sent again with the same wire task id after a transport failure, and its
// answer judged by the invoke policy both drivers share (invokePolicy.ts); the invoke waits here within its
// `timeout_ms` and heartbeat liveness window (Layer 1 §3.1, §3.6). The outcome is what the journal keeps: an output above the journal's size goes to the
// output store and is kept as a reference (outputStore.ts of this folder). Streaming is not used on this driver.
// A store that cannot write or give back an output fails the task with what went wrong, as a journaled outcome: an
// error thrown from a step would make the engine send it again and again while the run waits.
import {
  type Answer,
  DEFAULT_RETRY,
  askOffer,
  internalError,
  invokeParams,
  invokeWithRetries,
  judgeResult,
  noProviderFor,
  outcomeOf,
  resultOutput,
  timedOut,
  timeoutOf,
  tryCandidates,
  wentSilent,
} from '../invokePolicy';
import { ACMP_ERRORS, AcmpError, type InvokeResult, TransportError, messageOf } from '../../protocol/acmpMessages';
import { type AskedOffer, type TaskTerms, judgeQuote, offerRequestOf } from '../negotiation';
import type { AcceptOutcome, QuoteOutcome } from './taskDeals';
import type { TaskError, TaskOutput } from '../../protocol/report';
import { type ProviderPool, acceptsCancel, livenessWindow } from '../routing';
import type { TaskDeclaration } from '../../dag/model';
import type { ProviderConfig } from '../../protocol/settings';
import { type InputResolution, resolveInput } from '../inputs';
import type { ProviderConnection } from '../types';
import type { CompletionFacts } from '../machine';
import { type JournaledOutput, OutputStoreError, keepOutput, outputOf } from './outputStore';

/** What the journal keeps of a step. `at`: when it ended, the time the machine is given with it. */
export type StepOutcome =
  | ({
      readonly ok: true;
      readonly at: string;
      readonly providerId: string;
      readonly output: JournaledOutput;
    } & CompletionFacts)
  | { readonly ok: false; readonly at: string; readonly providerId?: string; readonly error: TaskError };

export interface TaskStep {
  readonly runId: string;
  /** The task's index in the DAG: the name of its output in the store, which its id (the submitter's) cannot be. */
  readonly task: number;
  readonly wireTaskId: string;
  readonly capability: string;
  /** The task as JSON.parse makes it from the DAG's text. */
  readonly plain: Record<string, unknown>;
  /** The invoke's input, or why it could not be made: then the task fails with that, and nothing is sent. */
  readonly input: InputResolution;
  readonly maxPriceCu: number | undefined;
  readonly candidates: readonly ProviderConfig[];
  /** A refusal ends the step with the provider's own error: the workflow moves the task on (a priced task). */
  readonly refusalEnds?: true;
}

export interface StepContext {
  readonly pool: ProviderPool;
  /** Where outputs above the journal's size go. */
  readonly storeDir: string;
  readonly journalLimitBytes: number;
  /** Aborted when the run no longer wants the task (the user cancelled it): acmp/cancel goes to its provider. */
  readonly signal: AbortSignal;
}

const nowIso = (): string => new Date().toISOString();

/** Carries out one task; never rejects (a failure is an outcome the machine is told). */
export async function runTaskStep(task: TaskStep, context: StepContext): Promise<StepOutcome> {
  if (!task.input.ok) return failure(task.input.error);
  const step: ReadyStep = { ...task, input: task.input.input };
  if (step.candidates.length === 0) return failure(noProviderFor(step.capability));
  const timeoutMs = timeoutOf(step.plain);
  const deadline = Date.now() + timeoutMs;
  const taking = await tryCandidates(
    step.candidates,
    (candidate) => invokeAt(step, step.candidates[candidate]!, context, deadline, timeoutMs),
    step.refusalEnds === true ? () => false : undefined,
  );
  if (taking.ok) return completed(step, taking.provider.id, taking.value, context);
  return failure(taking.error, taking.provider?.id);
}

/** A step whose input is made. */
type ReadyStep = Omit<TaskStep, 'input'> & { readonly input: TaskOutput };

/** One provider: the invoke, sent again with the same wire id on a fresh connection after a transport failure. */
async function invokeAt(
  step: ReadyStep,
  provider: ProviderConfig,
  context: StepContext,
  deadline: number,
  timeoutMs: number,
): Promise<Answer> {
  if (context.signal.aborted) return cancelledAnswer(context);
  const answer = await invokeWithRetries(context.pool, provider, DEFAULT_RETRY, {
    send: (connection) => sendOnce(step, connection, context, deadline, timeoutMs),
    pause: async (ms) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return !context.signal.aborted;
    },
  });
  return answer ?? cancelledAnswer(context);
}

const cancelledAnswer = (context: StepContext): Answer => ({
  ok: false,
  error: { code: ACMP_ERRORS.cancelled, message: String(context.signal.reason ?? 'cancelled') },
});

/** Sends the invoke once and waits for its answer, its deadline, its liveness window or its cancellation. */
async function sendOnce(
  step: ReadyStep,
  connection: ProviderConnection,
  context: StepContext,
  deadline: number,
  timeoutMs: number,
): Promise<Answer | TransportError> {
  const params = invokeParams(step.wireTaskId, step.capability, step.plain, step.input, false);
  const window = livenessWindow(connection.acmp);
  const timers: ReturnType<typeof setTimeout>[] = [];
  let onAbort: (() => void) | undefined;
  const ended = new Promise<Answer>((resolve) => {
    timers.push(
      setTimeout(() => resolve({ ok: false, error: timedOut(timeoutMs) }), Math.max(0, deadline - Date.now())),
    );
    if (window !== undefined) {
      const silent = (): void => resolve({ ok: false, error: wentSilent(connection.providerId, window) });
      timers.push(setTimeout(silent, window));
    }
    onAbort = () => resolve(cancelledAnswer(context));
    if (context.signal.aborted) onAbort();
    else context.signal.addEventListener('abort', onAbort, { once: true });
  });
  const liveness = timers[1];
  const invoked = connection
    .invoke(params, {
      onChunk: () => liveness?.refresh(),
      onHeartbeat: () => liveness?.refresh(),
    })
    .then(
      (value): Answer => ({ ok: true, value }),
      (error: unknown) => outcomeOf(error, connection),
    );
  const first = await Promise.race([
    invoked.then((answer) => ({ fromProvider: true, answer })),
    ended.then((answer) => ({ fromProvider: false, answer })),
  ]);
  for (const timer of timers) clearTimeout(timer);
  if (onAbort !== undefined) context.signal.removeEventListener('abort', onAbort);
  // The task ended here without the provider's answer (deadline, silence, cancellation): it may stop working on it.
  if (!first.fromProvider && acceptsCancel(connection.acmp)) {
    const reason = (first.answer as { error?: TaskError }).error?.message;
    await connection
      .cancel({ task_id: step.wireTaskId, ...(reason === undefined ? {} : { reason }) })
      .catch(() => undefined);
  }
  const answer = first.answer;
  return answer;
}

function failure(error: TaskError, providerId?: string): StepOutcome {
  return { ok: false, at: nowIso(), error, ...(providerId === undefined ? {} : { providerId }) };
}

function completed(step: ReadyStep, providerId: string, result: InvokeResult, context: StepContext): StepOutcome {
  const verdict = judgeResult(providerId, result, resultOutput(result), step.maxPriceCu, step.input);
  if (!verdict.ok) return failure(verdict.error, providerId);
  let kept: JournaledOutput;
  try {
    kept = keepOutput(verdict.output, context.storeDir, step.runId, step.task, context.journalLimitBytes);
  } catch (error) {
    if (!(error instanceof OutputStoreError)) throw error;
    return failure(internalError(`provider "${providerId}" answered, but ${error.message}`), providerId);
  }
  return { ok: true, at: nowIso(), providerId, output: kept, ...verdict.facts };
}

/**
 * A quote step: `acmp/offerRequest` to each of `asked` at once, the answers that came within `timeoutMs` judged
 * (negotiation.ts `quoteAnswer`) at the step's end, which is the time the journal keeps. Never rejects.
 */
export async function askQuotes(
  pool: ProviderPool,
  asked: readonly { readonly candidate: number; readonly provider: ProviderConfig }[],
  terms: TaskTerms,
  timeoutMs: number,
): Promise<QuoteOutcome> {
  const params = offerRequestOf(terms);
  // One wait for them all, their connections' opening included.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
  const settled = await Promise.all(
    asked.map(({ provider }) =>
      Promise.race([
        Promise.resolve()
          .then(async () => askOffer(pool.opened(provider) ?? (await pool.connection(provider)), params, timeoutMs))
          .catch((error: unknown): AskedOffer => ({ ok: false, error })),
        late,
      ]),
    ),
  );
  clearTimeout(timer);
  const tsMs = Date.now();
  return {
    tsMs,
    answers: asked.map(({ candidate }, at) => ({
      candidate,
      answer: judgeQuote(settled[at]!, terms, tsMs, timeoutMs),
    })),
  };
}

/**
 * An accept step: `acmp/accept` of the journaled offer, sent again on a fresh connection after a transport failure.
 * -34003 means an earlier send of this very accept got through (its answer lost with a connection or a worker): the
 * offer's id went to this run alone. Never rejects.
 */
export async function acceptOffer(
  pool: ProviderPool,
  provider: ProviderConfig,
  offerId: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<AcceptOutcome> {
  const deadline = Date.now() + timeoutMs;
  let connection: ProviderConnection | undefined;
  let failure = '';
  for (let attempt = 0; attempt < DEFAULT_RETRY.attempts && Date.now() < deadline; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, DEFAULT_RETRY.backoffMs * 2 ** (attempt - 1)));
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      connection =
        connection === undefined
          ? (pool.opened(provider) ?? (await pool.connection(provider)))
          : await pool.reconnect(provider, connection);
      // No answer in time, or the task no longer wanted: the step ends (its outcome changes nothing once cancelled).
      const silent = new Promise<never>((_resolve, reject) => {
        const wait = Math.max(0, deadline - Date.now());
        timer = setTimeout(() => reject(new TransportError(`no answer within ${timeoutMs} ms`)), wait);
        if (signal.aborted) reject(new AcmpError(ACMP_ERRORS.cancelled, String(signal.reason ?? 'cancelled')));
        signal.addEventListener(
          'abort',
          () => reject(new AcmpError(ACMP_ERRORS.cancelled, String(signal.reason ?? 'cancelled'))),
          { once: true },
        );
      });
      await Promise.race([connection.accept({ offer_id: offerId }), silent]);
      return { ok: true, tsMs: Date.now() };
    } catch (error) {
      if (error instanceof AcmpError && error.code === ACMP_ERRORS.already_accepted) {
        return { ok: true, tsMs: Date.now(), again: true };
      }
      if (error instanceof AcmpError) return { ok: false, tsMs: Date.now(), error: errorOf(error) };
      failure = messageOf(error);
      if (error instanceof TransportError && !error.retryable) break;
    } finally {
      clearTimeout(timer);
    }
  }
  return {
    ok: false,
    tsMs: Date.now(),
    error: internalError(`provider "${provider.id}" did not answer acmp/accept: ${failure}`),
  };
}

const errorOf = (error: AcmpError): TaskError => ({
  code: error.code,
  message: error.message,
  ...(error.data === undefined ? {} : { data: error.data }),
});

/**
 * The input of a task that reads stored outputs: made inside its step, so that a replay of the run reads nothing
 * again and an output the store cannot give back fails the task (a journaled outcome) instead of the run.
 */
export function inputFromStore(
  declaration: TaskDeclaration,
  literal: unknown,
  upstream: (taskId: string) => JournaledOutput,
  storeDir: string,
): InputResolution {
  try {
    return resolveInput(declaration, literal, (taskId) => outputOf(upstream(taskId), storeDir));
  } catch (error) {
    if (!(error instanceof OutputStoreError)) throw error;
    return { ok: false, error: internalError(`its input cannot be made: ${error.message}`) };
  }
}
