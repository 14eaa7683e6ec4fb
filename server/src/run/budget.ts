// A run's spending under its budget (Layer 7 §6.2-§6.3), shared by both run drivers: every spend is checked against
// every configured limit before it is made, with what is already in flight reserved, so that concurrent tasks can
// never overshoot; every quote, accept, invoke and denial goes to the spend log. Pure: no I/O and no clock (times
// come in with the calls), so a durable driver replaying its journal rebuilds the same ledger.
import type { Budget, SpendEntry } from '../protocol/market';
import type { RunBudgetOutcome } from '../protocol/report';

/** Prices are sums of decimals: a total within this share of the cap is within it (0.1 + 0.2 against a cap of 0.3). */
const ROUNDING = 1e-9;

/** Whether `budget` sets any limit (a limit of 0 or less is no limit: the settings' "none"). */
export const hasLimits = (budget: Budget | undefined): budget is Budget =>
  budget !== undefined && (positive(budget.total_cap_cu) || positive(budget.per_task_max_cu));

/** The limits `budget` really sets: absent, zero or negative ones left out. */
export function effectiveBudget(budget: Budget | undefined): Budget {
  if (budget === undefined) return {};
  return {
    ...(positive(budget.total_cap_cu) ? { total_cap_cu: budget.total_cap_cu } : {}),
    ...(positive(budget.per_task_max_cu) ? { per_task_max_cu: budget.per_task_max_cu } : {}),
  };
}

const positive = (value: number | undefined): value is number =>
  value !== undefined && Number.isFinite(value) && value > 0;

const within = (amount: number, limit: number): boolean => amount <= limit + ROUNDING * Math.max(1, limit);

const cu = (amount: number): string => `${Number(amount.toPrecision(12))} CU`;

interface Reservation {
  readonly kind: Spend['kind'];
  readonly amountCu: number;
  readonly counterparty: string;
}

/** A spend the budget does not allow: why, in words, for the task's error and the spend log. */
export interface Denial {
  readonly reason: string;
}

/** A reservation asked for: the kind of spend it is, who it goes to, and for what. */
export interface Spend {
  readonly kind: 'accept' | 'invoke';
  readonly taskId: string;
  readonly counterparty: string;
  /** The accepted price, or the ceiling of a direct invoke; undefined when no price is known. */
  readonly amountCu: number | undefined;
  readonly offerId?: string;
}

export class SpendLedger {
  readonly budget: Budget;
  /** The spend log (Layer 7 §6.3), in order; append-only. */
  readonly entries: SpendEntry[] = [];
  private spent = 0;
  private reserved = 0;
  /** What each task in flight holds of the budget, and who it is for. */
  private readonly reservations = new Map<string, Reservation>();
  /** Tasks the budget could not cover, in the order they were denied. */
  readonly denied: string[] = [];

  constructor(budget: Budget) {
    this.budget = effectiveBudget(budget);
  }

  /** What the run was charged so far. */
  get spentCu(): number {
    return this.spent;
  }

  /** What the tasks in flight hold. */
  get reservedCu(): number {
    return this.reserved;
  }

  /** A quote asked of `counterparty`: its offered price, or why there is none. */
  quoted(atMs: number, taskId: string, counterparty: string, outcome: QuoteRecord): void {
    this.entries.push({
      ts_ms: atMs,
      kind: 'quote',
      amount_cu: outcome.priceCu ?? 0,
      counterparty,
      task_id: taskId,
      outcome: outcome.outcome,
      ...(outcome.offerId === undefined ? {} : { offer_id: outcome.offerId }),
      ...(outcome.detail === undefined ? {} : { detail: outcome.detail }),
    });
  }

  /**
   * Reserves `spend` for its task when every limit allows it (the task's earlier reservation, if any, is released
   * first: it moves on to another provider), and logs it; otherwise logs the denial and returns why.
   */
  reserve(atMs: number, spend: Spend): Denial | undefined {
    this.release(spend.taskId, atMs, 'moved on to another offer or provider');
    const denial = this.check(spend.amountCu);
    const base = {
      ts_ms: atMs,
      counterparty: spend.counterparty,
      task_id: spend.taskId,
      ...(spend.offerId === undefined ? {} : { offer_id: spend.offerId }),
    };
    if (denial !== undefined) {
      this.entries.push({
        ...base,
        kind: 'denial',
        amount_cu: spend.amountCu ?? 0,
        outcome: 'denied',
        detail: denial.reason,
      });
      return denial;
    }
    const amount = spend.amountCu ?? 0;
    this.reservations.set(spend.taskId, { kind: spend.kind, amountCu: amount, counterparty: spend.counterparty });
    this.reserved += amount;
    this.entries.push({ ...base, kind: spend.kind, amount_cu: amount, outcome: 'reserved' });
    return undefined;
  }

