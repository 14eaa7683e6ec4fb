// The run state machine (design.md §5, Layer 2 §2-§4): which tasks are ready, which may start under the concurrency
// cap, the one-way task states, BFS cancellation downstream, the failure policies, reuse of earlier outputs, and the
// facts the run report gives. It does no I/O and keeps no time: events come in as method calls, commands go out as
// synchronous calls of the driver's `MachineCommands`, and times come in with the events. Drivers carry out the
// commands: the in-memory driver (executor.ts) invokes providers directly; a durable driver journals the events.
//
// How a driver uses it:
// - `new RunMachine(model, options, commands)`, then `start(at, reused)`: the machine calls `commands.launch(task)` for
//   each task that may start now (tasks are numbered by their position in `model.tasks`).
// - For a launched task the driver invokes a provider (routing, fallback, transport retries, deadlines, heartbeats,
//   streaming and proof checks are the driver's) and reports the outcome: `providerChosen` when it sends to a
//   provider, then `completed(task, at, facts)` once its output is kept where the driver keeps outputs, or
//   `failed(task, error, at)`, or `notCovered(task, error, at)` when the run's budget cannot cover it (it ends
//   cancelled without having started). The user's `cancelTask` / `cancelRun` come in the same way; `streamLive` lets
//   a streaming target start before its source completed (Layer 2 §5).
// - Each event may call back, before it returns: `launch` for tasks that may start now, `settled` for each task that
//   became terminal (in the order it did; a task that was running may have an invoke in flight, which the driver
//   cancels with `acmp/cancel` unless the settling event was that invoke's own outcome), and `finished` once every
//   task is terminal, after which `report` makes the run report. A command must not feed an event back synchronously,
//   except `launch`, which may report at once that the task failed (e.g. its input does not resolve).
// - Replay: a new machine fed the same events in the same order issues the same commands in the same order; it holds
//   no outputs (the driver resolves inputs from where it keeps them, and `report` asks for them), so replaying is
//   cheap whatever the outputs' sizes. `MachineEvent` and `apply` give the events as data, `recordCommands` the
//   commands as a list, for drivers that journal them.
import type { DagModel } from '../dag/model';
import { takesWholeOutput } from './inputs';
import type {
  ProofStatus,
  TaskError,
  TaskOutput,
  FailurePolicy,
  RunReport,
  TaskReport,
  TaskState,
} from '../protocol/report';
import { ACMP_ERRORS } from '../protocol/acmpMessages';
import type { Building } from './types';

export const DEFAULT_MAX_CONCURRENCY = 8;

/** The provider a reused output is reported from (RunOptions.reuse). */
export const REUSED = 'reused from an earlier run';

export type TerminalState = 'completed' | 'failed' | 'cancelled';

/** What the machine asks of its driver; each call is synchronous, made inside the event that caused it. */
export interface MachineCommands {
  /** The task is running now: invoke it (and report its outcome with `completed` or `failed`). */
  launch(task: number): void;
  /**
   * The task became terminal. `wasRunning`: it was running, so an invoke of it may be in flight; send `acmp/cancel`
   * unless this change is that invoke's own outcome. Upstream outputs it had yet to read are no longer wanted by it.
   */
  settled(task: number, state: TerminalState, error: TaskError | undefined, wasRunning: boolean): void;
  /** Every task is terminal: the run may end (close connections, then `report`). Called once. */
  finished(): void;
}

export interface MachineOptions {
  readonly policy?: FailurePolicy;
  /** Tasks running at most (default 8). */
  readonly maxConcurrency?: number;
}

/** The facts of a completed invoke the report gives (the output itself stays with the driver). */
export interface CompletionFacts {
  readonly costCu: number;
  readonly tokensUsed: number;
  readonly proof: ProofStatus;
  /** Protocol violations the provider committed (e.g. cost above max_price_cu); empty when none. */
  readonly violations: readonly string[];
}

