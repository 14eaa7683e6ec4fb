// The DAG executor (design.md §5-§7, Layer 2 §2-§5): the in-memory driver of the run machine (machine.ts), the
// buyer-side orchestrator that sends one Layer 1 `acmp/invoke` per task the machine launches. The machine decides what
// runs and what a failure or a cancel ends; this carries it out, with the per-invoke mechanics: deadlines, heartbeat
// liveness and streaming edges. Which providers take a task, the retries, the refusals and the judgement of an answer
// are the invoke policy both drivers share (invokePolicy.ts); so are the quotes and prices of a negotiated run
// (negotiation.ts) and the budget's ledger (budget.ts). A task whose providers negotiate is quoted, accepted and then
// invoked on the general path; one sent in direct mode keeps the promise-free path it had before quotes existed. The
// transports come in through the Connector, so the language server, the CLI and the tests drive the same code.
import { randomUUID } from 'node:crypto';
import type { DagAnalysis } from '../dag/analyze';
import type {
  AcceptedTerms,
  CachedFrom,
  OfferReceived,
  TaskError,
  TaskOutput,
  RunEvent,
  RunReport,
} from '../protocol/report';
import type { RoutingPolicy } from '../protocol/market';
import type { DagModel, TaskDeclaration } from '../dag/model';
import type { ProviderConfig } from '../protocol/settings';
import { type InputResolution, resolveInput } from './inputs';
import {
  type Answer,
  type AttemptsMade,
  type CandidatesFrom,
  DEFAULT_ATTEMPTS,
  DEFAULT_BACKOFF_MS,
  type InvokeAttempts,
  type RetryPolicy,
  aboveMaxPrice,
  askOffer,
  chooseProviders,
  internalError,
  invokeParams,
  invokeWithRetries,
  isRefusal,
  judgeResult,
  noProviderFor,
  noProviderTook,
  outcomeOf,
  refusalOf,
  resultOutput,
  timedOut,
  timeoutOf,
  tryCandidates,
  wentSilent,
} from './invokePolicy';
import { type CompletionFacts, type MachineCommands, RunMachine, type TerminalState, positiveInteger } from './machine';
import { canonicalOutput, resultKey } from './resultKey';
import { type Denial, SpendLedger, hasLimits } from './budget';
import {
  DEFAULT_QUOTE_TIMEOUT_MS,
  MAX_REQUOTES,
  type QuoteAnswer,
  type Route,
  RouteBook,
  type TaskTerms,
  mayQuote,
  movesToNextOffer,
  offerReceived,
  offerRequestOf,
  offerRoute,
  judgeQuote,
  quoteRecord,
  rankRoutes,
  taskTerms,
} from './negotiation';
import { rankCandidates } from './pricing';
import { OutputStore } from './spilledOutputs';
import { Deadlines } from './deadlines';
import { Redactor } from './redaction';
import { refuseDagWithErrors, unservedRefusal } from './refused';
import {
  ACMP_ERRORS,
  AcmpError,
  type ChunkParams,
  type HeartbeatParams,
  type InvokeParams,
  type InvokeResult,
  type Offer,
  TransportError,
  messageOf,
} from '../protocol/acmpMessages';
import { ProviderPool, acceptsCancel, livenessWindow, streamsInput, streamsOutput } from './routing';
import { ChunkSequencer } from './sequencer';
import type {
  Building,
  DagRun,
  InvokeHandlers,
  ProviderConnection,
  ResultReuse,
  RunOptions,
  StoredResult,
} from './types';

/**
 * Starts running the DAG; throws at once (refused.ts) RunRefused when the analysis found errors, NoProviderRefused when
 * no provider offers some task's capability.
 */
export function startRun(analysis: DagAnalysis, options: RunOptions): DagRun {
  refuseDagWithErrors(analysis);
  const refusal = unservedRefusal(analysis.model, options.providers);
  if (refusal !== undefined) throw refusal;
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

type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };
/** A RunEvent before the run stamps it. */
type EventBody = RunEvent extends infer E ? (E extends RunEvent ? Omit<E, 'run_id' | 'at'> : never) : never;

const NOTHING = (): void => undefined;
const ENDED = Promise.resolve();

/**
 * A task's invoke while it runs (and, for a task that streams into others, after: its chunks stay readable). It is
 * its invokes' handlers too: no closures per invoke.
 */
class TaskRun implements InvokeHandlers, InvokeAttempts {
  /** Called with each chunk of this task's output as it is delivered in order: the feeds of live downstream tasks. */
  chunkListeners: Set<(chunk: ChunkParams) => void> | undefined;
  /** Set once the task streams its output (an invoke with `stream: true`); kept across transport retries. */
  sequencer: ChunkSequencer | undefined;
  /** The provider refused to stream this task's output (-33007): it is asked for the whole result instead. */
  outputStreamRefused = false;
  input: InputResolution | undefined;
  /** The connection of the invoke in flight: where `acmp/cancel` goes. */
  inFlight: ProviderConnection | undefined;
  /** Its `timeout_ms`, once its first invoke was sent and its deadline set. */
  timeoutMs: number | undefined;
  liveness: ReturnType<typeof setTimeout> | undefined;
  /** Ends the wait for the answer of the invoke in flight (with undefined) when the task ends meanwhile. */
  interrupt: ((settled: undefined) => void) | undefined;
  /** Whether the task still runs (the machine's state, mirrored here for the driver's many checks). */
  active = true;
  /** The `max_price_cu` its invokes carry: the accepted offer's price, or the ceiling of a direct invoke. */
  ceilingCu: number | undefined;
  /** Its `running` event was sent (the first is dated at its start, a later one when it moved on). */
  announced = false;
  /** The key its result is stored under (resultKey.ts), once made; per provider, it is made when it completes. */
  resultKey: string | undefined;
  private endedPromise: Promise<void> | undefined;
  private resolveEnded = NOTHING;

  constructor(
    private readonly driver: Run,
    /** Its position in `model.tasks`: the machine's name for it. */
    readonly index: number,
    readonly declaration: TaskDeclaration,
    readonly id: string,
    readonly wireId: string,
    readonly plain: Record<string, unknown>,
  ) {}

  /** Resolves once the task is terminal; made on first use, for few tasks are ever waited on so. */
  ended(): Promise<void> {
    if (!this.active) return ENDED;
    return (this.endedPromise ??= new Promise((resolve) => (this.resolveEnded = resolve)));
  }

  onChunk(chunk: ChunkParams): void {
    this.driver.onChunk(this, chunk);
  }

