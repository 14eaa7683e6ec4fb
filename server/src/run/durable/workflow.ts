// The Restate driver of the run machine: one workflow per run, keyed by the run id. The workflow feeds the
// machine (machine.ts) its events in the order the journal gives them and carries out its commands: each launched task
// is a durable step (`ctx.run`, taskStep.ts) whose outcome is journaled, a completed step is never sent again, and a
// step in flight when a worker or the server died is sent again with the same wire task id, which the provider
// deduplicates (Layer 1 §3.1.1). Which step ended first comes from `RestatePromise.race`, which the engine resolves
// from the journal's order of completions, so a replay feeds the machine the same events in the same order and it
// issues the same commands. User cancels reach the run through a mailbox object (RUN_CONTROL) that resolves an
// awakeable the workflow races with its steps; the workflow writes an append-only event log in its state, which
// `events` (a shared handler) pages through with a cursor: the engine has no push to clients.
// A run submitted with a routing policy or a budget prices its tasks first (taskDeals.ts): a task's quote, each
// accept and each invoke are steps of their own, in that order, and a denial by the budget is one too. A request
// with neither (as submitted before runs were priced) keeps one step per task, so that its journal replays.
// A run that uses the result store looks each task up first, as a step of its own (cacheStep.ts); a request that names
// none of the cache fields (as submitted before runs reused results) takes no such step, for the same reason.
import * as restate from '@restatedev/restate-sdk';
import { type DagAnalysis, analyzeDag } from '../../dag/analyze';
import type {
  AcceptedTerms,
  CachedFrom,
  TaskError,
  TaskOutput,
  RunEvent,
  RunReport,
  TaskState,
} from '../../protocol/report';
import type { DagModel, TaskDeclaration } from '../../dag/model';
import type { ProviderConfig } from '../../protocol/settings';
import { type InputResolution, resolveInput } from '../inputs';
import { chooseProviders, timeoutOf } from '../invokePolicy';
import { DEFAULT_QUOTE_TIMEOUT_MS, RouteBook, rankRoutes, taskTerms } from '../negotiation';
import { effectiveBudget } from '../budget';
import { ROUTING_POLICIES } from '../../protocol/market';
import { blockingDiagnostics, unservedRefusal } from '../refused';
import { type MachineCommand, RunMachine, recordCommands } from '../machine';
import { type Offer, messageOf } from '../../protocol/acmpMessages';
import { Redactor } from '../redaction';
import type { ProviderPool } from '../routing';
import { resultKey } from '../resultKey';
import type { StoreOptions } from '../resultStore';
import {
  type JournaledOutput,
  OutputStoreError,
  isJournaledOutput,
  isOutputRef,
  keepRunOutputs,
  outputOf,
  readOutputText,
} from './outputStore';
import {
  type ControlAnswer,
  type ControlRequest,
  INDEX_KEY,
  type EventsPage,
  OUTPUT_SERVICE,
  type OutputPiece,
  RUN_CONTROL,
  RUN_INDEX,
  RUN_RETENTION_MS,
  RUN_WORKFLOW,
  type RunIndexEntry,
  type RunProgress,
  type RunRequest,
} from '../../protocol/engineMessages';
import { type StepOutcome, acceptOffer, askQuotes, inputFromStore, runTaskStep } from './taskStep';
import { type AcceptOutcome, type NextStep, type QuoteOutcome, TaskDeals } from './taskDeals';
import { type CacheOutcome, type CacheUse, RunResults, lookUpResult } from './cacheStep';

/** What a worker gives the workflows it serves. */
export interface WorkerContext {
  readonly pool: ProviderPool;
  readonly storeDir: string;
  readonly journalLimitBytes: number;
  /** How long the engine keeps a run after its end, and lists it (RUN_RETENTION_MS unless a test shortens it). */
  readonly runRetentionMs?: number;
  /** The tokens the worker's providers get (redaction.ts `runSecrets`): blanked out of the reports it returns. */
  readonly secrets?: readonly string[];
  /** The result store its runs reuse results from and keep theirs in; none: every lookup misses, nothing is kept. */
  readonly results?: StoreOptions;
}

/** Events that make a batch of the log at once, and how long the first of a smaller batch waits for more. */
const FLUSH_EVENTS = 256;
const FLUSH_MS = 100;
/** Batches of the event log one `events` call returns at most. */
const PAGE_BATCHES = 64;
/** Characters of a stored output one `AcmpOutputs/read` returns at most (well below the 32 MiB message limit). */
const PIECE_CHARS = 4 * 1024 * 1024;

type Mailbox = { readonly requests: RestatePromise<{ readonly control: readonly ControlRequest[] }> };
type RestatePromise<T> = restate.RestatePromise<T>;
/** A step's journaled outcome, and the task and phase it belongs to. */
type Finished = { readonly task: number } & (
  | { readonly phase: 'cache'; readonly outcome: CacheOutcome }
  | { readonly phase: 'invoke'; readonly outcome: StepOutcome }
  | { readonly phase: 'quote'; readonly outcome: QuoteOutcome }
  | { readonly phase: 'accept'; readonly outcome: AcceptOutcome }
  | { readonly phase: 'deny'; readonly outcome: { readonly tsMs: number; readonly error: TaskError } }
);
type Woken = Finished | { readonly control: readonly ControlRequest[] } | { readonly flush: true };