/** What `report` needs besides the machine's own facts. */
export interface ReportInputs {
  readonly runId: string;
  readonly finishedAt: string;
  /** The output of a completed task, from wherever the driver keeps it; undefined for the others. */
  outputOf(task: number): TaskOutput | undefined;
  /** The Layer 1 task_id the run sent for a task it started. */
  wireTaskId(task: number): string;
  readonly streamedEdges: RunReport['streamed_edges'];
  /** The offers a task received, where it was quoted. */
  offersOf?(task: number): TaskReport['offers'];
  /** The terms it went to its provider under, where the driver priced it. */
  acceptedOf?(task: number): TaskReport['accepted'];
  /** Where its output came from, when the result store had it. */
  cachedOf?(task: number): TaskReport['cached'];
}

/** A command as data (`recordCommands`). */
export type MachineCommand =
  | { readonly type: 'launch'; readonly task: number }
  | {
      readonly type: 'settled';
      readonly task: number;
      readonly state: TerminalState;
      readonly error: TaskError | undefined;
      readonly wasRunning: boolean;
    }
  | { readonly type: 'finished' };

/** An event as data, for drivers that journal the events and rebuild the machine by replaying them (`apply`). */
export type MachineEvent =
  | { readonly type: 'start'; readonly at: string; readonly reused: readonly number[] }
  | { readonly type: 'provider-chosen'; readonly task: number; readonly providerId: string }
  | { readonly type: 'completed'; readonly task: number; readonly at: string; readonly facts: CompletionFacts }
  | { readonly type: 'failed'; readonly task: number; readonly error: TaskError; readonly at: string }
  | { readonly type: 'not-covered'; readonly task: number; readonly error: TaskError; readonly at: string }
  | { readonly type: 'cancel-task'; readonly task: number; readonly reason: string; readonly at: string }
  | { readonly type: 'cancel-run'; readonly reason: string; readonly at: string }
  | { readonly type: 'stream-live'; readonly task: number; readonly at: string };

/** MachineCommands that append to `into`, for drivers (and tests) that want the commands as a list. */
export function recordCommands(into: MachineCommand[]): MachineCommands {
  return {
    launch: (task) => void into.push({ type: 'launch', task }),
    settled: (task, state, error, wasRunning) => void into.push({ type: 'settled', task, state, error, wasRunning }),
    finished: () => void into.push({ type: 'finished' }),
  };
}

// Task states as small numbers in one typed array: a run keeps 10,000s of tasks, an object each adds up.
const PENDING = 0;
const RUNNING = 1;
const COMPLETED = 2;
const FAILED = 3;
const CANCELLED = 4;
const STATE_NAMES: readonly TaskState[] = ['pending', 'running', 'completed', 'failed', 'cancelled'];
const PROOF_NAMES: readonly ProofStatus[] = ['absent', 'verified', 'mismatch'];
const NONE: readonly never[] = Object.freeze([]);

export class RunMachine {
  readonly policy: FailurePolicy;
  readonly maxConcurrency: number;
  /** Tasks in the run; a task is its position in `model.tasks`. */
  readonly size: number;
  private readonly states: Uint8Array;
  /** Upstream tasks not completed yet; a streaming source stops counting once its stream goes live. */
  private readonly waiting: Int32Array;
  /** Each task's downstream tasks, each once, in edge order: `downstream[downStart[t] .. downStart[t + 1]]`. */
  private readonly downStart: Int32Array;
  private readonly downstream: Int32Array;
  /** By target, the upstream whose whole output may stream into it (a `stream_eligible` edge), or -1. */
  private readonly streamSources: Int32Array;
  /** By source, the tasks it may stream into; most have none. */
  private readonly streamTargets = new Map<number, number[]>();
  /** By target: its input streams from its source, whose stream went live before it completed. */
  private readonly streamLiveFlags: Uint8Array;
  /** Tasks whose upstream tasks all completed, in the order they did; those not pending when reached are skipped. */
  private readonly ready: Int32Array;
  private readyHead = 0;
  private readyTail = 0;
  private slotsUsed = 0;
  private terminal = 0;
  private advancing = false;
  private done = false;
  private cancelledByUser = false;
  /** Some task did not start because the run's budget could not cover it. */
  private stoppedOnBudget = false;
  private startedAt = '';
  // The report's facts, by task; most stay unset until the task gets there.
  private readonly providerIds: (string | undefined)[];
  private readonly errors: (TaskError | undefined)[];
  private readonly startTimes: (string | undefined)[];
  private readonly finishTimes: (string | undefined)[];
  private readonly costs: Float64Array;
  private readonly tokens: Float64Array;
  /** Tasks with a cost (completed by an invoke); reused tasks have none. */
  private readonly costed: Uint8Array;
  private readonly proofs: Uint8Array;
  private readonly violations = new Map<number, readonly string[]>();

