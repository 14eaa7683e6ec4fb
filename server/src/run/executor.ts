// The DAG executor (design.md §5-§7, Layer 2 §2-§5): the buyer-side orchestrator that walks a validated DAG and
// sends one Layer 1 `acmp/invoke` per task, with cancellation propagation, failure policies, deadlines, heartbeat
// liveness, transport retries, routing fallback, streaming edges and proof checks. The transports come in through
// the Connector, so the language server, the CLI and the tests drive the same code.
import { randomUUID } from 'node:crypto';
import type { DagAnalysis } from '../dag/analyze';
import type { DagDiagnostic } from '../dag/diagnostic';
import type { DagModel, TaskDeclaration } from '../dag/model';
import type { ProviderConfig } from '../protocol/settings';
import { type InputResolution, resolveInput, takesWholeOutput } from './inputs';
import { OutputStore } from './outputStore';
import { Deadlines } from './deadlines';
import { type ProofStatus, checkProof } from './proof';
import {
  ACMP_ERRORS,
  AcmpError,
  type ChunkParams,
  type HeartbeatParams,
  type InvokeParams,
  type InvokeResult,
  type TaskError,
  type TaskOutput,
  TransportError,
} from './protocol';
import { ProviderPool, acceptsCancel, livenessWindow, streamsInput, streamsOutput } from './routing';
import { ChunkSequencer } from './sequencer';
import type {
  Building,
  DagRun,
  FailurePolicy,
  ProviderConnection,
  RunEvent,
  RunOptions,
  RunReport,
  TaskReport,
  TaskState,
} from './types';

const DEFAULT_MAX_CONCURRENCY = 8;
const DEFAULT_ATTEMPTS = 3;
const DEFAULT_BACKOFF_MS = 100;
/** Layer 1 §3.1's default `timeout_ms`. */
const DEFAULT_TIMEOUT_MS = 30_000;

/** The Layer 1 invoke fields a task carries to its provider as written; `input` and the stream flags are ours. */
const CARRIED_FIELDS = [
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
const REFUSALS: readonly number[] = [ACMP_ERRORS.budget_exceeded, ACMP_ERRORS.capability_not_found];

/** `startRun` refuses a DAG with errors (design.md §5); `diagnostics` are those errors. */
export class RunRefused extends Error {
  constructor(readonly diagnostics: readonly DagDiagnostic[]) {
    const list = diagnostics.map((diagnostic) => `  ${diagnostic.code}: ${diagnostic.message}`).join('\n');
    super(`the DAG has ${diagnostics.length} error(s); fix them to run it:\n${list}`);
    this.name = 'RunRefused';
  }
}

/** Starts running the DAG; throws RunRefused at once when the analysis found errors. */
export function startRun(analysis: DagAnalysis, options: RunOptions): DagRun {
  // A file too large to analyse has no model to run: its one warning is the refusal's reason.
  const errors = analysis.diagnostics.filter((diagnostic) => diagnostic.severity === 'error' || analysis.tooLarge);
  if (errors.length > 0) throw new RunRefused(errors);
  const run = new Run(analysis.model, options);
  run.start();
  return {
    runId: run.id,
    done: run.done,
    cancel: (reason) => run.cancel(reason),
    cancelTask: (taskId, reason) => run.cancelTask(taskId, reason),
    releaseOutputs: () => run.outputs.dispose(),
  };
}

type Outcome = { readonly ok: true; readonly value: InvokeResult } | { readonly ok: false; readonly error: TaskError };
type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };
/** A RunEvent before the run stamps it. */
type EventBody = RunEvent extends infer E ? (E extends RunEvent ? Omit<E, 'run_id' | 'at'> : never) : never;

/** The provider a reused output is reported from (RunOptions.reuse). */
export const REUSED = 'reused from an earlier run';

const NOTHING = (): void => undefined;
const ENDED = Promise.resolve();
/** The lists most tasks leave empty share this one (a run keeps 10,000s of tasks: an empty array each adds up). */
const NONE: readonly never[] = Object.freeze([]);