const batchKey = (batch: number): string => `events.${batch}`;

/** The mailbox of a run: cancels wait in its state until the workflow arms an awakeable, then resolve it. */
const runControl = restate.object({
  name: RUN_CONTROL,
  handlers: {
    arm: async (ctx: restate.ObjectContext, awakeableId: string): Promise<void> => {
      const pending = (await ctx.get<ControlRequest[]>('pending')) ?? [];
      if (pending.length > 0) {
        ctx.resolveAwakeable(awakeableId, pending);
        ctx.clear('pending');
      } else ctx.set('armed', awakeableId);
    },
    request: async (ctx: restate.ObjectContext, request: ControlRequest): Promise<ControlAnswer> => {
      if ((await ctx.get<boolean>('closed')) === true) return 'ended';
      const armed = await ctx.get<string>('armed');
      if (armed !== null) {
        ctx.resolveAwakeable(armed, [request]);
        ctx.clear('armed');
      } else ctx.set('pending', [...((await ctx.get<ControlRequest[]>('pending')) ?? []), request]);
      return 'sent';
    },
    close: (ctx: restate.ObjectContext): Promise<void> => {
      ctx.set('closed', true);
      ctx.clear('armed');
      ctx.clear('pending');
      return Promise.resolve();
    },
  },
});

/** The runs the engine knows, for `acmp-dag runs` and to tell an unknown run id. */
const runIndex = restate.object({
  name: RUN_INDEX,
  handlers: {
    add: (ctx: restate.ObjectContext, entry: RunIndexEntry): Promise<void> => {
      ctx.set(`run.${entry.run_id}`, entry);
      return Promise.resolve();
    },
    list: restate.handlers.object.shared(
      { journalRetention: 0 },
      async (ctx: restate.ObjectSharedContext): Promise<RunIndexEntry[]> => {
        const entries: RunIndexEntry[] = [];
        for (const key of await ctx.stateKeys()) {
          const entry = key.startsWith('run.') ? await ctx.get<RunIndexEntry>(key) : null;
          if (entry !== null) entries.push(entry);
        }
        return entries;
      },
    ),
    get: restate.handlers.object.shared(
      { journalRetention: 0 },
      async (ctx: restate.ObjectSharedContext, runId: string): Promise<RunIndexEntry | null> =>
        ctx.get<RunIndexEntry>(`run.${runId}`),
    ),
    /** A run the engine no longer keeps leaves the index too (sent by the run at its end, delayed). */
    remove: (ctx: restate.ObjectContext, runId: string): Promise<void> => {
      ctx.clear(`run.${runId}`);
      return Promise.resolve();
    },
  },
});

export function durableServices(worker: WorkerContext) {
  const outputs = restate.service({
    name: OUTPUT_SERVICE,
    handlers: {
      // Anyone who reaches the ingress may call it: whatever it is handed, it answers or refuses (terminal: a bad
      // request asked again stays bad), and it reads only files of the store's own keys.
      read: restate.handlers.handler(
        { journalRetention: 0 },
        (_ctx: restate.Context, request: { output: JournaledOutput; from: number } | null): Promise<OutputPiece> =>
          Promise.resolve().then(() => {
            const output: unknown = request?.output;
            if (!isJournaledOutput(output) || !isOutputRef(output))
              throw new restate.TerminalError('not a stored output');
            let text: string;
            try {
              text = readOutputText(output, worker.storeDir);
            } catch (error) {
              throw new restate.TerminalError(messageOf(error));
            }
            const from = typeof request?.from === 'number' && request.from > 0 ? Math.trunc(request.from) : 0;
            return { text: text.slice(from, from + PIECE_CHARS), rest: Math.max(0, text.length - from - PIECE_CHARS) };
          }),
      ),
    },
  });

  const runWorkflow = restate.workflow({
    name: RUN_WORKFLOW,
    handlers: {
      run: async (ctx: restate.WorkflowContext, request: RunRequest): Promise<RunReport> =>
        runDag(ctx, request, worker),
      events: restate.handlers.workflow.shared(
        { journalRetention: 0 },
        async (ctx: restate.WorkflowSharedContext, cursor: { from: number }): Promise<EventsPage> => {
          const progress = (await ctx.get<RunProgress>('progress')) ?? undefined;
          if (progress === undefined) return { events: [], next: 0, progress };
          const from = Math.max(0, Math.trunc(cursor?.from ?? 0));
          const to = Math.min(progress.batches, from + PAGE_BATCHES);
          // One read at a time: the SDK awaits one state read of a lazy-state handler at once.
          const events: RunEvent[] = [];
          for (let batch = from; batch < to; batch++)
            events.push(...((await ctx.get<RunEvent[]>(batchKey(batch))) ?? []));
          return { events, next: Math.max(from, to), progress };
        },
      ),
    },
    options: {
      // The run handler never reads its state, and `events` reads a few batches: neither needs it all sent eagerly.
      enableLazyState: true,
      // A task may hold its step for its whole timeout_ms; the engine must not abort the invocation meanwhile.
      inactivityTimeout: { minutes: 10 },
      abortTimeout: { hours: 1 },
      // The output store keeps a run's stored outputs as long (outputStore.ts sweeps them after it).
      workflowRetention: worker.runRetentionMs ?? RUN_RETENTION_MS,
    },
  });
  return [runWorkflow, runControl, runIndex, outputs];
}

