// Running DAGs through LSP (server/README.md): `workspace/executeCommand` acmp.runDag answers with the run report
// when the run ends and sends every event meanwhile as `acmp/runEvent` (or in batches, `acmp/runEvents`, when the
// client asks); acmp.cancelRun / acmp.cancelTask cancel. With `acmp.engine.url` set the run is a durable run on the
// Restate engine, and `acmp/durableRuns` follows the engine's other runs (durableRuns.ts). A run reuses and keeps
// results in the result store (resultStore.ts); `tasks`/`from` run a part of the DAG, its upstream from the store.
// The executor (server/src/run/) does the work; this file only wires it to the connection.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type CancellationToken, ErrorCodes, LSPErrorCodes, ResponseError } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { DagAnalysis } from '../dag/analyze';
import { analyzeDag } from '../dag/analyze';
import { type FileText, analyzeFileText, decodeFileText } from '../fileText';
import {
  type CancelRunArguments,
  type CancelTaskArguments,
  MAX_SENT_OUTPUTS_BYTES,
  MAX_SENT_OUTPUT_BYTES,
  DURABLE_RUNS_REQUEST,
  type DurableRunsParams,
  RUN_COMMANDS,
  RUN_EVENTS_NOTIFICATION,
  RUN_EVENT_NOTIFICATION,
  type RunDagArguments,
  type RunEventParams,
  type RunEventsParams,
  type NeedsUpstreamData,
  RUN_NEEDS_UPSTREAM,
  type RunRefusedData,
} from '../protocol/runMessages';
import type { TaskOutput, RunEvent, RunReport, TaskReport } from '../protocol/report';
import { createConnector } from '../run/connect';
import type { DurableCacheOptions } from '../run/durable/durableRun';
import { runSecrets } from '../run/redaction';
import { startRun } from '../run/executor';
import { recordRun } from '../run/priceHistory';
import { blockingDiagnostics, unservedRefusal } from '../run/refused';
import { StoredOutput, jsonSizeWithin, outputMemoryFromEnvironment } from '../run/spilledOutputs';
import { messageOf } from '../protocol/acmpMessages';
import type { ResultStore } from '../run/resultStore';
import { type Selection, partOfDag, providerIdsOf, selectTasks, selects, storedResults } from '../run/selection';
import type { DagRun, RunOptions } from '../run/types';
import type { Settings } from '../protocol/settings';
import { DurableRuns, engineUrlOf } from './durableRuns';
import type { Feature, FeatureContext } from './feature';
import { type DagValue, resultReuseOf, resultStoreCommand, resultStoresOf } from './resultStore';

/**
 * The report as the client gets it (run-finished and the command's answer): outputs over MAX_SENT_OUTPUT_BYTES, or
 * past MAX_SENT_OUTPUTS_BYTES in all, or that the run kept on disk, are left out, their size in
 * `output_not_sent_bytes` (the client says why Show Output has nothing to show).
 */
export function sentReport(report: RunReport): RunReport {
  let budget = MAX_SENT_OUTPUTS_BYTES;
  const notSent = new Set<string>();
  const tasks = report.tasks.map((task): TaskReport => {
    if (task.output === undefined) return task;
    const bytes =
      task.output instanceof StoredOutput ? task.output.bytes : jsonSizeWithin(task.output, MAX_SENT_OUTPUT_BYTES);
    if (!(task.output instanceof StoredOutput) && bytes <= MAX_SENT_OUTPUT_BYTES && bytes <= budget) {
      budget -= bytes;
      return task;
    }
    notSent.add(task.task_id);
    return { ...task, output: undefined, output_not_sent_bytes: bytes };
  });
  if (notSent.size === 0) return report;
  const result = Object.fromEntries(Object.entries(report.result).filter(([taskId]) => !notSent.has(taskId)));
  return { ...report, tasks, result };
}

/** How many errors a refusal's message lists (its data has them all). */
const ERRORS_IN_MESSAGE = 5;

const invalid = (message: string): ResponseError<void> => new ResponseError(ErrorCodes.InvalidParams, message);

/** The one argument object of a command, checked for the fields it must have. */
function argumentOf<T>(args: readonly unknown[] | undefined, required: readonly (keyof T & string)[]): T {
  const [argument] = args ?? [];
  if (argument === null || typeof argument !== 'object') throw invalid('expected one argument object');
  for (const key of required) {
    if (typeof (argument as Record<string, unknown>)[key] !== 'string') throw invalid(`expected "${key}" (a string)`);
  }
  return argument as T;
}