/** One task's life in a run. */
class TaskRun {
  state: TaskState = 'pending';
  downstream: readonly TaskRun[] = NONE;
  /** Upstream tasks not completed yet; a streaming source stops counting once its stream goes live. */
  waiting = 0;
  /** The upstream whose whole output may stream into this task (a `stream_eligible` edge, Layer 2 §5). */
  streamSource: TaskRun | undefined;
  streamsTo: readonly TaskRun[] = NONE;
  /** The input streams from `streamSource`: its first chunk came and this task's provider takes input chunks. */
  streamLive = false;
  /** Called with each chunk of this task's output as it is delivered in order: the feeds of live downstream tasks. */
  chunkListeners: Set<(chunk: ChunkParams) => void> | undefined;
  /** Set once the task streams its output (an invoke with `stream: true`); kept across transport retries. */
  sequencer: ChunkSequencer | undefined;
  /** The provider refused to stream this task's output (-33007): it is asked for the whole result instead. */
  outputStreamRefused = false;
  input: InputResolution | undefined;
  /** The tasks whose outputs this task's input reads, each once. */
  readsFrom: readonly TaskRun[] = NONE;
  /** Downstream tasks that have yet to make their inputs from this task's output. */
  readers = 0;
  /** This task no longer reads its upstream outputs: it made its input, or it ended. */
  readingDone = false;
  /** The connection of the invoke in flight: where `acmp/cancel` goes. */
  inFlight: ProviderConnection | undefined;
  /** Its `timeout_ms`, once its first invoke was sent and its deadline set. */
  timeoutMs: number | undefined;
  liveness: ReturnType<typeof setTimeout> | undefined;
  /** Ends the wait for the answer of the invoke in flight (with undefined) when the task ends meanwhile. */
  interrupt: ((settled: undefined) => void) | undefined;
  private endedPromise: Promise<void> | undefined;
  private resolveEnded = NOTHING;

  providerId: string | undefined;
  error: TaskError | undefined;
  costCu: number | undefined;
  tokensUsed: number | undefined;
  proof: ProofStatus = 'absent';
  startedAt: string | undefined;
  finishedAt: string | undefined;
  violations: readonly string[] = NONE;

  constructor(
    readonly declaration: TaskDeclaration,
    readonly id: string,
    readonly wireId: string,
  ) {}

  get active(): boolean {
    return this.state === 'running';
  }

  /** Resolves once the task is terminal; made on first use, for few tasks are ever waited on so. */
  ended(): Promise<void> {
    if (this.state !== 'pending' && this.state !== 'running') return ENDED;
    return (this.endedPromise ??= new Promise((resolve) => (this.resolveEnded = resolve)));
  }

  /** Ends the waits on this task: its invoke's answer, and `ended()`. */
  wake(): void {
    this.interrupt?.(undefined);
    this.resolveEnded();
  }
}

class Run {
  readonly id: string;
  readonly done: Promise<RunReport>;
  private resolveDone: (report: RunReport) => void = NOTHING;
  /** By position in `model.tasks`. */
  private readonly tasks: readonly TaskRun[];
  private readonly pool: ProviderPool;
  private readonly policy: FailurePolicy;
  private readonly maxConcurrency: number;
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly ready: TaskRun[] = [];
  private readyHead = 0;
  private slotsUsed = 0;
  private terminal = 0;
  private advancing = false;
  private ending = false;
  private cancelledByUser = false;
  private startedAt = '';
  /** `acmp/cancel` notifications on their way: the connections close only after them. */
  private readonly sends = new Set<Promise<void>>();
  private readonly streamedEdges: { from: string; to: string }[] = [];
  private readonly deadlines = new Deadlines<TaskRun>(
    (task) =>
      this.fail(task, { code: ACMP_ERRORS.timeout, message: `no result within timeout_ms (${task.timeoutMs} ms)` }),
    (task) => task.active,
  );
  /** Whether anyone listens to events: without a listener, none is made. */
  private readonly listening: boolean;
  readonly outputs: OutputStore;

