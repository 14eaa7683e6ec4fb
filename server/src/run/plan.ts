// The plan of a DAG before it runs (docs/market.md): for each task the providers that may take it, best first by the
// routing policy, with the price and latency of each and where each figure comes from (an offer, the advertised
// terms, past runs, or nothing); then the totals, the critical path by latency and the wall time at the run's
// concurrency. Pure: the offers and the history are the caller's to fetch. Iterative, and linear in the file but for
// the ranking, which is done once per kind of task (capability and the fields its figures depend on), not per task.
import { dagIndex } from '../dag/dagIndex';
import type { Adjacency } from '../dag/graph';
import type { DagModel, TaskDeclaration } from '../dag/model';
import type { OfferRequestParams } from '../protocol/acmpMessages';
import type {
  AdvertisedTerms,
  Budget,
  DagPlan,
  Figure,
  PlannedCandidate,
  PlannedTask,
  RoutingPolicy,
} from '../protocol/market';
import { DEFAULT_RUN_SETTINGS, type ProviderConfig } from '../protocol/settings';
import { effectiveBudget } from './budget';
import { type QuoteAnswer, type TaskTerms, ceilingOf, offerRequestOf } from './negotiation';
import {
  advertisedPrice,
  mayOffer,
  offeredCapabilities,
  rankCandidates,
  reasonFor,
  servingProviders,
  termsOf,
} from './pricing';
import { type PriceHistory, historyKey } from './priceHistory';
import { cachedFromText } from './planText';
import type { Building, StoredResult } from './types';

/**
 * Offer requests' answers by provider entry, then by `offerRequestKey`: an offer, direct mode (the provider does not
 * negotiate: it keeps its advertised figures), or why it will not quote (it is excluded).
 */
export type QuoteAnswers = ReadonlyMap<ProviderConfig, ReadonlyMap<string, QuoteAnswer>>;

export interface PlanOptions {
  readonly policy?: RoutingPolicy;
  /** Tasks in flight at most, as the run would have them (default `acmp.run.maxConcurrency`'s). */
  readonly concurrency?: number;
  /** The run's limits: `per_task_max_cu` excludes dearer providers, as a task's `max_price_cu` does. */
  readonly budget?: Budget;
  readonly history?: PriceHistory;
  /** The answers of the providers the caller asked for quotes (`offerRequests` says which to ask). */
  readonly offers?: QuoteAnswers;
  /** Said about the providers themselves (a catalog that could not be read), passed on to the plan. */
  readonly warnings?: readonly string[];
  /**
   * What the result store holds, by position in `model.tasks` (selection.ts `storedResults`): those tasks are planned
   * at cost 0 and no time, as a run completes them, and left out of the known total.
   */
  readonly stored?: readonly (StoredResult | undefined)[];
}

const CACHED: Figure = { value: 0, basis: 'cached' };

/** What `task` asks of the market under `budget` (as a run derives it from the task's fields). */
export function termsOfTask(task: TaskDeclaration, budget?: Budget): TaskTerms {
  return {
    capability: task.capability ?? '',
    inputTokensEst: task.inputTokensEst,
    ceilingCu: ceilingOf(task.maxPriceCu, effectiveBudget(budget).per_task_max_cu),
    preferredTier: task.preferredTier,
    proofMethod: task.proofMethod,
  };
}

/** One string per distinct request: tasks of identical terms get one quote. */
export const offerRequestKey = (terms: TaskTerms): string =>
  JSON.stringify([terms.capability, terms.inputTokensEst, terms.ceilingCu, terms.preferredTier, terms.proofMethod]);

/** One distinct offer request: what is sent, and the terms its answer is judged by (negotiation.ts `quoteAnswer`). */
export interface PlannedRequest {
  readonly params: OfferRequestParams;
  readonly terms: TaskTerms;
}

/** The tasks a plan covers: each id's first declaration (a DAG with errors may declare one twice, or none). */
function plannedTasks(model: DagModel): TaskDeclaration[] {
  return model.tasks.filter((task) => task.id !== undefined && model.taskById.get(task.id) === task);
}

/**
 * The distinct offer requests of the DAG's tasks for each provider that may take them: what a caller quoting a plan
 * sends (each once), and where it files the answers for `planDag`.
 */
