// Negotiated runs and budgets in the executor (Layer 6, Layer 7 §6, docs/market.md), against scripted providers that
// quote: who is asked, which offer is accepted, what the invoke carries, what the report and the events say, and that a
// budget is never overshot however many tasks are in flight.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';
import { ACMP_ERRORS, AcmpError } from '../../server/src/protocol/acmpMessages';
import type { SpendEntry } from '../../server/src/protocol/market';
import type { RunEvent, RunReport, TaskReport } from '../../server/src/protocol/report';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import { SpendLedger, budgetStopMessage } from '../../server/src/run/budget';
import { startRun } from '../../server/src/run/executor';
import { MAX_REQUOTES } from '../../server/src/run/negotiation';
import type { RunOptions } from '../../server/src/run/types';
import {
  type Behaviour,
  EventLog,
  FULL,
  type Negotiation,
  QUOTES,
  ScriptedProvider,
  answer,
  quoting,
  scriptedConnector,
} from '../support/scriptedProviders';

type Json = Record<string, unknown>;

const LIMIT = { timeout: 5_000 };

const echoTasks = (count: number, extra: Json = {}): Json[] =>
  Array.from({ length: count }, (_, k) => ({
    task_id: `task_${k}`,
    capability: 'echo',
    input: { type: 'text', data: `${k}` },
    ...extra,
  }));
const dag = (tasks: Json[], edges: Json[] = []) =>
  analyzeDag(JSON.stringify({ dag_id: 'dag_market', tasks, edges }, null, 2));

/** A provider entry as a providers file gives it: over stdio (so it is quoted), with its advertised terms. */
const entry = (id: string, terms: Json = {}): ProviderConfig => ({
  id,
  transport: 'stdio',
  command: 'unused',
  ...terms,
});

/** Answers with its input, charging what the invoke allowed: the accepted price (or 0.001 without one). */
const charging: Behaviour = (call) => answer(call, call.params.input!, { cost_cu: call.params.max_price_cu ?? 0.001 });

function start(
  analysis: ReturnType<typeof dag>,
  providers: ScriptedProvider[],
  configs: ProviderConfig[],
  options: Partial<RunOptions> = {},
) {
  const log = new EventLog();
  const run = startRun(analysis, {
    providers: configs,
    connect: scriptedConnector(...providers),
    onEvent: log.onEvent,
    backoffMs: 1,
    ...options,
  });
  return { run, log };
}

const taskIn = (report: RunReport, id: string): TaskReport => report.tasks.find((task) => task.task_id === id)!;
const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);

test('cheapest: every provider is quoted, the lowest offer is accepted and invoked at its price', LIMIT, async () => {
  // Listed dearest first: list order alone would pick the 5× provider.
  const prices = { dear: 0.005, middle: 0.002, cheap: 0.001 };
  const providers = Object.entries(prices).map(
    ([id, price]) => new ScriptedProvider(id, { echo: charging }, { negotiation: quoting({ echo: price }) }),
  );
  const { run, log } = start(
    dag(echoTasks(5)),
    providers,
    providers.map((provider) => entry(provider.id)),
  );
  const report = await run.done;
  assert.equal(report.status, 'completed');
  assert.equal(report.routing, 'cheapest');
  const [dear, middle, cheap] = providers as [ScriptedProvider, ScriptedProvider, ScriptedProvider];
  for (const provider of providers) assert.equal(provider.offerRequests.length, 5, `${provider.id} quoted each task`);
  assert.equal(dear.invokes().length + middle.invokes().length, 0, 'nothing went to the dearer providers');
  assert.equal(dear.accepts.length + middle.accepts.length, 0);
  assert.equal(cheap.accepts.length, 5);
  assert.deepEqual(
    cheap.invokes().map((invoke) => invoke.max_price_cu),
    [0.001, 0.001, 0.001, 0.001, 0.001],
    'each invoke carries the accepted price',
  );
  for (const task of report.tasks) {
    assert.equal(task.provider_id, 'cheap');
    assert.equal(task.cost_cu, 0.001);
    assert.deepEqual(
      task.offers?.map((offer) => [offer.provider_id, offer.price_cu]),
      [
        ['dear', 0.005],
        ['middle', 0.002],
        ['cheap', 0.001],
      ],
    );
    assert.equal(task.accepted?.pricing, 'offer');
    assert.equal(task.accepted?.price_cu, 0.001);
    assert.equal(task.accepted?.provider_id, 'cheap');
  }
  assert.equal(report.totals.cost_cu, sum(report.tasks.map(() => prices.cheap)));
  const running = log.events.filter(
    (event): event is Extract<RunEvent, { type: 'task-state' }> =>
      event.type === 'task-state' && event.state === 'running',
  );
  assert.equal(running.length, 5);
  for (const event of running) {
    assert.deepEqual([event.provider_id, event.price_cu, event.pricing], ['cheap', 0.001, 'offer']);
  }
});