  constructor(
    private readonly model: DagModel,
    private readonly options: RunOptions,
  ) {
    this.id = options.runId ?? randomUUID();
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.pool = new ProviderPool(options.providers, options.connect);
    this.policy = options.policy ?? 'fail-fast';
    this.maxConcurrency = positiveInteger(options.maxConcurrency, DEFAULT_MAX_CONCURRENCY);
    this.attempts = positiveInteger(options.attempts, DEFAULT_ATTEMPTS);
    this.backoffMs = Math.max(0, options.backoffMs ?? DEFAULT_BACKOFF_MS);
    this.outputs = new OutputStore(options.outputMemoryBytes);
    // Fresh wire ids per run, so a provider's idempotency cache never answers from an earlier run (design.md §5), and
    // a random tag rather than the run id: Layer 1 wants them globally unique, and a client may choose run ids that
    // share a prefix (`session-run-1`, `session-run-2`) or that another buyer of the same provider uses too.
    const runTag = randomUUID();
    this.listening = options.onEvent !== undefined;
    // A DAG without errors: every task has a unique id and every edge names two tasks.
    this.tasks = model.tasks.map(
      (declaration) => new TaskRun(declaration, declaration.id!, `${declaration.id!}-${runTag}`),
    );
    this.linkDownstream();
    const readsFrom: TaskRun[] = [];
    for (const task of this.tasks) {
      const { declaration } = task;
      if (declaration.inputForm !== 'reference') continue;
      readsFrom.length = 0;
      for (let position = 0; position < declaration.referenceCount; position++) {
        const upstream = this.byId(declaration.referencedId(position))!;
        if (readsFrom.includes(upstream)) continue;
        readsFrom.push(upstream);
        upstream.readers++;
      }
      // A copy of its length (an array that grew by push keeps room for 16 more), from one reused list.
      task.readsFrom = readsFrom.slice();
    }
  }

  /** The task `id` names (its first declaration). */
  private byId(id: string): TaskRun | undefined {
    const declaration = this.model.taskById.get(id);
    return declaration === undefined ? undefined : this.tasks[declaration.index];
  }

  /**
   * Each task's downstream tasks, each once, in edge order (the edges grouped by source, then repeats skipped), and
   * the edges that may stream.
   */
  private linkDownstream(): void {
    const { edges } = this.model;
    const count = this.tasks.length;
    const targets = new Int32Array(edges.length);
    const sources = new Int32Array(edges.length);
    const starts = new Int32Array(count + 1);
    edges.forEach((edge, e) => {
      const source = this.byId(edge.from!)!;
      const target = this.byId(edge.to!)!;
      sources[e] = source.declaration.index;
      targets[e] = target.declaration.index;
      starts[sources[e] + 1]!++;
      if (
        edge.streamEligible &&
        target.streamSource === undefined &&
        takesWholeOutput(target.declaration) &&
        target.declaration.referencedId(0) === source.id
      ) {
        target.streamSource = source;
        source.streamsTo = [...source.streamsTo, target];
      }
    });
    for (let node = 0; node < count; node++) starts[node + 1]! += starts[node]!;
    const bySource = new Int32Array(edges.length);
    const filled = starts.slice(0, count);
    for (let e = 0; e < edges.length; e++) bySource[filled[sources[e]!]!++] = e;
    // By target, the last source linked to it: a repeated edge finds its own source there.
    const linkedFrom = new Int32Array(count).fill(-1);
    const downstream: TaskRun[] = [];
    for (let node = 0; node < count; node++) {
      downstream.length = 0;
      for (let k = starts[node]!; k < starts[node + 1]!; k++) {
        const target = targets[bySource[k]!]!;
        if (linkedFrom[target] === node) continue;
        linkedFrom[target] = node;
        downstream.push(this.tasks[target]!);
        this.tasks[target]!.waiting++;
      }
      if (downstream.length > 0) this.tasks[node]!.downstream = downstream.slice();
    }
  }

  start(): void {
    this.startedAt = now();
    this.emit(
      {
        type: 'run-started',
        dag_id: this.model.dagId ?? '',
        policy: this.policy,
        tasks: this.tasks.map((task) => task.id),
      },
      this.startedAt,
    );
    for (const task of this.tasks) if (task.waiting === 0) this.ready.push(task);
    // Outputs an earlier run completed: those tasks complete at once, and what depends on them may start.
    for (const [taskId, output] of Object.entries(this.options.reuse ?? {})) {
      const task = this.byId(taskId);
      if (task === undefined || task.state !== 'pending') continue;
      this.outputs.keep(task.id, output, task.readers);
      task.providerId = REUSED;
      this.finish(task, 'completed');
      for (const next of task.downstream) this.release(next);
    }
    this.advance();
  }

  cancel(reason = 'the run was cancelled'): void {
    if (this.terminal === this.tasks.length) return;
    this.cancelledByUser = true;
    for (const task of this.tasks) this.finish(task, 'cancelled', { code: ACMP_ERRORS.cancelled, message: reason });
    this.advance();
  }