/** The run: the machine driven by the journal's events, its commands carried out as durable steps. */
async function runDag(ctx: restate.WorkflowContext, request: RunRequest, worker: WorkerContext): Promise<RunReport> {
  const analysis = analyseOrRefuse(request);
  // A task none of this worker's providers offers would fail only after the others were paid for.
  const refusal = unservedRefusal(analysis.model, worker.pool.providers);
  if (refusal !== undefined) throw new restate.TerminalError(`not running: ${refusal.message}`);
  // Fixed by the journal: the wire task ids a replay sends are those the first attempt sent.
  const runTag = ctx.rand.uuidv4();
  const startedAt = await ctx.date.toJSON();
  const cache = cacheUseOf(request);
  // Outside the journal: what the store answers reaches the run only through the journaled `cache` steps.
  const results =
    cache === undefined || worker.results === undefined
      ? undefined
      : await RunResults.open(worker.results, ctx.request().attemptCompletedSignal);
  const run = new DurableRun(ctx, worker, analysis, runTag, startedAt, request, cache, results);
  run.begin(request.reuse);
  await run.untilFinished();
  const report = await run.end();
  // Written before the report goes out: a run submitted once this one ended finds its results.
  await results?.close();
  return report;
}

/** The DAG of a run request, analysed; a request whose DAG has errors is refused for good (terminal). */
function analyseOrRefuse(request: RunRequest): DagAnalysis {
  // The ingress takes any JSON: a request without a DAG would throw here at every attempt, the engine retrying it.
  if (typeof request?.dag !== 'string') throw new restate.TerminalError('the run request carries no DAG text');
  const analysis = analyzeDag(request.dag, { keepValue: true });
  const errors = blockingDiagnostics(analysis);
  if (errors.length > 0) {
    throw new restate.TerminalError(
      `the DAG has ${errors.length} error(s): ${errors.map((error) => `${error.code}: ${error.message}`).join('; ')}`,
    );
  }
  return analysis;
}

/**
 * How a run request prices its tasks: undefined for one with neither routing nor budget (submitted before runs were
 * priced). The ingress takes any JSON: a routing or budget that is not one is refused for good (terminal).
 */
function dealsOf(request: RunRequest): TaskDeals | undefined {
  const { routing, budget } = request;
  if (routing === undefined && budget === undefined) return undefined;
  if (routing !== undefined && !ROUTING_POLICIES.includes(routing)) {
    throw new restate.TerminalError(`unknown routing ${JSON.stringify(routing)} (${ROUTING_POLICIES.join(', ')})`);
  }
  if (budget !== undefined && (budget === null || typeof budget !== 'object')) {
    throw new restate.TerminalError("the run request's budget is not an object");
  }
  const limit = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
  const limits =
    budget === undefined
      ? undefined
      : effectiveBudget({
          total_cap_cu: limit(budget.total_cap_cu),
          per_task_max_cu: limit(budget.per_task_max_cu),
        });
  return new TaskDeals(routing ?? 'cheapest', limits);
}

/**
 * How a run request uses the result store; undefined for one that does not (`noCache`). The ingress takes any JSON: a
 * cache field of another type is refused for good (terminal).
 */
function cacheUseOf(request: RunRequest): CacheUse | undefined {
  const { noCache, refresh, cacheExclude, cachePerProvider } = request;
  const flag = (value: unknown, name: string): boolean => {
    if (value !== undefined && typeof value !== 'boolean')
      throw new restate.TerminalError(`the run request's ${name} is not true or false`);
    return value === true;
  };
  const names = (value: unknown, name: string): ReadonlySet<string> => {
    if (value !== undefined && !(Array.isArray(value) && value.every((item) => typeof item === 'string')))
      throw new restate.TerminalError(`the run request's ${name} is not a list of names`);
    return new Set(value as readonly string[] | undefined);
  };
  const use: CacheUse = {
    lookups: [noCache, refresh, cacheExclude, cachePerProvider].some((field) => field !== undefined),
    refresh: names(refresh, 'refresh'),
    exclude: names(cacheExclude, 'cacheExclude'),
    perProvider: flag(cachePerProvider, 'cachePerProvider'),
  };
  return flag(noCache, 'noCache') ? undefined : use;
}

/** A task's durable step in flight, and how to let go of it. */
interface RunningStep {
  readonly step: RestatePromise<Finished>;
  readonly abort: AbortController;
}

/** When a task's invoke may leave (`after`), and how it lets the next task's go (`release`). */
interface InvokeGate {
  readonly after: Promise<void>;
  readonly release: () => void;
}

const isoOf = (tsMs: number): string => new Date(tsMs).toISOString();