/** The document's text and analysis: the open document as edited, else the file on disk. */
async function analysisFor(context: FeatureContext, uri: string) {
  const open = context.documents.get(uri);
  if (open !== undefined) return { document: open, analysis: context.analyses.get(open) };
  let file: FileText;
  try {
    file = decodeFileText(await readFile(fileURLToPath(uri)));
  } catch (error) {
    throw new ResponseError(ErrorCodes.InvalidParams, `cannot read ${uri}: ${(error as Error).message}`);
  }
  const { limits } = await context.settingsFor(uri);
  return {
    document: TextDocument.create(uri, 'acmp-dag', 0, file.text),
    analysis: analyzeFileText(file, { limits }),
  };
}

/** What an editor's run is asked for, alike on both drivers: the request's choices over the settings'. */
function runChoices(run: Settings['run'], argument: RunDagArguments) {
  return {
    policy: argument.policy ?? run.failurePolicy,
    maxConcurrency: argument.maxConcurrency ?? run.maxConcurrency,
    ...(argument.reuse === undefined ? {} : { reuse: argument.reuse }),
    ...marketOptions(run, argument.maxCostCu),
  };
}

/**
 * The routing and budget of an editor's run: the settings (0: no limit), the run request's `maxCostCu` over
 * `acmp.run.maxCostCu` when it is a number (a client raising the budget to re-run).
 */
function marketOptions(run: Settings['run'], maxCostCu: unknown): Pick<RunOptions, 'routing' | 'budget'> {
  const totalCap = typeof maxCostCu === 'number' && Number.isFinite(maxCostCu) ? maxCostCu : run.maxCostCu;
  const budget = {
    ...(totalCap > 0 ? { total_cap_cu: totalCap } : {}),
    ...(run.perTaskMaxCu > 0 ? { per_task_max_cu: run.perTaskMaxCu } : {}),
  };
  return { routing: run.routing, ...(Object.keys(budget).length === 0 ? {} : { budget }) };
}

/** A batch goes out once its first event is this old, even if the turn of the event loop goes on. */
const MAX_BATCH_AGE_MS = 50;

/**
 * A batch as sent: a task's `running` events followed in the same batch by its end are left out, and the end carries
 * when the first of them came (`started_at`). An in-process provider starts and ends most tasks within one batch;
 * a client shows the end either way, and 10,000 `running` events were a fifth of a run's bytes.
 */
export function coalescedBatch(events: readonly RunEvent[]): RunEvent[] {
  const endIndex = new Map<string, number>();
  events.forEach((event, index) => {
    if (event.type === 'task-state' && event.state !== 'running' && event.state !== 'pending') {
      endIndex.set(event.task_id, index);
    }
  });
  const startedAt = new Map<string, string>();
  const sent: RunEvent[] = [];
  events.forEach((event, index) => {
    if (event.type !== 'task-state' || !endIndex.has(event.task_id)) sent.push(event);
    else if (event.state === 'running' && index < endIndex.get(event.task_id)!) {
      if (!startedAt.has(event.task_id)) startedAt.set(event.task_id, event.at);
    } else {
      const started = index === endIndex.get(event.task_id) ? startedAt.get(event.task_id) : undefined;
      sent.push(started === undefined ? event : { ...event, started_at: started });
    }
  });
  return sent;
}

/**
 * Gathers a run's events into batches: the events of one turn of the event loop go out together after it, or
 * sooner once the batch is MAX_BATCH_AGE_MS old (an in-process provider can run a whole DAG in one turn); the first
 * event (run-started) and the last (run-finished) go out at once, so a client shows the run as it starts, and the
 * command's answer still comes after every event. `flush` sends what is gathered now.
 */
function batchSender(sendBatch: (events: RunEvent[]) => void): RunEventSender {
  let batch: RunEvent[] = [];
  let batchStarted = 0;
  const flush = (): void => {
    if (batch.length === 0) return;
    const events = coalescedBatch(batch);
    batch = [];
    sendBatch(events);
  };
  const send = (event: RunEvent): void => {
    batch.push(event);
    if (batch.length === 1) {
      batchStarted = performance.now();
      setImmediate(flush);
    }
    const atOnce = event.type === 'run-finished' || event.type === 'run-started';
    if (atOnce || performance.now() - batchStarted >= MAX_BATCH_AGE_MS) flush();
  };
  return Object.assign(send, { flush });
}