  onHeartbeat(beat: HeartbeatParams): void {
    this.driver.onHeartbeat(this, beat);
  }

  send(connection: ProviderConnection): Promise<Answer | TransportError | undefined> {
    return this.driver.attempt(this, connection);
  }

  async pause(ms: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, ms))), this.ended()]);
    clearTimeout(timer);
    return this.active;
  }

  /** The task is terminal: ends the waits on it (its invoke's answer, and `ended()`). */
  end(): void {
    this.active = false;
    this.interrupt?.(undefined);
    this.resolveEnded();
  }
}

/** The in-memory driver: carries out the machine's commands with direct invokes on the provider connections. */
class Run implements MachineCommands {
  readonly id: string;
  readonly done: Promise<RunReport>;
  private resolveDone: (report: RunReport) => void = NOTHING;
  private readonly machine: RunMachine;
  /** By task, its invoke's state once launched; dropped when it ends unless it streams into others. */
  private readonly runs: (TaskRun | undefined)[];
  /** By task, the tasks whose outputs its input reads, each once: `reads[readStart[t] .. readStart[t + 1]]`. */
  private readonly readStart: Int32Array;
  private readonly reads: Int32Array;
  /** By task, downstream tasks that have yet to make their inputs from its output. */
  private readonly readers: Int32Array;
  /** By task: it no longer reads its upstream outputs (it made its input, or it ended). */
  private readonly readingDone: Uint8Array;
  private readonly runTag: string;
  private readonly pool: ProviderPool;
  private readonly retry: RetryPolicy;
  private ending = false;
  /** `acmp/cancel` notifications on their way: the connections close only after them. */
  private readonly sends = new Set<Promise<void>>();
  private readonly streamedEdges: { from: string; to: string }[] = [];
  private readonly deadlines = new Deadlines<TaskRun>(
    (task) => this.fail(task, timedOut(task.timeoutMs!)),
    (task) => task.active,
  );
  /** Whether anyone listens to events: without a listener, none is made. */
  private readonly listening: boolean;
  readonly outputs: OutputStore;
  /** What events and the report show of outputs and errors: without the run's tokens. */
  private readonly redactor: Redactor;
  /** An upstream output for an input, by task id (one function for every task's input, not a closure each). */
  private readonly readOutput = (taskId: string): TaskOutput => this.outputs.read(taskId);
  private readonly routing: RoutingPolicy;
  private readonly routeBook = new RouteBook();
  /** Present when the run has a budget: what it spent, what is in flight, and its spend log. */
  private readonly ledger: SpendLedger | undefined;
  private readonly quoteTimeoutMs: number;
  /**
   * Providers that answered -32601 to a quote, or nothing within the quote wait: they do not negotiate, and are not
   * asked again in this run.
   */
  private readonly nonNegotiating = new Set<ProviderConfig>();
  private readonly capabilityRoutes = new Map<string, CapabilityRoutes>();
  /** By task, the offers it received and the terms it went under (the report's). */
  private readonly offers: (OfferReceived[] | undefined)[];
  private readonly accepted: (AcceptedTerms | undefined)[];
  /**
   * The terms of direct invokes without a ceiling at a price that is the same for every task (a fixed or an unknown
   * price), by provider and capability: one object for them all rather than one per task.
   */
  private readonly sharedTerms = new Map<ProviderConfig, Map<string, AcceptedTerms>>();
  private readonly results: ResultReuse | undefined;
  /** By task, where its output came from when the result store had it. */
  private readonly cachedFrom: (CachedFrom | undefined)[];
  /** By task, its output's canonical form while tasks that read it whole have yet to key their inputs with it. */
  private readonly canonicalOutputs: (string | undefined)[];

  constructor(
    private readonly model: DagModel,
    private readonly options: RunOptions,
  ) {
    this.id = options.runId ?? randomUUID();
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.pool = new ProviderPool(options.providers, options.connect);
    this.retry = {
      attempts: positiveInteger(options.attempts, DEFAULT_ATTEMPTS),
      backoffMs: Math.max(0, options.backoffMs ?? DEFAULT_BACKOFF_MS),
    };
    this.outputs = new OutputStore(options.outputMemoryBytes);
    this.routing = options.routing ?? 'cheapest';
    this.ledger = hasLimits(options.budget) ? new SpendLedger(options.budget) : undefined;
    const quoteTimeout = options.quoteTimeoutMs;
    this.quoteTimeoutMs =
      quoteTimeout !== undefined && Number.isFinite(quoteTimeout) && quoteTimeout > 0
        ? quoteTimeout
        : DEFAULT_QUOTE_TIMEOUT_MS;
    this.redactor = new Redactor(options.secrets ?? []);
    // Fresh wire ids per run, so a provider's idempotency cache never answers from an earlier run (design.md §5), and
    // a random tag rather than the run id: Layer 1 wants them globally unique, and a client may choose run ids that
    // share a prefix (`session-run-1`, `session-run-2`) or that another buyer of the same provider uses too.
    this.runTag = randomUUID();
    this.listening = options.onEvent !== undefined;
    this.machine = new RunMachine(model, { policy: options.policy, maxConcurrency: options.maxConcurrency }, this);
    const count = model.tasks.length;
    this.runs = new Array<TaskRun | undefined>(count).fill(undefined);
    this.offers = new Array<OfferReceived[] | undefined>(count).fill(undefined);
    this.accepted = new Array<AcceptedTerms | undefined>(count).fill(undefined);
    this.results = options.results;
    this.cachedFrom = new Array<CachedFrom | undefined>(this.results === undefined ? 0 : count).fill(undefined);
    this.canonicalOutputs = new Array<string | undefined>(this.results === undefined ? 0 : count).fill(undefined);
    this.readers = new Int32Array(count);
    this.readingDone = new Uint8Array(count);
    this.readStart = new Int32Array(count + 1);
    const reads: number[] = [];
    for (let task = 0; task < count; task++) {
      this.readStart[task] = reads.length;
      const declaration = model.tasks[task]!;
      if (declaration.inputForm !== 'reference') continue;
      for (let position = 0; position < declaration.referenceCount; position++) {
        const upstream = this.machine.taskOf(declaration.referencedId(position))!;
        if (readsAlready(reads, this.readStart[task]!, upstream)) continue;
        reads.push(upstream);
        this.readers[upstream]!++;
      }
    }
    this.readStart[count] = reads.length;
    this.reads = Int32Array.from(reads);
  }

