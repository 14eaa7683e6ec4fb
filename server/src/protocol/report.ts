// What a run shows the world, declared once for the engine, the language server, the CLI and every client: task
// payloads and errors, task states, the run's events and its report (design.md §5-§7).
import type { Budget, FigureBasis, RoutingPolicy, SpendEntry } from './market';

/** A payload: a task's input or output, a chunk of either (Layer 2 §1.1). */
export interface TaskOutput {
  readonly type: string;
  readonly data: unknown;
}

/** A JSON-RPC error as a task ends with it: an ACMP code (-33xxx), or a transport's. */
export interface TaskError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

export type TaskState = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled';
export type RunStatus = 'completed' | 'failed' | 'cancelled';
export type FailurePolicy = 'fail-fast' | 'best-effort';

/** Whether a task's `result-hash` proof matched its output (Layer 3): absent when the provider sent none. */
export type ProofStatus = 'verified' | 'mismatch' | 'absent';

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
        /** On `completed`: the output came from the result store, made by an earlier run (no invoke was sent). */
        readonly cached?: CachedFrom;
        /** On `running`: the price the task goes at (absent when none is known), and how it was agreed. */
        readonly price_cu?: number;
        readonly pricing?: PricingMode;
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

/** How a task's price was agreed: an accepted offer (Layer 6), or a direct invoke at the advertised price. */
export type PricingMode = 'offer' | 'direct';

/** An offer a provider quoted for a task (Layer 6 §2.1), as the report gives it. */
export interface OfferReceived {
  readonly provider_id: string;
  readonly offer_id: string;
  readonly price_cu: number;
  /** The latency the provider committed to (`latency_sla_ms`), else its advertised p99, if any. */
  readonly latency_ms?: number;
}

/** The terms a task went to its provider under. */
export interface AcceptedTerms {
  readonly provider_id: string;
  readonly pricing: PricingMode;
  /** The accepted offer's price, or the advertised price of a direct invoke; absent when unknown. */
  readonly price_cu?: number;
  readonly basis: FigureBasis;
  readonly offer_id?: string;
  /** The `max_price_cu` its invoke carried: the accepted price, or the task's (and the per-task cap's) ceiling. */
  readonly max_price_cu?: number;
}

/** Where a task's output came from when the result store had it (run/resultStore.ts): the run that paid for it. */
export interface CachedFrom {
  readonly run_id: string;
  /** The task of that run (its id then; the same result serves any task with the same key). */
  readonly task_id: string;
  /** ISO-8601 time the result was made. */
  readonly made_at: string;
  /** What it cost then: what reusing it saved. */
  readonly cost_cu: number;
}

/** The report's account of a run's budget (Layer 7 §6.2): its limits, what it spent, and whether it stopped on them. */
export interface RunBudgetOutcome extends Budget {
  readonly spent_cu: number;
  /** Some task did not start because the budget could not cover it. */
  readonly stopped: boolean;
  /** Those tasks (each ended `cancelled`, its error's data `{ reason: "budget" }`). */
  readonly denied_tasks: readonly string[];
  /** What the tasks that did not run would have cost: the best price known of each, and how many had none. */
  readonly rest: { readonly known_cu: number; readonly unpriced: number };
}

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
   * Set instead of `output` where the language server left a large output out of what it sent (features/runDag.ts): its
   * size as JSON, roughly. The run's `result` leaves it out too.
   */
  readonly output_not_sent_bytes?: number;
  /** The output shown has the run's tokens blanked out (redaction.ts): it is not what the provider sent. */
  readonly output_redacted?: true;
  /** Protocol violations the provider committed (e.g. cost above max_price_cu). */
  readonly violations?: readonly string[];
  /** The offers received for the task (a negotiated run), in the order they came. */
  readonly offers?: readonly OfferReceived[];
  /** The terms it was sent under (the last provider's, after a refusal moved it on). */
  readonly accepted?: AcceptedTerms;
  /** Its output came from the result store: no invoke was sent, and it cost nothing (its `cost_cu` is 0). */
  readonly cached?: CachedFrom;
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
  readonly totals: {
    readonly cost_cu: number;
    readonly tokens_used: number;
    /** Tasks whose outputs came from the result store, and what they cost when they were made (what reuse saved). */
    readonly cached?: { readonly tasks: number; readonly saved_cu: number };
    /** What the plan estimated before the run: its known prices summed, and how many tasks had none. */
    readonly estimated?: { readonly known_cu: number; readonly unpriced: number };
  };
  /** The edges that streamed (Layer 2 §5); the others waited for the upstream result. */
  readonly streamed_edges: readonly { readonly from: string; readonly to: string }[];
  /** The routing policy the run chose providers by. */
  readonly routing?: RoutingPolicy;
  /** Present when the run had a budget. */
  readonly budget?: RunBudgetOutcome;
  /** The budget's spend log (Layer 7 §6.3): every quote, accept, invoke and denial, in order; with a budget only. */
  readonly spend?: readonly SpendEntry[];
}