/** Sends one event of a run; `flush` sends at once any it holds back. */
type RunEventSender = ((event: RunEvent) => void) & { readonly flush: () => void };

/** Sends a run's events to the client: in batches, or one notification each; `engine` marks a durable run's. */
function eventSender(
  context: FeatureContext,
  uri: string,
  batches: boolean,
  engine: string | undefined,
): RunEventSender {
  const marked = engine === undefined ? {} : { engine };
  if (batches)
    return batchSender((events) => {
      const params: RunEventsParams = { uri, events, ...marked };
      void context.connection.sendNotification(RUN_EVENTS_NOTIFICATION, params);
    });
  const send = (event: RunEvent): void => {
    const params: RunEventParams = { uri, event, ...marked };
    void context.connection.sendNotification(RUN_EVENT_NOTIFICATION, params);
  };
  return Object.assign(send, { flush: () => undefined });
}

/** The report of run-finished as the client gets it (sentReport). */
const sentEvent = (event: RunEvent): RunEvent =>
  event.type === 'run-finished' ? { ...event, report: sentReport(event.report) } : event;

/**
 * Refuses a DAG with errors: RequestFailed, listing them. Too large to analyse is too large to run: its warning is the
 * one diagnostic, and it stands for them all.
 */
function refuseErrors(document: TextDocument, analysis: DagAnalysis): void {
  const errors = blockingDiagnostics(analysis);
  if (errors.length === 0) return;
  const listed = errors.map((error) => ({
    code: error.code,
    message: error.message,
    line: document.positionAt(error.start).line,
  }));
  const shown = listed.slice(0, ERRORS_IN_MESSAGE).map((error) => `line ${error.line + 1}: ${error.message}`);
  const more = listed.length > ERRORS_IN_MESSAGE ? ` (and ${listed.length - ERRORS_IN_MESSAGE} more)` : '';
  throw new ResponseError<RunRefusedData>(
    LSPErrorCodes.RequestFailed,
    `The DAG has ${listed.length} error(s); fix them before running: ${shown.join('; ')}${more}`,
    { errors: listed },
  );
}

/** Task ids an argument names (`tasks`, `from`, `refresh`): absent, or an array of strings. */
function taskIdsOf(argument: RunDagArguments, key: 'tasks' | 'from' | 'refresh'): readonly string[] | undefined {
  const ids: unknown = argument[key];
  if (ids === undefined) return undefined;
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
    throw invalid(`expected "${key}" to be an array of task ids`);
  }
  return ids;
}

/** Ids in a message: the first few, then how many more. */
function idsInMessage(ids: readonly string[], shown = 10): string {
  const listed = ids.slice(0, shown).join(', ');
  return ids.length > shown ? `${listed} and ${ids.length - shown} more` : listed;
}

/** What a run executes: the DAG or the part of it selected, and the tasks that run whatever the store holds. */
interface RunTarget {
  readonly analysis: DagAnalysis;
  readonly plainTasks?: readonly unknown[];
  readonly refresh: ReadonlySet<string>;
}

/**
 * The part of the DAG a run of `selection` executes: the tasks selected (those it names run again, whatever the store
 * holds; the downstream tasks of `from` use the store as any task does, so only what reads a changed output runs) and
 * the upstream tasks they read, whose outputs come from the store. Refused with RUN_NEEDS_UPSTREAM when the store
 * lacks some of those, unless `withUpstream` (they then run too).
 */
