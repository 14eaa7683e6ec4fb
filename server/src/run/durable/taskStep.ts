// One task of a durable run, as the durable step that carries it out (one `ctx.run` of the workflow): its invoke at
// the providers that may take it, in order (design.md §6), sent again with the same wire task id after a transport
// failure, within its `timeout_ms` and heartbeat liveness window (Layer 1 §3.1, §3.6), with the cost and proof checks
// of the in-memory driver. The outcome is what the journal keeps: an output above the journal's size goes to the
// output store and is kept as a reference (outputStore.ts of this folder). Streaming is not used on this driver.
// A store that cannot write or give back an output fails the task with what went wrong, as a journaled outcome: an
// error thrown from a step would make the engine send it again and again while the run waits.
import {
  CARRIED_FIELDS,
  DEFAULT_ATTEMPTS,
  DEFAULT_BACKOFF_MS,
  DEFAULT_TIMEOUT_MS,
  REFUSALS,
  completionFacts,
  outcomeOf,
  resultOutput,
} from '../executor';
import {
  ACMP_ERRORS,
  type InvokeParams,
  type InvokeResult,
  type TaskError,
  type TaskOutput,
  TransportError,
  messageOf,
} from '../protocol';
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
  if (step.candidates.length === 0) {
    return failure({
      code: ACMP_ERRORS.capability_not_found,
      message: `no configured provider offers capability "${step.capability}"`,
    });
  }
  const timeoutMs =
    typeof step.plain.timeout_ms === 'number' && step.plain.timeout_ms > 0 ? step.plain.timeout_ms : DEFAULT_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  const refusals: string[] = [];
  let last: TaskError | undefined;
  for (const provider of step.candidates) {
    const answer = await invokeAt(step, provider, context, deadline, timeoutMs);
    if (answer.ok) return completed(step, provider.id, answer.value, context);
    if (!REFUSALS.includes(answer.error.code)) return failure(answer.error, provider.id);
    last = answer.error;
    refusals.push(`provider "${provider.id}": ${answer.error.message}`);
  }
  return failure({ ...last!, message: `no provider took the task: ${refusals.join('; ')}` });
}

/** A step whose input is made. */
type ReadyStep = Omit<TaskStep, 'input'> & { readonly input: TaskOutput };

type Answer = { readonly ok: true; readonly value: InvokeResult } | { readonly ok: false; readonly error: TaskError };

/** One provider: the invoke, sent again with the same wire id on a fresh connection after a transport failure. */
async function invokeAt(
  step: ReadyStep,
  provider: ProviderConfig,
  context: StepContext,
  deadline: number,
  timeoutMs: number,
): Promise<Answer> {
  let connection: ProviderConnection | undefined;
  let lastFailure = '';
  for (let attempt = 0; attempt < DEFAULT_ATTEMPTS; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, DEFAULT_BACKOFF_MS * 2 ** (attempt - 1)));
    if (context.signal.aborted) return cancelledAnswer(context);
    try {
      connection =
        connection === undefined
          ? await context.pool.connection(provider)
          : await context.pool.reconnect(provider, connection);
    } catch (error) {
      lastFailure = messageOf(error);
      continue;
    }
    const answer = await sendOnce(step, connection, context, deadline, timeoutMs);
    if (!(answer instanceof TransportError)) return answer;
    if (!answer.retryable) return { ok: false, error: { code: ACMP_ERRORS.internal, message: answer.message } };
    lastFailure = answer.message;
  }
  return {
    ok: false,
    error: {
      code: ACMP_ERRORS.internal,
      message: `provider "${provider.id}" unreachable after ${DEFAULT_ATTEMPTS} attempt(s): ${lastFailure}`,
    },
  };
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
  const params: Record<string, unknown> = { task_id: step.wireTaskId, capability: step.capability, input: step.input };
  for (const field of CARRIED_FIELDS) if (step.plain[field] !== undefined) params[field] = step.plain[field];
  const window = livenessWindow(connection.acmp);
  const timers: ReturnType<typeof setTimeout>[] = [];
  let onAbort: (() => void) | undefined;
  const ended = new Promise<Answer>((resolve) => {
    timers.push(
      setTimeout(
        () =>
          resolve({
            ok: false,
            error: { code: ACMP_ERRORS.timeout, message: `no result within timeout_ms (${timeoutMs} ms)` },
          }),
        Math.max(0, deadline - Date.now()),
      ),
    );
    if (window !== undefined) {
      const silent = (): void =>
        resolve({
          ok: false,
          error: {
            code: ACMP_ERRORS.timeout,
            message: `provider "${connection.providerId}" went silent: no heartbeat for ${window} ms (3 × heartbeat_interval_ms)`,
          },
        });
      timers.push(setTimeout(silent, window));
    }
    onAbort = () => resolve(cancelledAnswer(context));
    if (context.signal.aborted) onAbort();
    else context.signal.addEventListener('abort', onAbort, { once: true });
  });
  const liveness = timers[1];
  const invoked = connection
    .invoke(params as unknown as InvokeParams, {
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
  const output = resultOutput(result);
  if (typeof output === 'string') {
    return failure({ code: ACMP_ERRORS.internal, message: `provider "${providerId}": ${output}` }, providerId);
  }
  let kept: JournaledOutput;
  try {
    kept = keepOutput(output, context.storeDir, step.runId, step.task, context.journalLimitBytes);
  } catch (error) {
    if (!(error instanceof OutputStoreError)) throw error;
    return failure(
      { code: ACMP_ERRORS.internal, message: `provider "${providerId}" answered, but ${error.message}` },
      providerId,
    );
  }
  return { ok: true, at: nowIso(), providerId, output: kept, ...completionFacts(result, output, step.maxPriceCu) };
}

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
    return { ok: false, error: { code: ACMP_ERRORS.internal, message: `its input cannot be made: ${error.message}` } };
  }
}
