// How a durable run prices its tasks (docs/market.md, "Durable runs"): the same rules as in memory (negotiation.ts,
// budget.ts), fed only with what the journal holds. The workflow carries out the steps this asks for (a quote, an
// accept, an invoke, a denial), each a journaled step, and hands their journaled outcomes back here in the journal's
// order; so a replay rebuilds the same ledger, the same spend log and the same decisions, whatever the clock says.
// The accept is a step of its own after the quote's: the offer it takes is in the journal before the accept leaves
// (Layer 7 §6.5's write-ahead), so an accept whose answer a crash lost is sent again for the same offer, never for a
// fresh one, and its provider's -34003 says it was taken already: by this run, the only holder of the offer's id.
import type { Budget, RoutingPolicy } from '../../protocol/market';
import type { AcceptedTerms, OfferReceived, RunReport, TaskError } from '../../protocol/report';
import type { ProviderConfig } from '../../protocol/settings';
import { ACMP_ERRORS, type Offer } from '../../protocol/acmpMessages';
import { type Denial, SpendLedger, hasLimits } from '../budget';
import { noProviderFor, noProviderTook, refusalOf } from '../invokePolicy';
import {
  MAX_REQUOTES,
  type QuoteAnswer,
  type Route,
  RouteBook,
  type TaskTerms,
  mayQuote,
  movesToNextOffer,
  offerReceived,
  offerRoute,
  quoteRecord,
  rankRoutes,
} from '../negotiation';

/** A quote step's journaled outcome: each asked candidate's answer (by its place among the task's candidates). */
export interface QuoteOutcome {
  readonly tsMs: number;
  readonly answers: readonly { readonly candidate: number; readonly answer: QuoteAnswer }[];
}

/** An accept step's journaled outcome; `again`: the provider had it accepted already (an earlier attempt's). */
export type AcceptOutcome =
  | { readonly ok: true; readonly tsMs: number; readonly again?: true }
  | { readonly ok: false; readonly tsMs: number; readonly error: TaskError };

/** What an invoke step's journaled outcome tells the ledger. */
export type InvokeEnd =
  | { readonly ok: true; readonly tsMs: number; readonly providerId: string; readonly costCu: number }
  | { readonly ok: false; readonly tsMs: number; readonly error: TaskError };

/** The step a task takes next. `candidate`s are places among the task's candidates. */
export type NextStep =
  | { readonly kind: 'quote'; readonly candidates: readonly number[] }
  | { readonly kind: 'accept'; readonly candidate: number; readonly offer: Offer }
  | { readonly kind: 'invoke'; readonly candidate: number; readonly terms: AcceptedTerms }
  | { readonly kind: 'deny'; readonly error: TaskError }
  | { readonly kind: 'fail'; readonly error: TaskError }
  /** The invoke step's outcome ends the task as it says. */
  | { readonly kind: 'done' };

/** One task's dealings: the routes it may take, best first, and where it is among them. */
interface Deal {
  readonly taskId: string;
  readonly candidates: readonly ProviderConfig[];
  readonly terms: TaskTerms;
  /** Direct routes not asked for a quote, kept to be ranked with the offers. */
  readonly unasked: Route[];
  routes: Route[];
  next: number;
  /** The route being accepted or invoked. */
  current?: Route;
  /** The budget's first denial: the task's end when no later route is covered. */
  denial?: TaskError;
  /** Set while one provider is asked again after its offer expired (-34002). */
  requoting?: Route;
  readonly requotes: Map<number, number>;
  readonly refusals: TaskError[];
  readonly offers: OfferReceived[];
  accepted?: AcceptedTerms;
}

export class TaskDeals {
  private readonly ledger: SpendLedger | undefined;
  private readonly routeBook = new RouteBook();
  /** Providers that answered -32601 to a quote in this run: not asked again (from the journal, so a replay agrees). */
  private readonly nonNegotiating = new Set<ProviderConfig>();
  private readonly deals = new Map<number, Deal>();

  constructor(
    private readonly routing: RoutingPolicy,
    budget: Budget | undefined,
  ) {
    this.ledger = hasLimits(budget) ? new SpendLedger(budget) : undefined;
  }

  /** The per-task cap's part of a task's terms (negotiation.ts `taskTerms`). */
  get budget(): Budget {
    return this.ledger?.budget ?? {};
  }