function partToRun(
  target: { document: TextDocument; analysis: DagAnalysis; dag: DagValue },
  selection: Selection,
  settings: Settings,
  store: ResultStore | undefined,
  withUpstream: boolean,
): RunTarget {
  const { model } = target.analysis;
  const selected = selectTasks(model, selection);
  if (!selected.ok) {
    throw invalid(`no task ${idsInMessage(selected.unknown)} in the DAG: "tasks" and "from" name tasks by task_id`);
  }
  const { chosen, upstream } = selected.tasks;
  const { dag } = target;
  if (!withUpstream && upstream.size > 0) {
    const stored =
      store === undefined
        ? []
        : storedResults(
            model,
            dag.tasks,
            resultReuseOf(store, settings.cache),
            providerIdsOf(settings.providers),
            upstream,
          );
    const missing = [...upstream]
      .sort((a, b) => a - b)
      .filter((index) => stored[index] === undefined)
      .map((index) => model.tasks[index]!.id!);
    if (missing.length > 0) {
      const needed = `${missing.length} upstream task(s) it needs: ${idsInMessage(missing)}`;
      const lacking =
        store === undefined
          ? `the result store is off for this run, so it has no output of ${needed}`
          : `the result store has no output of ${needed}`;
      throw new ResponseError<NeedsUpstreamData>(
        RUN_NEEDS_UPSTREAM,
        `Not running: ${lacking}. Run them too, or run the whole DAG.`,
        { missing },
      );
    }
  }
  const text = partOfDag(dag, new Set([...chosen, ...upstream]));
  const analysis = analyzeDag(text, { limits: settings.limits, keepValue: true });
  refuseErrors(TextDocument.create(target.document.uri, 'acmp-dag', 0, text), analysis);
  return {
    analysis,
    plainTasks: (analysis.value as { tasks: unknown[] }).tasks,
    refresh: new Set([...(selection.tasks ?? []), ...(selection.from ?? [])]),
  };
}

/** `refresh` checked against the DAG's task ids (an unknown one is a mistake the user should hear of). */
function refreshOf(argument: RunDagArguments, analysis: DagAnalysis): readonly string[] {
  const refresh = taskIdsOf(argument, 'refresh') ?? [];
  const unknown = refresh.filter((id) => !analysis.model.taskById.has(id));
  if (unknown.length > 0)
    throw invalid(`no task ${idsInMessage(unknown)} in the DAG: "refresh" names tasks by task_id`);
  return refresh;
}

async function runDag(
  context: FeatureContext,
  runs: Map<string, DagRun>,
  durable: DurableRuns,
  argument: RunDagArguments,
  token: CancellationToken,
): Promise<RunReport> {
  const { document, analysis } = await analysisFor(context, argument.uri);
  refuseErrors(document, analysis);
  const tasks = taskIdsOf(argument, 'tasks');
  const from = taskIdsOf(argument, 'from');
  const selection: Selection = { ...(tasks === undefined ? {} : { tasks }), ...(from === undefined ? {} : { from }) };
  const refresh = refreshOf(argument, analysis);
  const settings = await context.settingsFor(argument.uri);
  const engine = engineUrlOf(settings.engine.url);
  if (engine !== undefined && selects(selection)) {
    throw new ResponseError(
      LSPErrorCodes.RequestFailed,
      'Running a part of the DAG ("tasks", "from") is not available for durable runs (acmp.engine.url is set): run the whole DAG',
    );
  }
  const stores = resultStoresOf(context);
  const store = engine === undefined ? await stores.openForRun(settings.cache, argument.noCache === true) : undefined;
  try {
    const target: RunTarget = selects(selection)
      ? partToRun(
          { document, analysis, dag: stores.dagValueOf(analysis) },
          selection,
          settings,
          store,
          argument.withUpstream === true,
        )
      : { analysis, refresh: new Set() };
    return await runTarget(context, runs, durable, argument, token, {
      settings,
      engine,
      target,
      results:
        store === undefined
          ? undefined
          : resultReuseOf(store, settings.cache, new Set([...target.refresh, ...refresh])),
    });
  } finally {
    if (store !== undefined) await stores.closeAfterRun(store);
  }
}

/** How a durable run uses the worker's result store: as the settings and the request say of the editor's own runs. */
function durableCacheOptions(cache: Settings['cache'], argument: RunDagArguments): DurableCacheOptions {
  return {
    noCache: !cache.enabled || argument.noCache === true,
    ...(argument.refresh === undefined ? {} : { refresh: argument.refresh }),
    cacheExclude: cache.exclude,
    cachePerProvider: cache.perProvider,
  };
}

