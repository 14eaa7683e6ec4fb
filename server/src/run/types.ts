// The executor's contracts: what a provider connection offers it, how a run is asked for and handled (design.md §5-§7;
// the events it emits and the report it returns cross processes and are protocol/report.ts). The language server, the
// CLI and the tests all drive the executor through these.
import type { ProviderConfig } from '../protocol/settings';
import type { Budget, DagPlan, RoutingPolicy } from '../protocol/market';
import type { CachedFrom, FailurePolicy, ProofStatus, RunEvent, RunReport, TaskOutput } from '../protocol/report';
import type {
  AcceptParams,
  AcceptResult,
  AcmpCapability,
  Offer,
  OfferRequestParams,
  CancelParams,
  ChunkParams,
  HeartbeatParams,
  InvokeParams,
  InvokeResult,
} from '../protocol/acmpMessages';

/** A type's object while it is being built, member by member. */
export type Building<T> = { -readonly [K in keyof T]: T[K] };

/** Where one invoke's notifications go while it is in flight (the connection routes them by task_id). */
export interface InvokeHandlers {
  onChunk(params: ChunkParams): void;
  onHeartbeat(params: HeartbeatParams): void;
}

/** An open connection to one provider: all the executor needs of a transport. */
export interface ProviderConnection {
  /** The id of the providers-file entry. */
  readonly providerId: string;
  /** The `acmp` capability of the provider's `initialize` answer; undefined when it advertised none. */
  readonly acmp: AcmpCapability | undefined;
  /** Sends `acmp/invoke`. Rejects with AcmpError (a JSON-RPC error answer) or TransportError (no answer). */
  invoke(params: InvokeParams, handlers: InvokeHandlers): Promise<InvokeResult>;
  inputChunk(params: ChunkParams): Promise<void>;
  /**
   * Sends `acmp/offerRequest` (Layer 6). Rejects with AcmpError (METHOD_NOT_FOUND: the provider does not negotiate;
   * -33001, -33002, -33006: it will not quote this) or TransportError.
   */
  offerRequest(params: OfferRequestParams): Promise<Offer>;
  /** Sends `acmp/accept`. Rejects with AcmpError (-34001, -34002, -34003) or TransportError. */
  accept(params: AcceptParams): Promise<AcceptResult>;
  cancel(params: CancelParams): Promise<void>;
  /** Closes the connection and stops whatever it started (a child process included). */
  close(): Promise<void>;
}

/** Opens a connection to a configured provider. Rejects with TransportError when it cannot. */
export type Connector = (provider: ProviderConfig) => Promise<ProviderConnection>;

/** A completed task's result as the result store keeps it (run/resultStore.ts). */
export interface StoredResult extends CachedFrom {
  readonly output: TaskOutput;
  readonly provider_id: string;
  readonly capability: string;
  /** `verified` or `absent`: a result whose proof failed is never stored. */
  readonly proof: Exclude<ProofStatus, 'mismatch'>;
  /**
   * The output's canonical form (JCS) as the store read it: the input a downstream task makes of the whole output is
   * keyed with it, without canonicalizing the output again.
   */
  readonly canonicalOutput?: string;
}

/** What a run needs of a result store: lookups by key (resultKey.ts), and the results it makes to keep. */
export interface ResultCache {
  /** The result stored under `key`, or undefined; the lookup counts as a use (least recently used goes first). */
  lookup(key: string): StoredResult | undefined;
  /** The result stored under `key` without counting a use (a plan or a hover asks; no run takes it). */
  peek(key: string): StoredResult | undefined;
  /** Keeps `result` under `key`; `canonicalOutput`, its output's canonical form when the caller made it already. */
  keep(key: string, result: StoredResult, canonicalOutput?: string): void;
}

/** How a run reuses and keeps results (RunOptions.results). */
export interface ResultReuse {
  readonly store: ResultCache;
  /** Tasks (by id) that run again whatever the store holds; their new results replace the stored ones. */
  readonly refresh?: ReadonlySet<string>;
  /** Capabilities whose results are neither reused nor kept (their outputs are not deterministic). */
  readonly exclude?: ReadonlySet<string>;
  /** A result serves only tasks that would go to the provider that made it (the key names the provider). */
  readonly perProvider?: boolean;
}

export interface RunOptions {
  /** The providers file's entries (design.md §6); empty means the built-in provider alone. */
  readonly providers: readonly ProviderConfig[];
  readonly connect: Connector;
  readonly policy?: FailurePolicy;
  /** Tasks in flight at most (default 8). */
  readonly maxConcurrency?: number;
  /** Sends of one invoke after a transport failure, the first included (default 3), with doubling backoff. */
  readonly attempts?: number;
  readonly backoffMs?: number;
  readonly onEvent?: (event: RunEvent) => void;
  /** The run's id (a client that chose it can follow and cancel the run from its first event); default a UUID. */
  readonly runId?: string;
  /**
   * The result store: a task whose key it holds completes at once with the stored output (no quote, no invoke), and
   * each task that completes with a result fit to keep (its proof did not fail; a streamed output only with a verified
   * proof) is kept. Without it, every task is sent.
   */
  readonly results?: ResultReuse;
  /** Outputs of an earlier run, by task id: those tasks complete at once with them and are not invoked. */
  readonly reuse?: Readonly<Record<string, TaskOutput>>;
  /**
   * Outputs kept in memory at most, in bytes of compact JSON (roughly; default 32 MiB): the others go to temporary
   * files (spilledOutputs.ts), and the report gives them as StoredOutput.
   */
  readonly outputMemoryBytes?: number;
  /**
   * The DAG's `tasks` array as JSON.parse makes it from the analysed text, when the caller has it: invokes are made
   * from it instead of from the analysis's document, which would index the offsets of a clean file for the run alone.
   */
  readonly plainTasks?: readonly unknown[];
  /**
   * The bearer tokens the run sends (redaction.ts `runSecrets`): blanked out of the outputs and errors its events and
   * report show, while downstream tasks get the outputs as sent.
   */
  readonly secrets?: readonly string[];
  /**
   * How a task's provider is chosen among those that may take it (protocol/market.ts; default `cheapest`): under
   * `cheapest` and `fastest` every provider that negotiates is asked for a quote and the best valid offer is accepted;
   * `listed` sends each task to the first provider in the list, without quotes, as runs did before quotes existed.
   */
  readonly routing?: RoutingPolicy;
  /** The run's spending limits (Layer 7): spends they do not allow are denied, and the tasks they are for do not start. */
  readonly budget?: Budget;
  /** How long a task waits for its quotes, in ms (default 2,000). */
  readonly quoteTimeoutMs?: number;
  /** What the plan estimated the run would cost, for the report's totals. */
  readonly estimate?: DagPlan['total'];
}

/** A run in progress. */
export interface DagRun {
  readonly runId: string;
  /** Resolves with the report when every task is terminal; never rejects. */
  readonly done: Promise<RunReport>;
  /** Cancels every task not terminal yet. */
  cancel(reason?: string): void;
  /** Cancels a task and everything downstream of it (BFS); completed upstream results stay. */
  cancelTask(taskId: string, reason?: string): void;
  /** Removes the files of the outputs the report gives as StoredOutput; call it once the report was written or dropped. */
  releaseOutputs(): void;
}
