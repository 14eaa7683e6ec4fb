// `acmp-dag run FILE`: executes a DAG on the providers of the providers file (the built-in provider when there is
// none), taking the results the result store holds instead of sending their tasks again (--no-cache: neither reads
// nor writes it); --task/--from run a part of the DAG on its upstream's stored outputs. On a terminal, each task's
// state as it changes, with durations and cost, then a summary; with --json, the run report of design.md §7. Exit
// codes: 0 completed, 1 failed or cancelled, 2 the DAG has errors, upstream outputs are missing, or usage, 3 a task id
// named is not in the DAG.
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
import { partOfDag, providerIdsOf, selectTasks, selects, storedResults } from '../run/selection';
import type { ResultReuse, RunOptions } from '../run/types';
import type { ProviderConfig } from '../protocol/settings';
import {
  CACHE_MAX_OPTION,
  CACHE_OPTIONS,
  type CacheFlags,
  closeResultStore,
  listOption,
  openResultReuse,
} from './cache';
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
      ...CACHE_OPTIONS,
      ...CACHE_MAX_OPTION,
      refresh: { type: 'string', multiple: true },
      task: { type: 'string', multiple: true },
      from: { type: 'string', multiple: true },
      upstream: { type: 'boolean', default: false },
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
    if (values.task !== undefined || values.from !== undefined || values.upstream) {
      throw new UsageError('--task, --from and --upstream run a part of the DAG in this process, not with --engine');
    }
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
      // The worker's result store (its --cache-dir, --cache-max-mb) serves the run, as these say.
      noCache: values['no-cache'],
      refresh: listOption(values.refresh),
      cacheExclude: listOption(values['cache-exclude']),
      cachePerProvider: values['cache-per-provider'],
    });
  }
  return runWithStore(file, analysis, providers, values, { policy, maxConcurrency, json: values.json, market });
}

/** What `run` was told about the result store and the part of the DAG to run. */
interface StoreFlags extends CacheFlags {
  readonly refresh?: string[];
  readonly task?: string[];
  readonly from?: string[];
  readonly upstream?: boolean;
}

/**
 * Runs the DAG in this process with the result store (unless --no-cache): the whole DAG, or under --task/--from the
 * part those tasks need, where the tasks named (and under --from their downstream) run whatever the store holds and
 * their upstream tasks' outputs come from it. Upstream outputs the store lacks refuse the run (exit 2) unless
 * --upstream runs them too; ids the DAG does not have exit 2.
 */
async function runWithStore(
  file: string,
  analysis: DagAnalysis,
  providers: readonly ProviderConfig[],
  flags: StoreFlags,
  settings: Omit<RunSettings, 'results'>,
): Promise<number> {
  const { model } = analysis;
  const selection = { tasks: listOption(flags.task), from: listOption(flags.from) };
  const partial = selects(selection);
  if (flags.upstream === true && !partial) throw new UsageError('--upstream goes with --task or --from');
  const refreshIds = listOption(flags.refresh);
  const selected = partial ? selectTasks(model, selection) : undefined;
  const unknown = new Set([
    ...(selected?.ok === false ? selected.unknown : []),
    ...refreshIds.filter((id) => !model.taskById.has(id)),
  ]);
  if (unknown.size > 0) {
    process.stderr.write(`acmp-dag: not running: ${file} has no task ${[...unknown].join(', ')}\n`);
    return 2;
  }
  const part = selected?.ok === true ? selected.tasks : undefined;
  // The tasks named run whatever the store holds; their downstream tasks take it where their input is the same.
  const refresh = new Set([...refreshIds, ...selection.tasks, ...selection.from]);
  const opened = await openResultReuse(flags, refresh);
  try {
    let runAnalysis = analysis;
    if (part !== undefined) {
      const plainTasks = (analysis.value as { tasks: unknown[] }).tasks;
      const stored =
        opened === undefined
          ? []
          : storedResults(model, plainTasks, opened.reuse, providerIdsOf(providers), part.upstream);
      const missing = [...part.upstream]
        .sort((a, b) => a - b)
        .filter((index) => stored[index] === undefined)
        .map((index) => model.tasks[index]!.id!);
      if (missing.length > 0 && flags.upstream !== true) {
        const named = [...new Set([...selection.tasks, ...selection.from])];
        const where =
          opened === undefined ? '--no-cache does not take from the result store' : 'the result store does not hold';
        process.stderr.write(
          `acmp-dag: not running: ${named.join(', ')} ${named.length === 1 ? 'needs' : 'need'} the output of ${missing.join(', ')}, which ${where}; run ${missing.length === 1 ? 'it' : 'them'} first or add --upstream to run ${missing.length === 1 ? 'it' : 'them'} too\n`,
        );
        return 2;
      }
      const text = partOfDag(analysis.value as Record<string, unknown>, new Set([...part.chosen, ...part.upstream]));
      runAnalysis = analyzeFileText({ text }, { keepValue: true });
    }
    return await runHere(runAnalysis, providers, {
      ...settings,
      ...(opened === undefined ? {} : { results: opened.reuse }),
    });
  } finally {
    if (opened !== undefined) await closeResultStore(opened.store);
  }
}

/** What `acmp-dag plan` would estimate the run to cost (run/plan.ts), with the routing the run uses. */
async function plannedTotal(
  analysis: DagAnalysis,
  providers: readonly ProviderConfig[],
  routing: RoutingPolicy | undefined,
  results: ResultReuse | undefined,
): Promise<DagPlan['total']> {
  const [{ planDag }, { readPriceHistory }] = await Promise.all([
    import('../run/plan.js'),
    import('../run/priceHistory.js'),
  ]);
  const history = await readPriceHistory();
  const { model } = analysis;
  // The tasks the run will take from the store cost nothing; those it refreshes are bought again.
  const stored =
    results === undefined
      ? undefined
      : storedResults(model, (analysis.value as { tasks: unknown[] }).tasks, results, providerIdsOf(providers)).map(
          (found, index) => (results.refresh?.has(model.tasks[index]!.id!) === true ? undefined : found),
        );
  return planDag(model, providers, {
    ...(routing === undefined ? {} : { policy: routing }),
    history,
    ...(stored === undefined ? {} : { stored }),
  }).total;
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

/** How a run in this process goes. */
interface RunSettings {
  readonly policy: FailurePolicy;
  readonly maxConcurrency: number;
  readonly json: boolean;
  readonly market: Pick<RunOptions, 'routing' | 'budget' | 'quoteTimeoutMs'>;
  readonly results?: ResultReuse;
}

/** Runs a clean DAG in this process, printing its progress or (--json) its report, until it ends or is stopped. */
async function runHere(
  analysis: DagAnalysis,
  providers: readonly ProviderConfig[],
  { policy, maxConcurrency, json, market, results }: RunSettings,
): Promise<number> {
  // The report comes with the tokens blanked out of its outputs; a progress line may quote a task's error.
  const secrets = runSecrets(providers);
  const redactor = new Redactor(secrets);
  const write = (line: string): void => void process.stdout.write(`${redactor.text(line)}\n`);
  // Under a budget, the report sets what the plan estimated beside what the run spent (an estimate costs a pass over
  // the DAG and a read of the price history: a run without a budget does without).
  const estimate =
    market.budget === undefined ? undefined : await plannedTotal(analysis, providers, market.routing, results);
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
    ...(results === undefined ? {} : { results }),
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