/**
 * One run's machine and the durable steps it launched. Its methods are the run's phases, called in order by runDag;
 * each makes its journal entries (ctx.run, ctx.set, sends, awakeables, timers) in the order a replay expects.
 */
class DurableRun {
  private readonly runId: string;
  private readonly model: DagModel;
  private readonly plainTasks: Record<string, unknown>[];
  private readonly commands: MachineCommand[] = [];
  private readonly machine: RunMachine;
  private readonly outputs: (JournaledOutput | undefined)[];
  private readonly inFlight = new Map<number, RunningStep>();
  // The SDK runs a step's closure when the run awaits it, in an order of its own: a task launched later could reach
  // its provider first. A task launched while the run is live (not replaying, so its closures will run) sends its
  // invoke only once the task launched live before it sent its own or ended without: invokes leave in launch order,
  // as in memory, whatever the quotes before them took. Replayed tasks never run their closures: nothing waits for them.
  private previousStart: Promise<void> = Promise.resolve();
  private readonly gates = new Map<number, InvokeGate>();
  /** How the run prices its tasks; undefined for a request without routing or budget (one step per task). */
  private readonly deals: TaskDeals | undefined;
  private readonly quoteTimeoutMs: number;
  /** What a task's next steps need (once its lookup missed, once its price is agreed): its input and candidates. */
  private readonly pending = new Map<
    number,
    { readonly input: InputResolution | undefined; readonly candidates: readonly ProviderConfig[] }
  >();
  /** Steps of tasks the run no longer wants: they end quickly (aborted), and the run waits for them before it ends. */
  private readonly abandoned: RestatePromise<Finished>[] = [];
  private readonly log: EventLog;
  private mailbox!: Mailbox;
  private finished = false;
  /** By task, where its output came from when the result store had it. */
  private readonly cachedFrom: (CachedFrom | undefined)[];
  private readonly redactor: Redactor;

  constructor(
    private readonly ctx: restate.WorkflowContext,
    private readonly worker: WorkerContext,
    analysis: DagAnalysis,
    private readonly runTag: string,
    private readonly startedAt: string,
    request: RunRequest,
    private readonly cache: CacheUse | undefined,
    private readonly results: RunResults | undefined,
  ) {
    this.runId = ctx.key;
    this.model = analysis.model;
    this.plainTasks = (analysis.value as { tasks: Record<string, unknown>[] }).tasks;
    this.machine = new RunMachine(
      this.model,
      { policy: request.policy, maxConcurrency: request.maxConcurrency },
      recordCommands(this.commands),
    );
    this.outputs = new Array<JournaledOutput | undefined>(this.machine.size);
    this.cachedFrom = new Array<CachedFrom | undefined>(this.machine.size);
    this.redactor = new Redactor(worker.secrets ?? []);
    this.log = new EventLog(ctx, this.runId, this.machine.size);
    this.deals = dealsOf(request);
    const wait = request.quoteTimeoutMs;
    // The submitter's JSON: a wait that is not a positive number of ms is the default.
    this.quoteTimeoutMs =
      typeof wait === 'number' && Number.isFinite(wait) && wait > 0 ? wait : DEFAULT_QUOTE_TIMEOUT_MS;
  }

  private wireTaskId(task: number): string {
    return `${this.model.tasks[task]!.id!}-${this.runTag}`;
  }

  private readonly upstream = (taskId: string): JournaledOutput => this.outputs[this.machine.taskOf(taskId)!]!;

  /** Arms the mailbox, starts the machine on the outputs the request reuses, and launches the first tasks. */
  begin(reuse: RunRequest['reuse']): void {
    const { model, machine } = this;
    this.mailbox = armMailbox(this.ctx, this.runId);
    this.log.add(
      {
        type: 'run-started',
        dag_id: model.dagId ?? '',
        policy: machine.policy,
        tasks: model.tasks.map((task) => task.id!),
      },
      this.startedAt,
    );
    const reused: number[] = [];
    for (const [taskId, output] of Object.entries(reuse ?? {})) {
      const task = machine.taskOf(taskId);
      // The submitter's JSON: what is not an output (or a reference of the store's form) is not reused, the task runs.
      if (task === undefined || !isJournaledOutput(output)) continue;
      this.outputs[task] = output;
      reused.push(task);
    }
    machine.start(this.startedAt, reused);
    this.carryOut(this.startedAt);
    this.log.flush('running');
  }

  /** Carries out the commands the last event made, and the events they lead to (a launch whose input fails). */
  private carryOut(at: string): void {
    for (let next = this.commands.shift(); next !== undefined; next = this.commands.shift()) {
      if (next.type === 'launch') this.launch(next.task, at);
      else if (next.type === 'finished') this.finished = true;
      else {
        const running = this.inFlight.get(next.task);
        this.gates.get(next.task)?.release();
        this.gates.delete(next.task);
        this.pending.delete(next.task);
        if (running !== undefined) {
          running.abort.abort(next.error?.message ?? 'cancelled');
          this.inFlight.delete(next.task);
          this.abandoned.push(running.step);
          this.deals?.released(next.task, Date.parse(at));
        }
        this.log.settled(this.model.tasks[next.task]!.id!, next.state, next.error, this.cachedFrom[next.task], at);
      }
    }
  }

