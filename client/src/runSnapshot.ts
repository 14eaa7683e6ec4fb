// A run as the extension shows and keeps it: what the run model builds from the server's events and the store saves.
import type {
  CachedFrom,
  FailurePolicy,
  PricingMode,
  ProofStatus,
  RunBudgetOutcome,
  RunReport,
  RunStatus,
  TaskError,
  TaskOutput,
  TaskState,
} from '../../server/src/protocol/report';

export interface TaskSnapshot {
  readonly taskId: string;
  readonly state: TaskState;
  readonly capability?: string;
  readonly providerId?: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly costCu?: number;
  readonly tokensUsed?: number;
  readonly output?: TaskOutput;
  /** The size of an output too large to keep across a window reload (storedRuns.ts), once it was left out. */
  readonly outputNotKeptBytes?: number;
  /** The size of an output the server did not send, being over its budget (MAX_SENT_OUTPUT_BYTES). */
  readonly outputNotSentBytes?: number;
  /** The output has the run's tokens blanked out: shown, never reused. */
  readonly outputRedacted?: boolean;
  readonly error?: TaskError;
  readonly proof?: ProofStatus;
  /** The Layer 1 task_id the run sent (from the report). */
  readonly wireTaskId?: string;
  /** Protocol violations of the provider (from the report). */
  readonly violations?: readonly string[];
  /** The price it went at (from its `running` event, then the report), and how it was agreed. */
  readonly priceCu?: number;
  readonly pricing?: PricingMode;
  /** How many offers it was quoted (from the report of a negotiated run). */
  readonly offers?: number;
  /** Its output came from the result store (no invoke was sent): the run that paid for it. */
  readonly cached?: CachedFrom;
}

export interface RunSnapshot {
  readonly runId: string;
  /** The DAG document the run ran. */
  readonly uri: string;
  readonly dagId: string;
  readonly status: RunStatus | 'running';
  readonly startedAt: string;
  readonly finishedAt?: string;
  readonly costCu: number;
  /** In the order the server listed them when the run started. */
  readonly tasks: readonly TaskSnapshot[];
  /** How many of the tasks are completed, failed or cancelled. */
  readonly finishedTasks: number;
  /** What the server ran the DAG with (from `run-started`). */
  readonly policy?: FailurePolicy;
  /** The rest of the run report, kept for Show Report (runReport.ts) once the run finished. */
  readonly tokensUsed?: number;
  readonly resultTaskIds?: readonly string[];
  readonly streamedEdges?: RunReport['streamed_edges'];
  /** The run's budget, what it spent against it, and whether it stopped on it (from the report). */
  readonly budget?: RunBudgetOutcome;
  /** A durable run: the ingress URL of the Restate engine that runs it (the language server follows it there). */
  readonly engine?: string;
}