  /**
   * The task's reservation goes back to the budget (its accept or invoke was refused, or it ended without a charge);
   * logged, at `atMs`, when it held one.
   */
  release(taskId: string, atMs?: number, detail?: string): void {
    const held = this.reservations.get(taskId);
    if (held === undefined) return;
    this.reservations.delete(taskId);
    this.reserved -= held.amountCu;
    if (atMs === undefined) return;
    this.entries.push({
      ts_ms: atMs,
      kind: held.kind,
      amount_cu: held.amountCu,
      counterparty: held.counterparty,
      task_id: taskId,
      outcome: 'released',
      ...(detail === undefined ? {} : { detail }),
    });
  }

  /** The task completed at `costCu`: its reservation is replaced by the charge. */
  charge(atMs: number, taskId: string, counterparty: string, costCu: number): void {
    this.release(taskId);
    this.spent += costCu;
    this.entries.push({
      ts_ms: atMs,
      kind: 'invoke',
      amount_cu: costCu,
      counterparty,
      task_id: taskId,
      outcome: 'charged',
    });
  }

  /** The task did not start: the budget could not cover it. */
  deny(taskId: string): void {
    this.denied.push(taskId);
  }

  /** What a spend of `amountCu` would break, or undefined when every limit allows it. */
  private check(amountCu: number | undefined): Denial | undefined {
    const { total_cap_cu: cap, per_task_max_cu: perTask } = this.budget;
    if (amountCu === undefined) {
      return {
        reason:
          'no price is known for it (no offer, no advertised price, no max_price_cu): a spend of unknown size cannot be reserved under the budget',
      };
    }
    if (perTask !== undefined && !within(amountCu, perTask)) {
      return { reason: `its price ${cu(amountCu)} is above the per-task cap of ${cu(perTask)}` };
    }
    if (cap !== undefined && !within(this.spent + this.reserved + amountCu, cap)) {
      return {
        reason: `${cu(amountCu)} would bring the run over its budget of ${cu(cap)} (spent ${cu(this.spent)}, ${cu(this.reserved)} in flight)`,
      };
    }
    return undefined;
  }

  /**
   * The report's account of the budget: the limits, what was spent, whether the run stopped on them, and what the
   * tasks that did not run would have cost (`restPrices`: the best price known of each, undefined when none is).
   */
  outcome(restPrices: Iterable<number | undefined>): RunBudgetOutcome {
    let known = 0;
    let unpriced = 0;
    for (const price of restPrices) {
      if (price === undefined) unpriced++;
      else known += price;
    }
    return {
      ...this.budget,
      spent_cu: this.spent,
      stopped: this.denied.length > 0,
      denied_tasks: this.denied,
      rest: { known_cu: known, unpriced },
    };
  }
}

/** A quote's outcome as the spend log gives it. */
export interface QuoteRecord {
  readonly outcome: 'offered' | 'refused' | 'not negotiating' | 'no answer' | 'invalid';
  readonly priceCu?: number;
  readonly offerId?: string;
  readonly detail?: string;
}

/** The message a run's end gives when it stopped on its budget (the CLI's summary, the editor's notification). */
export function budgetStopMessage(outcome: RunBudgetOutcome): string {
  const cap = outcome.total_cap_cu === undefined ? '' : ` of ${cu(outcome.total_cap_cu)}`;
  const perTask = outcome.per_task_max_cu === undefined ? '' : ` (per task at most ${cu(outcome.per_task_max_cu)})`;
  const { known_cu: known, unpriced } = outcome.rest;
  const rest = unpriced === 0 ? `${cu(known)}` : `${cu(known)} and ${unpriced} task(s) without a known price`;
  const count = outcome.denied_tasks.length;
  return (
    `stopped on its budget${cap}${perTask}: spent ${cu(outcome.spent_cu)}; ${count} task(s) the budget could not cover did not start ` +
    `(${outcome.denied_tasks.slice(0, 5).join(', ')}${count > 5 ? ', ...' : ''}); the rest would have cost ${rest}`
  );
}
