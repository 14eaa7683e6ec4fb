// How a durable run prices its tasks from journaled outcomes alone (run/durable/taskDeals.ts): the steps it asks for,
// the budget's decisions and the spend log, which a replay of the same journal must rebuild exactly.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ACMP_ERRORS, type Offer } from '../../server/src/protocol/acmpMessages';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import type { Budget } from '../../server/src/protocol/market';
import { type NextStep, TaskDeals } from '../../server/src/run/durable/taskDeals';
import { taskTerms } from '../../server/src/run/negotiation';

const dear: ProviderConfig = { id: 'dear', transport: 'http', url: 'http://127.0.0.1:1/mcp', capabilities: ['echo'] };
const cheap: ProviderConfig = { id: 'cheap', transport: 'http', url: 'http://127.0.0.1:2/mcp', capabilities: ['echo'] };
const candidates = [dear, cheap];

const offer = (id: string, priceCu: number): Offer => ({
  offer_id: id,
  capability: 'echo',
  price_cu: priceCu,
  valid_until_ms: 10_000,
});

/** Starts task `task` (id `task_<task>`) of capability echo at ms `at`. */
function start(deals: TaskDeals, task: number, at: number): NextStep {
  return deals.start(task, `task_${task}`, candidates, taskTerms('echo', {}, deals.budget), at);
}

/** What the report adds for a run of no task. */
const reportOf = (deals: TaskDeals) => deals.report({ tasks: [] } as never, () => undefined);

/** Two tasks quoted by both providers, each accepted and invoked; the second's cheapest offer is over the cap. */
function journal(budget: Budget): { deals: TaskDeals; steps: NextStep[] } {
  const deals = new TaskDeals('cheapest', budget);
  const steps: NextStep[] = [start(deals, 0, 1), start(deals, 1, 2)];
  const quotes = (task: number, dearCu: number, cheapCu: number, at: number) =>
    deals.quoted(task, {
      tsMs: at,
      answers: [
        { candidate: 0, answer: { kind: 'offer', offer: offer(`d${task}`, dearCu) } },
        { candidate: 1, answer: { kind: 'offer', offer: offer(`c${task}`, cheapCu) } },
      ],
    });
  steps.push(quotes(0, 0.5, 0.3, 3));
  steps.push(deals.acceptEnded(0, { ok: true, tsMs: 4 }));
  steps.push(quotes(1, 0.9, 0.8, 5));
  steps.push(deals.invokeEnded(0, { ok: true, tsMs: 6, providerId: 'cheap', costCu: 0.3 }));
  return { deals, steps };
}

describe('a durable run prices its tasks from its journal', () => {
  test('the cheapest offer is accepted, invoked at its price, and the budget denies what it cannot cover', () => {
    const { deals, steps } = journal({ total_cap_cu: 1 });
    assert.deepEqual(steps[0], { kind: 'quote', candidates: [0, 1] });
    assert.deepEqual(steps[2], { kind: 'accept', candidate: 1, offer: offer('c0', 0.3) });
    assert.deepEqual(steps[3], {
      kind: 'invoke',
      candidate: 1,
      terms: {
        provider_id: 'cheap',
        pricing: 'offer',
        price_cu: 0.3,
        basis: 'offer',
        offer_id: 'c0',
        max_price_cu: 0.3,
      },
    });
    // 0.3 reserved for task 0 while its invoke is in flight: 0.8 more is over the cap of 1.
    assert.equal(steps[4]!.kind, 'deny');
    assert.deepEqual((steps[4] as { error: { data: unknown } }).error.data, { reason: 'budget' });
    deals.denied(1);
    const spend = reportOf(deals).spend!;
    assert.deepEqual(
      spend.map((entry) => [entry.ts_ms, entry.kind, entry.task_id, entry.amount_cu, entry.outcome]),
      [
        [3, 'quote', 'task_0', 0.5, 'offered'],
        [3, 'quote', 'task_0', 0.3, 'offered'],
        [3, 'accept', 'task_0', 0.3, 'reserved'],
        [5, 'quote', 'task_1', 0.9, 'offered'],
        [5, 'quote', 'task_1', 0.8, 'offered'],
        [5, 'denial', 'task_1', 0.8, 'denied'],
        [5, 'denial', 'task_1', 0.9, 'denied'],
        [6, 'invoke', 'task_0', 0.3, 'charged'],
      ],
    );
  });

  test('the same journal fed again makes the same decisions and the same spend log', () => {
    const first = journal({ total_cap_cu: 1 });
    const replayed = journal({ total_cap_cu: 1 });
    assert.deepEqual(replayed.steps, first.steps);
    assert.deepEqual(reportOf(replayed.deals), reportOf(first.deals));
  });

  test('an expired offer is quoted again at its provider; -34003 on an accept is the run’s own accept', () => {
    const deals = new TaskDeals('cheapest', { total_cap_cu: 1 });
    start(deals, 0, 1);
    deals.quoted(0, { tsMs: 2, answers: [{ candidate: 1, answer: { kind: 'offer', offer: offer('old', 0.3) } }] });
    const expired = { code: ACMP_ERRORS.offer_expired, message: 'Offer expired' };
    assert.deepEqual(deals.acceptEnded(0, { ok: false, tsMs: 3, error: expired }), {
      kind: 'quote',
      candidates: [1],
    });
    assert.deepEqual(
      deals.quoted(0, { tsMs: 4, answers: [{ candidate: 1, answer: { kind: 'offer', offer: offer('new', 0.3) } }] }),
      { kind: 'accept', candidate: 1, offer: offer('new', 0.3) },
    );
    const next = deals.acceptEnded(0, { ok: true, tsMs: 5, again: true });
    assert.equal(next.kind, 'invoke');
    const spend = reportOf(deals).spend!;
    assert.deepEqual(
      spend.filter((entry) => entry.kind === 'accept').map((entry) => [entry.outcome, entry.offer_id]),
      [
        ['reserved', 'old'],
        ['released', undefined],
        ['reserved', 'new'],
      ],
    );
  });

  test('a provider that does not negotiate is invoked directly at the task’s ceiling and not asked again', () => {
    const deals = new TaskDeals('cheapest', { per_task_max_cu: 0.4 });
    start(deals, 0, 1);
    const next = deals.quoted(0, {
      tsMs: 2,
      answers: [
        { candidate: 0, answer: { kind: 'direct', why: 'not negotiating' } },
        { candidate: 1, answer: { kind: 'none', outcome: 'refused', code: -33001, detail: 'Budget exceeded' } },
      ],
    });
    assert.deepEqual(next, {
      kind: 'invoke',
      candidate: 0,
      terms: { provider_id: 'dear', pricing: 'direct', basis: 'unknown', max_price_cu: 0.4 },
    });
    assert.deepEqual(start(deals, 1, 3), { kind: 'quote', candidates: [1] });
  });
});
