// The routing rule a plan and both run drivers share (docs/market.md): which providers offer a capability, what a
// task costs and takes at each by its advertised terms, and the order the routing policy puts them in.
import { BUILTIN_CAPABILITIES, builtinCapability } from '../protocol/builtinCatalog';
import type { AdvertisedTerms, RoutingPolicy } from '../protocol/market';
import type { ProviderConfig } from '../protocol/settings';

/** What serves a run when no provider is configured. */
export const BUILTIN_PROVIDER: ProviderConfig = { id: 'builtin', transport: 'builtin' };

/** The providers that serve a run: those configured, else the built-in provider alone. */
export const servingProviders = (providers: readonly ProviderConfig[]): readonly ProviderConfig[] =>
  providers.length > 0 ? providers : [BUILTIN_PROVIDER];

/** Every capability the providers list, each once, in list order (a provider without a list adds none). */
export function offeredCapabilities(providers: readonly ProviderConfig[]): string[] {
  const offered = new Set<string>();
  for (const provider of providers) for (const capability of offeredBy(provider) ?? []) offered.add(capability);
  return [...offered];
}

/** The capabilities the providers offer, when each says which; undefined when one of them may take any capability. */
export function knownCapabilities(providers: readonly ProviderConfig[]): string[] | undefined {
  return providers.some((provider) => offeredBy(provider) === undefined) ? undefined : offeredCapabilities(providers);
}

/**
 * The capabilities a provider offers: its list, else the built-in provider's catalog for a built-in one; undefined
 * when it says nothing (it may take any capability, and only its answer tells).
 */
export function offeredBy(provider: ProviderConfig): readonly string[] | undefined {
  return provider.capabilities ?? (provider.transport === 'builtin' ? BUILTIN_CAPABILITIES : undefined);
}

/** Whether `provider` may take `capability`: it lists it, or lists nothing. */
export function mayOffer(provider: ProviderConfig, capability: string): boolean {
  const offered = offeredBy(provider);
  return offered === undefined || offered.includes(capability);
}

/** The terms `provider` advertises for `capability`: the capability's own over the provider's. */
export function termsOf(provider: ProviderConfig, capability: string): AdvertisedTerms {
  const own = provider.capabilityTerms?.[capability];
  const builtinPrice =
    provider.transport === 'builtin' && provider['acmp:price_cu'] === undefined
      ? builtinCapability(capability)?.priceCu
      : undefined;
  return {
    ...(builtinPrice === undefined ? {} : { 'acmp:price_cu': builtinPrice }),
    ...pickTerms(provider),
    ...(own === undefined ? {} : pickTerms(own)),
  };
}

const TERM_NAMES = [
  'acmp:price_cu',
  'acmp:price_cu_per_1k_tokens',
  'acmp:latency_p99_ms',
  'acmp:tier',
  'acmp:proof_methods',
  'acmp:availability',
] as const satisfies readonly (keyof AdvertisedTerms)[];

function pickTerms(from: AdvertisedTerms): AdvertisedTerms {
  const terms: Record<string, unknown> = {};
  for (const name of TERM_NAMES) if (from[name] !== undefined) terms[name] = from[name];
  return terms;
}

/**
 * A task's advertised price under `terms`: the fixed task price, else the per-1k-tokens price times the task's
 * `input_tokens_est`; undefined (unknown, never 0) when neither applies.
 */
export function advertisedPrice(terms: AdvertisedTerms, inputTokensEst: number | undefined): number | undefined {
  if (terms['acmp:price_cu'] !== undefined) return terms['acmp:price_cu'];
  const per1k = terms['acmp:price_cu_per_1k_tokens'];
  if (per1k === undefined || inputTokensEst === undefined) return undefined;
  return (per1k * inputTokensEst) / 1000;
}

/** One provider that may take a task, with the figures the policy compares; `listed` is its place in the list. */
export interface RankedCandidate {
  readonly provider: ProviderConfig;
  readonly listed: number;
  readonly priceCu: number | undefined;
  readonly latencyMs: number | undefined;
  readonly tier: string | undefined;
}

/** S before A before B; an unknown tier last. */
const tierRank = (tier: string | undefined): number => {
  const rank = tier === undefined ? -1 : ['S', 'A', 'B'].indexOf(tier);
  return rank === -1 ? 3 : rank;
};

/** Unknown after every known figure, never as 0 (a provider without a price is not free). */
const known = (a: number | undefined, b: number | undefined): number =>
  a === undefined ? (b === undefined ? 0 : 1) : b === undefined ? -1 : a - b;

const BY_POLICY: Readonly<Record<RoutingPolicy, (a: RankedCandidate, b: RankedCandidate) => number>> = {
  cheapest: (a, b) =>
    known(a.priceCu, b.priceCu) ||
    known(a.latencyMs, b.latencyMs) ||
    tierRank(a.tier) - tierRank(b.tier) ||
    a.listed - b.listed,
  fastest: (a, b) =>
    known(a.latencyMs, b.latencyMs) ||
    known(a.priceCu, b.priceCu) ||
    tierRank(a.tier) - tierRank(b.tier) ||
    a.listed - b.listed,
  listed: (a, b) => a.listed - b.listed,
};

/** `candidates` in the order `policy` tries them (a new array). */
export function rankCandidates<C extends RankedCandidate>(policy: RoutingPolicy, candidates: readonly C[]): C[] {
  return [...candidates].sort(BY_POLICY[policy]);
}

/** Why the first of a ranking was chosen, in words, for a plan and a report. */
export function reasonFor(policy: RoutingPolicy, ranked: readonly RankedCandidate[]): string {
  const first = ranked[0];
  if (first === undefined) return 'no provider offers the capability';
  if (ranked.length === 1) return 'the only provider that offers the capability';
  if (policy === 'listed') return 'first in the providers list';
  const figure = policy === 'cheapest' ? first.priceCu : first.latencyMs;
  if (figure === undefined)
    return `no provider has a known ${policy === 'cheapest' ? 'price' : 'latency'}: first listed`;
  return policy === 'cheapest' ? 'the lowest price' : 'the lowest latency';
}
