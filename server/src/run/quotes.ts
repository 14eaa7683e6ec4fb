// Real quotes for a plan (Layer 6): each distinct offer request of the DAG sent once to each provider that may take
// it (the built-in provider, whose prices are its catalog's, is not asked), the answers judged as a run judges them
// (invokePolicy.ts `askOffer`, negotiation.ts `judgeQuote`) and filed as `planDag` reads them. Nothing is accepted.
import type { DagModel } from '../dag/model';
import { TransportError } from '../protocol/acmpMessages';
import type { Budget } from '../protocol/market';
import type { ProviderConfig } from '../protocol/settings';
import { askOffer } from './invokePolicy';
import { DEFAULT_QUOTE_TIMEOUT_MS, type QuoteAnswer, judgeQuote, mayQuote, quoteAnswer } from './negotiation';
import { type PlannedRequest, type QuoteAnswers, offerRequests } from './plan';
import type { Connector, ProviderConnection } from './types';

export interface QuoteOptions {
  readonly connect: Connector;
  readonly budget?: Budget;
  /** How long a provider has to answer one request (default: a run's). */
  readonly timeoutMs?: number;
}

/** The outcome of `promise` (a connection's opening), or a TransportError once `ms` have passed. */
async function settle(
  promise: Promise<unknown>,
  ms: number,
): Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TransportError(`no answer within ${ms} ms`)), ms);
  });
  try {
    return { ok: true, value: await Promise.race([promise, late]) };
  } catch (error) {
    return { ok: false, error };
  } finally {
    clearTimeout(timer);
  }
}

/** One provider's answers to its requests, by request key. */
async function quotesOf(
  provider: ProviderConfig,
  requests: ReadonlyMap<string, PlannedRequest>,
  { connect, timeoutMs = DEFAULT_QUOTE_TIMEOUT_MS }: QuoteOptions,
): Promise<Map<string, QuoteAnswer>> {
  const answers = new Map<string, QuoteAnswer>();
  const connecting = connect(provider);
  const connected = await settle(connecting, timeoutMs);
  if (!connected.ok) {
    // A connection that comes after its time is closed at once.
    connecting
      .then(
        (late) => late.close(),
        () => undefined,
      )
      .catch(() => undefined);
    for (const [key, { terms }] of requests) answers.set(key, quoteAnswer(connected, terms, Date.now()));
    return answers;
  }
  const connection = connected.value as ProviderConnection;
  try {
    for (const [key, { params, terms }] of requests) {
      // Asked and judged as a run asks and judges (invokePolicy.ts `askOffer`): the plan prices what the run would.
      const answer = judgeQuote(await askOffer(connection, params, timeoutMs), terms, Date.now(), timeoutMs);
      answers.set(key, answer);
      // A provider that does not negotiate says so once: its other tasks go direct too.
      if (answer.kind === 'direct') for (const other of requests.keys()) answers.set(other, answer);
      if (answer.kind === 'direct') break;
    }
    return answers;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** Asks every provider that may take a task of `model` for its offers, all providers at once; never rejects. */
export async function requestQuotes(
  model: DagModel,
  providers: readonly ProviderConfig[],
  options: QuoteOptions,
): Promise<QuoteAnswers> {
  const asked = [...offerRequests(model, providers, options.budget)].filter(([provider]) => mayQuote(provider));
  const answered = await Promise.all(asked.map(([provider, requests]) => quotesOf(provider, requests, options)));
  return new Map(asked.map(([provider], index) => [provider, answered[index]!]));
}
