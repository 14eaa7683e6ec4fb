// The LSP run protocol, declared once for the server, the VS Code client and any other LSP client
// (server/README.md documents it): commands through `workspace/executeCommand`, progress as notifications.
import type { DagPlan } from './market';
import type { TaskOutput, FailurePolicy, RunEvent, RunStatus } from './report';

/** The outputs a report sends the client, and keeps for field-path completion: each at most, and all together. */
export const MAX_SENT_OUTPUT_BYTES = 1024 * 1024;
export const MAX_SENT_OUTPUTS_BYTES = 8 * 1024 * 1024;

/** The commands the server executes (`workspace/executeCommand`), each with one argument object. */
export const RUN_COMMANDS = {
  /** Runs a DAG; answers with the RunReport when the run ends. Arguments: RunDagArguments. */
  runDag: 'acmp.runDag',
  /** Cancels a run: every task not terminal yet. Arguments: CancelRunArguments. */
  cancelRun: 'acmp.cancelRun',
  /** Cancels a task and its downstream tasks (BFS). Arguments: CancelTaskArguments. */
  cancelTask: 'acmp.cancelTask',
  /** The result store: what it holds, or empties it. Arguments: ResultStoreArguments; answers ResultStoreAnswer. */
  resultStore: 'acmp.resultStore',
} as const;

export interface RunDagArguments {
  /** The DAG document (open in the client or on disk). */
  readonly uri: string;
  /** Chosen by the client so it can follow and cancel the run from its first event; made by the server if absent. */
  readonly runId?: string;
  readonly policy?: FailurePolicy;
  readonly maxConcurrency?: number;
  /** Bearer tokens by provider id, from the client's secret storage: used for this run only, never stored or logged. */
  readonly tokens?: Readonly<Record<string, string>>;
  /**
   * Outputs of tasks that completed in an earlier run, by task id: those tasks are not invoked again but complete at
   * once with these outputs (re-running what failed reuses what did not).
   */
  readonly reuse?: Readonly<Record<string, TaskOutput>>;
  /**
   * true: the run's events come in batches, `acmp/runEvents`, rather than one `acmp/runEvent` each (a client that
   * does not ask gets single events, as before batches existed).
   */
  readonly eventBatches?: boolean;
  /** The run's budget in CU instead of `acmp.run.maxCostCu` (0: none), e.g. raised to re-run what it stopped. */
  readonly maxCostCu?: number;
  /**
   * Runs a part of the DAG (run/selection.ts): these tasks, with the upstream tasks they need, whose outputs come from
   * the result store. The tasks named always run (the store is not asked for them).
   */
  readonly tasks?: readonly string[];
  /** As `tasks`, and everything downstream of them (downstream tasks use the store as any task does). */
  readonly from?: readonly string[];
  /**
   * Upstream tasks of `tasks`/`from` whose outputs the store lacks run too; without it such a run is refused with
   * RUN_NEEDS_UPSTREAM and the data NeedsUpstreamData.
   */
  readonly withUpstream?: boolean;
  /** Tasks that run again whatever the store holds (their new results replace the stored ones). */
  readonly refresh?: readonly string[];
  /** The run neither looks up nor keeps results (as `acmp.cache.enabled: false`). */
  readonly noCache?: boolean;
}

/** The error code of a runDag refused because upstream outputs it needs are not in the result store. */
export const RUN_NEEDS_UPSTREAM = -32010;

/** The data of a RUN_NEEDS_UPSTREAM error. */
export interface NeedsUpstreamData {
  /** The upstream tasks the store has no result for: they would run first (`withUpstream`). */
  readonly missing: readonly string[];
}

export interface ResultStoreArguments {
  readonly action: 'stats' | 'clear' | 'prune';
  /** `clear`: of this capability only. */
  readonly capability?: string;
  /** The settings (`acmp.cache.folder`, `acmp.cache.maxSizeMb`) of this document's folder; default the workspace's. */
  readonly uri?: string;
}

/** What the result store holds (run/resultStore.ts `storeStats`). */
export interface StoreStats {
  readonly folder: string;
  readonly results: number;
  /** The bytes of the results stored (what the bound counts). */
  readonly bytes: number;
  /** The bytes of the folder's files, results no longer stored but not compacted yet included. */
  readonly diskBytes: number;
  readonly oldestMadeAt?: string;
  readonly lastUsedAt?: string;
  /** Results by capability, most first. */
  readonly byCapability: readonly { readonly capability: string; readonly results: number; readonly bytes: number }[];
}