  start(): void {
    const startedAt = now();
    this.emit(
      {
        type: 'run-started',
        dag_id: this.model.dagId ?? '',
        policy: this.machine.policy,
        tasks: this.model.tasks.map((declaration) => declaration.id!),
      },
      startedAt,
    );
    // Outputs an earlier run completed: those tasks complete at once, and what depends on them may start.
    const reused: number[] = [];
    for (const [taskId, output] of Object.entries(this.options.reuse ?? {})) {
      const task = this.machine.taskOf(taskId);
      if (task === undefined) continue;
      this.outputs.keep(taskId, output, this.readers[task]!);
      reused.push(task);
    }
    this.machine.start(startedAt, reused);
  }

  cancel(reason = 'the run was cancelled'): void {
    this.machine.cancelRun(reason, now());
  }

  cancelTask(taskId: string, reason = 'cancelled by the user'): void {
    const task = this.machine.taskOf(taskId);
    if (task !== undefined) this.machine.cancelTask(task, reason, now());
  }

  /** The machine's command: the task runs now. */
  launch(index: number): void {
    const declaration = this.model.tasks[index]!;
    const id = declaration.id!;
    const plain = (this.options.plainTasks?.[index] ?? declaration.node.value) as Record<string, unknown>;
    const task = new TaskRun(this, index, declaration, id, `${id}-${this.runTag}`, plain);
    this.runs[index] = task;
    if (this.results !== undefined && this.fromStore(task, this.results)) return;
    const routes = this.routesOf(declaration.capability!);
    if (routes.quotes) return void this.negotiate(task, routes.candidates);
    const terms = taskTerms(declaration.capability!, plain, this.ledger?.budget ?? NO_BUDGET);
    const ordered = routes.ordered ?? this.inDirectOrder(routes.candidates, terms);
    const first = ordered[0];
    if (first !== undefined && !this.priceDirect(task, first, terms, this.machine.startTimeOf(index))) return;
    if (first === undefined && this.listening) {
      this.emit({ type: 'task-state', task_id: id, state: 'running' }, this.machine.startTimeOf(index));
    }
    if (!this.sendAtOnce(task, ordered)) void this.execute(task, ordered, terms);
  }

  /**
   * Completes `task` at once with the result the store holds for its input, when it holds one and the task is not
   * to run again: no quote, no invoke, no cost. A task whose input streams in from a running source has no input to
   * look up yet, and runs.
   */
  private fromStore(task: TaskRun, results: ResultReuse): boolean {
    const capability = task.declaration.capability!;
    if (this.machine.isStreamLive(task.index) || results.exclude?.has(capability) === true) return false;
    // Taken before the input is made: making it releases the upstream outputs this task reads.
    const canonicalInput = this.canonicalInput(task);
    const input = this.literalInput(task);
    // An input that does not resolve fails the task on the usual path.
    if (!input.ok || results.refresh?.has(task.id) === true) return false;
    let stored: StoredResult | undefined;
    if (results.perProvider === true) {
      for (const provider of this.routesOf(capability).candidates) {
        stored = results.store.lookup(resultKey(capability, input.input, task.plain, provider.id));
        if (stored !== undefined) break;
      }
    } else {
      task.resultKey = resultKey(capability, input.input, task.plain, undefined, canonicalInput);
      stored = results.store.lookup(task.resultKey);
    }
    if (stored === undefined) return false;
    const { index } = task;
    this.cachedFrom[index] = {
      run_id: stored.run_id,
      task_id: stored.task_id,
      made_at: stored.made_at,
      cost_cu: stored.cost_cu,
    };
    const canonical = stored.canonicalOutput ?? canonicalOutput(stored.output);
    if (this.readers[index]! > 0) this.canonicalOutputs[index] = canonical;
    // Its size is its canonical form's.
    this.outputs.keep(task.id, stored.output, this.readers[index]!, canonical.length);
    this.machine.providerChosen(index, stored.provider_id);
    this.machine.completed(index, now(), { costCu: 0, tokensUsed: 0, proof: stored.proof, violations: NO_VIOLATIONS });
    return true;
  }

  /**
   * Keeps `task`'s result in the store when it is fit to serve later runs: its capability is not excluded, its proof
   * did not fail, an output that streamed had its proof verified, its input did not stream in (there is no input to
   * key it by), and it holds none of the run's tokens.
   */
  private keepResult(task: TaskRun, result: InvokeResult, output: TaskOutput, facts: CompletionFacts): void {
    const results = this.results!;
    const capability = task.declaration.capability!;
    const input = task.input;
    if (results.exclude?.has(capability) === true || facts.proof === 'mismatch') return;
    if (result.output_streamed === true && facts.proof !== 'verified') return;
    if (input === undefined || !input.ok || this.redactor.reveals(output)) return;
    const providerId = this.machine.providerOf(task.index)!;
    const key =
      results.perProvider === true
        ? resultKey(capability, input.input, task.plain, providerId)
        : (task.resultKey ?? resultKey(capability, input.input, task.plain));
    const canonical = canonicalOutput(output);
    if (this.readers[task.index]! > 0) this.canonicalOutputs[task.index] = canonical;
    results.store.keep(
      key,
      {
        run_id: this.id,
        task_id: task.id,
        made_at: now(),
        cost_cu: facts.costCu,
        output,
        provider_id: providerId,
        capability,
        proof: facts.proof,
      },
      canonical,
    );
  }

  /** The canonical form of `task`'s input when it is an upstream output the run has that form of (read whole). */
  private canonicalInput(task: TaskRun): string | undefined {
    const { declaration } = task;
    if (
      declaration.inputForm !== 'reference' ||
      declaration.sourceForm !== 'single' ||
      declaration.field !== undefined
    ) {
      return undefined;
    }
    return this.canonicalOutputs[this.reads[this.readStart[task.index]!]!];
  }

  /** What the run knows of `capability`'s routes, made once (again once a provider turned out not to negotiate). */
  private routesOf(capability: string): CapabilityRoutes {
    let routes = this.capabilityRoutes.get(capability);
    if (routes === undefined) {
      const candidates = chooseProviders(this.pool, capability);
      const byTokens = candidates.some((provider) => this.routeBook.pricedByTokens(provider, capability));
      routes = {
        candidates,
        quotes: this.quotes(candidates),
        ordered: byTokens ? undefined : this.inDirectOrder(candidates, taskTerms(capability, {}, NO_BUDGET)),
      };
      this.capabilityRoutes.set(capability, routes);
    }
    return routes;
  }