export function offerRequests(
  model: DagModel,
  providers: readonly ProviderConfig[],
  budget?: Budget,
): Map<ProviderConfig, Map<string, PlannedRequest>> {
  const candidates = candidatesByCapability(servingProviders(providers));
  const requests = new Map<ProviderConfig, Map<string, PlannedRequest>>();
  for (const task of plannedTasks(model)) {
    const offering = candidates(task.capability ?? '');
    if (offering.length === 0) continue;
    const terms = termsOfTask(task, budget);
    const key = offerRequestKey(terms);
    for (const { provider } of offering) {
      let byKey = requests.get(provider);
      if (byKey === undefined) requests.set(provider, (byKey = new Map<string, PlannedRequest>()));
      if (!byKey.has(key)) byKey.set(key, { params: offerRequestOf(terms), terms });
    }
  }
  return requests;
}

/** A provider that may take a capability, with what does not depend on the task. */
interface Offering {
  readonly provider: ProviderConfig;
  readonly listed: number;
  readonly terms: AdvertisedTerms;
  /** What it charged for the capability in past runs, when it did. */
  readonly pastCost: number | undefined;
  /** Its latency without an offer: advertised, else from past runs, else unknown. */
  readonly latency: Figure;
}

/** The providers that may take each capability, in list order, found once per capability. */
function candidatesByCapability(
  providers: readonly ProviderConfig[],
  history?: PriceHistory,
): (capability: string) => readonly Offering[] {
  const found = new Map<string, readonly Offering[]>();
  return (capability) => {
    let offering = found.get(capability);
    if (offering === undefined) {
      offering = [];
      providers.forEach((provider, listed) => {
        if (!mayOffer(provider, capability)) return;
        const terms = termsOf(provider, capability);
        const past = history?.get(historyKey(provider.id, capability));
        const latency =
          known(terms['acmp:latency_p99_ms'], 'advertised') ?? known(past?.duration_ms, 'history') ?? UNKNOWN;
        (offering as Offering[]).push({ provider, listed, terms, pastCost: past?.cost_cu, latency });
      });
      found.set(capability, offering);
    }
    return offering;
  };
}

/** What the tasks of one kind share: their candidates ranked, the one chosen and why. */
interface Routing {
  readonly candidates: readonly PlannedCandidate[];
  readonly chosen: PlannedCandidate | undefined;
  readonly reason: string;
  readonly overBudget?: { readonly max_price_cu: number; readonly cheapest_cu: number };
}

const UNKNOWN: Figure = { basis: 'unknown' };

const known = (value: number | undefined, basis: Figure['basis']): Figure | undefined =>
  value === undefined ? undefined : { value, basis };

const cu = (value: number): string => `${Number(value.toPrecision(6))} CU`;

/** Routes the tasks of one kind: every figure found, the candidates ranked, those the run would not take marked. */
function route(
  offering: readonly Offering[],
  task: TaskDeclaration,
  terms: TaskTerms,
  requestKey: string | undefined,
  options: PlanOptions,
  policy: RoutingPolicy,
): Routing {
  const limit = terms.ceilingCu;
  const limitName = task.maxPriceCu === limit ? "the task's max_price_cu" : 'the per-task budget';
  const figured = offering.map(({ provider, listed, terms: advertised, pastCost, latency: unquoted }) => {
    const answer = requestKey === undefined ? undefined : options.offers?.get(provider)?.get(requestKey);
    const offer = answer?.kind === 'offer' ? answer.offer : undefined;
    const price =
      known(offer?.price_cu, 'offer') ??
      known(advertisedPrice(advertised, terms.inputTokensEst), 'advertised') ??
      known(pastCost, 'history') ??
      UNKNOWN;
    const latency = known(offer?.latency_sla_ms, 'offer') ?? unquoted;
    const tier = advertised['acmp:tier'];
    const excluded = exclusion(answer, terms, advertised, price, limitName);
    // Built member by member: spreads of optional members cost a tenth of a large plan.
    const candidate: Building<PlannedCandidate> = { provider_id: provider.id, price, latency };
    if (tier !== undefined) candidate.tier = tier;
    if (excluded !== undefined) candidate.excluded = excluded;
    return { candidate, provider, listed, priceCu: price.value, latencyMs: latency.value, tier };
  });
  const ranked = rankCandidates(policy, figured);
  // Those the run may take first, in the policy's order, then those it would not, in the same order.
  const eligible = ranked.filter(({ candidate }) => candidate.excluded === undefined);
  const candidates = eligible.map(({ candidate }) => candidate);
  for (const { candidate } of ranked) if (candidate.excluded !== undefined) candidates.push(candidate);
  const excludedCount = ranked.length - eligible.length;
  if (eligible.length === 0) {
    const prices = candidates.map(({ price }) => price.value);
    const allAbove = limit !== undefined && prices.every((price) => price !== undefined && price > limit);
    return {
      candidates,
      chosen: undefined,
      reason: allAbove
        ? `every provider's price is above ${limitName}, ${cu(limit)}`
        : 'every provider that offers the capability is excluded',
      ...(allAbove ? { overBudget: { max_price_cu: limit, cheapest_cu: Math.min(...(prices as number[])) } } : {}),
    };
  }
  const reason =
    excludedCount === 0
      ? reasonFor(policy, eligible)
      : eligible.length === 1
        ? `the only provider left (${excludedCount} excluded)`
        : `${reasonFor(policy, eligible)} (${excludedCount} excluded)`;
  return { candidates, chosen: eligible[0]!.candidate, reason };
}

