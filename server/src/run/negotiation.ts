// How a run prices a task before it sends it (Layer 6, docs/market.md), shared by both run drivers: the routes a task
// may take (each provider that may take it, at its advertised figures), which of them are asked for a quote, the
// offer request, which offers are valid, the order the routing policy puts offers and direct routes in, and what
// each answer to a quote or an accept means. The drivers do the asking (the in-memory one directly, a durable one
// through its journal) and keep the run's memory of who does not negotiate.
import type { AdvertisedTerms, Budget, RoutingPolicy } from '../protocol/market';
import type { OfferReceived } from '../protocol/report';
import type { QuoteRecord } from './budget';
import type { ProviderConfig } from '../protocol/settings';
import {
  ACMP_ERRORS,
  AcmpError,
  METHOD_NOT_FOUND,
  type Offer,
  type OfferRequestParams,
  TransportError,
  messageOf,
} from '../protocol/acmpMessages';
import { type RankedCandidate, advertisedPrice, rankCandidates, termsOf } from './pricing';

/** How long a task waits for its quotes (the offers that came by then compete; the others are ignored). */
export const DEFAULT_QUOTE_TIMEOUT_MS = 2_000;
/** Fresh quotes asked of one provider after its offer expired before the accept (-34002). */
export const MAX_REQUOTES = 2;

/**
 * Answers to an accept or an invoke under an offer after which the next offer is tried (-34002 once the fresh quotes
 * it calls for ran out).
 */
const NEXT_OFFER: readonly number[] = [
  ACMP_ERRORS.offer_expired,
  ACMP_ERRORS.offer_not_found,
  ACMP_ERRORS.already_accepted,
  ACMP_ERRORS.budget_exceeded,
  ACMP_ERRORS.capability_not_found,
  ACMP_ERRORS.proof_unsupported,
];

/** Whether `error` (an accept's or a quote's) moves the task to the next offer. */
export const movesToNextOffer = (code: number): boolean => NEXT_OFFER.includes(code);

/** What a task asks of the market: its capability and the Layer 1 fields a quote carries. */
export interface TaskTerms {
  readonly capability: string;
  readonly inputTokensEst: number | undefined;
  /** The most the task may cost: its `max_price_cu` and the per-task cap, the lower; undefined when neither is set. */
  readonly ceilingCu: number | undefined;
  readonly preferredTier: string | undefined;
  readonly proofMethod: string | undefined;
}

const numberOf = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;
const stringOf = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The most a task may cost: its `max_price_cu` and the per-task cap, the lower; undefined when neither is set. */
export const ceilingOf = (maxPriceCu: number | undefined, perTaskCap: number | undefined): number | undefined =>
  maxPriceCu === undefined ? perTaskCap : perTaskCap === undefined ? maxPriceCu : Math.min(maxPriceCu, perTaskCap);

/** The terms of a task (`plain`: as JSON.parse makes it) under `budget`. */
export function taskTerms(capability: string, plain: Record<string, unknown>, budget: Budget): TaskTerms {
  return {
    capability,
    inputTokensEst: numberOf(plain.input_tokens_est),
    ceilingCu: ceilingOf(numberOf(plain.max_price_cu), budget.per_task_max_cu),
    preferredTier: stringOf(plain.preferred_tier),
    proofMethod: stringOf(plain.proof_method),
  };
}

/** One way a task may go: a provider, its figures for the task, and the offer it quoted (absent: direct mode). */
export interface Route extends RankedCandidate {
  readonly offer?: Offer;
}

/** The advertised figures of a run's providers, each provider's terms for a capability read once per run. */
export class RouteBook {
  private readonly byProvider = new Map<ProviderConfig, Map<string, AdvertisedTerms>>();

  /** `provider`'s terms for `capability` (pricing.ts `termsOf`). */
  termsOf(provider: ProviderConfig, capability: string): AdvertisedTerms {
    let byCapability = this.byProvider.get(provider);
    if (byCapability === undefined) {
      this.byProvider.set(provider, (byCapability = new Map<string, AdvertisedTerms>()));
    }
    let terms = byCapability.get(capability);
    if (terms === undefined) byCapability.set(capability, (terms = termsOf(provider, capability)));
    return terms;
  }