  constructor(
    private readonly model: DagModel,
    options: MachineOptions,
    private readonly commands: MachineCommands,
  ) {
    this.policy = options.policy ?? 'fail-fast';
    this.maxConcurrency = positiveInteger(options.maxConcurrency, DEFAULT_MAX_CONCURRENCY);
    const count = model.tasks.length;
    this.size = count;
    this.states = new Uint8Array(count);
    this.waiting = new Int32Array(count);
    this.streamSources = new Int32Array(count).fill(-1);
    this.streamLiveFlags = new Uint8Array(count);
    this.ready = new Int32Array(count);
    this.providerIds = new Array<string | undefined>(count).fill(undefined);
    this.errors = new Array<TaskError | undefined>(count).fill(undefined);
    this.startTimes = new Array<string | undefined>(count).fill(undefined);
    this.finishTimes = new Array<string | undefined>(count).fill(undefined);
    this.costs = new Float64Array(count);
    this.tokens = new Float64Array(count);
    this.costed = new Uint8Array(count);
    this.proofs = new Uint8Array(count);
    [this.downStart, this.downstream] = this.linkDownstream();
  }

  /** The task `id` names (its first declaration), or undefined. */
  taskOf(id: string): number | undefined {
    return this.model.taskById.get(id)?.index;
  }

  /** The id of a task (a DAG without errors: every task has one). */
  idOf(task: number): string {
    return this.model.tasks[task]!.id!;
  }

  stateOf(task: number): TaskState {
    return STATE_NAMES[this.states[task]!]!;
  }

  isRunning(task: number): boolean {
    return this.states[task] === RUNNING;
  }

  isPending(task: number): boolean {
    return this.states[task] === PENDING;
  }

  /** The provider the task was last sent to (or REUSED), if any. */
  providerOf(task: number): string | undefined {
    return this.providerIds[task];
  }

  /** The time the task started running (the `at` of the event that launched it), if it did. */
  startTimeOf(task: number): string | undefined {
    return this.startTimes[task];
  }

  /** The time the task became terminal, if it did. */
  finishTimeOf(task: number): string | undefined {
    return this.finishTimes[task];
  }

  /** Whether every task is terminal. */
  get isFinished(): boolean {
    return this.terminal === this.size;
  }

  /** The tasks that depend on `task`, each once, in edge order. */
  downstreamOf(task: number): Int32Array {
    return this.downstream.subarray(this.downStart[task], this.downStart[task + 1]);
  }

  /** The upstream task whose output may stream into `task` (Layer 2 §5), or -1. */
  streamSourceOf(task: number): number {
    return this.streamSources[task]!;
  }

  /** The tasks `task`'s output may stream into. */
  streamTargetsOf(task: number): readonly number[] {
    return this.streamTargets.get(task) ?? NONE;
  }

  /** Whether `task`'s input streams from its source (its stream went live while the source ran). */
  isStreamLive(task: number): boolean {
    return this.streamLiveFlags[task] === 1;
  }

  /** Starts the run at `at`: `reused` tasks (outputs of an earlier run, kept by the driver) complete at once. */
  start(at: string, reused: Iterable<number> = NONE): void {
    this.startedAt = at;
    for (let task = 0; task < this.size; task++) if (this.waiting[task] === 0) this.ready[this.readyTail++] = task;
    for (const task of reused) {
      if (this.states[task] !== PENDING) continue;
      this.providerIds[task] = REUSED;
      this.settle(task, COMPLETED, undefined, at);
      this.releaseDownstream(task);
    }
    this.advance(at);
  }

  /** The driver sends `task`'s invoke to `providerId` (again on a fallback): the report names it. */
  providerChosen(task: number, providerId: string): void {
    if (this.states[task] === RUNNING) this.providerIds[task] = providerId;
  }

