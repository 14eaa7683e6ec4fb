// The plan of a DAG before it runs (run/plan.ts): which provider each task goes to under each routing policy, the
// basis of every figure (offer, advertised, history, unknown), totals that never count an unknown price as 0, the
// critical path and the wall time of small DAGs whose answers are worked out by hand, tasks nobody offers or
// nobody takes at their price; the words of the plan (planText.ts); and the price history of past runs.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, describe, test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';
import type { DagModel } from '../../server/src/dag/model';
import { ACMP_ERRORS, type Offer } from '../../server/src/protocol/acmpMessages';
import { BUILTIN_CAPABILITIES } from '../../server/src/protocol/builtinCatalog';
import type { DagPlan } from '../../server/src/protocol/market';
import type { RunReport } from '../../server/src/protocol/report';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import type { QuoteAnswer } from '../../server/src/run/negotiation';
import { offerRequestKey, offerRequests, planDag, termsOfTask } from '../../server/src/run/plan';
import { formatCu, formatMs, planMarkdown, planSummary, planText } from '../../server/src/run/planText';
import { requestQuotes } from '../../server/src/run/quotes';
import { FULL, ScriptedProvider, quoting, scriptedConnector } from '../support/scriptedProviders';
import {
  MAX_HISTORY_ENTRIES,
  PRICE_HISTORY_FILE,
  historyKey,
  readPriceHistory,
  recordRun,
} from '../../server/src/run/priceHistory';

const scratch = mkdtempSync(join(tmpdir(), 'acmp-plan-'));
process.env.ACMP_DAG_CACHE_DIR = join(scratch, 'cache');
after(() => rmSync(scratch, { recursive: true, force: true }));

interface TaskSpec {
  readonly id: string;
  readonly capability: string;
  readonly after?: readonly string[];
  readonly [field: string]: unknown;
}

/** The model of a clean DAG of `tasks`, each reading its first upstream task, with an edge from each. */
function modelOf(tasks: readonly TaskSpec[]): DagModel {
  const dag = {
    dag_id: 'dag_plan_test',
    tasks: tasks.map(({ id, capability, after: upstream = [], ...fields }) => ({
      task_id: id,
      capability,
      input: upstream.length === 0 ? { type: 'text', data: 'x' } : { source: { from_task: upstream[0] } },
      ...fields,
    })),
    edges: tasks.flatMap(({ id, after: upstream = [] }) => upstream.map((from) => ({ from, to: id }))),
  };
  const analysis = analyzeDag(JSON.stringify(dag));
  const errors = analysis.diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
  assert.deepEqual(errors, [], 'the test DAG is clean');
  return analysis.model;
}

/** A provider of the providers file with `terms` (the settings' form of AdvertisedTerms). */
const provider = (id: string, terms: Partial<ProviderConfig> = {}, capabilities?: string[]): ProviderConfig => ({
  id,
  transport: 'stdio',
  command: 'unused',
  ...(capabilities === undefined ? {} : { capabilities }),
  ...terms,
});

const THREE_SUMMARIES: TaskSpec[] = [
  { id: 'task_a', capability: 'summarization' },
  { id: 'task_b', capability: 'summarization', after: ['task_a'] },
  { id: 'task_c', capability: 'summarization', after: ['task_b'] },
];

const routeOf = (plan: DagPlan): Record<string, string | undefined> =>
  Object.fromEntries(plan.tasks.map((task) => [task.task_id, task.provider_id]));