  cancelTask(taskId: string, reason = 'cancelled by the user'): void {
    const task = this.byId(taskId);
    if (task === undefined) return;
    this.cancelledByUser = true;
    this.finish(task, 'cancelled', { code: ACMP_ERRORS.cancelled, message: reason });
    this.cancelDownstream(task, `cancelled with upstream task "${task.id}"`);
    this.advance();
  }

  /** Starts ready tasks while slots are free, and ends the run once every task is terminal. */
  private advance(): void {
    // A task that fails as it starts comes back here; the loop already running picks up what that changed.
    if (this.advancing) return;
    this.advancing = true;
    while (this.slotsUsed < this.maxConcurrency && this.readyHead < this.ready.length) {
      const task = this.ready[this.readyHead++]!;
      if (task.state === 'pending') this.launch(task);
    }
    this.advancing = false;
    if (this.terminal === this.tasks.length) void this.end();
  }

  private release(task: TaskRun): void {
    if (--task.waiting === 0 && task.state === 'pending') this.ready.push(task);
  }

  private launch(task: TaskRun): void {
    this.slotsUsed++;
    task.state = 'running';
    task.startedAt = now();
    const plain = (this.options.plainTasks?.[task.declaration.index] ?? task.declaration.node.value) as Record<
      string,
      unknown
    >;
    const candidates = this.pool.candidates(task.declaration.capability!);
    if (this.listening) {
      this.emit(
        {
          type: 'task-state',
          task_id: task.id,
          state: 'running',
          ...(candidates[0] === undefined ? {} : { provider_id: candidates[0].id }),
        },
        task.startedAt,
      );
    }
    void this.execute(task, plain, candidates);
  }

  /** Tries the candidate providers in order until one takes the task (design.md §6); never rejects. */
  private async execute(
    task: TaskRun,
    plain: Record<string, unknown>,
    candidates: readonly ProviderConfig[],
  ): Promise<void> {
    // Caught here rather than by a `catch` on its promise: a promise and a closure less per task.
    try {
      if (candidates.length === 0) {
        return this.fail(task, {
          code: ACMP_ERRORS.capability_not_found,
          message: `no configured provider offers capability "${task.declaration.capability}"`,
        });
      }
      if (!task.streamLive) {
        const input = this.literalInput(task, plain);
        if (!input.ok) return this.fail(task, input.error);
      }
      const refusals: TaskError[] = [];
      for (const provider of candidates) {
        // The task stays running but moves on: say where, so that no one reads the refusing provider as the one running it.
        if (provider !== candidates[0]) {
          this.emit({ type: 'task-state', task_id: task.id, state: 'running', provider_id: provider.id });
        }
        const outcome = await this.invokeAt(task, plain, provider);
        if (outcome === undefined) return;
        if (outcome.ok) return this.complete(task, outcome.value);
        // A provider that already streamed output took the task: its error is the task's.
        if (!REFUSALS.includes(outcome.error.code) || task.sequencer?.started === true) {
          return this.fail(task, outcome.error);
        }
        refusals.push({ ...outcome.error, message: `provider "${provider.id}": ${outcome.error.message}` });
      }
      const last = refusals[refusals.length - 1]!;
      this.fail(task, { ...last, message: `no provider took the task: ${refusals.map((r) => r.message).join('; ')}` });
    } catch (error) {
      this.fail(task, { code: ACMP_ERRORS.internal, message: `the executor failed: ${messageOf(error)}` });
    }
  }

