// Durable runs from the terminal: `run FILE --engine URL [--detach]` submits a run to the Restate engine
// and follows it, `runs` lists the engine's runs, `attach` follows one (replaying what already happened), `cancel`
// cancels a run or a task, `report` prints a run's report. Following is paging through the run's append-only event
// log with a cursor: the engine has no push to clients. Exit codes: 0 completed, 1 failed or cancelled, 2 usage or a
// DAG with errors, 3 the engine does not answer, 4 no run of that id.
import { randomUUID } from 'node:crypto';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { type DurableCacheOptions, runRequestOf } from '../run/durable/durableRun';
import { type JournaledOutput, isOutputRef } from '../run/durable/outputStore';
import { Redactor, runSecrets } from '../run/redaction';
import type { FailurePolicy, RunReport } from '../protocol/report';
import type { Budget, RoutingPolicy } from '../protocol/market';
import { progressPrinter, summary } from './runProgress';
import { EngineClient, EngineRefused, UnknownRun, followRun } from '../run/durable/engineClient';
import { EngineUnreachable } from '../run/durable/engineHttp';
import { engineOption } from './engineUrl';
import { loadProviders } from './providersFile';
import { type StopSignal, onStopSignals, signalExitCode } from './signals';
import { UsageError } from './usage';

const write = (line: string): void => void process.stdout.write(`${line}\n`);

/** `run FILE --engine`'s options; the cache's (--no-cache, --refresh, the cache settings) go to the worker's store. */
export interface DurableRunOptions extends DurableCacheOptions {
  readonly engine: string | undefined;
  readonly text: string;
  readonly dagId: string;
  readonly policy: FailurePolicy;
  readonly maxConcurrency: number;
  readonly json: boolean;
  readonly detach: boolean;
  /** How tasks pick their providers (default `cheapest`). */
  readonly routing?: RoutingPolicy;
  /** The run's spending limits, held by the workflow: no worker can change them. */
  readonly budget?: Budget;
  /** How long a task waits for its quotes, in ms. */
  readonly quoteTimeoutMs?: number;
}

/**
 * What this terminal knows of the tokens a run's providers may echo in their outputs: those of the `tokenEnv`
 * variables of the local providers file (the worker's own may differ), blanked out of what is printed.
 */
async function localRedactor(): Promise<Redactor> {
  const providers = await loadProviders(undefined).catch(() => []);
  return new Redactor(runSecrets(providers));
}

/** Exit codes for the errors these commands tell apart; anything else propagates. */
async function withExitCodes(command: () => Promise<number>): Promise<number> {
  try {
    return await command();
  } catch (error) {
    if (error instanceof EngineUnreachable || error instanceof EngineRefused || error instanceof UnknownRun) {
      process.stderr.write(`acmp-dag: ${error.message}\n`);
      return error instanceof UnknownRun ? 4 : 3;
    }
    throw error;
  }
}

/** `run FILE --engine URL`: the DAG was analysed and has no errors. */
export function runDurable(options: DurableRunOptions): Promise<number> {
  return withExitCodes(async () => {
    const client = new EngineClient(engineOption(options.engine));
    const runId = `run-${randomUUID()}`;
    await client.submit(runId, options.dagId, runRequestOf(options.text, options));
    process.stderr.write(`acmp-dag: durable run ${runId} submitted to ${client.engine}\n`);
    if (options.detach) {
      write(runId);
      return 0;
    }
    return followToEnd(client, runId, options.json);
  });
}

/**
 * Follows the run's events until it ends, then prints its summary or report. Ctrl-C, SIGTERM or SIGHUP detaches: the
 * run goes on in the engine.
 */
async function followToEnd(client: EngineClient, runId: string, json: boolean): Promise<number> {
  const redactor = await localRedactor();
  const print = json ? () => undefined : progressPrinter((line) => write(redactor.text(line)));
  let detachedBy: StopSignal | undefined;
  const stopListening = onStopSignals((signal) => (detachedBy = signal));
  let report: RunReport | undefined;
  try {
    report = await followRun(client, runId, print, () => detachedBy !== undefined);
    if (report === undefined) {
      process.stderr.write(
        `\nacmp-dag: detached; the run goes on. Follow it again with: acmp-dag attach ${runId} --engine ${client.engine}\n`,
      );
      return signalExitCode(detachedBy!);
    }
  } finally {
    stopListening();
  }
  if (json) await printReport(client, redactor.report(report), redactor);
  else write(summary(redactor.report(report)));
  return report.status === 'completed' ? 0 : 1;
}

/**
 * The report as JSON on stdout, its stored outputs streamed in from the output store through the engine, piece by
 * piece, in place of their references.
 */
