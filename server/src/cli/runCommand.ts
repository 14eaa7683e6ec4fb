// `acmp-dag run FILE`: executes a DAG on the providers of the providers file (the built-in provider when there is
// none). On a terminal, each task's state as it changes, with durations and cost, then a summary; with --json, the
// run report of design.md §7. Exit codes: 0 completed, 1 failed or cancelled, 2 the DAG has errors or usage.
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import type { DagAnalysis } from '../dag/analyze';
import { analyzeFileText } from '../fileText';
import { connectProvider } from '../run/connect';
import { startRun } from '../run/executor';
import { blockingDiagnostics, unservedRefusal } from '../run/refused';
import { recordRun } from '../run/priceHistory';
import { writeJson } from '../run/jsonText';
import { outputMemoryFromEnvironment, storedFile } from '../run/spilledOutputs';
import { Redactor, runSecrets } from '../run/redaction';
import type { FailurePolicy, RunReport } from '../protocol/report';
import type { DagPlan, RoutingPolicy } from '../protocol/market';
import { budgetStopMessage } from '../run/budget';
import type { RunOptions } from '../run/types';
import type { ProviderConfig } from '../protocol/settings';
import { loadMarket } from './providersFile';
import { progressPrinter, summary } from './runProgress';
import { onStopSignals, signalExitCode } from './signals';
import { UsageError, parseCost, parsePositiveInteger, parseRouting, readInputFile } from './usage';

function parsePolicy(value: string | undefined): FailurePolicy {
  if (value === undefined || value === 'fail-fast' || value === 'best-effort') return value ?? 'fail-fast';
  throw new UsageError(`unknown policy "${value}" (fail-fast or best-effort)`);
}

/** ACMP_RUN_MEMORY_BUDGET_BYTES as a run option; a usage error when it is not a number of bytes. */
function outputMemoryOption(): { outputMemoryBytes?: number } {
  try {
    return outputMemoryFromEnvironment();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The report, streamed: one string of it would cost memory, and a report can hold more than a string can. */
async function printReport(report: RunReport): Promise<void> {
  await writeJson(process.stdout, report, storedFile);
  process.stdout.write('\n');
}

export async function runCommand(args: string[]): Promise<number> {
  // A run's garbage dies young. Left to grow, the young generation reaches two 16 MB semi-spaces, and the page faults
  // of that memory cost more than the extra scavenges of one that stays small (10,000 echo tasks: 0.70 → 0.59 s,
  // 120 → 94 MB). V8 reads the factor each time it would grow the young generation, so setting it now takes effect.
  setFlagsFromString('--semi-space-growth-factor=1');
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      providers: { type: 'string' },
      catalog: { type: 'string', multiple: true },
      policy: { type: 'string' },
      'max-concurrency': { type: 'string' },
      routing: { type: 'string' },
      'max-cost': { type: 'string' },
      'max-task-cost': { type: 'string' },
      'quote-timeout-ms': { type: 'string' },
      json: { type: 'boolean', default: false },
      engine: { type: 'string' },
      detach: { type: 'boolean', default: false },
    },
  });
  if (positionals.length !== 1) throw new UsageError('run needs exactly one FILE');
  const policy = parsePolicy(values.policy);
  const maxConcurrency = parsePositiveInteger('--max-concurrency', values['max-concurrency'], 8);
  const market = marketOptions(values);
  const durable = values.engine !== undefined || values.detach;
  // A durable run's providers are its workers': no catalog is read here.
  const { providers, warnings } = await loadMarket({
    providersFile: values.providers,
    catalogs: durable ? [] : (values.catalog ?? []),
  });
  for (const warning of warnings) process.stderr.write(`acmp-dag: warning: ${warning}\n`);
  const file = positionals[0]!;
  const input = readInputFile(file);
  const analysis = analyzeFileText(input, { keepValue: true });
  if (blockingDiagnostics(analysis).length > 0) {
    return refuseDag(file, input.text, analysis);
  }
  if (durable) {
    // The worker's providers serve a durable run: this process starts none.
    const ignored = [
      ...(values.providers === undefined ? [] : ['--providers']),
      ...(values.catalog === undefined ? [] : ['--catalog']),
    ];
    if (ignored.length > 0) {
      process.stderr.write(
        `acmp-dag: ${ignored.join(' and ')} ${ignored.length === 1 ? 'is' : 'are'} ignored with --engine: the worker’s (acmp-dag worker --providers) serve the run\n`,
      );
    }
    // Durable runs load their own chunk: a run in this process never loads it.
    const { runDurable } = await import('./durable.js');
    return runDurable({
      engine: values.engine,
      text: input.text,
      dagId: analysis.model.dagId ?? '',
      policy,
      maxConcurrency,
      json: values.json,
      detach: values.detach,
      // The workflow holds the budget's ledger: the worker's providers are priced under it.
      ...market,
    });
  }
  return runHere(analysis, providers, { policy, maxConcurrency, json: values.json, market });
}