  /**
   * One invoke at one provider, sent again with the same wire id on a fresh connection after a transport failure
   * (bounded, doubling backoff): a provider that honours idempotency never runs it twice. Undefined when the task
   * ended meanwhile.
   */
  private async invokeAt(
    task: TaskRun,
    plain: Record<string, unknown>,
    provider: ProviderConfig,
  ): Promise<Outcome | undefined> {
    let connection: ProviderConnection | undefined;
    let failure = '';
    for (let attempt = 0; attempt < this.attempts; attempt++) {
      if (attempt > 0 && !(await this.pause(task, this.backoffMs * 2 ** (attempt - 1)))) return undefined;
      try {
        // An open connection is taken as it is: awaiting it would cost every task a turn of the event loop's queue.
        connection =
          connection === undefined
            ? (this.pool.opened(provider) ?? (await this.pool.connection(provider)))
            : await this.pool.reconnect(provider, connection);
      } catch (error) {
        failure = messageOf(error);
        continue;
      }
      if (!task.active) return undefined;
      const input = task.streamLive ? await this.inputAt(task, plain, connection) : this.literalInput(task, plain);
      if (input === undefined) return undefined;
      if (!input.ok) return input;
      let answer = await this.send(task, plain, connection, input.input);
      if (refusedStream(task, answer)) {
        task.outputStreamRefused = true;
        task.sequencer = undefined;
        answer = await this.send(task, plain, connection, input.input);
      }
      if (!(answer instanceof TransportError)) return answer;
      if (!answer.retryable) return { ok: false, error: { code: ACMP_ERRORS.internal, message: answer.message } };
      failure = answer.message;
    }
    return {
      ok: false,
      error: {
        code: ACMP_ERRORS.internal,
        message: `provider "${provider.id}" unreachable after ${this.attempts} attempt(s): ${failure}`,
      },
    };
  }

  /** The input of `task`'s literal form or source, made once. */
  private literalInput(task: TaskRun, plain: Record<string, unknown>): InputResolution {
    if (task.input === undefined) {
      task.input = resolveInput(task.declaration, plain.input, (taskId) => this.outputs.read(taskId));
      this.doneReading(task);
    }
    return task.input;
  }

  /**
   * The input of an invoke on `connection`: undefined to stream it in from the source, else the literal input.
   * Returns undefined when the task ended while waiting for it.
   */
  private async inputAt(
    task: TaskRun,
    plain: Record<string, unknown>,
    connection: ProviderConnection,
  ): Promise<{ ok: true; input?: TaskOutput } | { ok: false; error: TaskError } | undefined> {
    const source = task.streamSource;
    if (task.streamLive && source !== undefined) {
      if (streamsInput(connection.acmp)) return { ok: true };
      // A later candidate that takes no input chunks (the first refused): it gets the whole output instead.
      if (source.active) await Promise.race([source.ended(), task.ended()]);
      if (!task.active || source.state !== 'completed') return undefined;
    }
    return this.literalInput(task, plain);
  }