  /** Resolves a task's input and starts its durable step (or fails the task when its input cannot be made). */
  private launch(task: number, at: string): void {
    const declaration = this.model.tasks[task]!;
    const plain = this.plainTasks[task]!;
    // An input made of journaled outputs is made now; one that reads stored outputs, in the step (inputFromStore).
    const input: InputResolution | undefined = readsStore(declaration, this.upstream)
      ? undefined
      : resolveInput(declaration, plain.input, this.upstream as (taskId: string) => TaskOutput);
    if (input?.ok === false) {
      this.machine.failed(task, input.error, at);
      return;
    }
    const candidates: readonly ProviderConfig[] = chooseProviders(this.worker.pool, declaration.capability!);
    // Taken at the launch, before any lookup: invokes leave in launch order, whichever lookup ended first.
    this.gate(task);
    const { cache } = this;
    if (cache?.lookups === true && !cache.refresh.has(declaration.id!) && !cache.exclude.has(declaration.capability!)) {
      this.pending.set(task, { input, candidates });
      this.inFlight.set(task, this.cacheStep(task, input, candidates, cache));
      return;
    }
    this.send(task, input, candidates, at);
  }

  /** The task's first step to its providers: its quote (a priced run) or its invoke. */
  private send(
    task: number,
    input: InputResolution | undefined,
    candidates: readonly ProviderConfig[],
    at: string,
  ): void {
    const declaration = this.model.tasks[task]!;
    const { deals } = this;
    if (deals !== undefined) {
      this.pending.set(task, { input, candidates });
      const terms = taskTerms(declaration.capability!, this.plainTasks[task]!, deals.budget);
      this.follow(task, deals.start(task, declaration.id!, candidates, terms, Date.parse(at)), at);
      return;
    }
    this.pending.delete(task);
    if (candidates[0] !== undefined) this.machine.providerChosen(task, candidates[0].id);
    this.log.add(
      {
        type: 'task-state',
        task_id: declaration.id!,
        state: 'running',
        ...(candidates[0] === undefined ? {} : { provider_id: candidates[0].id }),
      },
      at,
    );
    this.inFlight.set(task, this.startStep(task, input, candidates, declaration.maxPriceCu));
  }

  /** The task's place in the order invokes leave in: after the task launched live before it. */
  private gate(task: number): void {
    let release!: () => void;
    const started = new Promise<void>((resolve) => (release = resolve));
    const live = isLive(this.ctx);
    this.gates.set(task, { after: live ? this.previousStart : Promise.resolve(), release });
    this.previousStart = live ? started : Promise.resolve();
  }

  /** Takes the step a priced task is to take next (taskDeals.ts), at `at`. */
  private follow(task: number, next: NextStep, at: string): void {
    const id = this.model.tasks[task]!.id!;
    switch (next.kind) {
      case 'quote':
        return void this.inFlight.set(task, this.quoteStep(task, next.candidates));
      case 'accept':
        return void this.inFlight.set(task, this.acceptStep(task, next.candidate, next.offer));
      case 'deny': {
        const error = next.error;
        const step = this.ctx
          .run(`deny ${id}`, () => ({ tsMs: Date.now(), error }))
          .map((outcome) => ({ task, phase: 'deny', outcome: outcome! }) as const);
        return void this.inFlight.set(task, { step, abort: new AbortController() });
      }
      case 'invoke':
        return this.invoke(task, next.candidate, next.terms, at);
      case 'fail':
        this.pending.delete(task);
        return void this.machine.failed(task, next.error, at);
      case 'done':
        return;
    }
  }

  /** A cache step: the task's result looked up in the store (inputs of stored outputs read there, as the invoke does). */
  private cacheStep(
    task: number,
    input: InputResolution | undefined,
    candidates: readonly ProviderConfig[],
    cache: CacheUse,
  ): RunningStep {
    const { worker, upstream, results, runId } = this;
    const declaration = this.model.tasks[task]!;
    const plain = this.plainTasks[task]!;
    const step = this.ctx
      .run(`cache ${declaration.id!}`, () =>
        lookUpResult(
          results,
          {
            runId,
            task,
            capability: declaration.capability!,
            plain,
            input: input ?? inputFromStore(declaration, plain.input, upstream, worker.storeDir),
            ...(cache.perProvider ? { providerIds: candidates.map((provider) => provider.id) } : {}),
          },
          worker,
        ),
      )
      .map((outcome) => ({ task, phase: 'cache', outcome: outcome! }) as const);
    return { step, abort: new AbortController() };
  }

  /** A quote step: the offer requests of the task to the candidates at `places`. */
  private quoteStep(task: number, places: readonly number[]): RunningStep {
    const { candidates } = this.pending.get(task)!;
    const declaration = this.model.tasks[task]!;
    const terms = taskTerms(declaration.capability!, this.plainTasks[task]!, this.deals!.budget);
    const asked = places.map((candidate) => ({ candidate, provider: candidates[candidate]! }));
    const step = this.ctx
      .run(`quote ${declaration.id!}`, () => askQuotes(this.worker.pool, asked, terms, this.quoteTimeoutMs))
      .map((outcome) => ({ task, phase: 'quote', outcome: outcome! }) as const);
    return { step, abort: new AbortController() };
  }

