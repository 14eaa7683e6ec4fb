// What the CLI and the worker say to each other through the Restate engine's ingress, declared once. No SDK here: the
// CLI's commands that follow or cancel a durable run speak plain HTTP and never load the Restate SDK.
import type { TaskOutput, FailurePolicy, RunEvent, RunStatus } from './report';
import type { Budget, RoutingPolicy } from './market';

/** The workflow of a run (key: the run id), its mailbox (key: the run id) and the index of runs (key: INDEX_KEY). */
export const RUN_WORKFLOW = 'AcmpRun';
export const RUN_CONTROL = 'AcmpRunControl';
export const RUN_INDEX = 'AcmpRuns';
export const INDEX_KEY = 'all';
/** Reads stored outputs back for the report, in pieces below the engine's message limit. */
export const OUTPUT_SERVICE = 'AcmpOutputs';
/**
 * How long the engine keeps a run after its end (its report, its event log) and the output store its stored outputs:
 * a day, the engine's own default, set on the workflow so that the two cannot drift apart.
 */
export const RUN_RETENTION_MS = 24 * 60 * 60 * 1000;

export interface RunRequest {
  /** The DAG file's text: the worker analyses it again and refuses one with errors. */
  readonly dag: string;
  readonly policy: FailurePolicy;
  readonly maxConcurrency: number;
  /** Outputs of an earlier run, by task id: those tasks complete at once with them and are not invoked. */
  readonly reuse?: Readonly<Record<string, TaskOutput>>;
  /** How the run picks among the offers and providers of a task (default `cheapest`). */
  readonly routing?: RoutingPolicy;
  /** The run's spending limits; none when absent. The workflow holds the ledger, so a worker cannot change them. */
  readonly budget?: Budget;
  /** How long a task waits for its quotes, in ms (default 2,000). */
  readonly quoteTimeoutMs?: number;
  /**
   * The run neither reuses results from the worker's result store nor keeps its own there. The submitter names it
   * (false to use the store): a request that names none of the four cache fields was submitted before runs reused
   * results, and looks nothing up, so that its journal (without `cache` steps) replays; it keeps its results.
   */
  readonly noCache?: boolean;
  /** Tasks (by id) that run again whatever the store holds; their new results replace the stored ones. */
  readonly refresh?: readonly string[];
  /** Capabilities whose results are neither reused nor kept (their outputs are not deterministic). */
  readonly cacheExclude?: readonly string[];
  /** A stored result serves only tasks that would go to the provider that made it. */
  readonly cachePerProvider?: boolean;
}

/** A user's cancel of a task (`task`) or of the whole run. `at`: when it was asked. */
export interface ControlRequest {
  readonly task?: string;
  readonly reason: string;
  readonly at: string;
}

/** What `AcmpRunControl/request` answers: the run took the request, or it had ended already. */
export type ControlAnswer = 'sent' | 'ended';

export interface RunIndexEntry {
  readonly run_id: string;
  readonly dag_id: string;
  readonly submitted_at: string;
}

export interface RunProgress {
  /** `running` until the run ends. */
  readonly status: RunStatus | 'running';
  readonly done: number;
  readonly total: number;
  readonly cost_cu: number;
  /** Batches of events in the run's log. */
  readonly batches: number;
}

/** `AcmpRun/<id>/events {from}`: the log's batches from `from` on (some of them), and the progress. */
export interface EventsPage {
  readonly events: readonly RunEvent[];
  /** The cursor of the next call. */
  readonly next: number;
  /** Undefined when the run has not started (or the id is unknown). */
  readonly progress: RunProgress | undefined;
}

export interface OutputPiece {
  readonly text: string;
  /** Characters in the stored text after this piece. */
  readonly rest: number;
}
