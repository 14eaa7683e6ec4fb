// The market around a run (Layer 5 discovery terms, Layer 6 quotes, Layer 7 budgets) and the plan of a DAG, declared
// once for the CLI, the language server, both run drivers and every client (docs/market.md holds our choices).
import type { CachedFrom } from './report';

/**
 * A provider's advertised terms, with the ACMP binding's names (Layer 5): for the provider as a whole, or for one of
 * its capabilities. `acmp:price_cu` is ours: a fixed price per task, for providers that price tasks rather than tokens
 * (RFC-0001 §5); it wins over the per-1k-tokens price when both are given.
 */
export interface AdvertisedTerms {
  readonly 'acmp:price_cu'?: number;
  readonly 'acmp:price_cu_per_1k_tokens'?: number;
  readonly 'acmp:latency_p99_ms'?: number;
  readonly 'acmp:tier'?: string;
  readonly 'acmp:proof_methods'?: readonly string[];
  readonly 'acmp:availability'?: number;
}

/** How a run picks among the providers that may take a task: `listed` is the providers list's order alone. */
export type RoutingPolicy = 'cheapest' | 'fastest' | 'listed';
export const ROUTING_POLICIES: readonly RoutingPolicy[] = ['cheapest', 'fastest', 'listed'];

/** Where a figure comes from: a provider's offer, its advertised terms, what it charged or took in past runs, or nothing. */
/** `cached`: the result store holds the task's result, so it costs 0 and takes no time. */
export type FigureBasis = 'offer' | 'advertised' | 'history' | 'cached' | 'unknown';

/** A price (CU) or a latency (ms) with its basis; `value` is absent exactly when the basis is `unknown`. */
export interface Figure {
  readonly value?: number;
  readonly basis: FigureBasis;
}

/** One provider that may take a task, with its terms for it. */
export interface PlannedCandidate {
  readonly provider_id: string;
  readonly price: Figure;
  readonly latency: Figure;
  readonly tier?: string;
  /** Why the run would not take it (its price above the task's `max_price_cu`, a proof method it does not give). */
  readonly excluded?: string;
}

/** One task of a plan. */
export interface PlannedTask {
  readonly task_id: string;
  readonly capability: string;
  /** The provider the run would send it to; absent when none may take it. */
  readonly provider_id?: string;
  /** Why that provider: the routing policy's reason, in words. */
  readonly reason: string;
  readonly price: Figure;
  readonly latency: Figure;
  /** Every provider that offers the capability, best first by the routing policy. */
  readonly candidates: readonly PlannedCandidate[];
  /** No provider offers the capability. */
  readonly no_provider?: true;
  /** The task's `max_price_cu` is below every known price: no provider would take it. */
  readonly over_budget?: { readonly max_price_cu: number; readonly cheapest_cu: number };
  /** The result store holds its result: a run completes it at once, at cost 0 (its provider made the result). */
  readonly cached?: CachedFrom;
}

/** What running a DAG would cost and take, before it runs (`acmp-dag plan`, the editor's plan). */
export interface DagPlan {
  readonly dag_id: string;
  readonly policy: RoutingPolicy;
  readonly tasks: readonly PlannedTask[];
  /** The known prices summed, and how many tasks have none (never counted as 0). */
  readonly total: {
    readonly known_cu: number;
    readonly unpriced: number;
    /** Tasks whose results the result store holds: at 0, not in `known_cu`. */
    readonly cached?: number;
  };
  /** The longest path by latency (tasks of unknown latency count 0 ms and are counted in `unknown`). */
  readonly critical_path: {
    readonly task_ids: readonly string[];
    readonly latency_ms: number;
    readonly unknown: number;
  };
  /** The estimated wall time at `concurrency` tasks in flight (a list schedule in the run's order). */
  readonly wall_time: { readonly ms: number; readonly concurrency: number; readonly unknown: number };
  /** Tasks that no provider offers, by capability, and what the providers offer instead. */
  readonly no_provider: readonly { readonly task_id: string; readonly capability: string }[];
  readonly offered_capabilities: readonly string[];
  /** Task ids whose `max_price_cu` is below every known price. */
  readonly over_budget: readonly string[];
  /** Said about the providers themselves (a catalog that could not be read, a stale copy used). */
  readonly warnings: readonly string[];
}

/** A run's spending limits (Layer 7 §6.2); absent limits do not apply. */
export interface Budget {
  readonly total_cap_cu?: number;
  readonly per_task_max_cu?: number;
}

/** One entry of a run's spend log (Layer 7 §6.3): every quote, accept, invoke and denial, in order. */
export interface SpendEntry {
  readonly ts_ms: number;
  readonly kind: 'quote' | 'accept' | 'invoke' | 'denial';
  /** The price quoted, accepted or reserved, or the cost charged (`invoke` with outcome `charged`). */
  readonly amount_cu: number;
  readonly counterparty: string;
  readonly task_id: string;
  readonly outcome: string;
  readonly offer_id?: string;
  readonly detail?: string;
}