/** What `acmp.resultStore` answers: the store after the action, and what went. */
export interface ResultStoreAnswer {
  readonly stats: StoreStats;
  /** Results removed (`clear`) or evicted (`prune`). */
  readonly removed?: number;
}

export interface CancelRunArguments {
  readonly runId: string;
  readonly reason?: string;
}

export interface CancelTaskArguments {
  readonly runId: string;
  readonly taskId: string;
  readonly reason?: string;
}

/** Notification `acmp/runEvent`: every event of a run as it happens (state changes, chunks, heartbeats, costs). */
export const RUN_EVENT_NOTIFICATION = 'acmp/runEvent';

export interface RunEventParams {
  readonly uri: string;
  readonly event: RunEvent;
  /** The run is a durable run on the Restate engine at this ingress URL (absent: the server runs it itself). */
  readonly engine?: string;
}

/**
 * Notification `acmp/runEvents`, for a run started with `eventBatches`: the run's events in order, those of one turn
 * of the server's event loop in one notification (a 10,000-task run sends about 30,000 events in well under a
 * second; one JSON-RPC message each costs the client more than the events themselves). `run-finished` is sent at
 * once, last of its batch.
 */
export const RUN_EVENTS_NOTIFICATION = 'acmp/runEvents';

export interface RunEventsParams {
  readonly uri: string;
  readonly events: readonly RunEvent[];
  /** As RunEventParams.engine. */
  readonly engine?: string;
}

/**
 * Request `acmp/durableRuns`: the runs of the engine `acmp.engine.url` names (those started from the terminal or
 * another editor included), and from then on, while the connection lasts, the server follows them: it polls the
 * engine's run index every DURABLE_POLL_MS and sends the events of each run it has not followed yet, from the start
 * of the run's event log, as `acmp/runEvents` with `engine` set (one `run-started` first, `run-finished` last). A
 * client sends it again after a restart of the server, or when the setting changed.
 */
export const DURABLE_RUNS_REQUEST = 'acmp/durableRuns';

/** How often the server polls the engine's run index while a client follows durable runs. */
export const DURABLE_POLL_MS = 2_000;

/** Of the runs already in the index when the client asks, the newest this many are followed (older: listed only). */
export const MAX_DURABLE_RUNS_REPLAYED = 20;

export interface DurableRunsParams {
  /** Runs whose end the client knows already (kept from an earlier session): listed, but their events not sent. */
  readonly known?: readonly string[];
}

export interface DurableRunEntry {
  readonly runId: string;
  readonly dagId: string;
  readonly submittedAt: string;
  /** Always true: tells these apart from the server's own runs. */
  readonly durable: true;
  /** The workspace's DAG file of this dag_id, where the events of the run are sent; else the run's URL on the engine. */
  readonly uri: string;
  /** `submitted` until the workflow started. */
  readonly status: RunStatus | 'running' | 'submitted';
  readonly done: number;
  readonly total: number;
  readonly costCu: number;
}

export interface DurableRunsResult {
  /** The engine's ingress URL; absent when `acmp.engine.url` is empty or not a URL (and `runs` then empty). */
  readonly engine: string | undefined;
  /** Oldest first. */
  readonly runs: readonly DurableRunEntry[];
  /** Why the engine could not be asked (unreachable, not a URL): shown once, the runs then empty. */
  readonly error?: string;
}

/** The error `acmp.runDag` answers with when the DAG has errors (JSON-RPC RequestFailed, -32803). */
export interface RunRefusedData {
  /** Every error diagnostic: its code, message and 0-based line. */
  readonly errors: readonly { readonly code: string; readonly message: string; readonly line: number }[];
}

/**
 * Request `acmp/plan`: what running the DAG would cost and take, before it runs (market.ts DagPlan), with the routing
 * policy, concurrency and budget of the document's settings. Without `quote` it never reaches a provider: prices and
 * latencies are advertised or from past runs on this machine. With `quote`, each provider that may take a task is asked
 * for an offer (Layer 6 `acmp/offerRequest`, nothing accepted), and offers come first.
 */
export const PLAN_REQUEST = 'acmp/plan';