  /** Whether a task of these candidates is quoted: not under `listed`, and one of them may negotiate. */
  private quotes(candidates: readonly ProviderConfig[]): boolean {
    if (this.routing === 'listed') return false;
    for (const provider of candidates) if (mayQuote(provider) && !this.nonNegotiating.has(provider)) return true;
    return false;
  }

  /** The candidates in the order a direct run tries them: the routing policy's by advertised figures. */
  private inDirectOrder(candidates: readonly ProviderConfig[], terms: TaskTerms): readonly ProviderConfig[] {
    if (this.routing === 'listed' || candidates.length < 2) return candidates;
    return rankCandidates(this.routing, this.routeBook.routes(candidates, terms)).map((route) => route.provider);
  }

  /** `task` goes to `provider` in direct mode, or ends not started when the budget cannot cover it there. */
  private priceDirect(task: TaskRun, provider: ProviderConfig, terms: TaskTerms, at?: string): boolean {
    const denial = this.goDirect(task, provider, terms, at);
    if (denial === undefined) return true;
    this.notCovered(task, provider, denial);
    return false;
  }

  /**
   * `task` goes to `provider` in direct mode: the ceiling its invoke carries (the task's and the per-task cap's; under
   * a total cap without either, the advertised price, so that the reservation bounds the charge) reserved under the
   * budget, and its `running` event with the advertised price. The budget's denial when it cannot cover it.
   */
  private goDirect(task: TaskRun, provider: ProviderConfig, terms: TaskTerms, at?: string): Denial | undefined {
    const priceCu = this.routeBook.priceOf(provider, terms);
    const ledger = this.ledger;
    const ceiling = terms.ceilingCu ?? (ledger?.budget.total_cap_cu === undefined ? undefined : priceCu);
    if (ledger !== undefined) {
      const spend = { kind: 'invoke', taskId: task.id, counterparty: provider.id, amountCu: ceiling } as const;
      const denial = ledger.reserve(Date.now(), spend);
      if (denial !== undefined) return denial;
    }
    task.ceilingCu = ceiling;
    const accepted = this.directTerms(provider, terms.capability, priceCu, ceiling);
    this.accepted[task.index] = accepted;
    this.emitRunning(task, accepted, at);
    return undefined;
  }

  /** The terms of a direct invoke at `provider`: shared when they are the same for every task of the capability. */
  private directTerms(
    provider: ProviderConfig,
    capability: string,
    priceCu: number | undefined,
    ceiling: number | undefined,
  ): AcceptedTerms {
    const shareable = ceiling === undefined && !this.routeBook.pricedByTokens(provider, capability);
    let byCapability = shareable ? this.sharedTerms.get(provider) : undefined;
    const shared = byCapability?.get(capability);
    if (shared !== undefined) return shared;
    const accepted: Building<AcceptedTerms> = {
      provider_id: provider.id,
      pricing: 'direct',
      basis: priceCu === undefined ? 'unknown' : 'advertised',
    };
    if (priceCu !== undefined) accepted.price_cu = priceCu;
    if (ceiling !== undefined) accepted.max_price_cu = ceiling;
    if (shareable) {
      if (byCapability === undefined) this.sharedTerms.set(provider, (byCapability = new Map<string, AcceptedTerms>()));
      byCapability.set(capability, accepted);
    }
    return accepted;
  }

  /**
   * The task runs at `accepted`'s provider. Its first `running` is dated when the machine started it (as the report
   * says), however long its quotes took; a later one (it moved on) when it moved.
   */
  private emitRunning(task: TaskRun, accepted: AcceptedTerms, at?: string): void {
    const first = !task.announced;
    task.announced = true;
    if (!this.listening) return;
    const event: Building<Extract<EventBody, { type: 'task-state' }>> = {
      type: 'task-state',
      task_id: task.id,
      state: 'running',
      provider_id: accepted.provider_id,
      pricing: accepted.pricing,
    };
    if (accepted.price_cu !== undefined) event.price_cu = accepted.price_cu;
    this.emit(event, at ?? (first ? this.machine.startTimeOf(task.index) : undefined));
  }

  /** The budget cannot cover `task` at `provider`: it ends cancelled, not started, with the reason `budget`. */
  private notCovered(task: TaskRun, provider: ProviderConfig | undefined, denial: Denial): void {
    this.ledger?.deny(task.id);
    const at = provider === undefined ? '' : ` at provider "${provider.id}"`;
    this.machine.notCovered(
      task.index,
      {
        code: ACMP_ERRORS.cancelled,
        message: `not started: the run's budget cannot cover it${at}: ${denial.reason}`,
        data: { reason: 'budget' },
      },
      now(),
    );
  }

  /** The machine's command: the task is terminal; an invoke still in flight gets `acmp/cancel`. */
  settled(index: number, state: TerminalState, error: TaskError | undefined): void {
    // Its input is made again by no one: what it holds of upstream outputs may go.
    this.doneReading(index);
    // What it held of the budget goes back (a completed task's was replaced by its charge already).
    if (state !== 'completed') this.ledger?.release(this.model.tasks[index]!.id!, Date.now(), error?.message);
    const task = this.runs[index];
    if (task !== undefined) {
      const inFlight = task.inFlight;
      task.inFlight = undefined;
      task.input = undefined;
      if (task.timeoutMs !== undefined) this.deadlines.dropped();
      clearTimeout(task.liveness);
      task.end();
      if (this.machine.streamTargetsOf(index).length === 0) this.runs[index] = undefined;
      if (inFlight !== undefined && acceptsCancel(inFlight.acmp)) {
        const sent: Promise<void> = settle(() =>
          inFlight.cancel({ task_id: task.wireId, ...(error === undefined ? {} : { reason: error.message }) }),
        ).then(() => void this.sends.delete(sent));
        this.sends.add(sent);
      }
    }
    if (this.listening) {
      const providerId = this.machine.providerOf(index);
      this.emit(
        {
          type: 'task-state',
          task_id: this.model.tasks[index]!.id!,
          state,
          ...(providerId === undefined ? {} : { provider_id: providerId }),
          ...(error === undefined ? {} : { error: this.redactor.value(error) }),
          ...(this.cachedFrom[index] === undefined ? {} : { cached: this.cachedFrom[index] }),
        },
        this.machine.finishTimeOf(index),
      );
    }
  }

  /** The machine's command: every task is terminal. */
  finished(): void {
    void this.end();
  }