test('fastest goes by committed latency; listed keeps the list order and asks for no quote', LIMIT, async () => {
  const make = () => [
    new ScriptedProvider(
      'slow_cheap',
      { echo: charging },
      { negotiation: quoting({ echo: 0.001 }, { latencyMs: 900 }) },
    ),
    new ScriptedProvider('fast_dear', { echo: charging }, { negotiation: quoting({ echo: 0.004 }, { latencyMs: 50 }) }),
  ];
  const fastest = make();
  const byLatency = await start(
    dag(echoTasks(2)),
    fastest,
    fastest.map((p) => entry(p.id)),
    { routing: 'fastest' },
  ).run.done;
  assert.deepEqual(
    byLatency.tasks.map((task) => [task.provider_id, task.accepted?.price_cu]),
    [
      ['fast_dear', 0.004],
      ['fast_dear', 0.004],
    ],
  );
  assert.equal(byLatency.tasks[0]!.offers?.find((offer) => offer.provider_id === 'fast_dear')?.latency_ms, 50);

  const listed = make();
  const byList = await start(
    dag(echoTasks(2)),
    listed,
    listed.map((p) => entry(p.id)),
    { routing: 'listed' },
  ).run.done;
  assert.deepEqual(
    byList.tasks.map((task) => task.provider_id),
    ['slow_cheap', 'slow_cheap'],
  );
  for (const provider of listed) assert.equal(provider.offerRequests.length, 0, 'listed sends no quote');
  assert.equal(byList.tasks[0]!.accepted?.pricing, 'direct');
  assert.equal(byList.routing, 'listed');
});

test('a provider that does not negotiate competes at its advertised price, asked once per run', LIMIT, async () => {
  // `plain` advertises quotes but answers -32601; it advertises 0.0005 per task, below the quoting provider's offer.
  const plain = new ScriptedProvider(
    'plain',
    { echo: charging },
    { acmp: { ...FULL, accepts: [...FULL.accepts, ...QUOTES] } },
  );
  // `silent` does not advertise quotes at all: it is never asked (Layer 1 §1), and is dearer.
  const silent = new ScriptedProvider('silent', { echo: charging });
  const quoted = new ScriptedProvider('quoted', { echo: charging }, { negotiation: quoting({ echo: 0.002 }) });
  const configs = [
    entry('quoted'),
    entry('plain', { 'acmp:price_cu': 0.0005 }),
    entry('silent', { 'acmp:price_cu': 0.0009 }),
  ];
  const providers = [plain, silent, quoted];
  const report = await start(dag(echoTasks(4), []), providers, configs, { maxConcurrency: 1 }).run.done;
  assert.equal(report.status, 'completed');
  for (const task of report.tasks) {
    assert.equal(task.provider_id, 'plain');
    assert.deepEqual(task.accepted, {
      provider_id: 'plain',
      pricing: 'direct',
      price_cu: 0.0005,
      basis: 'advertised',
    });
  }
  assert.equal(plain.offerRequests.length, 1, 'its -32601 is remembered for the rest of the run');
  assert.equal(silent.offerRequests.length, 0, 'a provider that does not advertise quotes is not asked');
  assert.equal(quoted.offerRequests.length, 4);
  assert.equal(quoted.accepts.length, 0);
});

test('a provider without any price comes after every priced one, never as free', LIMIT, async () => {
  const unpriced = new ScriptedProvider('unpriced', { echo: charging });
  const priced = new ScriptedProvider('priced', { echo: charging }, { negotiation: quoting({ echo: 0.009 }) });
  const advertised = new ScriptedProvider('advertised', { echo: charging });
  const configs = [entry('unpriced'), entry('priced'), entry('advertised', { 'acmp:price_cu': 0.01 })];
  const report = await start(dag(echoTasks(1)), [unpriced, priced, advertised], configs).run.done;
  assert.equal(taskIn(report, 'task_0').provider_id, 'priced');
  // When the priced ones refuse, the unpriced one still gets the task: last, not never.
  const refusing: Behaviour = () => {
    throw new AcmpError(ACMP_ERRORS.capability_not_found, 'not today');
  };
  const fallback = new ScriptedProvider('unpriced', { echo: charging });
  const busy = new ScriptedProvider('priced', { echo: refusing }, { negotiation: quoting({ echo: 0.009 }) });
  const alsoBusy = new ScriptedProvider('advertised', { echo: refusing });
  const moved = await start(dag(echoTasks(1)), [fallback, busy, alsoBusy], configs).run.done;
  const task = taskIn(moved, 'task_0');
  assert.equal(task.provider_id, 'unpriced');
  assert.deepEqual(task.accepted, { provider_id: 'unpriced', pricing: 'direct', basis: 'unknown' });
  assert.deepEqual(
    [busy.invokes().length, alsoBusy.invokes().length, fallback.invokes().length],
    [1, 1, 1],
    'tried in order: offer, advertised, unpriced',
  );
});

