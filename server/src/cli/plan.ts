// `acmp-dag plan FILE`: what running a DAG would cost and take, before it runs (run/plan.ts): each task's provider by
// the routing policy with its price and latency and their basis, the totals, the critical path and the wall time.
// Tasks the result store holds are planned at 0 (--no-cache: as if it held none).
// --quote asks the providers for real offers (never accepting one); --json prints the DagPlan. Exit codes: 0 every
// task can run (and the plan fits --max-cost), 1 some task cannot (no provider, over its price limit) or the plan is
// over --max-cost, 2 the DAG has errors or usage.
import { parseArgs } from 'node:util';
import { analyzeFileText } from '../fileText';
import { connectProvider } from '../run/connect';
import { planDag } from '../run/plan';
import { fitsBudget, planText } from '../run/planText';
import { readPriceHistory } from '../run/priceHistory';
import { requestQuotes } from '../run/quotes';
import { blockingDiagnostics } from '../run/refused';
import { providerIdsOf, storedResults } from '../run/selection';
import { CACHE_OPTIONS, closeResultStore, openResultReuse } from './cache';
import { loadMarket } from './providersFile';
import { refuseDag } from './runCommand';
import { UsageError, parseCost, parsePositiveInteger, parseRouting, readInputFile } from './usage';

export async function planCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      providers: { type: 'string' },
      catalog: { type: 'string', multiple: true },
      quote: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      'max-concurrency': { type: 'string' },
      routing: { type: 'string' },
      'max-cost': { type: 'string' },
      ...CACHE_OPTIONS,
    },
  });
  if (positionals.length !== 1) throw new UsageError('plan needs exactly one FILE');
  const policy = parseRouting(values.routing) ?? 'cheapest';
  const concurrency = parsePositiveInteger('--max-concurrency', values['max-concurrency'], 8);
  const maxCostCu = parseCost('--max-cost', values['max-cost']);
  const { providers, warnings } = await loadMarket({
    providersFile: values.providers,
    catalogs: values.catalog ?? [],
  });
  const file = positionals[0]!;
  const input = readInputFile(file);
  const analysis = analyzeFileText(input, { keepValue: true });
  if (blockingDiagnostics(analysis).length > 0) return refuseDag(file, input.text, analysis, 'planning');
  const { model } = analysis;
  const budget = maxCostCu === undefined ? {} : { total_cap_cu: maxCostCu };
  // A plan keeps nothing: closing the store must not evict what a run's own bound kept.
  const opened = await openResultReuse(values, undefined, Number.POSITIVE_INFINITY);
  let stored: ReturnType<typeof storedResults> | undefined;
  try {
    stored =
      opened === undefined
        ? undefined
        : storedResults(model, (analysis.value as { tasks: unknown[] }).tasks, opened.reuse, providerIdsOf(providers));
  } finally {
    if (opened !== undefined) await closeResultStore(opened.store);
  }
  const [history, offers] = await Promise.all([
    readPriceHistory(),
    values.quote ? requestQuotes(model, providers, { connect: connectProvider, budget }) : undefined,
  ]);
  const plan = planDag(model, providers, {
    policy,
    concurrency,
    budget,
    history,
    warnings,
    ...(offers === undefined ? {} : { offers }),
    ...(stored === undefined ? {} : { stored }),
  });
  process.stdout.write(`${values.json ? JSON.stringify(plan, null, 2) : planText(plan, maxCostCu)}\n`);
  const cannotRun = plan.tasks.some((task) => task.provider_id === undefined);
  const overCost = maxCostCu !== undefined && fitsBudget(plan, maxCostCu) === 'no';
  return cannotRun || overCost ? 1 : 0;
}