describe('planDag: routing', () => {
  test('three providers at 5×, 2× and 1× one price, dearest listed first: every task goes to the cheapest', () => {
    const providers = [
      provider('dear', { 'acmp:price_cu': 0.005 }),
      provider('middle', { 'acmp:price_cu': 0.002 }),
      provider('cheap', { 'acmp:price_cu': 0.001 }),
    ];
    const plan = planDag(modelOf(THREE_SUMMARIES), providers);
    assert.deepEqual(routeOf(plan), { task_a: 'cheap', task_b: 'cheap', task_c: 'cheap' });
    for (const task of plan.tasks) {
      assert.deepEqual(task.price, { value: 0.001, basis: 'advertised' });
      assert.equal(task.reason, 'the lowest price');
      assert.deepEqual(
        task.candidates.map((candidate) => candidate.provider_id),
        ['cheap', 'middle', 'dear'],
      );
    }
    assert.equal(plan.total.unpriced, 0);
    assert.ok(Math.abs(plan.total.known_cu - 0.003) < 1e-12);
  });

  test('a provider without a price ranks after every priced one, even listed first', () => {
    const providers = [provider('mystery'), provider('priced', { 'acmp:price_cu': 0.5 })];
    const plan = planDag(modelOf(THREE_SUMMARIES), providers);
    const [first] = plan.tasks;
    assert.equal(first!.provider_id, 'priced');
    assert.deepEqual(
      first!.candidates.map((candidate) => [candidate.provider_id, candidate.price.basis]),
      [
        ['priced', 'advertised'],
        ['mystery', 'unknown'],
      ],
    );
  });

  test('unknown prices are counted, not summed as 0; per-1k prices need the task’s tokens', () => {
    const model = modelOf([
      { id: 'task_fixed', capability: 'ocr' },
      { id: 'task_tokens', capability: 'translation', input_tokens_est: 2000 },
      { id: 'task_no_tokens', capability: 'translation' },
      { id: 'task_unpriced', capability: 'ranking' },
    ]);
    const providers = [
      provider('ocr', { 'acmp:price_cu': 0.25 }, ['ocr']),
      provider('words', { 'acmp:price_cu_per_1k_tokens': 0.1 }, ['translation']),
      provider('free-form', {}, ['ranking']),
    ];
    const plan = planDag(model, providers);
    const price = Object.fromEntries(plan.tasks.map((task) => [task.task_id, task.price]));
    assert.deepEqual(price.task_fixed, { value: 0.25, basis: 'advertised' });
    assert.deepEqual(price.task_tokens, { value: 0.2, basis: 'advertised' });
    assert.deepEqual(price.task_no_tokens, { basis: 'unknown' });
    assert.deepEqual(price.task_unpriced, { basis: 'unknown' });
    assert.deepEqual(plan.total, { known_cu: 0.45, unpriced: 2 });
    assert.match(planSummary(plan), /^≈ 0\.45 CU · .* · 2 tasks unpriced$/);
  });

  test('listed takes the providers list’s order; fastest the lowest latency, an unknown one last', () => {
    const providers = [
      provider('listed-first', { 'acmp:price_cu': 2, 'acmp:latency_p99_ms': 900 }),
      provider('cheapest', { 'acmp:price_cu': 1, 'acmp:latency_p99_ms': 5000 }),
      provider('fastest', { 'acmp:price_cu': 3, 'acmp:latency_p99_ms': 100 }),
      provider('unknown-latency', { 'acmp:price_cu': 4 }),
    ];
    const model = modelOf(THREE_SUMMARIES);
    assert.equal(planDag(model, providers, { policy: 'listed' }).tasks[0]!.provider_id, 'listed-first');
    assert.equal(planDag(model, providers, { policy: 'cheapest' }).tasks[0]!.provider_id, 'cheapest');
    const fastest = planDag(model, providers, { policy: 'fastest' });
    assert.equal(fastest.policy, 'fastest');
    assert.equal(fastest.tasks[0]!.provider_id, 'fastest');
    assert.deepEqual(fastest.tasks[0]!.latency, { value: 100, basis: 'advertised' });
    assert.equal(fastest.tasks[0]!.candidates.at(-1)!.provider_id, 'unknown-latency');
  });

  test('no provider offers a capability: the task and what the providers do offer are named', () => {
    const model = modelOf([
      { id: 'task_split', capability: 'text-split' },
      { id: 'task_translate', capability: 'translate', after: ['task_split'] },
    ]);
    const plan = planDag(model, []);
    assert.equal(plan.tasks[0]!.provider_id, 'builtin');
    assert.deepEqual(plan.no_provider, [{ task_id: 'task_translate', capability: 'translate' }]);
    assert.deepEqual(plan.offered_capabilities, [...BUILTIN_CAPABILITIES]);
    const translate = plan.tasks[1]!;
    assert.equal(translate.no_provider, true);
    assert.equal(translate.provider_id, undefined);
    // A task that cannot run is not an unpriced task of the run.
    assert.deepEqual(plan.total, { known_cu: 0.001, unpriced: 0 });
    const text = planText(plan);
    assert.match(
      text,
      /No provider offers:\n {2}translate: task_translate\n {2}The providers offer: text-split, sentiment-analysis/,
    );
    assert.match(planSummary(plan), /1 task cannot run/);
  });

  test('over budget: every known price above max_price_cu (or the per-task budget) excludes every provider', () => {
    const providers = [provider('dear', { 'acmp:price_cu': 0.005 }), provider('less', { 'acmp:price_cu': 0.002 })];
    const model = modelOf([
      { id: 'task_tight', capability: 'ocr', max_price_cu: 0.001 },
      { id: 'task_roomy', capability: 'ocr', max_price_cu: 0.003 },
      { id: 'task_free', capability: 'ocr' },
    ]);
    const plan = planDag(model, providers);
    assert.deepEqual(plan.over_budget, ['task_tight']);
    const [tight, roomy] = plan.tasks;
    assert.equal(tight!.provider_id, undefined);
    assert.deepEqual(tight!.over_budget, { max_price_cu: 0.001, cheapest_cu: 0.002 });
    assert.match(tight!.candidates[0]!.excluded!, /its price 0\.002 CU is above the task's max_price_cu, 0\.001 CU/);
    assert.equal(roomy!.provider_id, 'less');
    assert.match(
      planText(plan),
      /Over budget:\n {2}task_tight: at most 0\.001 CU, the cheapest provider asks 0\.002 CU/,
    );

    const budgeted = planDag(model, providers, { budget: { per_task_max_cu: 0.0015 } });
    assert.deepEqual(budgeted.over_budget, ['task_tight', 'task_roomy', 'task_free']);
    assert.match(budgeted.tasks[2]!.reason, /above the per-task budget, 0\.0015 CU/);
  });

  test('an unpriced provider is not over budget: the task goes to it, its price unknown', () => {
    const providers = [provider('dear', { 'acmp:price_cu': 0.005 }), provider('unpriced')];
    const plan = planDag(modelOf([{ id: 'task_a', capability: 'ocr', max_price_cu: 0.001 }]), providers);
    assert.deepEqual(plan.over_budget, []);
    assert.equal(plan.tasks[0]!.provider_id, 'unpriced');
    assert.equal(plan.tasks[0]!.reason, 'the only provider left (1 excluded)');
  });

  test('a proof method a provider does not give excludes it', () => {
    const providers = [
      provider('cheap', { 'acmp:price_cu': 0.001, 'acmp:proof_methods': ['tee-attestation'] }),
      provider('proving', { 'acmp:price_cu': 0.002, 'acmp:proof_methods': ['result-hash'] }),
    ];
    const plan = planDag(modelOf([{ id: 'task_a', capability: 'ocr', proof_method: 'result-hash' }]), providers);
    assert.equal(plan.tasks[0]!.provider_id, 'proving');
    assert.match(plan.tasks[0]!.candidates[1]!.excluded!, /gives no result-hash proof/);
  });

  test('an offer beats advertised terms; direct mode keeps them; a refusal excludes the provider', () => {
    const model = modelOf(THREE_SUMMARIES);
    const quoting = provider('quoting', { 'acmp:price_cu': 0.004 });
    const direct = provider('direct', { 'acmp:price_cu': 0.003 });
    const refusing = provider('refusing', { 'acmp:price_cu': 0.0001 });
    const providers = [quoting, direct, refusing];
    const requests = offerRequests(model, providers);
    // Three tasks of the same terms: one request per provider.
    assert.deepEqual(
      [...requests].map(([entry, byKey]) => [entry.id, byKey.size]),
      [
        ['quoting', 1],
        ['direct', 1],
        ['refusing', 1],
      ],
    );
    const key = offerRequestKey(termsOfTask(model.tasks[0]!));
    const offer: Offer = {
      offer_id: 'offer_1',
      capability: 'summarization',
      price_cu: 0.001,
      valid_until_ms: Date.now() + 5000,
      latency_sla_ms: 750,
    };
    const answers = (answer: QuoteAnswer) => new Map([[key, answer]]);
    const offers = new Map([
      [quoting, answers({ kind: 'offer', offer })],
      [direct, answers({ kind: 'direct', why: 'not negotiating' })],
      [refusing, answers({ kind: 'none', outcome: 'refused', code: -33001, detail: 'too cheap to quote' })],
    ]);
    const plan = planDag(model, providers, { offers });
    const [task] = plan.tasks;
    assert.equal(task!.provider_id, 'quoting');
    assert.deepEqual(task!.price, { value: 0.001, basis: 'offer' });
    assert.deepEqual(task!.latency, { value: 750, basis: 'offer' });
    const byId = Object.fromEntries(task!.candidates.map((candidate) => [candidate.provider_id, candidate]));
    assert.deepEqual(byId.direct!.price, { value: 0.003, basis: 'advertised' });
    assert.match(byId.refusing!.excluded!, /too cheap to quote/);
  });

  test('past runs price a provider that advertises nothing; advertised terms win over them', () => {
    const history = new Map([
      [
        historyKey('silent', 'summarization'),
        {
          provider_id: 'silent',
          capability: 'summarization',
          cost_cu: 0.03,
          duration_ms: 1200,
          tasks: 4,
          updated_at: '',
        },
      ],
      [
        historyKey('loud', 'summarization'),
        { provider_id: 'loud', capability: 'summarization', cost_cu: 9, duration_ms: 9, tasks: 4, updated_at: '' },
      ],
    ]);
    const providers = [provider('loud', { 'acmp:price_cu': 0.05 }), provider('silent')];
    const plan = planDag(modelOf(THREE_SUMMARIES), providers, { history });
    const [task] = plan.tasks;
    assert.equal(task!.provider_id, 'silent');
    assert.deepEqual(task!.price, { value: 0.03, basis: 'history' });
    assert.deepEqual(task!.latency, { value: 1200, basis: 'history' });
    assert.deepEqual(task!.candidates[1]!.price, { value: 0.05, basis: 'advertised' });
    assert.deepEqual(task!.candidates[1]!.latency, { value: 9, basis: 'history' });
  });
});

describe('planDag: results the store holds', () => {
  test('a stored task is planned at 0 CU and 0 ms (cached), out of the known total, and the words say so', () => {
    const providers = [provider('timed', { 'acmp:price_cu': 0.002, 'acmp:latency_p99_ms': 1000 })];
    const model = modelOf(THREE_SUMMARIES);
    const stored = {
      run_id: '1b2c3d4e-0000-4000-8000-000000000000',
      task_id: 'task_a',
      made_at: '2026-12-06T10:41:00.000Z',
      cost_cu: 0.002,
      output: { type: 'text', data: 'x' },
      provider_id: 'timed',
      capability: 'summarization',
      proof: 'absent',
    } as const;
    const plan = planDag(model, providers, { stored: [stored, undefined, undefined] });
    const [cached, next] = plan.tasks;
    assert.deepEqual(cached!.price, { value: 0, basis: 'cached' });
    assert.deepEqual(cached!.latency, { value: 0, basis: 'cached' });
    assert.equal(cached!.provider_id, 'timed');
    assert.equal(cached!.cached!.run_id, stored.run_id);
    assert.match(cached!.reason, /^its result is in the result store \(run 1b2c3d4e…, 2026-12-06 \d\d:\d\d\)$/);
    assert.deepEqual(next!.price, { value: 0.002, basis: 'advertised' });
    assert.deepEqual(plan.total, { known_cu: 0.004, unpriced: 0, cached: 1 });
    assert.equal(plan.critical_path.latency_ms, 2000);
    assert.equal(planSummary(plan), '≈ 0.004 CU for 2 tasks (1 cached) · 2.0 s critical path');
    assert.match(planText(plan), /Total:\n {2}0\.004 CU for the 2 tasks of known price\n {2}1 task cached/);
    const allStored = planDag(model, providers, { stored: [stored, stored, stored] });
    assert.equal(planSummary(allStored), '0 CU: all 3 tasks are cached · 0 ms critical path');
  });
});

describe('requestQuotes: a plan asks and judges as a run does', () => {
  test('a provider that does not advertise quotes is not asked; one silent past the wait is no route', async () => {
    const model = modelOf(THREE_SUMMARIES);
    const advertisedOnly = new ScriptedProvider('advertised-only', {}, { acmp: FULL });
    const silent = new ScriptedProvider(
      'silent',
      {},
      {
        negotiation: {
          offerRequest: () => new Promise<Offer>(() => undefined),
          accept: () => ({ offer_id: '', price_cu: 0 }),
        },
      },
    );
    const negotiating = new ScriptedProvider('quoting', {}, { negotiation: quoting({ summarization: 0.002 }) });
    const providers = [
      provider('advertised-only', { 'acmp:price_cu': 0.003 }),
      provider('silent'),
      provider('quoting'),
    ];
    const offers = await requestQuotes(model, providers, {
      connect: scriptedConnector(advertisedOnly, silent, negotiating),
      timeoutMs: 50,
    });
    assert.equal(advertisedOnly.offerRequests.length, 0, 'not advertised: not asked');
    const key = offerRequestKey(termsOfTask(model.tasks[0]!));
    assert.deepEqual(offers.get(providers[0]!)?.get(key), { kind: 'direct', why: 'not negotiating' });
    assert.deepEqual(offers.get(providers[1]!)?.get(key), {
      kind: 'none',
      outcome: 'no answer',
      code: ACMP_ERRORS.timeout,
      detail: 'no quote within 50 ms',
    });
    const plan = planDag(model, providers, { offers });
    assert.equal(plan.tasks[0]!.provider_id, 'quoting');
    assert.deepEqual(plan.tasks[0]!.price, { value: 0.002, basis: 'offer' });
  });
});

describe('planDag: time', () => {
  // a (100 ms) → b (300 ms) → d (50 ms), a → c (500 ms) → d, and e (200 ms) alone; d reads b, after c too.
  const model = modelOf([
    { id: 'task_a', capability: 'cap-a' },
    { id: 'task_e', capability: 'cap-e' },
    { id: 'task_b', capability: 'cap-b', after: ['task_a'] },
    { id: 'task_c', capability: 'cap-c', after: ['task_a'] },
    { id: 'task_d', capability: 'cap-d', after: ['task_b', 'task_c'] },
  ]);
  const latency = { 'cap-a': 100, 'cap-b': 300, 'cap-c': 500, 'cap-d': 50, 'cap-e': 200 };
  const providers = [
    {
      ...provider('timed', { 'acmp:price_cu': 1 }),
      capabilityTerms: Object.fromEntries(
        Object.entries(latency).map(([capability, ms]) => [capability, { 'acmp:latency_p99_ms': ms }]),
      ),
    },
  ];

  test('the critical path is the longest by latency, with its task ids', () => {
    const plan = planDag(model, providers);
    assert.deepEqual(plan.critical_path, { task_ids: ['task_a', 'task_c', 'task_d'], latency_ms: 650, unknown: 0 });
  });

  test('the wall time: every task in turn at 1 in flight, the critical path with room, a list schedule between', () => {
    assert.deepEqual(planDag(model, providers, { concurrency: 1 }).wall_time, { ms: 1150, concurrency: 1, unknown: 0 });
    assert.deepEqual(planDag(model, providers, { concurrency: 8 }).wall_time, { ms: 650, concurrency: 8, unknown: 0 });
    // a and e start; at 100 b takes a's slot (edge order before c), at 200 c takes e's; d runs 700 to 750.
    assert.deepEqual(planDag(model, providers, { concurrency: 2 }).wall_time, { ms: 750, concurrency: 2, unknown: 0 });
  });

  test('unknown latencies count 0 ms and are counted; the longest chain stands for the path', () => {
    const plan = planDag(model, [provider('untimed', { 'acmp:price_cu': 1 })]);
    assert.deepEqual(plan.critical_path, { task_ids: ['task_a', 'task_b', 'task_d'], latency_ms: 0, unknown: 3 });
    assert.deepEqual(plan.wall_time, { ms: 0, concurrency: 8, unknown: 5 });
    assert.equal(planSummary(plan), '≈ 5 CU · critical path unknown');
  });

  test('a 20,000-task chain plans without touching the call stack', () => {
    const chain = Array.from({ length: 20_000 }, (_, n) => ({
      id: `task_${n}`,
      capability: 'echo',
      ...(n === 0 ? {} : { after: [`task_${n - 1}`] }),
    }));
    const plan = planDag(modelOf(chain), []);
    assert.equal(plan.critical_path.task_ids.length, 20_000);
    assert.equal(plan.total.unpriced, 0);
  });
});

describe('planText', () => {
  test('figures: CU with three significant digits, durations in ms, s, min', () => {
    assert.equal(formatCu(12.3456), '12.3 CU');
    assert.equal(formatCu(0.0061234), '0.00612 CU');
    assert.equal(formatMs(850), '850 ms');
    assert.equal(formatMs(3200), '3.2 s');
    assert.equal(formatMs(42_400), '42 s');
    assert.equal(formatMs(125_000), '2 min 5 s');
  });

  const providers = [provider('timed', { 'acmp:price_cu': 0.004, 'acmp:latency_p99_ms': 1600 }, ['ocr'])];
  const model = modelOf([
    { id: 'task_a', capability: 'ocr' },
    { id: 'task_b', capability: 'ocr', after: ['task_a'] },
    { id: 'task_c', capability: 'translate|draft', after: ['task_a'] },
  ]);
  const plan = planDag(model, providers);

  test('the summary line, the table and the sections', () => {
    assert.equal(planSummary(plan), '≈ 0.008 CU · 3.2 s critical path · 1 task cannot run');
    assert.equal(
      planSummary(plan, 0.01),
      '≈ 0.008 CU · 3.2 s critical path · 1 task cannot run · within the 0.01 CU budget',
    );
    assert.match(planSummary(plan, 0.005), /over the 0\.005 CU budget$/);
    const lines = planText(plan).split('\n');
    assert.equal(lines[0], 'Plan for dag_plan_test: 3 tasks, routing cheapest');
    assert.match(lines[3]!, /^task +capability +provider +price +latency +why$/);
    assert.match(lines[4]!, /^task_a +ocr +timed +0\.004 CU \(advertised\) +1\.6 s \(advertised\) +the only provider/);
    assert.match(lines[6]!, /^task_c +translate\|draft +— +unknown +unknown +no provider offers the capability$/);
    assert.match(planText(plan), /Critical path:\n {2}3\.2 s, 2 tasks: task_a → task_b/);
  });

  test('Markdown: a table whose cells escape pipes, then the same sections', () => {
    const markdown = planMarkdown(plan);
    assert.match(markdown, /^## Plan for dag_plan_test/);
    assert.match(markdown, /\| task \| capability \| provider \| price \| latency \| why \|/);
    assert.match(markdown, /\| task_c \| translate\\\|draft \| — \|/);
    assert.match(markdown, /### No provider offers\n\n- translate\\\|draft: task_c/);
    const cut = planMarkdown(plan, { maxRows: 1 });
    assert.match(cut, /_2 more tasks not shown/);
  });
});

describe('price history', () => {
  const cache = process.env.ACMP_DAG_CACHE_DIR!;
  const file = join(cache, PRICE_HISTORY_FILE);
  beforeEach(() => rmSync(cache, { recursive: true, force: true }));

  const model = modelOf([
    { id: 'task_a', capability: 'ocr' },
    { id: 'task_b', capability: 'ocr', after: ['task_a'] },
    { id: 'task_c', capability: 'ranking', after: ['task_a'] },
  ]);
  const at = (ms: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms)).toISOString();
  const reportOf = (costs: Record<string, number>): RunReport => ({
    dag_id: 'dag_plan_test',
    run_id: 'run_1',
    status: 'completed',
    policy: 'fail-fast',
    started_at: at(0),
    finished_at: at(900),
    tasks: [
      {
        task_id: 'task_a',
        state: 'completed',
        provider_id: 'p',
        cost_cu: costs.task_a,
        proof: 'absent',
        started_at: at(0),
        finished_at: at(100),
      },
      {
        task_id: 'task_b',
        state: 'completed',
        provider_id: 'p',
        cost_cu: costs.task_b,
        proof: 'absent',
        started_at: at(100),
        finished_at: at(400),
      },
      {
        task_id: 'task_c',
        state: 'failed',
        provider_id: 'p',
        proof: 'absent',
        started_at: at(100),
        finished_at: at(200),
      },
    ],
    result: {},
    totals: { cost_cu: 0, tokens_used: 0 },
    streamed_edges: [],
  });

  test('a run records what each provider charged and took by capability, in a private file', async () => {
    assert.equal(await recordRun(reportOf({ task_a: 0.01, task_b: 0.03 }), model), true);
    const history = await readPriceHistory();
    assert.deepEqual([...history.keys()], [historyKey('p', 'ocr')], 'failed tasks are not prices');
    const entry = history.get(historyKey('p', 'ocr'))!;
    assert.equal(entry.cost_cu, 0.02);
    assert.equal(entry.duration_ms, 200);
    assert.equal(entry.tasks, 2);
    if (process.platform !== 'win32') {
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(statSync(cache).mode & 0o777, 0o700);
    }
    // A second run moves the average halfway to its own.
    await recordRun(reportOf({ task_a: 0.06, task_b: 0.06 }), model);
    const moved = (await readPriceHistory()).get(historyKey('p', 'ocr'))!.cost_cu!;
    assert.ok(Math.abs(moved - 0.04) < 1e-12, String(moved));
  });

  test('a corrupt or foreign file reads as an empty history, and is replaced by the next run', async () => {
    await recordRun(reportOf({ task_a: 0.01, task_b: 0.01 }), model);
    for (const text of ['{not json', '[]', '{"entries": [{"provider_id": 1}, null]}']) {
      writeFileSync(file, text);
      assert.equal((await readPriceHistory()).size, 0, text);
    }
    assert.equal(await recordRun(reportOf({ task_a: 0.01, task_b: 0.01 }), model), true);
    assert.equal((await readPriceHistory()).size, 1);
  });

  test('a history that cannot be written fails nothing: recordRun resolves false', async () => {
    writeFileSync(join(scratch, 'a-file'), '');
    const saved = process.env.ACMP_DAG_CACHE_DIR;
    process.env.ACMP_DAG_CACHE_DIR = join(scratch, 'a-file', 'cache');
    try {
      assert.equal(await recordRun(reportOf({ task_a: 0.01, task_b: 0.01 }), model), false);
    } finally {
      process.env.ACMP_DAG_CACHE_DIR = saved;
    }
  });

  test('the history keeps the most recently updated entries only', async () => {
    const count = MAX_HISTORY_ENTRIES + 5;
    const wide = modelOf(Array.from({ length: count }, (_, n) => ({ id: `task_${n}`, capability: `cap-${n}` })));
    const report = reportOf({});
    await recordRun(
      {
        ...report,
        tasks: Array.from({ length: count }, (_, n) => ({
          task_id: `task_${n}`,
          state: 'completed' as const,
          provider_id: 'p',
          cost_cu: 0.001,
          proof: 'absent' as const,
        })),
      },
      wide,
    );
    await recordRun(reportOf({ task_a: 0.01, task_b: 0.01 }), model);
    const history = await readPriceHistory();
    assert.equal(history.size, MAX_HISTORY_ENTRIES);
    assert.ok(history.has(historyKey('p', 'ocr')), 'the latest run kept');
    assert.ok(!history.has(historyKey('p', 'cap-0')), 'the oldest entries gone');
    const written = JSON.parse(readFileSync(file, 'utf8')) as { entries: unknown[] };
    assert.equal(written.entries.length, MAX_HISTORY_ENTRIES);
  });
});