  /** A launched task's first step, at `tsMs` (its launch, a journaled time). */
  start(task: number, taskId: string, candidates: readonly ProviderConfig[], terms: TaskTerms, tsMs: number): NextStep {
    if (candidates.length === 0) return { kind: 'fail', error: noProviderFor(terms.capability) };
    const deal: Deal = {
      taskId,
      candidates,
      terms,
      unasked: [],
      routes: [],
      next: 0,
      requotes: new Map(),
      refusals: [],
      offers: [],
    };
    this.deals.set(task, deal);
    const asked: number[] = [];
    for (const route of this.routeBook.routes(candidates, terms)) {
      if (this.routing !== 'listed' && mayQuote(route.provider) && !this.nonNegotiating.has(route.provider)) {
        asked.push(route.listed);
      } else deal.unasked.push(route);
    }
    if (asked.length > 0) return { kind: 'quote', candidates: asked };
    deal.routes = this.ranked(deal.unasked);
    return this.tryNext(deal, tsMs);
  }

  /** A quote step's outcome: the spend log's quotes, then the best route the budget allows. */
  quoted(task: number, outcome: QuoteOutcome): NextStep {
    const deal = this.deals.get(task)!;
    const offered: Route[] = [];
    const direct: Route[] = [];
    for (const { candidate, answer } of outcome.answers) {
      const provider = deal.candidates[candidate];
      if (provider === undefined) continue;
      const route = this.routeBook.routes([provider], deal.terms)[0]!;
      const placed: Route = { ...route, listed: candidate };
      this.ledger?.quoted(outcome.tsMs, deal.taskId, provider.id, quoteRecord(answer));
      if (answer.kind === 'offer') {
        const offer = offerRoute(placed, answer.offer);
        offered.push(offer);
        deal.offers.push(offerReceived(provider, answer.offer, offer.latencyMs));
      } else if (answer.kind === 'direct') {
        if (answer.why === 'not negotiating') this.nonNegotiating.add(provider);
        direct.push(placed);
      } else deal.refusals.push(refusalOf(provider, { code: answer.code, message: answer.detail }));
    }
    const requoted = deal.requoting;
    if (requoted !== undefined) {
      deal.requoting = undefined;
      const fresh = offered[0];
      // The fresh offer takes the expired one's place; without one the task moves on to the next route.
      if (fresh !== undefined) return this.take(deal, fresh, outcome.tsMs);
      return this.tryNext(deal, outcome.tsMs);
    }
    deal.routes = this.ranked([...offered, ...direct, ...deal.unasked]);
    return this.tryNext(deal, outcome.tsMs);
  }

  /** An accept step's outcome: the invoke under the accepted offer, a fresh quote (-34002), or the next route. */
  acceptEnded(task: number, outcome: AcceptOutcome): NextStep {
    const deal = this.deals.get(task)!;
    const route = deal.current!;
    const offer = route.offer!;
    if (outcome.ok) {
      deal.accepted = {
        provider_id: route.provider.id,
        pricing: 'offer',
        price_cu: offer.price_cu,
        basis: 'offer',
        offer_id: offer.offer_id,
        max_price_cu: offer.price_cu,
      };
      return { kind: 'invoke', candidate: route.listed, terms: deal.accepted };
    }
    const { error } = outcome;
    this.ledger?.release(deal.taskId, outcome.tsMs, `${error.code}: ${error.message}`);
    const requotes = deal.requotes.get(route.listed) ?? 0;
    if (error.code === ACMP_ERRORS.offer_expired && requotes < MAX_REQUOTES) {
      deal.requotes.set(route.listed, requotes + 1);
      deal.requoting = route;
      return { kind: 'quote', candidates: [route.listed] };
    }
    deal.refusals.push(refusalOf(route.provider, error));
    if (movesToNextOffer(error.code)) return this.tryNext(deal, outcome.tsMs);
    return { kind: 'fail', error };
  }

  /** An invoke step's outcome: the charge, or a refusal that moves the task on, or its failure. */
  invokeEnded(task: number, outcome: InvokeEnd): NextStep {
    const deal = this.deals.get(task)!;
    if (outcome.ok) {
      this.ledger?.charge(outcome.tsMs, deal.taskId, outcome.providerId, outcome.costCu);
      return { kind: 'done' };
    }
    const { error } = outcome;
    this.ledger?.release(deal.taskId, outcome.tsMs, `${error.code}: ${error.message}`);
    const route = deal.current;
    if (route === undefined || !movesToNextOffer(error.code)) return { kind: 'done' };
    deal.refusals.push(refusalOf(route.provider, error));
    return this.tryNext(deal, outcome.tsMs);
  }