  /** An accept step: the offer, journaled by the quote step before it, accepted at its provider. */
  private acceptStep(task: number, candidate: number, offer: Offer): RunningStep {
    const provider = this.pending.get(task)!.candidates[candidate]!;
    const timeoutMs = timeoutOf(this.plainTasks[task]!);
    const abort = new AbortController();
    const step = this.ctx
      .run(`accept ${this.model.tasks[task]!.id!}`, () =>
        acceptOffer(this.worker.pool, provider, offer.offer_id, timeoutMs, abort.signal),
      )
      .map((outcome) => ({ task, phase: 'accept', outcome: outcome! }) as const);
    return { step, abort };
  }

  /** The invoke step of a priced task, at the provider it goes to, with the `max_price_cu` its terms say. */
  private invoke(task: number, candidate: number, terms: AcceptedTerms, at: string): void {
    const { input, candidates } = this.pending.get(task)!;
    this.machine.providerChosen(task, terms.provider_id);
    this.log.add(
      {
        type: 'task-state',
        task_id: this.model.tasks[task]!.id!,
        state: 'running',
        provider_id: terms.provider_id,
        pricing: terms.pricing,
        ...(terms.price_cu === undefined ? {} : { price_cu: terms.price_cu }),
      },
      at,
    );
    this.inFlight.set(task, this.startStep(task, input, [candidates[candidate]!], terms.max_price_cu, true));
  }

  /** The invoke step of a launched task, sent in launch order after the task launched live before it. */
  private startStep(
    task: number,
    input: InputResolution | undefined,
    candidates: readonly ProviderConfig[],
    maxPriceCu: number | undefined,
    priced = false,
  ): RunningStep {
    const { worker, upstream } = this;
    const declaration = this.model.tasks[task]!;
    const own = this.plainTasks[task]!;
    // The invoke carries the agreed ceiling as its max_price_cu (an accepted offer's price: our tie of the two).
    const plain = maxPriceCu === own.max_price_cu ? own : { ...own, max_price_cu: maxPriceCu };
    const abort = new AbortController();
    const gate = this.gates.get(task);
    const after = gate === undefined || !isLive(this.ctx) ? Promise.resolve() : gate.after;
    // A replayed step's closure never runs: the next task's invoke must not wait for it.
    if (!isLive(this.ctx)) gate?.release();
    const step = this.ctx
      .run(`task ${declaration.id!}`, async () => {
        await after;
        gate?.release();
        return runTaskStep(
          {
            runId: this.runId,
            task,
            wireTaskId: this.wireTaskId(task),
            capability: declaration.capability!,
            plain,
            input: input ?? inputFromStore(declaration, plain.input, upstream, worker.storeDir),
            maxPriceCu,
            candidates,
            ...(priced ? { refusalEnds: true } : {}),
          },
          {
            pool: worker.pool,
            storeDir: worker.storeDir,
            journalLimitBytes: worker.journalLimitBytes,
            signal: abort.signal,
          },
        );
      })
      .map((outcome) => ({ task, phase: 'invoke', outcome: outcome! }) as const);
    return { step, abort };
  }

  /** Feeds the machine the steps' outcomes and the cancels, in the journal's order, until it says the run finished. */
  async untilFinished(): Promise<void> {
    // Events reach the log in batches: at FLUSH_EVENTS of them, or when a durable timer armed with the first of a batch
    // fires (journaled like the steps, so a replay flushes at the same points). A state write per event would cost
    // more journal entries than the steps themselves.
    let flushTimer: RestatePromise<{ readonly flush: true }> | undefined;
    while (!this.finished) {
      if (this.log.size >= FLUSH_EVENTS) {
        this.log.flush('running');
      } else if (this.log.size > 0 && flushTimer === undefined) {
        flushTimer = this.ctx.sleep(FLUSH_MS).map(() => ({ flush: true }) as const);
      }
      const woken: Woken = await restate.RestatePromise.race([
        ...Array.from(this.inFlight.values(), (entry) => entry.step),
        this.mailbox.requests,
        ...(flushTimer === undefined ? [] : [flushTimer]),
      ]);
      if ('flush' in woken) {
        flushTimer = undefined;
        this.log.flush('running');
        continue;
      }
      this.carryOut('control' in woken ? this.cancel(woken.control) : this.stepEnded(woken));
    }
  }

  /** Hands the machine a batch of cancels and arms the mailbox for the next; returns when the last was made. */
  private cancel(controls: readonly ControlRequest[]): string {
    for (const control of controls) {
      const task = control.task === undefined ? undefined : this.machine.taskOf(control.task);
      if (control.task === undefined) this.machine.cancelRun(control.reason, control.at);
      else if (task !== undefined) this.machine.cancelTask(task, control.reason, control.at);
    }
    this.mailbox = armMailbox(this.ctx, this.runId);
    return controls[controls.length - 1]?.at ?? this.startedAt;
  }