  /** Whether `provider`'s price for `capability` depends on the task's tokens (a per-1k price and no fixed one). */
  pricedByTokens(provider: ProviderConfig, capability: string): boolean {
    const terms = this.termsOf(provider, capability);
    return terms['acmp:price_cu'] === undefined && terms['acmp:price_cu_per_1k_tokens'] !== undefined;
  }

  /** `provider`'s advertised price for the task; undefined when unknown. */
  priceOf(provider: ProviderConfig, task: TaskTerms): number | undefined {
    return advertisedPrice(this.termsOf(provider, task.capability), task.inputTokensEst);
  }

  /** Each candidate (in the providers list's order) as a direct route at its advertised figures for the task. */
  routes(candidates: readonly ProviderConfig[], task: TaskTerms): Route[] {
    return candidates.map((provider, listed) => {
      const advertised = this.termsOf(provider, task.capability);
      return {
        provider,
        listed,
        priceCu: advertisedPrice(advertised, task.inputTokensEst),
        latencyMs: advertised['acmp:latency_p99_ms'],
        tier: advertised['acmp:tier'],
      };
    });
  }
}

/** Whether a run asks `provider` for quotes: every provider except the built-in one, whose prices are its catalog's. */
export const mayQuote = (provider: ProviderConfig): boolean => provider.transport !== 'builtin';

/** The `acmp/offerRequest` of a task: the per-task cap goes as its ceiling. */
export function offerRequestOf(terms: TaskTerms): OfferRequestParams {
  const params: Record<string, unknown> = { capability: terms.capability };
  if (terms.inputTokensEst !== undefined) params.input_tokens_est = terms.inputTokensEst;
  if (terms.ceilingCu !== undefined) params.max_price_cu = terms.ceilingCu;
  if (terms.preferredTier !== undefined) params.preferred_tier = terms.preferredTier;
  if (terms.proofMethod !== undefined) params.proof_method = terms.proofMethod;
  return params as unknown as OfferRequestParams;
}

/** What an answer to a quote means for the task. */
export type QuoteAnswer =
  | { readonly kind: 'offer'; readonly offer: Offer }
  /**
   * It competes in direct mode at its advertised price: it does not negotiate (it does not advertise quotes, or
   * answered -32601), or its quote could not be sent (a transport failure: its invoke then has the retries of one).
   */
  | {
      readonly kind: 'direct';
      readonly why: 'not negotiating' | 'unreachable';
      readonly detail?: string;
    }
  /** It will not quote this task (a refusal, an invalid offer, a fault): it is not a route for it. */
  | {
      readonly kind: 'none';
      readonly outcome: 'refused' | 'invalid' | 'no answer';
      /** The provider's error code, else -33099 (internal). */
      readonly code: number;
      readonly detail: string;
    };

/** The meaning of an offer request's settled outcome at `nowMs`: a valid offer, direct mode, or why neither. */
export function quoteAnswer(
  settled: { ok: true; value: unknown } | { ok: false; error: unknown },
  terms: TaskTerms,
  nowMs: number,
): QuoteAnswer {
  if (!settled.ok) {
    const { error } = settled;
    if (error instanceof AcmpError && error.code === METHOD_NOT_FOUND)
      return { kind: 'direct', why: 'not negotiating' };
    if (error instanceof TransportError) return { kind: 'direct', why: 'unreachable', detail: error.message };
    if (error instanceof AcmpError)
      return { kind: 'none', outcome: 'refused', code: error.code, detail: error.message };
    return { kind: 'none', outcome: 'no answer', code: ACMP_ERRORS.internal, detail: messageOf(error) };
  }
  const fault = offerFault(settled.value, terms, nowMs);
  if (fault !== undefined) return { kind: 'none', outcome: 'invalid', code: ACMP_ERRORS.internal, detail: fault };
  return { kind: 'offer', offer: settled.value as Offer };
}