  /** A running task's invoke delivered its output (kept by the driver). False when the task had ended meanwhile. */
  completed(task: number, at: string, facts: CompletionFacts): boolean {
    if (this.states[task] !== RUNNING) return false;
    this.costs[task] = facts.costCu;
    this.tokens[task] = facts.tokensUsed;
    this.costed[task] = 1;
    this.proofs[task] = PROOF_NAMES.indexOf(facts.proof);
    if (facts.violations.length > 0) this.violations.set(task, facts.violations);
    this.settle(task, COMPLETED, undefined, at);
    const source = task;
    for (let k = this.downStart[task]!; k < this.downStart[task + 1]!; k++) {
      const next = this.downstream[k]!;
      // A target its stream already released does not wait for the result.
      if (!(this.streamSources[next] === source && this.streamLiveFlags[next] === 1)) this.release(next);
    }
    this.advance(at);
    return true;
  }

  /** A task failed: what depends on it is cancelled, and under fail-fast every other task. False if it had ended. */
  failed(task: number, error: TaskError, at: string): boolean {
    if (!this.settle(task, FAILED, error, at)) return false;
    const id = this.idOf(task);
    this.cancelDownstream(task, `upstream task "${id}" failed`, at);
    if (this.policy === 'fail-fast') {
      const cancelled = { code: ACMP_ERRORS.cancelled, message: `the run stopped: task "${id}" failed (fail-fast)` };
      for (let other = 0; other < this.size; other++) this.settle(other, CANCELLED, cancelled, at);
    }
    this.advance(at);
    return true;
  }

  /**
   * The run's budget cannot cover a running task before its invoke was sent: it ends cancelled as if it never started
   * (`error` says why), and what depends on it goes as the failure policy says (under fail-fast, every other task).
   * False if it had ended.
   */
  notCovered(task: number, error: TaskError, at: string): boolean {
    if (this.states[task] !== RUNNING) return false;
    this.stoppedOnBudget = true;
    this.startTimes[task] = undefined;
    this.providerIds[task] = undefined;
    this.settle(task, CANCELLED, error, at);
    const id = this.idOf(task);
    this.cancelDownstream(task, `upstream task "${id}" did not start: the run's budget could not cover it`, at);
    if (this.policy === 'fail-fast') {
      const cancelled = {
        code: ACMP_ERRORS.cancelled,
        message: `the run stopped on its budget: task "${id}" could not be covered (fail-fast)`,
      };
      for (let other = 0; other < this.size; other++) this.settle(other, CANCELLED, cancelled, at);
    }
    this.advance(at);
    return true;
  }

  /** The user cancels a task and everything downstream of it (BFS); completed upstream results stay. */
  cancelTask(task: number, reason: string, at: string): void {
    this.cancelledByUser = true;
    this.settle(task, CANCELLED, { code: ACMP_ERRORS.cancelled, message: reason }, at);
    this.cancelDownstream(task, `cancelled with upstream task "${this.idOf(task)}"`, at);
    this.advance(at);
  }

  /** The user cancels every task not terminal yet. */
  cancelRun(reason: string, at: string): void {
    if (this.terminal === this.size) return;
    this.cancelledByUser = true;
    const error = { code: ACMP_ERRORS.cancelled, message: reason };
    for (let task = 0; task < this.size; task++) this.settle(task, CANCELLED, error, at);
    this.advance(at);
  }

  /**
   * `source` delivered its first output chunk and `target`'s provider takes input chunks: `target` may start on the
   * stream (once its other upstream tasks completed). False when either had moved on meanwhile.
   */
  streamLive(target: number, at: string): boolean {
    const source = this.streamSources[target]!;
    if (source < 0 || this.states[target] !== PENDING || this.states[source] !== RUNNING) return false;
    if (this.streamLiveFlags[target] === 1) return false;
    this.streamLiveFlags[target] = 1;
    this.release(target);
    this.advance(at);
    return true;
  }