/** Runs what `runDag` chose, on this server or on the engine, and answers with the report when it ends. */
async function runTarget(
  context: FeatureContext,
  runs: Map<string, DagRun>,
  durable: DurableRuns,
  argument: RunDagArguments,
  token: CancellationToken,
  {
    settings,
    engine,
    target,
    results,
  }: {
    settings: Settings;
    engine: string | undefined;
    target: RunTarget;
    results: RunOptions['results'];
  },
): Promise<RunReport> {
  const { analysis } = target;
  let sent: RunReport | undefined;
  const batches = argument.eventBatches === true;
  const send = eventSender(context, argument.uri, batches, engine);
  const onEvent = (event: RunEvent): void => {
    if (event.type !== 'run-finished') return send(event);
    sent = sentReport(event.report);
    // In batches the report comes once, in the answer, which follows the last batch: it is a run's largest message.
    if (batches) send.flush();
    else send({ ...event, report: sent });
  };
  const choices = runChoices(settings.run, argument);
  const refusal = engine === undefined ? unservedRefusal(analysis.model, settings.providers) : undefined;
  if (refusal !== undefined) throw new ResponseError(LSPErrorCodes.RequestFailed, `Not running: ${refusal.message}`);
  const run =
    engine === undefined
      ? startRun(analysis, {
          providers: settings.providers,
          connect: createConnector({ tokens: argument.tokens ?? {} }),
          // What the editor gets of outputs and errors: without the tokens, whoever echoed them.
          secrets: runSecrets(settings.providers, argument.tokens ?? {}),
          ...choices,
          ...(argument.runId === undefined ? {} : { runId: argument.runId }),
          ...(target.plainTasks === undefined ? {} : { plainTasks: target.plainTasks }),
          ...(results === undefined ? {} : { results }),
          ...outputMemoryOption(),
          onEvent,
        })
      : // The engine's workers run it with their own providers, tokens and result store: none of the editor's are sent.
        await durable.start(engine, analysis, {
          runId: argument.runId ?? `run-${randomUUID()}`,
          ...choices,
          ...durableCacheOptions(settings.cache, argument),
          onEvent,
        });
  runs.set(run.runId, run);
  // A client that gives up on the request (LSP's $/cancelRequest) cancels the run; a durable run outlives it.
  const subscription = token.onCancellationRequested(() => {
    if (engine === undefined) run.cancel('the client cancelled the request');
  });
  try {
    const report = (sent ??= sentReport(await run.done));
    if (engine === undefined) void recordRun(report, analysis.model); // the engine's workers chose their providers
    // Completion reads the shape of these: the outputs sent, within the same budget.
    const outputs = new Map<string, TaskOutput>();
    for (const task of report.tasks) if (task.output !== undefined) outputs.set(task.task_id, task.output);
    context.lastOutputs.set(argument.uri, outputs);
    return report;
  } finally {
    run.releaseOutputs();
    subscription.dispose();
    runs.delete(run.runId);
  }
}

export const runFeature: Feature = {
  capabilities: { executeCommandProvider: { commands: Object.values(RUN_COMMANDS) } },
  register(context) {
    const runs = new Map<string, DagRun>();
    // The engine's runs go to the client as batches of events, like the runs of clients that ask for batches.
    const durable = new DurableRuns(context, (uri, engine) => {
      const send = eventSender(context, uri, true, engine);
      return (event) => send(sentEvent(event));
    });
    context.connection.onRequest(DURABLE_RUNS_REQUEST, (params: DurableRunsParams | undefined) => durable.list(params));
    context.connection.onExecuteCommand(async ({ command, arguments: args }, token) => {
      switch (command) {
        case RUN_COMMANDS.runDag:
          return runDag(context, runs, durable, argumentOf<RunDagArguments>(args, ['uri']), token);
        case RUN_COMMANDS.cancelRun: {
          const { runId, reason } = argumentOf<CancelRunArguments>(args, ['runId']);
          const run = runs.get(runId);
          run?.cancel(reason);
          return { cancelled: run !== undefined || (await durable.cancel(runId, undefined, reason)) };
        }
        case RUN_COMMANDS.cancelTask: {
          const { runId, taskId, reason } = argumentOf<CancelTaskArguments>(args, ['runId', 'taskId']);
          const run = runs.get(runId);
          run?.cancelTask(taskId, reason);
          return { cancelled: run !== undefined || (await durable.cancel(runId, taskId, reason)) };
        }
        case RUN_COMMANDS.resultStore:
          return resultStoreCommand(context, argumentOf<object>(args, []));
        default:
          throw invalid(`unknown command "${command}"`);
      }
    });
  },
};

/** ACMP_RUN_MEMORY_BUDGET_BYTES of the server's environment as a run option; a wrong value refuses the run. */
function outputMemoryOption(): { outputMemoryBytes?: number } {
  try {
    return outputMemoryFromEnvironment();
  } catch (error) {
    throw new ResponseError(LSPErrorCodes.RequestFailed, messageOf(error));
  }
}