/** Why a run would not send the task to a provider: it would not quote, it gives no such proof, its price is too high. */
function exclusion(
  answer: QuoteAnswer | undefined,
  terms: TaskTerms,
  advertised: AdvertisedTerms,
  price: Figure,
  limitName: string,
): string | undefined {
  if (answer?.kind === 'none') return `no quote (${answer.outcome}): ${answer.detail}`;
  const proofs = advertised['acmp:proof_methods'];
  if (terms.proofMethod !== undefined && proofs !== undefined && !proofs.includes(terms.proofMethod)) {
    return `it gives no ${terms.proofMethod} proof (only ${proofs.join(', ') || 'none'})`;
  }
  const limit = terms.ceilingCu;
  if (limit !== undefined && price.value !== undefined && price.value > limit) {
    return `its price ${cu(price.value)} is above ${limitName}, ${cu(limit)}`;
  }
  return undefined;
}

/** The key of the tasks that share a routing: the terms their figures and exclusions depend on, no more. */
const routingKey = (task: TaskDeclaration, terms: TaskTerms, tokenPriced: boolean): string =>
  `${terms.capability}\u0000${tokenPriced ? (terms.inputTokensEst ?? '') : ''}\u0000${terms.proofMethod ?? ''}\u0000${limitKey(task, terms)}`;

/** The price limit and whose it is (the task's or the budget's): the words of an exclusion name it. */
const limitKey = (task: TaskDeclaration, terms: TaskTerms): string =>
  `${terms.ceilingCu ?? ''}${task.maxPriceCu === terms.ceilingCu ? '' : '/budget'}`;

/** The routing of a task whose capability no provider may take. */
const NO_PROVIDER: Routing = { candidates: [], chosen: undefined, reason: 'no provider offers the capability' };

/** Routes each task, once per kind of task (routingKey, or the offer request's key when offers came). */
function router(
  providers: readonly ProviderConfig[],
  options: PlanOptions,
  policy: RoutingPolicy,
): (task: TaskDeclaration) => Routing {
  const candidatesOf = candidatesByCapability(servingProviders(providers), options.history);
  // Whether some provider's price for a capability depends on the task's tokens: only then do they part routings.
  const tokenPriced = new Map<string, boolean>();
  const routings = new Map<string, Routing>();
  return (task) => {
    const capability = task.capability ?? '';
    const offering = candidatesOf(capability);
    if (offering.length === 0) return NO_PROVIDER;
    let byTokens = tokenPriced.get(capability);
    if (byTokens === undefined) {
      byTokens = offering.some(
        ({ terms }) => terms['acmp:price_cu'] === undefined && terms['acmp:price_cu_per_1k_tokens'] !== undefined,
      );
      tokenPriced.set(capability, byTokens);
    }
    const terms = termsOfTask(task, options.budget);
    const requestKey = options.offers === undefined ? undefined : offerRequestKey(terms);
    const key =
      requestKey === undefined ? routingKey(task, terms, byTokens) : `${requestKey}\u0000${limitKey(task, terms)}`;
    let routing = routings.get(key);
    if (routing === undefined) {
      routing = route(offering, task, terms, requestKey, options, policy);
      routings.set(key, routing);
    }
    return routing;
  };
}

/**
 * What running the DAG of `model` on `providers` would cost and take, before it runs: see DagPlan. An unknown price
 * is counted, never summed as 0; a task no provider may take is not counted as unpriced (it cannot run at all).
 */