  /** Feeds one event given as data (MachineEvent) to its method. */
  apply(event: MachineEvent): void {
    switch (event.type) {
      case 'start':
        return this.start(event.at, event.reused);
      case 'provider-chosen':
        return this.providerChosen(event.task, event.providerId);
      case 'completed':
        return void this.completed(event.task, event.at, event.facts);
      case 'failed':
        return void this.failed(event.task, event.error, event.at);
      case 'not-covered':
        return void this.notCovered(event.task, event.error, event.at);
      case 'cancel-task':
        return this.cancelTask(event.task, event.reason, event.at);
      case 'cancel-run':
        return this.cancelRun(event.reason, event.at);
      case 'stream-live':
        return void this.streamLive(event.task, event.at);
    }
  }

  /** The run report (design.md §7), once `finished` was called. */
  report(inputs: ReportInputs): RunReport {
    const result: [string, TaskOutput][] = [];
    let costCu = 0;
    let tokensUsed = 0;
    let cachedTasks = 0;
    let savedCu = 0;
    let failed = false;
    let completed = true;
    const tasks = new Array<TaskReport>(this.size);
    for (let task = 0; task < this.size; task++) {
      const id = this.idOf(task);
      const state = this.states[task]!;
      const output = state === COMPLETED ? inputs.outputOf(task) : undefined;
      if (state === COMPLETED && this.downStart[task] === this.downStart[task + 1]) result.push([id, output!]);
      if (state === FAILED) failed = true;
      if (state !== COMPLETED) completed = false;
      // Members set one by one, in the report's order: spreads of optional parts made objects to copy, per task.
      const entry = { task_id: id, state: STATE_NAMES[state] } as Building<TaskReport>;
      const providerId = this.providerIds[task];
      if (providerId !== undefined) entry.provider_id = providerId;
      if (output !== undefined) entry.output = output;
      const error = this.errors[task];
      if (error !== undefined) entry.error = error;
      if (this.costed[task] === 1) {
        costCu += this.costs[task]!;
        tokensUsed += this.tokens[task]!;
        entry.cost_cu = this.costs[task];
        entry.tokens_used = this.tokens[task];
      }
      entry.proof = PROOF_NAMES[this.proofs[task]!]!;
      const startedAt = this.startTimes[task];
      if (startedAt !== undefined) {
        entry.started_at = startedAt;
        entry.wire_task_id = inputs.wireTaskId(task);
      }
      const finishedAt = this.finishTimes[task];
      if (finishedAt !== undefined) entry.finished_at = finishedAt;
      const violations = this.violations.get(task);
      if (violations !== undefined) entry.violations = violations;
      const offers = inputs.offersOf?.(task);
      if (offers !== undefined) entry.offers = offers;
      const accepted = inputs.acceptedOf?.(task);
      if (accepted !== undefined) entry.accepted = accepted;
      const cached = inputs.cachedOf?.(task);
      if (cached !== undefined) {
        entry.cached = cached;
        cachedTasks++;
        savedCu += cached.cost_cu;
      }
      tasks[task] = entry;
    }
    return {
      dag_id: this.model.dagId ?? '',
      run_id: inputs.runId,
      // A failure says most; a run the user cancelled something in (a task or the whole run), or that stopped on its
      // budget, is cancelled otherwise.
      status: completed
        ? 'completed'
        : failed || !(this.cancelledByUser || this.stoppedOnBudget)
          ? 'failed'
          : 'cancelled',
      policy: this.policy,
      started_at: this.startedAt,
      finished_at: inputs.finishedAt,
      tasks,
      // fromEntries makes own properties, whatever the task ids (even "__proto__").
      result: Object.fromEntries(result),
      totals: {
        cost_cu: costCu,
        tokens_used: tokensUsed,
        ...(cachedTasks === 0 ? {} : { cached: { tasks: cachedTasks, saved_cu: savedCu } }),
      },
      streamed_edges: inputs.streamedEdges,
    };
  }