test(
  'an offer that expired before the accept is quoted again; other refusals move to the next offer',
  LIMIT,
  async () => {
    /** Quotes like `quoting`, but answers -34002 to the first accept: its first offer expires before it is taken. */
    const expiringOnce = (price: number): Negotiation => {
      const inner = quoting({ echo: price });
      let expired = false;
      return {
        offerRequest: (params) => inner.offerRequest(params),
        accept: (params) => {
          if (!expired) {
            expired = true;
            throw new AcmpError(ACMP_ERRORS.offer_expired, 'Offer expired: request a new quote');
          }
          return inner.accept(params);
        },
      };
    };
    const cheap = new ScriptedProvider('cheap', { echo: charging }, { negotiation: expiringOnce(0.001) });
    const dear = new ScriptedProvider('dear', { echo: charging }, { negotiation: quoting({ echo: 0.003 }) });
    const report = await start(dag(echoTasks(1)), [cheap, dear], [entry('dear'), entry('cheap')]).run.done;
    const task = taskIn(report, 'task_0');
    assert.equal(task.provider_id, 'cheap');
    assert.equal(cheap.offerRequests.length, 2, 'quoted again after -34002');
    assert.equal(cheap.accepts.length, 2);
    assert.notEqual(cheap.accepts[0]!.offer_id, cheap.accepts[1]!.offer_id, 'the fresh offer is accepted');
    assert.equal(task.accepted?.offer_id, cheap.accepts[1]!.offer_id);

    // Offers that always expire: quoted again twice (MAX_REQUOTES), then the next offer is taken.
    const expiring: Negotiation = {
      offerRequest: (params) => quoting({ echo: 0.001 }).offerRequest(params),
      accept: () => {
        throw new AcmpError(ACMP_ERRORS.offer_expired, 'Offer expired: request a new quote');
      },
    };
    const stale = new ScriptedProvider('cheap', { echo: charging }, { negotiation: expiring });
    const steady = new ScriptedProvider('dear', { echo: charging }, { negotiation: quoting({ echo: 0.003 }) });
    const exhausted = await start(dag(echoTasks(1)), [stale, steady], [entry('dear'), entry('cheap')]).run.done;
    assert.equal(taskIn(exhausted, 'task_0').provider_id, 'dear');
    assert.equal(stale.offerRequests.length, 1 + MAX_REQUOTES);
    assert.equal(stale.accepts.length, 1 + MAX_REQUOTES);

    // -34003 (accepted already) moves to the next offer, without a fresh quote.
    const taken: Negotiation = {
      offerRequest: (params) => quoting({ echo: 0.001 }).offerRequest(params),
      accept: () => {
        throw new AcmpError(ACMP_ERRORS.already_accepted, 'Offer already accepted');
      },
    };
    const first = new ScriptedProvider('cheap', { echo: charging }, { negotiation: taken });
    const second = new ScriptedProvider('dear', { echo: charging }, { negotiation: quoting({ echo: 0.003 }) });
    const moved = await start(dag(echoTasks(1)), [first, second], [entry('dear'), entry('cheap')]).run.done;
    assert.equal(taskIn(moved, 'task_0').provider_id, 'dear');
    assert.equal(first.offerRequests.length, 1);
    assert.equal(taskIn(moved, 'task_0').accepted?.price_cu, 0.003);
  },
);