  /** The denial step is journaled: the task did not start. */
  denied(task: number): void {
    this.ledger?.deny(this.deals.get(task)!.taskId);
  }

  /** A task ended without its invoke's outcome (cancelled): what it held goes back to the budget. */
  released(task: number, tsMs: number): void {
    const deal = this.deals.get(task);
    if (deal !== undefined) this.ledger?.release(deal.taskId, tsMs, 'cancelled');
  }

  /** The offers a task received (machine.ts `offersOf`). */
  offersOf(task: number): readonly OfferReceived[] | undefined {
    const offers = this.deals.get(task)?.offers;
    return offers === undefined || offers.length === 0 ? undefined : offers;
  }

  /** The terms a task went to its provider under (machine.ts `acceptedOf`). */
  acceptedOf(task: number): AcceptedTerms | undefined {
    return this.deals.get(task)?.accepted;
  }

  /**
   * What the report adds to the machine's: the routing policy, and with a budget its account and spend log. What the
   * cancelled tasks would have cost (when the budget stopped the run): the price each went at or was offered, else
   * `cheapestAdvertised`.
   */
  report(
    report: RunReport,
    cheapestAdvertised: (task: number) => number | undefined,
  ): Pick<RunReport, 'routing' | 'budget' | 'spend'> {
    const ledger = this.ledger;
    if (ledger === undefined) return { routing: this.routing };
    const rest: (number | undefined)[] = [];
    if (ledger.denied.length > 0) {
      report.tasks.forEach((task, index) => {
        if (task.state !== 'cancelled') return;
        const deal = this.deals.get(index);
        const offered =
          deal === undefined || deal.offers.length === 0
            ? undefined
            : Math.min(...deal.offers.map((offer) => offer.price_cu));
        rest.push(deal?.accepted?.price_cu ?? offered ?? cheapestAdvertised(index));
      });
    }
    return { routing: this.routing, budget: ledger.outcome(rest), spend: ledger.entries };
  }

  private ranked(routes: readonly Route[]): Route[] {
    return this.routing === 'listed'
      ? [...routes].sort((a, b) => a.listed - b.listed)
      : rankRoutes(this.routing, routes);
  }

  /** The next route the task may take: its price reserved under the budget, or its denial; a failure past the last. */
  private tryNext(deal: Deal, tsMs: number): NextStep {
    const route = deal.routes[deal.next++];
    if (route === undefined) {
      deal.current = undefined;
      if (deal.denial !== undefined) return { kind: 'deny', error: deal.denial };
      return {
        kind: 'fail',
        error: deal.refusals.length > 0 ? noProviderTook(deal.refusals) : noProviderFor(deal.terms.capability),
      };
    }
    return this.take(deal, route, tsMs);
  }

  /** `route` for the task: reserved under the budget (or denied), then accepted (an offer) or invoked (direct). */
  private take(deal: Deal, route: Route, tsMs: number): NextStep {
    deal.current = route;
    const { offer } = route;
    const ceiling =
      offer?.price_cu ??
      deal.terms.ceilingCu ??
      // Under a total cap alone a direct invoke carries its advertised price, so that its reservation bounds the charge.
      (this.ledger?.budget.total_cap_cu === undefined ? undefined : route.priceCu);
    const denial: Denial | undefined = this.ledger?.reserve(tsMs, {
      kind: offer === undefined ? 'invoke' : 'accept',
      taskId: deal.taskId,
      counterparty: route.provider.id,
      amountCu: ceiling,
      ...(offer === undefined ? {} : { offerId: offer.offer_id }),
    });
    if (denial !== undefined) {
      // Another route may be covered (a cheaper one under `fastest`); the first denial says why when none is.
      deal.denial ??= {
        code: ACMP_ERRORS.cancelled,
        message: `not started: the run's budget cannot cover it at provider "${route.provider.id}": ${denial.reason}`,
        data: { reason: 'budget' },
      };
      return this.tryNext(deal, tsMs);
    }
    if (offer !== undefined) return { kind: 'accept', candidate: route.listed, offer };
    deal.accepted = {
      provider_id: route.provider.id,
      pricing: 'direct',
      basis: route.priceCu === undefined ? 'unknown' : 'advertised',
      ...(route.priceCu === undefined ? {} : { price_cu: route.priceCu }),
      ...(ceiling === undefined ? {} : { max_price_cu: ceiling }),
    };
    return { kind: 'invoke', candidate: route.listed, terms: deal.accepted };
  }
}