export function planDag(model: DagModel, providers: readonly ProviderConfig[], options: PlanOptions = {}): DagPlan {
  const policy = options.policy ?? DEFAULT_RUN_SETTINGS.routing;
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? DEFAULT_RUN_SETTINGS.maxConcurrency));
  const routeOf = router(providers, options, policy);
  const planned: PlannedTask[] = [];
  const noProvider: { task_id: string; capability: string }[] = [];
  const overBudget: string[] = [];
  /** Latency by graph node (a task's position in `model.tasks`), -1 where unknown or not planned. */
  const latencies = new Float64Array(model.tasks.length).fill(-1);
  const plannedNodes = new Uint8Array(model.tasks.length);
  let knownCu = 0;
  let unpriced = 0;
  let cached = 0;
  let node = 0;
  for (const task of plannedTasks(model)) {
    while (model.tasks[node] !== task) node++;
    plannedNodes[node] = 1;
    const stored = options.stored?.[node];
    if (stored !== undefined) {
      cached++;
      latencies[node] = 0;
      planned.push(cachedTask(task, stored));
      continue;
    }
    const routing = routeOf(task);
    const { chosen } = routing;
    const capability = task.capability ?? '';
    if (routing === NO_PROVIDER) noProvider.push({ task_id: task.id!, capability });
    if (routing.overBudget !== undefined) overBudget.push(task.id!);
    if (chosen !== undefined) {
      if (chosen.price.value === undefined) unpriced++;
      else knownCu += chosen.price.value;
      if (chosen.latency.value !== undefined) latencies[node] = chosen.latency.value;
    }
    const plannedTask: Building<PlannedTask> = {
      task_id: task.id!,
      capability,
      reason: routing.reason,
      price: chosen?.price ?? UNKNOWN,
      latency: chosen?.latency ?? UNKNOWN,
      candidates: routing.candidates,
    };
    if (chosen !== undefined) plannedTask.provider_id = chosen.provider_id;
    if (routing === NO_PROVIDER) plannedTask.no_provider = true;
    if (routing.overBudget !== undefined) plannedTask.over_budget = routing.overBudget;
    planned.push(plannedTask);
  }
  const { successors } = dagIndex(model).dependencies();
  const path = criticalPath(successors, latencies, plannedNodes);
  const warnings = [...(options.warnings ?? [])];
  if (path.cyclic) {
    warnings.push('The DAG has a cycle: the tasks on it and after it are left out of the critical path and wall time.');
  }
  return {
    dag_id: model.dagId ?? '',
    policy,
    tasks: planned,
    total: { known_cu: knownCu, unpriced, ...(cached === 0 ? {} : { cached }) },
    critical_path: {
      task_ids: path.nodes.map((n) => model.tasks[n]!.id!),
      latency_ms: path.latencyMs,
      unknown: path.nodes.reduce((count, n) => count + (latencies[n]! < 0 ? 1 : 0), 0),
    },
    wall_time: { ...listSchedule(successors, latencies, plannedNodes, concurrency), concurrency },
    no_provider: noProvider,
    offered_capabilities: offeredCapabilities(servingProviders(providers)),
    over_budget: overBudget,
    warnings,
  };
}

/** A task the result store holds: a run completes it with the stored output, at no cost, on no provider's time. */
function cachedTask(task: TaskDeclaration, stored: StoredResult): PlannedTask {
  return {
    task_id: task.id!,
    capability: task.capability ?? '',
    provider_id: stored.provider_id,
    reason: `its result is in the result store (${cachedFromText(stored)})`,
    price: CACHED,
    latency: CACHED,
    candidates: [],
    cached: { run_id: stored.run_id, task_id: stored.task_id, made_at: stored.made_at, cost_cu: stored.cost_cu },
  };
}

/** The time a task takes in the estimates: its latency, or 0 when unknown. */
const durationOf = (latencies: Float64Array, node: number): number => Math.max(0, latencies[node]!);

/**
 * The longest path by latency (Kahn's order), ties broken by the number of tasks, so that a DAG of unknown latencies
 * still shows its longest chain. `cyclic`: some planned task was never reached (it is on or after a cycle).
 */