  /** Sends one invoke and waits for its answer, a TransportError, or the task's end (undefined). */
  private async send(
    task: TaskRun,
    plain: Record<string, unknown>,
    connection: ProviderConnection,
    input: TaskOutput | undefined,
  ): Promise<Outcome | TransportError | undefined> {
    if (!task.active) return undefined;
    const stream =
      !task.outputStreamRefused &&
      (task.streamsTo.length > 0 || plain.stream === true) &&
      streamsOutput(connection.acmp);
    if (stream) task.sequencer ??= new ChunkSequencer();
    const params = invokeParams(task, plain, input, stream);
    // The deadline counts from the first invoke sent (Layer 1 §3.1: the window in which its result must arrive), not
    // from the provider's start-up; retries and fallbacks stay within it.
    if (task.timeoutMs === undefined) {
      task.timeoutMs =
        typeof plain.timeout_ms === 'number' && plain.timeout_ms > 0 ? plain.timeout_ms : DEFAULT_TIMEOUT_MS;
      this.deadlines.add(task, task.timeoutMs);
    }
    task.inFlight = connection;
    task.providerId = connection.providerId;
    const window = livenessWindow(connection.acmp);
    if (window !== undefined) {
      task.liveness = setTimeout(
        () =>
          this.fail(task, {
            code: ACMP_ERRORS.timeout,
            message: `provider "${connection.providerId}" went silent: no heartbeat for ${window} ms (3 × heartbeat_interval_ms)`,
          }),
        window,
      );
    }
    // One promise settles with the answer or, through `interrupt`, with the task's end, rather than a race of two.
    let stopFeed: (() => void) | undefined;
    const settled = await new Promise<Settled<InvokeResult> | undefined>((resolve) => {
      task.interrupt = resolve;
      settleWith(
        () =>
          connection.invoke(params, {
            onChunk: (chunk) => this.onChunk(task, chunk),
            onHeartbeat: (beat) => this.onHeartbeat(task, beat),
          }),
        resolve,
      );
      if (input === undefined) stopFeed = this.feed(task, connection);
    });
    task.interrupt = undefined;
    stopFeed?.();
    clearTimeout(task.liveness);
    if (task.inFlight === connection) task.inFlight = undefined;
    if (settled === undefined || !task.active) return undefined;
    if (settled.ok) return settled;
    const { error } = settled;
    if (error instanceof TransportError) return error;
    if (error instanceof AcmpError) {
      return {
        ok: false,
        error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) },
      };
    }
    return {
      ok: false,
      error: { code: ACMP_ERRORS.internal, message: `provider "${connection.providerId}": ${messageOf(error)}` },
    };
  }

  /** Forwards the source's output chunks, those delivered so far and those to come, as input chunks (Layer 2 §5). */
  private feed(task: TaskRun, connection: ProviderConnection): () => void {
    const source = task.streamSource!;
    if (!this.streamedEdges.some((edge) => edge.to === task.id)) {
      this.streamedEdges.push({ from: source.id, to: task.id });
    }
    let sending = Promise.resolve();
    const forward = (chunk: ChunkParams): void => {
      const params: ChunkParams = { task_id: task.wireId, seq: chunk.seq, chunk: chunk.chunk, final: chunk.final };
      // One after the other, so they leave in seq order; a lost connection shows as the invoke's transport failure.
      sending = sending.then(() => connection.inputChunk(params)).catch(() => undefined);
    };
    source.sequencer!.delivered.forEach(forward);
    const listeners = (source.chunkListeners ??= new Set());
    listeners.add(forward);
    return () => listeners.delete(forward);
  }

  private onChunk(task: TaskRun, chunk: ChunkParams): void {
    const sequencer = task.sequencer;
    if (!task.active || sequencer === undefined) return;
    task.liveness?.refresh();
    const first = sequencer.delivered.length === 0;
    for (const next of sequencer.accept(chunk)) {
      this.emit({ type: 'chunk', task_id: task.id, seq: next.seq, final: next.final, chunk: next.chunk });
      task.chunkListeners?.forEach((listener) => listener(next));
    }
    if (first && sequencer.delivered.length > 0) for (const target of task.streamsTo) void this.goLive(task, target);
  }

  private onHeartbeat(task: TaskRun, beat: HeartbeatParams): void {
    if (!task.active) return;
    task.liveness?.refresh();
    this.emit({
      type: 'heartbeat',
      task_id: task.id,
      ...(typeof beat.progress === 'number' ? { progress: beat.progress } : {}),
      ...(typeof beat.detail === 'string' ? { detail: beat.detail } : {}),
    });
  }

  /**
   * The source streams: `target` may start on it (once its other upstream tasks completed) when its provider takes
   * input chunks; otherwise it waits for the source's result as usual (Layer 2 §5's fallback).
   */
  private async goLive(source: TaskRun, target: TaskRun): Promise<void> {
    const provider = this.pool.candidates(target.declaration.capability!)[0];
    if (provider === undefined) return;
    const connection = await this.pool.connection(provider).catch(() => undefined);
    if (connection === undefined || !streamsInput(connection.acmp)) return;
    if (target.state !== 'pending' || !source.active) return;
    target.streamLive = true;
    this.release(target);
    this.advance();
  }

  private complete(task: TaskRun, result: InvokeResult): void {
    const output = outputOf(task, result);
    if (typeof output === 'string') {
      return this.fail(task, { code: ACMP_ERRORS.internal, message: `provider "${task.providerId}": ${output}` });
    }
    const cost = finiteOrZero(result.cost_cu);
    const tokens = finiteOrZero(result.tokens_used);
    const maxPrice = task.declaration.maxPriceCu;
    const violation = maxPrice !== undefined && cost > maxPrice;
    this.outputs.keep(task.id, output, task.readers);
    task.costCu = cost;
    task.tokensUsed = tokens;
    task.proof = checkProof(result.proof, output);
    if (violation) task.violations = [...task.violations, `cost_cu ${cost} is above max_price_cu ${maxPrice}`];
    if (task.proof === 'mismatch') {
      task.violations = [...task.violations, 'the result-hash proof does not match the output'];
    }
    if (this.listening) {
      this.emit({
        type: 'cost',
        task_id: task.id,
        cost_cu: cost,
        tokens_used: tokens,
        ...(maxPrice === undefined ? {} : { max_price_cu: maxPrice }),
        violation,
      });
    }
    this.finish(task, 'completed');
    for (const next of task.downstream) if (!(next.streamSource === task && next.streamLive)) this.release(next);
    this.advance();
  }

  private fail(task: TaskRun, error: TaskError): void {
    if (!this.finish(task, 'failed', error)) return;
    this.cancelDownstream(task, `upstream task "${task.id}" failed`);
    if (this.policy === 'fail-fast') {
      const message = `the run stopped: task "${task.id}" failed (fail-fast)`;
      for (const other of this.tasks) this.finish(other, 'cancelled', { code: ACMP_ERRORS.cancelled, message });
    }
    this.advance();
  }

  /** Cancels every task downstream of `task`, breadth first (Layer 2 §4). */
  private cancelDownstream(task: TaskRun, message: string): void {
    const queue = [...task.downstream];
    const seen = new Set(queue);
    for (let head = 0; head < queue.length; head++) {
      const next = queue[head]!;
      this.finish(next, 'cancelled', { code: ACMP_ERRORS.cancelled, message });
      for (const after of next.downstream) {
        if (!seen.has(after)) {
          seen.add(after);
          queue.push(after);
        }
      }
    }
  }

  /** Makes a task terminal, once (states go one way); an invoke still in flight gets `acmp/cancel`. */
  private finish(task: TaskRun, state: 'completed' | 'failed' | 'cancelled', error?: TaskError): boolean {
    if (task.state !== 'pending' && task.state !== 'running') return false;
    const running = task.active;
    const inFlight = task.inFlight;
    task.state = state;
    task.finishedAt = now();
    task.error = error;
    task.inFlight = undefined;
    // Its input is made again by no one: what it holds of upstream outputs may go.
    task.input = undefined;
    this.doneReading(task);
    this.terminal++;
    if (running) {
      this.slotsUsed--;
      if (task.timeoutMs !== undefined) this.deadlines.dropped();
      clearTimeout(task.liveness);
    }
    task.wake();
    if (inFlight !== undefined && acceptsCancel(inFlight.acmp)) {
      const sent: Promise<void> = settle(() =>
        inFlight.cancel({ task_id: task.wireId, ...(error === undefined ? {} : { reason: error.message }) }),
      ).then(() => void this.sends.delete(sent));
      this.sends.add(sent);
    }
    if (this.listening) {
      this.emit(
        {
          type: 'task-state',
          task_id: task.id,
          state,
          ...(task.providerId === undefined ? {} : { provider_id: task.providerId }),
          ...(error === undefined ? {} : { error }),
        },
        task.finishedAt,
      );
    }
    return true;
  }

  /** `task` reads its upstream outputs no more: they are wanted by one task fewer. */
  private doneReading(task: TaskRun): void {
    if (task.readingDone) return;
    task.readingDone = true;
    for (const upstream of task.readsFrom) {
      upstream.readers--;
      this.outputs.release(upstream.id);
    }
  }

  /** Waits `ms` before a retry; false when the task ended meanwhile. */
  private async pause(task: TaskRun, ms: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, ms))), task.ended()]);
    clearTimeout(timer);
    return task.active;
  }

  private async end(): Promise<void> {
    if (this.ending) return;
    this.ending = true;
    const finishedAt = now();
    this.deadlines.clear();
    await Promise.all(this.sends);
    await this.pool.closeAll();
    const report = this.report(finishedAt);
    this.emit({ type: 'run-finished', report });
    this.resolveDone(report);
  }

  private report(finishedAt: string): RunReport {
    const result: [string, TaskOutput][] = [];
    let costCu = 0;
    let tokensUsed = 0;
    const tasks = this.tasks.map((task): TaskReport => {
      const output = this.outputs.reported(task.id);
      if (task.state === 'completed' && task.downstream.length === 0) result.push([task.id, output!]);
      costCu += task.costCu ?? 0;
      tokensUsed += task.tokensUsed ?? 0;
      // Members set one by one, in the report's order: spreads of optional parts made objects to copy, per task.
      const entry = { task_id: task.id, state: task.state } as Building<TaskReport>;
      if (task.providerId !== undefined) entry.provider_id = task.providerId;
      if (output !== undefined) entry.output = output;
      if (task.error !== undefined) entry.error = task.error;
      if (task.costCu !== undefined) {
        entry.cost_cu = task.costCu;
        entry.tokens_used = task.tokensUsed;
      }
      entry.proof = task.proof;
      if (task.startedAt !== undefined) {
        entry.started_at = task.startedAt;
        entry.wire_task_id = task.wireId;
      }
      if (task.finishedAt !== undefined) entry.finished_at = task.finishedAt;
      if (task.violations.length > 0) entry.violations = task.violations;
      return entry;
    });
    // A failure says most; a run the user cancelled something in (a task or the whole run) is cancelled otherwise.
    const failed = this.tasks.some((task) => task.state === 'failed');
    const completed = this.tasks.every((task) => task.state === 'completed');
    return {
      dag_id: this.model.dagId ?? '',
      run_id: this.id,
      status: completed ? 'completed' : failed || !this.cancelledByUser ? 'failed' : 'cancelled',
      policy: this.policy,
      started_at: this.startedAt,
      finished_at: finishedAt,
      tasks,
      // fromEntries makes own properties, whatever the task ids (even "__proto__").
      result: Object.fromEntries(result),
      totals: { cost_cu: costCu, tokens_used: tokensUsed },
      streamed_edges: this.streamedEdges,
    };
  }

  /** `at` is the time the report gives the same change, when it gives one. */
  private emit(body: EventBody, at = now()): void {
    const listener = this.options.onEvent;
    if (listener === undefined) return;
    try {
      listener({ ...body, run_id: this.id, at });
    } catch {
      // A listener's failure must not stop the run or leave it half updated.
    }
  }
}