/** What `acmp-dag plan` would estimate the run to cost (run/plan.ts), with the routing the run uses. */
async function plannedTotal(
  analysis: DagAnalysis,
  providers: readonly ProviderConfig[],
  routing: RoutingPolicy | undefined,
): Promise<DagPlan['total']> {
  const [{ planDag }, { readPriceHistory }] = await Promise.all([
    import('../run/plan.js'),
    import('../run/priceHistory.js'),
  ]);
  const history = await readPriceHistory();
  return planDag(analysis.model, providers, { ...(routing === undefined ? {} : { policy: routing }), history }).total;
}

/** `--routing`, `--max-cost`, `--max-task-cost` and `--quote-timeout-ms` as run options. */
function marketOptions(values: {
  routing?: string;
  'max-cost'?: string;
  'max-task-cost'?: string;
  'quote-timeout-ms'?: string;
}): Pick<RunOptions, 'routing' | 'budget' | 'quoteTimeoutMs'> {
  const routing = parseRouting(values.routing);
  const totalCap = parseCost('--max-cost', values['max-cost']);
  const perTask = parseCost('--max-task-cost', values['max-task-cost']);
  const quoteTimeoutMs = parsePositiveInteger('--quote-timeout-ms', values['quote-timeout-ms']);
  return {
    ...(routing === undefined ? {} : { routing }),
    ...(totalCap === undefined && perTask === undefined
      ? {}
      : {
          budget: {
            ...(totalCap === undefined ? {} : { total_cap_cu: totalCap }),
            ...(perTask === undefined ? {} : { per_task_max_cu: perTask }),
          },
        }),
    ...(quoteTimeoutMs === undefined ? {} : { quoteTimeoutMs }),
  };
}

/** A DAG with errors is not run (nor planned): its errors, as `validate` prints them, go to stderr (exit code 2). */
export async function refuseDag(file: string, text: string, analysis: DagAnalysis, doing = 'running'): Promise<number> {
  // Positions and the validate command's wording only for a DAG with errors: a clean file's offsets are never indexed.
  const { fileResult, formatText } = await import('./validate.js');
  const checked = fileResult(file, text, analysis);
  const errors = checked.diagnostics.filter((diagnostic) => diagnostic.severity === 1 || checked.analysis.tooLarge);
  process.stderr.write(
    `${formatText([{ ...checked, diagnostics: errors }])}\nacmp-dag: not ${doing} ${file}: fix its errors first.\n`,
  );
  return 2;
}

/** Runs a clean DAG in this process, printing its progress or (--json) its report, until it ends or is stopped. */
async function runHere(
  analysis: DagAnalysis,
  providers: readonly ProviderConfig[],
  {
    policy,
    maxConcurrency,
    json,
    market,
  }: {
    policy: FailurePolicy;
    maxConcurrency: number;
    json: boolean;
    market: Pick<RunOptions, 'routing' | 'budget' | 'quoteTimeoutMs'>;
  },
): Promise<number> {
  // The report comes with the tokens blanked out of its outputs; a progress line may quote a task's error.
  const secrets = runSecrets(providers);
  const redactor = new Redactor(secrets);
  const write = (line: string): void => void process.stdout.write(`${redactor.text(line)}\n`);
  // Under a budget, the report sets what the plan estimated beside what the run spent (an estimate costs a pass over
  // the DAG and a read of the price history: a run without a budget does without).
  const estimate = market.budget === undefined ? undefined : await plannedTotal(analysis, providers, market.routing);
  const refusal = unservedRefusal(analysis.model, providers);
  if (refusal !== undefined) {
    // Nothing is paid for a run that could not finish: `acmp-dag plan` shows the same (docs/market.md).
    process.stderr.write(`acmp-dag: not running: ${refusal.message}\n`);
    return 2;
  }
  const run = startRun(analysis, {
    providers,
    connect: connectProvider,
    policy,
    maxConcurrency,
    ...(estimate === undefined ? {} : { estimate }),
    // A clean file's tasks as values, so the executor never indexes its offsets.
    plainTasks: (analysis.value as { tasks: unknown[] }).tasks,
    secrets,
    ...market,
    ...outputMemoryOption(),
    ...(json ? {} : { onEvent: progressPrinter(write) }),
  });
  // Ctrl-C, SIGTERM or SIGHUP cancels the run (in-flight tasks get acmp/cancel), which ends as a cancelled run does; a
  // second signal, or one once the run is over, leaves at once (process.exit: the outputs on disk are removed on exit).
  let stopping = false;
  const stopListening = onStopSignals((signal) => {
    if (stopping) process.exit(signalExitCode(signal));
    stopping = true;
    const again = signal === 'SIGINT' ? 'Ctrl-C' : signal;
    process.stderr.write(`\nacmp-dag: cancelling the run (${again} again to quit at once)\n`);
    run.cancel(signal === 'SIGINT' ? 'interrupted by the user' : `stopped by ${signal}`);
  });
  try {
    const report = await run.done;
    stopping = true;
    // What the providers charged and took, for later plans; written while the report prints, and never fails the run.
    const recorded = recordRun(report, analysis.model);
    if (json) {
      await printReport(report);
    } else {
      write(summary(report));
      if (report.budget?.stopped === true) write(`The run ${budgetStopMessage(report.budget)}.`);
    }
    await recorded;
    return report.status === 'completed' ? 0 : 1;
  } finally {
    run.releaseOutputs();
    stopListening();
  }
}