/**
 * What came of asking one provider for an offer (invokePolicy.ts `askOffer`): its answer, settled; `not advertised`
 * (it was not asked); or `late` (nothing within the wait).
 */
export type AskedOffer =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: unknown }
  | 'not advertised'
  | 'late';

/** What asking for an offer came to means for the task, an answer judged at `nowMs` (its offer's expiry). */
export function judgeQuote(asked: AskedOffer, terms: TaskTerms, nowMs: number, timeoutMs: number): QuoteAnswer {
  if (asked === 'not advertised') return NOT_ADVERTISED;
  if (asked === 'late') return noQuoteInTime(timeoutMs);
  return quoteAnswer(asked, terms, nowMs);
}

/** A provider that negotiates sent no quote within the wait: it is no route for this task (it may answer the next). */
export const noQuoteInTime = (timeoutMs: number): QuoteAnswer => ({
  kind: 'none',
  outcome: 'no answer',
  code: ACMP_ERRORS.timeout,
  detail: `no quote within ${timeoutMs} ms`,
});

/** A provider that does not advertise quotes is not asked (Layer 1 §1: a buyer relies on no feature it cannot read). */
export const NOT_ADVERTISED: QuoteAnswer = { kind: 'direct', why: 'not negotiating' };

/** Why `offer` is no valid offer for the task at `nowMs` (its capability, its price above the ceiling, expired). */
export function offerFault(offer: unknown, terms: TaskTerms, nowMs: number): string | undefined {
  if (offer === null || typeof offer !== 'object') return 'the answer is not an offer';
  const { offer_id: id, capability, price_cu: price, valid_until_ms: validUntil } = offer as Record<string, unknown>;
  if (typeof id !== 'string' || id === '') return 'the offer has no offer_id';
  if (capability !== terms.capability)
    return `the offer is for capability ${JSON.stringify(capability)}, not "${terms.capability}"`;
  if (typeof price !== 'number' || !Number.isFinite(price) || price < 0) return 'the offer has no valid price_cu';
  if (terms.ceilingCu !== undefined && price > terms.ceilingCu) {
    return `its price ${price} CU is above the task's ceiling of ${terms.ceilingCu} CU`;
  }
  if (typeof validUntil !== 'number' || validUntil <= nowMs) return 'the offer had expired when it came';
  return undefined;
}

/** An offer as a route: its price and committed latency over the provider's advertised figures. */
export const offerRoute = (route: Route, offer: Offer): Route => ({
  ...route,
  offer,
  priceCu: offer.price_cu,
  latencyMs: numberOf(offer.latency_sla_ms) ?? route.latencyMs,
});

/** The routes in the order `policy` tries them: offers and direct routes together, unknown prices after known ones. */
export const rankRoutes = (policy: RoutingPolicy, routes: readonly Route[]): Route[] => rankCandidates(policy, routes);

/** A quote's answer as the spend log records it. */
export function quoteRecord(answer: QuoteAnswer): QuoteRecord {
  if (answer.kind === 'offer') {
    return { outcome: 'offered', priceCu: answer.offer.price_cu, offerId: answer.offer.offer_id };
  }
  if (answer.kind === 'direct') {
    return answer.why === 'not negotiating'
      ? { outcome: 'not negotiating', detail: 'tried in direct mode at its advertised price' }
      : { outcome: 'no answer', detail: `${answer.detail ?? ''}; tried in direct mode` };
  }
  return { outcome: answer.outcome, detail: answer.detail };
}

/** An offer as the report lists it among a task's offers. */
export const offerReceived = (
  provider: ProviderConfig,
  offer: Offer,
  latencyMs: number | undefined,
): OfferReceived => ({
  provider_id: provider.id,
  offer_id: offer.offer_id,
  price_cu: offer.price_cu,
  ...(latencyMs === undefined ? {} : { latency_ms: latencyMs }),
});