test('offers above the ceiling, for another capability or expired on arrival are not taken', LIMIT, async () => {
  const wrong: Negotiation = {
    offerRequest: () => ({
      offer_id: 'o1',
      capability: 'summarize',
      price_cu: 0.0001,
      valid_until_ms: Date.now() + 5000,
    }),
    accept: () => assert.fail('an offer for another capability is never accepted'),
  };
  const stale: Negotiation = {
    offerRequest: () => ({ offer_id: 'o2', capability: 'echo', price_cu: 0.0002, valid_until_ms: Date.now() - 1 }),
    accept: () => assert.fail('an expired offer is never accepted'),
  };
  const greedy: Negotiation = {
    // Ignores the ceiling it was sent (Layer 6: it should have refused with -33001).
    offerRequest: () => ({ offer_id: 'o3', capability: 'echo', price_cu: 0.5, valid_until_ms: Date.now() + 5000 }),
    accept: () => assert.fail('an offer above the ceiling is never accepted'),
  };
  const providers = [
    new ScriptedProvider('wrong', { echo: charging }, { negotiation: wrong }),
    new ScriptedProvider('stale', { echo: charging }, { negotiation: stale }),
    new ScriptedProvider('greedy', { echo: charging }, { negotiation: greedy }),
    new ScriptedProvider('fair', { echo: charging }, { negotiation: quoting({ echo: 0.004 }) }),
  ];
  const report = await start(
    dag(echoTasks(1, { max_price_cu: 0.01 })),
    providers,
    providers.map((provider) => entry(provider.id)),
  ).run.done;
  assert.equal(taskIn(report, 'task_0').provider_id, 'fair');
  assert.deepEqual(
    taskIn(report, 'task_0').offers?.map((offer) => offer.provider_id),
    ['fair'],
    'only valid offers are reported as received',
  );
  assert.equal(providers[2]!.offerRequests[0]!.max_price_cu, 0.01, "the task's max_price_cu is the quote's ceiling");
});

/**
 * Replays a spend log: at no point do the charges and the reservations in flight exceed `cap`. Returns the sum charged.
 */
function checkSpendLog(spend: readonly SpendEntry[], cap: number): number {
  const held = new Map<string, number>();
  let charged = 0;
  for (const entry of spend) {
    if (entry.outcome === 'reserved') held.set(entry.task_id, entry.amount_cu);
    if (entry.outcome === 'released') held.delete(entry.task_id);
    if (entry.outcome === 'charged') {
      held.delete(entry.task_id);
      charged += entry.amount_cu;
    }
    const inFlight = sum([...held.values()]);
    assert.ok(charged + inFlight <= cap + 1e-9, `at ${JSON.stringify(entry)}: ${charged} + ${inFlight} > ${cap}`);
  }
  return charged;
}

test(
  'a budget of half the plan, 8 tasks in flight: never overspent; the rest cancelled with reason budget',
  LIMIT,
  async () => {
    const providers = [
      new ScriptedProvider('dear', { echo: charging }, { negotiation: quoting({ echo: 2 }) }),
      new ScriptedProvider('cheap', { echo: charging }, { negotiation: quoting({ echo: 1 }) }),
    ];
    // 16 independent tasks at 1 CU each: the plan is 16 CU, the budget 8.
    const { run, log } = start(
      dag(echoTasks(16)),
      providers,
      providers.map((provider) => entry(provider.id)),
      {
        budget: { total_cap_cu: 8 },
        policy: 'best-effort',
        maxConcurrency: 8,
        estimate: { known_cu: 16, unpriced: 0 },
      },
    );
    const report = await run.done;
    assert.equal(report.status, 'cancelled');
    const completed = report.tasks.filter((task) => task.state === 'completed');
    const cancelled = report.tasks.filter((task) => task.state === 'cancelled');
    assert.equal(completed.length, 8);
    assert.equal(cancelled.length, 8);
    for (const task of cancelled) {
      assert.deepEqual(task.error?.data, { reason: 'budget' });
      assert.match(task.error?.message ?? '', /budget/);
      assert.equal(task.started_at, undefined, 'it did not start');
      assert.equal(log.order('running').includes(task.task_id), false);
    }
    assert.ok(report.totals.cost_cu <= 8);
    assert.deepEqual(report.totals.estimated, { known_cu: 16, unpriced: 0 });
    assert.equal(checkSpendLog(report.spend!, 8), report.totals.cost_cu);
    const kinds = new Set(report.spend!.map((entry) => entry.kind));
    assert.deepEqual([...kinds].sort(), ['accept', 'denial', 'invoke', 'quote']);
    assert.deepEqual(report.budget, {
      total_cap_cu: 8,
      spent_cu: 8,
      stopped: true,
      denied_tasks: cancelled.map((task) => task.task_id),
      rest: { known_cu: 8, unpriced: 0 },
    });
    assert.match(
      budgetStopMessage(report.budget ?? assert.fail('no budget in the report')),
      /^stopped on its budget of 8 CU: spent 8 CU; 8 task\(s\) .* the rest would have cost 8 CU$/,
    );
  },
);