export interface PlanParams {
  readonly uri: string;
  readonly quote?: boolean;
  /** Bearer tokens by provider id for the quotes, as RunDagArguments.tokens: used for this request only. */
  readonly tokens?: Readonly<Record<string, string>>;
}

export interface PlanResult {
  readonly plan: DagPlan;
  /** The plan in one line (the CodeLens's title): `≈ 12.4 CU · 3.2 s critical path · 7 tasks unpriced`. */
  readonly summary: string;
  /** The whole plan as Markdown: a table of the tasks, the totals, what cannot run. */
  readonly markdown: string;
  /** Whether the providers were asked for quotes. */
  readonly quoted: boolean;
}

/**
 * The command of the plan's CodeLens on `dag_id` (no arguments: the active editor's DAG). VS Code's "ACMP: Show Plan"
 * shows the `acmp/plan` answer; another client maps the command to that request.
 */
export const SHOW_PLAN_COMMAND = 'acmp.showPlan';

/** Request `acmp/graph`: the DAG's graph for a graph view. */
export const GRAPH_REQUEST = 'acmp/graph';

export interface GraphParams {
  readonly uri: string;
  /** Also lay the graph out (`DagGraph.layout`): the server does it, off the view's UI thread. */
  readonly layout?: boolean;
  /**
   * Whether the answer waits for the document's plan when it is not made yet (the default), for the critical path:
   * `false` answers at once, with the critical path only when the plan of this text is made already (planning a
   * 10,000-task DAG takes most of a second, which a graph about to be drawn for the first time need not wait).
   */
  readonly waitForPlan?: boolean;
}

/**
 * Request `acmp/criticalPath`: the critical path of the document's plan, once the plan is made (a few ids): what a
 * graph view first drawn with `waitForPlan: false` asks next, instead of the whole graph again.
 */
export const CRITICAL_PATH_REQUEST = 'acmp/criticalPath';

export interface CriticalPathParams {
  readonly uri: string;
}

export interface CriticalPathResult {
  /** The version of the document the path is of: it belongs to the DagGraph of the same version. */
  readonly version: number;
  /** As DagGraph's. */
  readonly criticalPath?: DagGraph['criticalPath'];
}

/** A layered layout of a graph's nodes and edges (server/src/dag/layout.ts). */
export interface GraphLayout {
  readonly width: number;
  readonly height: number;
  /** The top-left corner of node n's box is (boxes[2n], boxes[2n + 1]). */
  readonly boxes: readonly number[];
  /**
   * Each edge's route as flat points [x0, y0, x1, y1, ...], from the box it leaves to the box it enters (a self-loop
   * leaves and enters the right side of its box). An edge that closes a cycle points upwards.
   */
  readonly routes: readonly (readonly number[])[];
}

/**
 * A layered layout of a DagGraph (server/src/dag/layout.ts): boxes of BOX_WIDTH × BOX_HEIGHT, first one for each of
 * `nodes`, then one for each of `missing`; one route for each of `edges`.
 */
export interface DagGraphLayout extends GraphLayout {
  /** The ids that edges name but no task declares, each drawn as a box of its own, in order of first mention. */
  readonly missing: readonly string[];
}

export interface DagGraph {
  /** The version of the document (as its didOpen and didChange) whose text this is the graph of. */
  readonly version: number;
  /** False while the text is not JSON: a view keeps the last good graph. */
  readonly parsed: boolean;
  readonly dagId: string | undefined;
  readonly nodes: readonly {
    readonly id: string;
    readonly capability: string | undefined;
    /** Where the task's `task_id` is (0-based line and character), to reveal it. */
    readonly line: number;
    readonly character: number;
  }[];
  readonly edges: readonly {
    readonly from: string;
    readonly to: string;
    readonly cycle: boolean;
    /** An end names no task. */
    readonly dangling: boolean;
    readonly streamEligible: boolean;
  }[];
  /** Present when asked for (`GraphParams.layout`). */
  readonly layout?: DagGraphLayout;
  /**
   * The critical path, in order: the longest by the plan's latencies, or by the number of tasks when no latency on the
   * graph is known (`by`). Absent while the graph has a cycle or no task.
   */
  readonly criticalPath?: {
    readonly taskIds: readonly string[];
    readonly by: 'latency' | 'depth';
    /** By latency: the path's estimated time, its tasks of unknown latency (`unknownLatency` of them) counted 0 ms. */
    readonly latencyMs?: number;
    readonly unknownLatency?: number;
  };
}