  /**
   * The usual case, without the general path's async steps (a promise and a frame each, per task): the first
   * candidate's connection is open and the invoke neither streams in nor out. Sends the invoke and returns true;
   * false leaves the task to `execute`. A refusal or transport failure goes on in `execute` where this left off.
   */
  private sendAtOnce(task: TaskRun, candidates: readonly ProviderConfig[]): boolean {
    const provider = candidates[0];
    if (provider === undefined || this.machine.isStreamLive(task.index)) return false;
    const connection = this.pool.opened(provider);
    if (connection === undefined || this.streams(task, connection)) return false;
    const input = this.literalInput(task);
    if (!input.ok) {
      this.fail(task, input.error);
      return true;
    }
    const params = this.prepareSend(task, connection, input.input, false);
    let invoked: Promise<InvokeResult>;
    try {
      invoked = connection.invoke(params, task);
    } catch (error) {
      invoked = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    // A fault in taking the answer fails the task, as `execute` would catch it.
    invoked.then(
      (result) => {
        if (!this.answered(task, connection)) return;
        try {
          this.complete(task, result);
        } catch (error) {
          this.executorFailed(task, error);
        }
      },
      (error: unknown) => {
        if (!this.answered(task, connection)) return;
        try {
          this.failedAtOnce(task, candidates, connection, error);
        } catch (fault) {
          this.executorFailed(task, fault);
        }
      },
    );
    return true;
  }

  /** `sendAtOnce`'s invoke failed: the task fails, or goes on at the next attempt or the next candidate. */
  private failedAtOnce(
    task: TaskRun,
    candidates: readonly ProviderConfig[],
    connection: ProviderConnection,
    error: unknown,
  ): void {
    const outcome = outcomeOf(error, connection);
    if (outcome instanceof TransportError) {
      if (!outcome.retryable) return this.fail(task, internalError(outcome.message));
      const made = { attempt: 1, connection, failure: outcome.message };
      return void this.execute(task, candidates, undefined, { candidate: 0, refusals: [], made });
    }
    if (!isRefusal(outcome.error)) return this.fail(task, outcome.error);
    const from = { candidate: 1, refusals: [refusalOf(candidates[0]!, outcome.error)] };
    void this.execute(task, candidates, undefined, from);
  }

  private executorFailed(task: TaskRun, error: unknown): void {
    this.fail(task, internalError(`the executor failed: ${messageOf(error)}`));
  }

  /**
   * Tries the candidate providers in order until one takes the task (design.md §6), from the start or from where
   * `sendAtOnce` left off; never rejects.
   */
  private async execute(
    task: TaskRun,
    candidates: readonly ProviderConfig[],
    terms?: TaskTerms,
    resume?: Resume,
  ): Promise<void> {
    // Caught here rather than by a `catch` on its promise: a promise and a closure less per task.
    try {
      if (candidates.length === 0) return this.fail(task, noProviderFor(task.declaration.capability!));
      if (!this.machine.isStreamLive(task.index)) {
        const input = this.literalInput(task);
        if (!input.ok) return this.fail(task, input.error);
      }
      const taking = await tryCandidates(
        candidates,
        (candidate) => {
          const provider = candidates[candidate]!;
          // The task stays running but moves on, at that provider's price (its `running` says where, so that no one
          // reads the refusing provider as the one running it), unless the budget cannot cover it there.
          if (candidate > 0) {
            const ownTerms = (terms ??= this.termsOf(task));
            if (!this.priceDirect(task, provider, ownTerms)) return Promise.resolve(undefined);
          }
          const made = candidate === resume?.candidate ? resume.made : undefined;
          return invokeWithRetries(this.pool, provider, this.retry, task, made);
        },
        // A provider that already streamed output took the task: its error is the task's.
        (error) => isRefusal(error) && task.sequencer?.started !== true,
        resume,
      );
      if (taking === undefined) return;
      if (taking.ok) return this.complete(task, taking.value);
      this.fail(task, taking.error);
    } catch (error) {
      this.executorFailed(task, error);
    }
  }

  /** The terms `task` asks of the market under the run's budget. */
  private termsOf(task: TaskRun): TaskTerms {
    return taskTerms(task.declaration.capability!, task.plain, this.ledger?.budget ?? NO_BUDGET);
  }

  /**
   * A negotiated task (Layer 6): every candidate that negotiates is asked for a quote at once, within the quote wait;
   * the valid offers and the direct routes (providers that do not negotiate, at their advertised prices) are tried
   * in the routing policy's order: each reserved under the budget, an offer accepted (quoted again when it expired),
   * then invoked with `max_price_cu` the accepted price. A refusal moves on to the next; never rejects.
   */
  private async negotiate(task: TaskRun, candidates: readonly ProviderConfig[]): Promise<void> {
    try {
      const terms = this.termsOf(task);
      const refusals: TaskError[] = [];
      const routes = rankRoutes(this.routing, await this.gatherQuotes(task, candidates, terms, refusals));
      if (!task.active) return;
      if (!this.machine.isStreamLive(task.index)) {
        const input = this.literalInput(task);
        if (!input.ok) return this.fail(task, input.error);
      }
      let denial: { provider: ProviderConfig; denial: Denial } | undefined;
      for (const route of routes) {
        const { provider } = route;
        const taking = await this.takeRoute(task, route, terms);
        if (taking === undefined) return;
        if (taking.ok) return this.complete(task, taking.value);
        if ('reason' in taking.error) {
          denial ??= { provider, denial: taking.error };
          continue;
        }
        // A provider that already streamed output took the task: its error is the task's.
        if (!(movesToNextOffer(taking.error.code) && task.sequencer?.started !== true)) {
          return this.fail(task, taking.error);
        }
        refusals.push(refusalOf(provider, taking.error));
      }
      if (denial !== undefined) return this.notCovered(task, denial.provider, denial.denial);
      const capability = task.declaration.capability!;
      this.fail(task, refusals.length === 0 ? noProviderFor(capability) : noProviderTook(refusals));
    } catch (error) {
      this.executorFailed(task, error);
    }
  }

  /**
   * The routes of a negotiated task: a quote asked of each candidate that may negotiate, all at once, those answered
   * within the quote wait taken (an offer as a route at its price; -32601 as a direct route, the provider remembered
   * as one that does not negotiate); the others' reasons go to `refusals`. Candidates that are not asked are direct
   * routes at their advertised figures.
   */
  private async gatherQuotes(
    task: TaskRun,
    candidates: readonly ProviderConfig[],
    terms: TaskTerms,
    refusals: TaskError[],
  ): Promise<Route[]> {
    const advertised = this.routeBook.routes(candidates, terms);
    const asked = advertised.map((route) => mayQuote(route.provider) && !this.nonNegotiating.has(route.provider));
    const quoting = Promise.all(
      advertised.map((route, k) => (asked[k] ? this.quote(route.provider, terms) : Promise.resolve(undefined))),
    );
    const answers = await Promise.race([quoting, task.ended().then(() => [])]);
    const routes: Route[] = [];
    const atMs = Date.now();
    const offers: OfferReceived[] = [];
    advertised.forEach((route, k) => {
      const { provider } = route;
      if (!asked[k]) return void routes.push(route);
      const answer = answers[k];
      if (answer === undefined) return;
      if (answer.kind === 'offer') {
        const offered = offerRoute(route, answer.offer);
        routes.push(offered);
        offers.push(offerReceived(provider, answer.offer, offered.latencyMs));
        this.ledger?.quoted(atMs, task.id, provider.id, {
          outcome: 'offered',
          priceCu: answer.offer.price_cu,
          offerId: answer.offer.offer_id,
        });
      } else if (answer.kind === 'direct') {
        routes.push(route);
        this.ledger?.quoted(atMs, task.id, provider.id, quoteRecord(answer));
      } else {
        refusals.push(refusalOf(provider, { code: answer.code, message: answer.detail }));
        this.ledger?.quoted(atMs, task.id, provider.id, { outcome: answer.outcome, detail: answer.detail });
      }
    });
    if (offers.length > 0) this.offers[task.index] = offers;
    return routes;
  }

  /**
   * Asks `provider` for a quote, waiting for it the quote wait at most from when its connection is open (opening one
   * has its own bound: a provider's start-up does not eat into the wait); never rejects. A provider answering -32601
   * is not asked again in this run.
   */
  private async quote(provider: ProviderConfig, terms: TaskTerms): Promise<QuoteAnswer> {
    let connection: ProviderConnection;
    try {
      connection = this.pool.opened(provider) ?? (await this.pool.connection(provider));
    } catch (error) {
      return { kind: 'direct', why: 'unreachable', detail: messageOf(error) };
    }
    // An answer after the wait is not taken: the task went on without it.
    const asked = await askOffer(connection, offerRequestOf(terms), this.quoteTimeoutMs);
    const answer = judgeQuote(asked, terms, Date.now(), this.quoteTimeoutMs);
    return answer.kind === 'direct' && answer.why !== 'unreachable' ? this.notNegotiating(provider, answer) : answer;
  }

  /** `provider` does not negotiate: it is not asked again in this run, and competes in direct mode. */
  private notNegotiating(provider: ProviderConfig, answer: QuoteAnswer): QuoteAnswer {
    if (!this.nonNegotiating.has(provider)) {
      this.nonNegotiating.add(provider);
      this.capabilityRoutes.clear();
    }
    return answer;
  }

  /**
   * `task` at one route: reserved under the budget, its offer accepted, and invoked with `max_price_cu` the accepted
   * price (a direct route: at its ceiling). The invoke's answer, a refusal of the accept (a TaskError), the budget's
   * denial, or undefined when the task ended meanwhile.
   */
  private async takeRoute(
    task: TaskRun,
    route: Route,
    terms: TaskTerms,
  ): Promise<Answer | { readonly ok: false; readonly error: TaskError | Denial } | undefined> {
    const { provider } = route;
    if (!task.active) return undefined;
    if (route.offer === undefined) {
      const denial = this.goDirect(task, provider, terms);
      if (denial !== undefined) return { ok: false, error: denial };
    } else {
      const accepted = await this.acceptOffer(task, provider, route.offer, terms);
      if (accepted === undefined || !accepted.ok) return accepted;
      task.ceilingCu = accepted.offer.price_cu;
      const shown: AcceptedTerms = {
        provider_id: provider.id,
        pricing: 'offer',
        price_cu: accepted.offer.price_cu,
        basis: 'offer',
        offer_id: accepted.offer.offer_id,
        max_price_cu: accepted.offer.price_cu,
      };
      this.accepted[task.index] = shown;
      this.emitRunning(task, shown);
    }
    return invokeWithRetries(this.pool, provider, this.retry, task);
  }

  /**
   * Accepts `offer` (reserved under the budget first); an offer that expired before the accept (-34002) is quoted
   * again, at most MAX_REQUOTES times. The offer accepted, why none was (a TaskError, or the budget's denial of a
   * fresh quote's price), or undefined when the task ended meanwhile.
   */
  private async acceptOffer(
    task: TaskRun,
    provider: ProviderConfig,
    first: Offer,
    terms: TaskTerms,
  ): Promise<
    | { readonly ok: true; readonly offer: Offer }
    | { readonly ok: false; readonly error: TaskError | Denial }
    | undefined
  > {
    let offer = first;
    for (let requotes = 0; ; requotes++) {
      const spend = {
        kind: 'accept',
        taskId: task.id,
        counterparty: provider.id,
        amountCu: offer.price_cu,
        offerId: offer.offer_id,
      } as const;
      const denial = this.ledger?.reserve(Date.now(), spend);
      if (denial !== undefined) return { ok: false, error: denial };
      let connection: ProviderConnection;
      try {
        connection = this.pool.opened(provider) ?? (await this.pool.connection(provider));
      } catch (error) {
        return { ok: false, error: internalError(`provider "${provider.id}": ${messageOf(error)}`) };
      }
      const accepting = offer;
      const settled = await settle(() => connection.accept({ offer_id: accepting.offer_id }));
      if (!task.active) return undefined;
      if (settled.ok) return { ok: true, offer };
      const error =
        settled.error instanceof AcmpError
          ? { code: settled.error.code, message: settled.error.message }
          : internalError(`provider "${provider.id}": ${messageOf(settled.error)}`);
      this.ledger?.release(task.id, Date.now(), `accept refused: ${error.message}`);
      if (error.code !== ACMP_ERRORS.offer_expired || requotes === MAX_REQUOTES) return { ok: false, error };
      const fresh = await this.quote(provider, terms);
      if (!task.active) return undefined;
      this.ledger?.quoted(Date.now(), task.id, provider.id, quoteRecord(fresh));
      if (fresh.kind !== 'offer') {
        return { ok: false, error: fresh.kind === 'none' ? { code: fresh.code, message: fresh.detail } : error };
      }
      offer = fresh.offer;
      (this.offers[task.index] ??= []).push(offerReceived(provider, offer, offer.latency_sla_ms));
    }
  }

  /**
   * One attempt of `task`'s invoke on `connection` (invokePolicy's `invokeWithRetries` makes them): its input made or
   * awaited, and sent once more without `stream` when the provider refused to stream it. Undefined when the task
   * ended meanwhile.
   */
  async attempt(task: TaskRun, connection: ProviderConnection): Promise<Answer | TransportError | undefined> {
    if (!task.active) return undefined;
    const input = this.machine.isStreamLive(task.index)
      ? await this.inputAt(task, connection)
      : this.literalInput(task);
    if (input === undefined || !input.ok) return input;
    let answer = await this.send(task, connection, input.input);
    if (refusedStream(task, answer)) {
      task.outputStreamRefused = true;
      task.sequencer = undefined;
      answer = await this.send(task, connection, input.input);
    }
    return answer;
  }

  /** The input of `task`'s literal form or source, made once. */
  private literalInput(task: TaskRun): InputResolution {
    if (task.input === undefined) {
      task.input = resolveInput(task.declaration, task.plain.input, this.readOutput);
      this.doneReading(task.index);
    }
    return task.input;
  }

  /**
   * The input of an invoke on `connection`: undefined to stream it in from the source, else the literal input.
   * Returns undefined when the task ended while waiting for it.
   */
  private async inputAt(
    task: TaskRun,
    connection: ProviderConnection,
  ): Promise<{ ok: true; input?: TaskOutput } | { ok: false; error: TaskError } | undefined> {
    if (streamsInput(connection.acmp)) return { ok: true };
    // A later candidate that takes no input chunks (the first refused): it gets the whole output instead.
    const source = this.machine.streamSourceOf(task.index);
    const sourceRun = this.runs[source];
    if (sourceRun?.active === true) await Promise.race([sourceRun.ended(), task.ended()]);
    if (!task.active || this.machine.stateOf(source) !== 'completed') return undefined;
    return this.literalInput(task);
  }

  /** Whether an invoke of `task` on `connection` asks for its output as a stream. */
  private streams(task: TaskRun, connection: ProviderConnection): boolean {
    return (
      !task.outputStreamRefused &&
      (this.machine.streamTargetsOf(task.index).length > 0 || task.plain.stream === true) &&
      streamsOutput(connection.acmp)
    );
  }

  /** The invoke to send on `connection`, with the task's deadline and liveness set for it. */
  private prepareSend(
    task: TaskRun,
    connection: ProviderConnection,
    input: TaskOutput | undefined,
    stream: boolean,
  ): InvokeParams {
    const { plain } = task;
    if (stream) task.sequencer ??= new ChunkSequencer();
    // The deadline counts from the first invoke sent (Layer 1 §3.1: the window in which its result must arrive), not
    // from the provider's start-up; retries and fallbacks stay within it.
    if (task.timeoutMs === undefined) {
      task.timeoutMs = timeoutOf(plain);
      this.deadlines.add(task, task.timeoutMs);
    }
    task.inFlight = connection;
    this.machine.providerChosen(task.index, connection.providerId);
    const window = livenessWindow(connection.acmp);
    if (window !== undefined) {
      task.liveness = setTimeout(() => this.fail(task, wentSilent(connection.providerId, window)), window);
    }
    return invokeParams(task.wireId, task.declaration.capability!, plain, input, stream, task.ceilingCu);
  }

  /** The answer of the invoke on `connection` came: whether the task still runs to take it. */
  private answered(task: TaskRun, connection: ProviderConnection): boolean {
    clearTimeout(task.liveness);
    if (task.inFlight === connection) task.inFlight = undefined;
    return task.active;
  }

  /** Sends one invoke and waits for its answer, a TransportError, or the task's end (undefined). */
  private async send(
    task: TaskRun,
    connection: ProviderConnection,
    input: TaskOutput | undefined,
  ): Promise<Answer | TransportError | undefined> {
    if (!task.active) return undefined;
    const params = this.prepareSend(task, connection, input, this.streams(task, connection));
    // One promise settles with the answer or, through `interrupt`, with the task's end, rather than a race of two.
    let stopFeed: (() => void) | undefined;
    const settled = await new Promise<Settled<InvokeResult> | undefined>((resolve) => {
      task.interrupt = resolve;
      settleWith(() => connection.invoke(params, task), resolve);
      if (input === undefined) stopFeed = this.feed(task, connection);
    });
    task.interrupt = undefined;
    stopFeed?.();
    if (!this.answered(task, connection) || settled === undefined) return undefined;
    return settled.ok ? settled : outcomeOf(settled.error, connection);
  }

  /** Forwards the source's output chunks, those delivered so far and those to come, as input chunks (Layer 2 §5). */
  private feed(task: TaskRun, connection: ProviderConnection): () => void {
    const source = this.runs[this.machine.streamSourceOf(task.index)]!;
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

  onChunk(task: TaskRun, chunk: ChunkParams): void {
    const sequencer = task.sequencer;
    if (!task.active || sequencer === undefined) return;
    task.liveness?.refresh();
    const first = sequencer.delivered.length === 0;
    for (const next of sequencer.accept(chunk)) {
      const chunk = this.redactor.value(next.chunk);
      this.emit({ type: 'chunk', task_id: task.id, seq: next.seq, final: next.final, chunk });
      task.chunkListeners?.forEach((listener) => listener(next));
    }
    if (sequencer.overflow !== undefined) {
      return this.fail(task, internalError(`provider "${this.machine.providerOf(task.index)}": ${sequencer.overflow}`));
    }
    if (first && sequencer.delivered.length > 0) {
      for (const target of this.machine.streamTargetsOf(task.index)) void this.goLive(task, target);
    }
  }

  onHeartbeat(task: TaskRun, beat: HeartbeatParams): void {
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
  private async goLive(source: TaskRun, target: number): Promise<void> {
    const provider = chooseProviders(this.pool, this.model.tasks[target]!.capability!)[0];
    if (provider === undefined) return;
    const connection = await this.pool.connection(provider).catch(() => undefined);
    if (connection === undefined || !streamsInput(connection.acmp) || !source.active) return;
    this.machine.streamLive(target, now());
  }

  private complete(task: TaskRun, result: InvokeResult): void {
    const maxPrice = task.ceilingCu ?? task.declaration.maxPriceCu;
    const providerId = this.machine.providerOf(task.index);
    const verdict = judgeResult(providerId, result, outputOf(task, result), maxPrice, this.inputToCheck(task, result));
    if (!verdict.ok) return this.fail(task, verdict.error);
    const { facts } = verdict;
    // Charged before the machine hears of it: the tasks it launches next reserve against what this one really cost.
    this.ledger?.charge(Date.now(), task.id, providerId ?? '', facts.costCu);
    if (this.results !== undefined) this.keepResult(task, result, verdict.output, facts);
    this.outputs.keep(task.id, verdict.output, this.readers[task.index]!);
    if (this.listening) {
      this.emit({
        type: 'cost',
        task_id: task.id,
        cost_cu: facts.costCu,
        tokens_used: facts.tokensUsed,
        ...(maxPrice === undefined ? {} : { max_price_cu: maxPrice }),
        violation: aboveMaxPrice(facts.costCu, maxPrice),
      });
    }
    this.machine.completed(task.index, now(), facts);
  }

  /**
   * The input `result`'s `input_hash` is checked against: the input `task` was sent, or for an input that streamed in
   * (Layer 2 §5), the whole output of its source, assembled from the chunks forwarded (once they are all there).
   * Undefined when the proof names no input, so that a streamed input is assembled only to be checked.
   */
  private inputToCheck(task: TaskRun, result: InvokeResult): TaskOutput | undefined {
    if (typeof result.proof?.input_hash !== 'string') return undefined;
    const input = task.input;
    if (input !== undefined) return input.ok ? input.input : undefined;
    if (!this.machine.isStreamLive(task.index)) return undefined;
    const sequencer = this.runs[this.machine.streamSourceOf(task.index)]?.sequencer;
    return sequencer?.finished === true ? sequencer.output() : undefined;
  }

  private fail(task: TaskRun, error: TaskError): void {
    this.machine.failed(task.index, error, now());
  }

  /** `task` reads its upstream outputs no more: they are wanted by one task fewer. */
  private doneReading(task: number): void {
    if (this.readingDone[task] === 1) return;
    this.readingDone[task] = 1;
    for (let k = this.readStart[task]!; k < this.readStart[task + 1]!; k++) {
      const upstream = this.reads[k]!;
      if (--this.readers[upstream]! === 0 && this.results !== undefined) this.canonicalOutputs[upstream] = undefined;
      this.outputs.release(this.model.tasks[upstream]!.id!);
    }
  }

  private async end(): Promise<void> {
    if (this.ending) return;
    this.ending = true;
    const finishedAt = now();
    this.deadlines.clear();
    await Promise.all(this.sends);
    await this.pool.closeAll();
    const made = this.machine.report({
      runId: this.id,
      finishedAt,
      outputOf: (task) => this.outputs.reported(this.model.tasks[task]!.id!),
      wireTaskId: (task) => `${this.model.tasks[task]!.id!}-${this.runTag}`,
      streamedEdges: this.streamedEdges,
      offersOf: (task) => this.offers[task],
      acceptedOf: (task) => this.accepted[task],
      cachedOf: (task) => this.cachedFrom[task],
    });
    const report = this.redactor.report(this.withMarket(made));
    this.emit({ type: 'run-finished', report });
    this.resolveDone(report);
  }

  /** The report with what the market part of the run adds: its routing, the plan's estimate, and the budget's account. */
  private withMarket(made: RunReport): RunReport {
    const { estimate } = this.options;
    const ledger = this.ledger;
    return {
      ...made,
      ...(estimate === undefined
        ? {}
        : { totals: { ...made.totals, estimated: { known_cu: estimate.known_cu, unpriced: estimate.unpriced } } }),
      routing: this.routing,
      ...(ledger === undefined
        ? {}
        : {
            budget: ledger.outcome(ledger.denied.length === 0 ? [] : this.restPrices()),
            // Its details quote providers' refusals, which may echo a token.
            spend: this.redactor.value(ledger.entries),
          }),
    };
  }

  /**
   * What each task that did not run would have cost: the price it went at or was offered, else the best advertised
   * price among its candidates (undefined when none is known).
   */
  private *restPrices(): Generator<number | undefined> {
    for (let task = 0; task < this.model.tasks.length; task++) {
      if (this.machine.stateOf(task) !== 'cancelled') continue;
      const offered = this.offers[task]?.reduce((best, offer) => Math.min(best, offer.price_cu), Infinity);
      const accepted = this.accepted[task]?.price_cu;
      if (accepted !== undefined) yield accepted;
      else if (offered !== undefined) yield offered;
      else yield this.cheapestAdvertised(task);
    }
  }

  private cheapestAdvertised(task: number): number | undefined {
    const declaration = this.model.tasks[task]!;
    const plain = (this.options.plainTasks?.[task] ?? declaration.node.value) as Record<string, unknown>;
    const terms = taskTerms(declaration.capability!, plain, NO_BUDGET);
    const routes = this.routeBook.routes(chooseProviders(this.pool, declaration.capability!), terms);
    return rankCandidates('cheapest', routes)[0]?.priceCu;
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

/** The output a result delivers, or what is wrong with it. */
function outputOf(task: TaskRun, result: InvokeResult): TaskOutput | string {
  const sequencer = task.sequencer;
  if (sequencer?.started === true && !sequencer.finished) {
    return `the output stream ended without its final chunk (${sequencer.delivered.length} chunk(s) in order)`;
  }
  if (result.output_streamed === true) {
    return sequencer?.finished === true ? sequencer.output() : 'the result says output_streamed but no stream came';
  }
  return resultOutput(result);
}

const NO_BUDGET = {};
const NO_VIOLATIONS: readonly string[] = Object.freeze([]);

/** A capability's routes, the same for every task of it. */
interface CapabilityRoutes {
  /** The providers that may take it, in the providers list's order. */
  readonly candidates: readonly ProviderConfig[];
  /** Its tasks are quoted: the routing policy compares, and some candidate may negotiate. */
  readonly quotes: boolean;
  /** The order of a direct run, when it is the same for every task (no candidate prices by tokens). */
  readonly ordered: readonly ProviderConfig[] | undefined;
}

/** Where `sendAtOnce` left off for `execute`: the candidate to go on with, and the attempts it made at it. */
interface Resume extends CandidatesFrom {
  readonly made?: AttemptsMade;
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
function refusedStream(task: TaskRun, answer: Answer | TransportError | undefined): boolean {
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
/** Whether `reads` from `from` on holds `upstream` (a task's reads so far: few, often one). */
function readsAlready(reads: readonly number[], from: number, upstream: number): boolean {
  for (let k = from; k < reads.length; k++) if (reads[k] === upstream) return true;
  return false;
}