  /** Hands a step's outcome to the task's pricing or the machine; returns when the step ended. */
  private stepEnded(finished: Finished): string {
    const { task } = finished;
    this.inFlight.delete(task);
    if (finished.phase === 'cache') return this.cacheEnded(task, finished.outcome);
    if (finished.phase === 'invoke') return this.invokeEnded(task, finished.outcome);
    const at = isoOf(finished.outcome.tsMs);
    const deals = this.deals!;
    if (finished.phase === 'quote') this.follow(task, deals.quoted(task, finished.outcome), at);
    else if (finished.phase === 'accept') this.follow(task, deals.acceptEnded(task, finished.outcome), at);
    else {
      deals.denied(task);
      this.pending.delete(task);
      this.machine.notCovered(task, finished.outcome.error, at);
    }
    return at;
  }

  /**
   * A hit completes the task with the stored output, from the provider that made it, at no cost (as the in-memory
   * executor's `fromStore`); after a miss the task goes to its providers.
   */
  private cacheEnded(task: number, outcome: CacheOutcome): string {
    const { at } = outcome;
    if (!outcome.hit) {
      const { input, candidates } = this.pending.get(task)!;
      this.send(task, input, candidates, at);
      return at;
    }
    this.outputs[task] = outcome.output;
    this.cachedFrom[task] = outcome.cached;
    this.machine.providerChosen(task, outcome.providerId);
    this.machine.completed(task, at, { costCu: 0, tokensUsed: 0, proof: outcome.proof, violations: [] });
    return at;
  }

  /**
   * Keeps a result the run paid for in the store, under the in-memory executor's rules (`keepResult`): its capability
   * is not excluded, its proof did not fail, and it holds none of the run's tokens (this driver streams neither
   * inputs nor outputs). Outside the journal: a replay hands the result in again, and one kept already is left.
   */
  private keepResult(task: number, outcome: Extract<StepOutcome, { ok: true }>): void {
    const { results, cache } = this;
    if (results === undefined || cache === undefined) return;
    const declaration = this.model.tasks[task]!;
    const capability = declaration.capability!;
    if (cache.exclude.has(capability) || outcome.proof === 'mismatch') return;
    const plain = this.plainTasks[task]!;
    const input = readsStore(declaration, this.upstream)
      ? inputFromStore(declaration, plain.input, this.upstream, this.worker.storeDir)
      : resolveInput(declaration, plain.input, this.upstream as (taskId: string) => TaskOutput);
    if (!input.ok) return;
    const key = resultKey(capability, input.input, plain, cache.perProvider ? outcome.providerId : undefined);
    if (results.holds(key, outcome.at)) return;
    let output: TaskOutput;
    try {
      output = outputOf(outcome.output, this.worker.storeDir);
    } catch (error) {
      // Swept or changed since the step wrote it: nothing to keep.
      if (!(error instanceof OutputStoreError)) throw error;
      return;
    }
    if (this.redactor.reveals(output)) return;
    results.keep(key, {
      run_id: this.runId,
      task_id: declaration.id!,
      made_at: outcome.at,
      cost_cu: outcome.costCu,
      output,
      provider_id: outcome.providerId,
      capability,
      proof: outcome.proof,
    });
  }

  /** Hands the machine an invoke's outcome (its cost logged when it succeeded), or moves a refused task on. */
  private invokeEnded(task: number, outcome: StepOutcome): string {
    const { machine, deals } = this;
    const declaration = this.model.tasks[task]!;
    const at = outcome.at;
    if (outcome.providerId !== undefined) machine.providerChosen(task, outcome.providerId);
    if (deals !== undefined) {
      const tsMs = Date.parse(at);
      const next = deals.invokeEnded(
        task,
        outcome.ok
          ? { ok: true, tsMs, providerId: outcome.providerId, costCu: outcome.costCu }
          : { ok: false, tsMs, error: outcome.error },
      );
      if (next.kind !== 'done') {
        this.follow(task, next, at);
        return at;
      }
      this.pending.delete(task);
    }
    if (!outcome.ok) {
      machine.failed(task, outcome.error, at);
      return at;
    }
    this.outputs[task] = outcome.output;
    this.keepResult(task, outcome);
    this.log.add(
      {
        type: 'cost',
        task_id: declaration.id!,
        cost_cu: outcome.costCu,
        tokens_used: outcome.tokensUsed,
        ...maxPriceOf(this.deals?.acceptedOf(task), declaration.maxPriceCu),
        violation: outcome.violations.some((violation) => violation.startsWith('cost_cu')),
      },
      at,
    );
    machine.completed(task, at, outcome);
    return at;
  }

  /** The lowest advertised price among a task's candidates; undefined when none is known. */
  private cheapestAdvertised(task: number): number | undefined {
    const declaration = this.model.tasks[task]!;
    const terms = taskTerms(declaration.capability!, this.plainTasks[task]!, {});
    const routes = new RouteBook().routes(chooseProviders(this.worker.pool, declaration.capability!), terms);
    return rankRoutes('cheapest', routes)[0]?.priceCu;
  }