async function printReport(client: EngineClient, report: RunReport, redactor: Redactor): Promise<void> {
  const stored: JournaledOutput[] = [];
  const marker = (index: number): string => `\u0000stored-output-${index}\u0000`;
  const text = JSON.stringify(
    report,
    (_key, value: unknown) => {
      if (value !== null && typeof value === 'object' && 'ref' in value && isOutputRef(value as JournaledOutput)) {
        stored.push(value as JournaledOutput);
        return marker(stored.length - 1);
      }
      return value;
    },
    2,
  );
  const parts = text.split(/"\\u0000stored-output-(\d+)\\u0000"/);
  for (let at = 0; at < parts.length; at++) {
    if (at % 2 === 0) {
      process.stdout.write(redactor.text(parts[at]!));
      continue;
    }
    const output = stored[Number(parts[at])]!;
    for (let from = 0; ;) {
      const piece = await client.outputPiece(output, from);
      // A token the piece boundary cuts goes through: stored outputs come in pieces of megabytes, rarely cut there.
      process.stdout.write(redactor.text(piece.text));
      from += piece.text.length;
      if (piece.rest === 0) break;
    }
  }
  process.stdout.write('\n');
}

/** The run a command names (RUN_ID, --engine, and its `extra` options), known to the engine: UnknownRun otherwise. */
async function namedRun(args: string[], command: string, extra: NonNullable<ParseArgsConfig['options']>) {
  const parsed = parseArgs({ args, allowPositionals: true, options: { engine: { type: 'string' }, ...extra } });
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (parsed.positionals.length !== 1) throw new UsageError(`${command} needs exactly one RUN_ID`);
  const runId = parsed.positionals[0]!;
  const client = new EngineClient(engineOption(typeof values.engine === 'string' ? values.engine : undefined));
  await client.known(runId);
  return { values, runId, client };
}

const JSON_OPTION = { json: { type: 'boolean', default: false } } as const;

/** `acmp-dag runs --engine URL`: id, dag_id, status, progress and cost of each run the engine knows. */
export function runsCommand(args: string[]): Promise<number> {
  return withExitCodes(async () => {
    const { values } = parseArgs({ args, options: { engine: { type: 'string' }, json: { type: 'boolean' } } });
    const client = new EngineClient(engineOption(values.engine));
    const entries = await client.list();
    const rows = await Promise.all(
      entries
        .sort((a, b) => a.submitted_at.localeCompare(b.submitted_at))
        .map(async (entry) => ({
          ...entry,
          progress: (await client.events(entry.run_id, Number.MAX_SAFE_INTEGER)).progress,
        })),
    );
    if (values.json) {
      write(JSON.stringify(rows, null, 2));
      return 0;
    }
    if (rows.length === 0) write(`No runs on ${client.engine}.`);
    for (const row of rows) {
      const progress = row.progress;
      write(
        [
          row.run_id,
          row.dag_id,
          progress?.status ?? 'submitted',
          progress === undefined ? '-' : `${progress.done}/${progress.total}`,
          progress === undefined ? '-' : `${Number(progress.cost_cu.toPrecision(6))} CU`,
        ].join('  '),
      );
    }
    return 0;
  });
}

/** `acmp-dag attach RUN_ID --engine URL [--json]`: what happened so far, then the rest as it happens. */
export function attachCommand(args: string[]): Promise<number> {
  return withExitCodes(async () => {
    const { values, runId, client } = await namedRun(args, 'attach', JSON_OPTION);
    return followToEnd(client, runId, values.json === true);
  });
}

/** `acmp-dag cancel RUN_ID [--task TASK_ID] --engine URL`. */
export function cancelCommand(args: string[]): Promise<number> {
  return withExitCodes(async () => {
    const { values, runId, client } = await namedRun(args, 'cancel', { task: { type: 'string' } } as const);
    const task = typeof values.task === 'string' ? values.task : undefined;
    if (task !== undefined) {
      const started = (await client.events(runId, 0)).events.find((event) => event.type === 'run-started');
      if (started !== undefined && started.type === 'run-started' && !started.tasks.includes(task)) {
        process.stderr.write(`acmp-dag: the run ${runId} has no task "${task}"\n`);
        return 2;
      }
    }
    const at = new Date().toISOString();
    const answer = await client.control(
      runId,
      task === undefined ? { reason: 'the run was cancelled', at } : { task, reason: 'cancelled by the user', at },
    );
    if (answer === 'ended') {
      process.stderr.write(`acmp-dag: the run ${runId} has ended already\n`);
      return 1;
    }
    write(
      task === undefined
        ? `Cancelling run ${runId}.`
        : `Cancelling task ${task} of run ${runId} and what depends on it.`,
    );
    return 0;
  });
}

/** `acmp-dag report RUN_ID --engine URL [--json]`: the run report, once the run has ended. */
export function reportCommand(args: string[]): Promise<number> {
  return withExitCodes(async () => {
    const { values, runId, client } = await namedRun(args, 'report', JSON_OPTION);
    const redactor = await localRedactor();
    const report = redactor.report(await client.report(runId));
    if (values.json) await printReport(client, report, redactor);
    else write(summary(report));
    return report.status === 'completed' ? 0 : 1;
  });
}
