// What the providers offer, as the analysis asks it (dag/checks.ts ProviderOffers): made once per change of the
// providers from their advertised terms (run/pricing.ts), so a keystroke reads no network and no disk, and each task
// costs one look-up.
import type { CheapestPrice, ProviderOffers } from './dag/checks';
import type { AdvertisedTerms } from './protocol/market';
import type { ProviderConfig, Settings } from './protocol/settings';
import { advertisedPrice, knownCapabilities, mayOffer, termsOf } from './run/pricing';

/** The providers the editor plans and checks against: the configured ones. */
export const providersOf = (settings: Settings): readonly ProviderConfig[] => settings.providers;

/**
 * Of the providers that may take a capability, the two that can be the cheapest for some task: the lowest price that
 * does not depend on the task (a fixed price), and the lowest per-1k-tokens price among the others; and
 * whether some provider has no price at all.
 */
interface CapabilityPrices {
  readonly fixed?: CheapestPrice;
  readonly perTokens?: { readonly providerId: string; readonly terms: AdvertisedTerms; readonly per1k: number };
  readonly unpriced: boolean;
}

function capabilityPrices(providers: readonly ProviderConfig[], capability: string): CapabilityPrices {
  let fixed: CheapestPrice | undefined;
  let perTokens: CapabilityPrices['perTokens'];
  let unpriced = false;
  for (const provider of providers) {
    if (!mayOffer(provider, capability)) continue;
    const terms = termsOf(provider, capability);
    const per1k = terms['acmp:price_cu_per_1k_tokens'];
    const price = advertisedPrice(terms, undefined);
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

  constructor(private readonly providers: readonly ProviderConfig[]) {
    // With no provider configured the warning is silent: a file of market capabilities is not wrong for lack of settings.
    this.capabilities = providers.length === 0 ? undefined : knownCapabilities(providers)?.sort();
    this.key = JSON.stringify(providers);
  }

  cheapest(capability: string, inputTokensEst: number | undefined): CheapestPrice | undefined {
    let prices = this.prices.get(capability);
    if (prices === undefined) {
      prices = capabilityPrices(this.providers, capability);
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

  /** The analysis cache tells options apart by their JSON: offers are those of their providers. */
  toJSON(): string {
    return this.key;
  }
}

const made = new WeakMap<readonly ProviderConfig[], ProviderOffers>();

/**
 * What `providers` offer, their prices known from their advertised terms; undefined when there are none (no-provider
 * and over-budget then stay silent). Made once per providers list.
 */
export function providerOffers(providers: readonly ProviderConfig[]): ProviderOffers | undefined {
  if (providers.length === 0) return undefined;
  let offers = made.get(providers);
  if (offers === undefined) {
    offers = new Offers(providers);
    made.set(providers, offers);
  }
  return offers;
}