/** The invoke of a task: its carried fields as written (the analysis checked their types), input and flags. */
function invokeParams(
  task: TaskRun,
  plain: Record<string, unknown>,
  input: TaskOutput | undefined,
  stream: boolean,
): InvokeParams {
  const params: Record<string, unknown> = { task_id: task.wireId, capability: task.declaration.capability };
  if (input === undefined) params.input_stream = true;
  else params.input = input;
  // Plain reads: no carried field is a property of Object.prototype (a loop, not fromEntries: it is per task).
  for (const field of CARRIED_FIELDS) if (plain[field] !== undefined) params[field] = plain[field];
  if (stream) params.stream = true;
  return params as unknown as InvokeParams;
}

/** The output a result delivers, or what is wrong with it. */
function outputOf(task: TaskRun, result: InvokeResult): TaskOutput | string {
  const sequencer = task.sequencer;
  if (sequencer?.started === true && !sequencer.finished) {
    return `the output stream ended without its final chunk (${sequencer.delivered.length} chunk(s) in order)`;
  }
  if (result.output_streamed === true) {
    return sequencer?.finished === true ? sequencer.output() : 'the result says output_streamed but no stream came';
  }
  const output: unknown = result.output;
  if (output === null || typeof output !== 'object' || !('data' in output) || !('type' in output)) {
    return 'the result has no output {type, data}';
  }
  return typeof output.type === 'string' ? { type: output.type, data: output.data } : 'the output has no string type';
}

