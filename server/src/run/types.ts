// The executor's contracts: what a provider connection offers it, the events it emits, the run report it returns
// (design.md §5-§7). The language server, the CLI and the tests all drive the executor through these.
import type { ProviderConfig } from '../protocol/settings';
import type { ProofStatus } from './proof';
import type {
  AcmpCapability,
  CancelParams,
  ChunkParams,
  HeartbeatParams,
  InvokeParams,
  InvokeResult,
  TaskError,
  TaskOutput,
} from './protocol';

/** A type's object while it is being built, member by member. */
export type Building<T> = { -readonly [K in keyof T]: T[K] };

export type TaskState = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled';
export type RunStatus = 'completed' | 'failed' | 'cancelled';
export type FailurePolicy = 'fail-fast' | 'best-effort';

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
  cancel(params: CancelParams): Promise<void>;
  /** Closes the connection and stops whatever it started (a child process included). */
  close(): Promise<void>;
}

/** Opens a connection to a configured provider. Rejects with TransportError when it cannot. */
export type Connector = (provider: ProviderConfig) => Promise<ProviderConnection>;

interface EventBase {
  readonly run_id: string;
  /** ISO-8601 time of the event. */
  readonly at: string;
}

export type RunEvent = EventBase &
  (
    | {
        readonly type: 'run-started';
        readonly dag_id: string;
        readonly policy: FailurePolicy;
        readonly tasks: readonly string[];
      }
    | {
        readonly type: 'task-state';
        readonly task_id: string;
        readonly state: TaskState;
        readonly provider_id?: string;
        readonly error?: TaskError;
        /** On a task's end in a batch of events whose `running` it replaced (server/README.md): when it started. */
        readonly started_at?: string;
      }
    | {
        readonly type: 'chunk';
        readonly task_id: string;
        readonly seq: number;
        readonly final: boolean;
        readonly chunk: TaskOutput;
      }
    | { readonly type: 'heartbeat'; readonly task_id: string; readonly progress?: number; readonly detail?: string }
    | {
        readonly type: 'cost';
        readonly task_id: string;
        readonly cost_cu: number;
        readonly tokens_used: number;
        readonly max_price_cu?: number;
        /** `cost_cu` above `max_price_cu`: a protocol violation (Layer 1 §3.2). */
        readonly violation: boolean;
      }
    | { readonly type: 'run-finished'; readonly report: RunReport }
  );

/** One task in the run report (design.md §7). */
export interface TaskReport {
  readonly task_id: string;
  readonly state: TaskState;
  readonly provider_id?: string;
  readonly output?: TaskOutput;
  readonly error?: TaskError;
  readonly cost_cu?: number;
  readonly tokens_used?: number;
  readonly proof: ProofStatus;
  readonly started_at?: string;
  readonly finished_at?: string;
  /** The Layer 1 task_id this run sent for the task (fresh per run, the same across retries). */
  readonly wire_task_id?: string;
  /**
   * Set instead of `output` where the language server left a large output out of what it sent (features/run.ts): its
   * size as JSON, roughly. The run's `result` leaves it out too.
   */
  readonly output_not_sent_bytes?: number;
  /** The output shown has the run's tokens blanked out (redaction.ts): it is not what the provider sent. */
  readonly output_redacted?: true;
  /** Protocol violations the provider committed (e.g. cost above max_price_cu). */
  readonly violations?: readonly string[];
}

/** The run report (design.md §7): what `acmp-dag run --json` prints and the language server returns. */
export interface RunReport {
  readonly dag_id: string;
  readonly run_id: string;
  readonly status: RunStatus;
  readonly policy: FailurePolicy;
  readonly started_at: string;
  readonly finished_at: string;
  readonly tasks: readonly TaskReport[];
  /** The outputs of the leaf tasks that completed. */
  readonly result: Readonly<Record<string, TaskOutput>>;
  readonly totals: { readonly cost_cu: number; readonly tokens_used: number };
  /** The edges that streamed (Layer 2 §5); the others waited for the upstream result. */
  readonly streamed_edges: readonly { readonly from: string; readonly to: string }[];
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
  /** Outputs of an earlier run, by task id: those tasks complete at once with them and are not invoked. */
  readonly reuse?: Readonly<Record<string, TaskOutput>>;
  /**
   * Outputs kept in memory at most, in bytes of compact JSON (roughly; default 32 MiB): the others go to temporary
   * files (outputStore.ts), and the report gives them as StoredOutput.
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