function criticalPath(
  successors: Adjacency,
  latencies: Float64Array,
  planned: Uint8Array,
): { nodes: number[]; latencyMs: number; cyclic: boolean } {
  const count = planned.length;
  const indegree = new Int32Array(count);
  for (let e = 0; e < successors.targets.length; e++) indegree[successors.targets[e]!]!++;
  const finish = new Float64Array(count);
  const length = new Int32Array(count);
  const previous = new Int32Array(count).fill(-1);
  const queue = new Int32Array(count);
  let tail = 0;
  for (let n = 0; n < count; n++) {
    if (indegree[n] === 0 && planned[n] === 1) {
      queue[tail++] = n;
      finish[n] = durationOf(latencies, n);
      length[n] = 1;
    }
  }
  let reached = 0;
  let end = -1;
  for (let head = 0; head < tail; head++) {
    const n = queue[head]!;
    reached++;
    if (end === -1 || finish[n]! > finish[end]! || (finish[n] === finish[end] && length[n]! > length[end]!)) end = n;
    for (let e = successors.offsets[n]!; e < successors.offsets[n + 1]!; e++) {
      const next = successors.targets[e]!;
      const through = finish[n]! + durationOf(latencies, next);
      if (
        previous[next] === -1 ||
        through > finish[next]! ||
        (through === finish[next] && length[n]! + 1 > length[next]!)
      ) {
        finish[next] = through;
        length[next] = length[n]! + 1;
        previous[next] = n;
      }
      if (--indegree[next]! === 0) queue[tail++] = next;
    }
  }
  const nodes: number[] = [];
  for (let n = end; n !== -1; n = previous[n]!) nodes.push(n);
  nodes.reverse();
  let plannedCount = 0;
  for (let n = 0; n < count; n++) plannedCount += planned[n]!;
  return { nodes, latencyMs: end === -1 ? 0 : finish[end]!, cyclic: reached < plannedCount };
}

/**
 * The wall time of a list schedule as the run machine makes it: ready tasks start in the order they became ready
 * (the DAG's roots in declaration order first), at most `concurrency` at once; each completion, earliest first,
 * releases its downstream tasks, which start as slots free up. Unknown latencies take 0 ms and are counted.
 */
function listSchedule(
  successors: Adjacency,
  latencies: Float64Array,
  planned: Uint8Array,
  concurrency: number,
): { ms: number; unknown: number } {
  const count = planned.length;
  const waiting = new Int32Array(count);
  for (let e = 0; e < successors.targets.length; e++) waiting[successors.targets[e]!]!++;
  const ready = new Int32Array(count);
  let readyHead = 0;
  let readyTail = 0;
  let unknown = 0;
  for (let n = 0; n < count; n++) {
    if (planned[n] === 0) continue;
    if (latencies[n]! < 0) unknown++;
    if (waiting[n] === 0) ready[readyTail++] = n;
  }
  // The tasks in flight, a binary min-heap by finish time, then by launch order (a run settles them as they end).
  const heapEnd = new Float64Array(concurrency);
  const heapSeq = new Float64Array(concurrency);
  const heapNode = new Int32Array(concurrency);
  let size = 0;
  let launched = 0;
  let now = 0;
  const before = (a: number, b: number): boolean =>
    heapEnd[a]! < heapEnd[b]! || (heapEnd[a] === heapEnd[b] && heapSeq[a]! < heapSeq[b]!);
  const swap = (a: number, b: number): void => {
    [heapEnd[a], heapEnd[b]] = [heapEnd[b]!, heapEnd[a]!];
    [heapSeq[a], heapSeq[b]] = [heapSeq[b]!, heapSeq[a]!];
    [heapNode[a], heapNode[b]] = [heapNode[b]!, heapNode[a]!];
  };
  const launch = (): void => {
    while (size < concurrency && readyHead < readyTail) {
      const n = ready[readyHead++]!;
      let at = size++;
      heapEnd[at] = now + durationOf(latencies, n);
      heapSeq[at] = launched++;
      heapNode[at] = n;
      while (at > 0 && before(at, (at - 1) >> 1)) {
        swap(at, (at - 1) >> 1);
        at = (at - 1) >> 1;
      }
    }
  };
  launch();
  while (size > 0) {
    const n = heapNode[0]!;
    now = heapEnd[0]!;
    swap(0, --size);
    for (let at = 0; ;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let first = at;
      if (left < size && before(left, first)) first = left;
      if (right < size && before(right, first)) first = right;
      if (first === at) break;
      swap(at, first);
      at = first;
    }
    for (let e = successors.offsets[n]!; e < successors.offsets[n + 1]!; e++) {
      const next = successors.targets[e]!;
      if (--waiting[next]! === 0 && planned[next] === 1) ready[readyTail++] = next;
    }
    launch();
  }
  return { ms: now, unknown };
}