  /** Waits for the abandoned steps, closes the mailbox, and logs and returns the report (its tokens blanked out). */
  async end(): Promise<RunReport> {
    const { ctx, runId, worker, outputs } = this;
    // Aborted steps end at once; their outcomes change nothing, but the invocation may not end with steps open.
    if (this.abandoned.length > 0) await restate.RestatePromise.allSettled(this.abandoned);
    ctx.objectSendClient(runControl, runId).close();
    // The engine forgets the run its retention after its end: `runs` must not list it after.
    ctx
      .objectSendClient(runIndex, INDEX_KEY)
      .remove(runId, restate.rpc.sendOpts({ delay: { milliseconds: worker.runRetentionMs ?? RUN_RETENTION_MS } }));
    // Outside a step (no journal entry): it only puts off the sweep of the outputs the report refers to, and doing it
    // again on a replay does no harm.
    keepRunOutputs(worker.storeDir, runId, outputs);
    const finishedAt = await ctx.date.toJSON();
    const { deals } = this;
    const machineReport = this.machine.report({
      runId,
      finishedAt,
      outputOf: (task) => outputs[task] as RunReport['result'][string] | undefined,
      wireTaskId: (task) => this.wireTaskId(task),
      streamedEdges: [],
      cachedOf: (task) => this.cachedFrom[task],
      ...(deals === undefined
        ? {}
        : { offersOf: (task: number) => deals.offersOf(task), acceptedOf: (task: number) => deals.acceptedOf(task) }),
    });
    const report: RunReport =
      deals === undefined
        ? machineReport
        : { ...machineReport, ...deals.report(machineReport, (task) => this.cheapestAdvertised(task)) };
    // The log says the run ended and how; the report itself, outputs, spend log and all, is the workflow's result.
    this.log.add({ type: 'run-finished', report: logged(report) }, finishedAt);
    this.log.flush(report.status);
    // Downstream tasks had the outputs as sent (the journal keeps them so); whoever reads the report sees no token.
    return this.redactor.report(report);
  }
}

/** The report as the event log gives it: without its tasks, outputs and spend log, which the workflow's result has. */
function logged(report: RunReport): RunReport {
  const shown: Record<string, unknown> = { ...report, tasks: [], result: {} };
  delete shown.spend;
  return shown as unknown as RunReport;
}

/** The `max_price_cu` a task's cost is checked against: the agreed one of a priced task, else its own. */
function maxPriceOf(terms: AcceptedTerms | undefined, own: number | undefined): { max_price_cu?: number } {
  const maxPriceCu = terms === undefined ? own : terms.max_price_cu;
  return maxPriceCu === undefined ? {} : { max_price_cu: maxPriceCu };
}

/** Whether `task`'s input reads outputs that are in the store (their references are in the journal). */
function readsStore(task: TaskDeclaration, upstream: (taskId: string) => JournaledOutput): boolean {
  if (task.inputForm !== 'reference') return false;
  for (let position = 0; position < task.referenceCount; position++)
    if (isOutputRef(upstream(task.referencedId(position)))) return true;
  return false;
}

/** Whether the run is past its replay: a step it launches now is new, and the SDK will run its closure. */
function isLive(ctx: restate.WorkflowContext): boolean {
  // Not in the SDK's public types; ContextImpl has it (SDK 1.17, pinned). Without it no step waits for another.
  return (ctx as unknown as { isProcessing?: () => boolean }).isProcessing?.() === true;
}

/** A fresh awakeable for the next batch of cancels, handed to the run's mailbox. */
function armMailbox(ctx: restate.WorkflowContext, runId: string): Mailbox {
  const awakeable = ctx.awakeable<ControlRequest[]>();
  ctx.objectSendClient(runControl, runId).arm(awakeable.id);
  return { requests: awakeable.promise.map((control) => ({ control: control ?? [] })) };
}

/** The run's append-only event log in the workflow's state: one key per batch of events, and the progress. */
class EventLog {
  private pending: RunEvent[] = [];
  private batches = 0;
  private done = 0;
  private costCu = 0;

  constructor(
    private readonly ctx: restate.WorkflowContext,
    private readonly runId: string,
    private readonly total: number,
  ) {}

  /** Events not in the log yet. */
  get size(): number {
    return this.pending.length;
  }

  add(body: DistributiveOmit<RunEvent, 'run_id' | 'at'>, at: string): void {
    if (body.type === 'cost') this.costCu += body.cost_cu;
    this.pending.push({ ...body, run_id: this.runId, at });
  }

  settled(
    taskId: string,
    state: TaskState,
    error: TaskError | undefined,
    cached: CachedFrom | undefined,
    at: string,
  ): void {
    this.done++;
    this.add(
      {
        type: 'task-state',
        task_id: taskId,
        state,
        ...(error === undefined ? {} : { error }),
        ...(cached === undefined ? {} : { cached }),
      },
      at,
    );
  }

  flush(status: RunProgress['status']): void {
    if (this.pending.length === 0 && status === 'running') return;
    if (this.pending.length > 0) this.ctx.set(batchKey(this.batches++), this.pending);
    this.pending = [];
    const progress: RunProgress = {
      status,
      done: this.done,
      total: this.total,
      cost_cu: this.costCu,
      batches: this.batches,
    };
    this.ctx.set('progress', progress);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