  /**
   * Each task's downstream tasks, each once, in edge order (the edges grouped by source, then repeats skipped), and
   * the edges that may stream.
   */
  private linkDownstream(): [Int32Array, Int32Array] {
    const { edges } = this.model;
    const count = this.size;
    const targets = new Int32Array(edges.length);
    const sources = new Int32Array(edges.length);
    const starts = new Int32Array(count + 1);
    for (let e = 0; e < edges.length; e++) {
      const edge = edges[e]!;
      // A DAG without errors: every edge names two tasks.
      const source = this.taskOf(edge.from!)!;
      const target = this.taskOf(edge.to!)!;
      sources[e] = source;
      targets[e] = target;
      starts[source + 1]!++;
      const declaration = this.model.tasks[target]!;
      if (
        edge.streamEligible &&
        this.streamSources[target] === -1 &&
        takesWholeOutput(declaration) &&
        declaration.referencedId(0) === edge.from
      ) {
        this.streamSources[target] = source;
        const list = this.streamTargets.get(source);
        if (list === undefined) this.streamTargets.set(source, [target]);
        else list.push(target);
      }
    }
    for (let node = 0; node < count; node++) starts[node + 1]! += starts[node]!;
    const bySource = new Int32Array(edges.length);
    const filled = starts.slice(0, count);
    for (let e = 0; e < edges.length; e++) bySource[filled[sources[e]!]!++] = e;
    // By target, the last source linked to it: a repeated edge finds its own source there.
    const linkedFrom = new Int32Array(count).fill(-1);
    const downStart = new Int32Array(count + 1);
    const downstream = new Int32Array(edges.length);
    let linked = 0;
    for (let node = 0; node < count; node++) {
      downStart[node] = linked;
      for (let k = starts[node]!; k < starts[node + 1]!; k++) {
        const target = targets[bySource[k]!]!;
        if (linkedFrom[target] === node) continue;
        linkedFrom[target] = node;
        downstream[linked++] = target;
        this.waiting[target]!++;
      }
    }
    downStart[count] = linked;
    return [downStart, linked === edges.length ? downstream : downstream.slice(0, linked)];
  }

  /** Starts ready tasks while slots are free, and finishes the run once every task is terminal. */
  private advance(at: string): void {
    // A task that fails as it launches comes back here; the loop already running picks up what that changed.
    if (this.advancing) return;
    this.advancing = true;
    while (this.slotsUsed < this.maxConcurrency && this.readyHead < this.readyTail) {
      const task = this.ready[this.readyHead++]!;
      if (this.states[task] !== PENDING) continue;
      this.slotsUsed++;
      this.states[task] = RUNNING;
      this.startTimes[task] = at;
      this.commands.launch(task);
    }
    this.advancing = false;
    if (this.terminal === this.size && !this.done) {
      this.done = true;
      this.commands.finished();
    }
  }

  private release(task: number): void {
    if (--this.waiting[task]! === 0 && this.states[task] === PENDING) this.ready[this.readyTail++] = task;
  }

  private releaseDownstream(task: number): void {
    for (let k = this.downStart[task]!; k < this.downStart[task + 1]!; k++) this.release(this.downstream[k]!);
  }

  /** Cancels every task downstream of `task`, breadth first (Layer 2 §4). */
  private cancelDownstream(task: number, message: string, at: string): void {
    const error = { code: ACMP_ERRORS.cancelled, message };
    const queue = Array.from(this.downstreamOf(task));
    const seen = new Set(queue);
    for (let head = 0; head < queue.length; head++) {
      const next = queue[head]!;
      this.settle(next, CANCELLED, error, at);
      for (const after of this.downstreamOf(next)) {
        if (!seen.has(after)) {
          seen.add(after);
          queue.push(after);
        }
      }
    }
  }

  /** Makes a task terminal, once (states go one way). */
  private settle(task: number, state: number, error: TaskError | undefined, at: string): boolean {
    const before = this.states[task];
    if (before !== PENDING && before !== RUNNING) return false;
    this.states[task] = state;
    this.finishTimes[task] = at;
    this.errors[task] = error;
    this.terminal++;
    if (before === RUNNING) this.slotsUsed--;
    this.commands.settled(task, STATE_NAMES[state] as TerminalState, error, before === RUNNING);
    return true;
  }
}

/** `value` when it is a positive integer, else `fallback` (options the caller may leave out or get wrong). */
export const positiveInteger = (value: number | undefined, fallback: number): number =>
  value !== undefined && Number.isInteger(value) && value > 0 ? value : fallback;