test('fail-fast: a task the budget cannot cover stops the run; its downstream is cancelled too', LIMIT, async () => {
  const provider = new ScriptedProvider('p', { echo: charging }, { negotiation: quoting({ echo: 3 }) });
  const tasks = [
    ...echoTasks(2),
    { task_id: 'task_after', capability: 'echo', input: { source: { from_task: 'task_1' } } },
  ];
  const report = await start(dag(tasks, [{ from: 'task_1', to: 'task_after' }]), [provider], [entry('p')], {
    budget: { total_cap_cu: 4 },
    maxConcurrency: 1,
  }).run.done;
  assert.equal(report.status, 'cancelled');
  assert.deepEqual(
    report.tasks.map((task) => [task.task_id, task.state]),
    [
      ['task_0', 'completed'],
      ['task_1', 'cancelled'],
      ['task_after', 'cancelled'],
    ],
  );
  assert.deepEqual(report.budget?.denied_tasks, ['task_1']);
  // task_1 at the price it was offered; task_after has no known price (it was never quoted, p advertises none).
  assert.deepEqual(report.budget?.rest, { known_cu: 3, unpriced: 1 });
});

test(
  'per-task cap: sent as the quote ceiling and the direct invoke ceiling; an unknown price is denied under a budget',
  LIMIT,
  async () => {
    const quoted = new ScriptedProvider('quoted', { echo: charging }, { negotiation: quoting({ echo: 0.5 }) });
    const report = await start(dag(echoTasks(1, { max_price_cu: 2 })), [quoted], [entry('quoted')], {
      budget: { per_task_max_cu: 1 },
    }).run.done;
    assert.equal(report.status, 'completed');
    assert.equal(quoted.offerRequests[0]!.max_price_cu, 1, 'the lower of max_price_cu and the per-task cap');
    assert.equal(quoted.invokes()[0]!.max_price_cu, 0.5, 'the accepted price');

    // A provider that does not negotiate and has no price: the per-task cap is its ceiling and its reservation.
    const plain = new ScriptedProvider('plain', { echo: charging });
    const capped = await start(dag(echoTasks(1)), [plain], [entry('plain')], { budget: { per_task_max_cu: 1 } }).run
      .done;
    assert.equal(capped.status, 'completed');
    assert.equal(plain.invokes()[0]!.max_price_cu, 1);

    // Under a total cap alone, a spend of unknown size cannot be reserved: the task is denied, saying so.
    const unknown = new ScriptedProvider('plain', { echo: charging });
    const denied = await start(dag(echoTasks(1)), [unknown], [entry('plain')], { budget: { total_cap_cu: 5 } }).run
      .done;
    const task = taskIn(denied, 'task_0');
    assert.equal(task.state, 'cancelled');
    assert.match(task.error!.message, /no price is known/);
    assert.equal(unknown.invokes().length, 0, 'nothing was sent');
    assert.deepEqual(denied.budget?.rest, { known_cu: 0, unpriced: 1 });
  },
);

test('the ledger reserves what is in flight and replaces it with the charge', () => {
  const ledger = new SpendLedger({ total_cap_cu: 1, per_task_max_cu: 0.6 });
  assert.equal(ledger.reserve(1, { kind: 'accept', taskId: 'a', counterparty: 'p', amountCu: 0.5 }), undefined);
  assert.match(
    ledger.reserve(2, { kind: 'invoke', taskId: 'b', counterparty: 'p', amountCu: 0.7 })!.reason,
    /per-task/,
  );
  assert.match(
    ledger.reserve(3, { kind: 'invoke', taskId: 'b', counterparty: 'p', amountCu: 0.6 })!.reason,
    /over its budget/,
  );
  ledger.charge(4, 'a', 'p', 0.3);
  assert.equal(ledger.reserve(5, { kind: 'invoke', taskId: 'b', counterparty: 'p', amountCu: 0.6 }), undefined);
  assert.equal(ledger.spentCu, 0.3);
  assert.equal(ledger.reservedCu, 0.6);
  // 0.1 + 0.2 within a cap of 0.3: rounding does not deny what fits.
  const exact = new SpendLedger({ total_cap_cu: 0.3 });
  exact.charge(1, 'a', 'p', 0.1);
  assert.equal(exact.reserve(2, { kind: 'invoke', taskId: 'b', counterparty: 'p', amountCu: 0.2 }), undefined);
  assert.deepEqual(
    ledger.entries.map((entry) => [entry.kind, entry.outcome]),
    [
      ['accept', 'reserved'],
      ['denial', 'denied'],
      ['denial', 'denied'],
      ['invoke', 'charged'],
      ['invoke', 'reserved'],
    ],
  );
});
