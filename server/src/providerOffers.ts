// What the providers offer, as the analysis asks it (dag/checks.ts ProviderOffers): made once per change of the
// providers (or of the price history) from the figures a plan uses (run/pricing.ts, run/plan.ts: advertised terms,
// else past runs), so a keystroke reads no network and no disk, and each task costs one look-up.
import type { CheapestPrice, ProviderOffers } from './dag/checks';
import type { AdvertisedTerms } from './protocol/market';
import type { ProviderConfig, Settings } from './protocol/settings';
import { type PriceHistory, historyKey } from './run/priceHistory';
import { advertisedPrice, knownCapabilities, mayOffer, termsOf } from './run/pricing';

/** The providers the editor plans and checks against: the configured ones. */
export const providersOf = (settings: Settings): readonly ProviderConfig[] => settings.providers;

/**
 * Of the providers that may take a capability, the two that can be the cheapest for some task: the lowest price that
 * does not depend on the task (fixed, or from past runs), and the lowest per-1k-tokens price among the others; and
 * whether some provider has no price at all.
 */
interface CapabilityPrices {
  readonly fixed?: CheapestPrice;
  readonly perTokens?: { readonly providerId: string; readonly terms: AdvertisedTerms; readonly per1k: number };
  readonly unpriced: boolean;
}

function capabilityPrices(
  providers: readonly ProviderConfig[],
  history: PriceHistory | undefined,
  capability: string,
): CapabilityPrices {
  let fixed: CheapestPrice | undefined;
  let perTokens: CapabilityPrices['perTokens'];
  let unpriced = false;
  for (const provider of providers) {
    if (!mayOffer(provider, capability)) continue;
    const terms = termsOf(provider, capability);
    const per1k = terms['acmp:price_cu_per_1k_tokens'];
    const price = advertisedPrice(terms, undefined) ?? history?.get(historyKey(provider.id, capability))?.cost_cu;
    // A per-1k price comes before past runs (plan.ts): for a task with tokens, not replaced by the history's.
    if (terms['acmp:price_cu'] === undefined && per1k !== undefined) {
      if (perTokens === undefined || per1k < perTokens.per1k) perTokens = { providerId: provider.id, terms, per1k };
    } else if (price === undefined) unpriced = true;
    else if (fixed === undefined || price < fixed.priceCu) fixed = { priceCu: price, providerId: provider.id };
  }
  return { ...(fixed === undefined ? {} : { fixed }), ...(perTokens === undefined ? {} : { perTokens }), unpriced };
}

class Offers implements ProviderOffers {
  readonly capabilities: readonly string[] | undefined;
  private readonly prices = new Map<string, CapabilityPrices>();
  private readonly key: string;

  constructor(
    private readonly providers: readonly ProviderConfig[],
    private readonly history: PriceHistory | undefined,
  ) {
    // With no provider configured the warning is silent: a file of market capabilities is not wrong for lack of settings.
    this.capabilities = providers.length === 0 ? undefined : knownCapabilities(providers)?.sort();
    this.key = JSON.stringify([providers, history === undefined ? [] : [...history.values()]]);
  }

  cheapest(capability: string, inputTokensEst: number | undefined): CheapestPrice | undefined {
    let prices = this.prices.get(capability);
    if (prices === undefined) {
      prices = capabilityPrices(this.providers, this.history, capability);
      this.prices.set(capability, prices);
    }
    const { fixed, perTokens, unpriced } = prices;
    if (unpriced) return undefined;
    if (perTokens === undefined) return fixed;
    // Without a token estimate a per-1k price is unknown, and that provider may take the task.
    const byTokens = advertisedPrice(perTokens.terms, inputTokensEst);
    if (byTokens === undefined) return undefined;
    return fixed !== undefined && fixed.priceCu <= byTokens
      ? fixed
      : { priceCu: byTokens, providerId: perTokens.providerId };
  }

  /** The analysis cache tells options apart by their JSON: offers are those of their providers and history. */
  toJSON(): string {
    return this.key;
  }
}

const made = new WeakMap<readonly ProviderConfig[], { history: PriceHistory | undefined; offers: ProviderOffers }>();

/**
 * What `providers` offer, their prices known from their terms or from `history`; undefined when there are none
 * (no-provider and over-budget then stay silent). Made once per providers list and history.
 */
export function providerOffers(
  providers: readonly ProviderConfig[],
  history?: PriceHistory,
): ProviderOffers | undefined {
  if (providers.length === 0) return undefined;
  const known = made.get(providers);
  if (known !== undefined && known.history === history) return known.offers;
  const offers = new Offers(providers, history);
  made.set(providers, { history, offers });
  return offers;
}