/** Calls `call` and hands the outcome of its promise (or its synchronous throw) to `done`. */
function settleWith<T>(call: () => Promise<T>, done: (settled: Settled<T>) => void): void {
  try {
    call().then(
      (value) => done({ ok: true, value }),
      (error: unknown) => done({ ok: false, error }),
    );
  } catch (error) {
    done({ ok: false, error });
  }
}

/** Calls `call` and settles its promise (or its synchronous throw) without ever rejecting. */
const settle = <T>(call: () => Promise<T>): Promise<Settled<T>> => new Promise((resolve) => settleWith(call, resolve));

/**
 * The provider refused to stream this capability's output (-33007): the invoke goes once more without `stream`, for
 * advertising output streaming does not promise it for every capability, a refusal is not an idempotent result, and
 * the edges from this task fall back to its whole result (Layer 2 §5).
 */
function refusedStream(task: TaskRun, answer: Outcome | TransportError | undefined): boolean {
  return (
    answer !== undefined &&
    !(answer instanceof TransportError) &&
    !answer.ok &&
    answer.error.code === ACMP_ERRORS.feature_unsupported &&
    task.sequencer?.started === false
  );
}

let clockMs = -1;
let clockIso = '';
/** The ISO time, formatted once per millisecond (a run of 100,000 tasks asks for it some 300,000 times). */
function now(): string {
  const ms = Date.now();
  if (ms !== clockMs) {
    clockMs = ms;
    clockIso = new Date(ms).toISOString();
  }
  return clockIso;
}
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const finiteOrZero = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
const positiveInteger = (value: number | undefined, fallback: number): number =>
  value !== undefined && Number.isInteger(value) && value > 0 ? value : fallback;
