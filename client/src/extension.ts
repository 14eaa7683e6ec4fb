// The VS Code extension: wires the language server's client to the run views and commands; each lives in its own file.
import { type Event, type ExtensionContext, languages, workspace } from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import {
  RUN_EVENTS_NOTIFICATION,
  RUN_EVENT_NOTIFICATION,
  type RunEventParams,
  type RunEventsParams,
} from '../../server/src/protocol/runMessages';
import type { RunSnapshot } from './runSnapshot';
import { RunCodeLensProvider } from './codeLens';
import { registerCommands } from './commands';
import { RunDecorations } from './decorations';
import { followDurableRuns } from './followDurableRuns';
import { registerGraphView } from './graphView';
import { createLanguageClient } from './languageClient';
import { registerPlanView } from './planView';
import { registerRaiseBudget } from './raiseBudget';
import { registerResultStore } from './resultStore';
import { RunLog } from './runLog';
import { createRunTree } from './runTree';
import { Runner } from './runner';
import { registerRunTask } from './runTask';
import { type RunsChange, RunsModel } from './runs';
import { createRunStatusBarItem } from './statusBar';
import { runsStore } from './storedRuns';
import { RUN_REPORT_SCHEME, RunReportProvider, TASK_OUTPUT_SCHEME, TaskOutputProvider } from './taskOutput';
import { ProviderTokens } from './tokens';

/** What `activate` returns: the runs the tree shows, for tests and other extensions. */
export interface AcmpApi {
  /** Newest first. */
  runs(): readonly RunSnapshot[];
  /** What changed, coalesced: at most every CHANGE_INTERVAL_MS while runs run, at once when they start or end. */
  readonly onDidChangeRuns: Event<RunsChange>;
}

let client: LanguageClient | undefined;

export async function activate(context: ExtensionContext): Promise<AcmpApi> {
  const tokens = new ProviderTokens(context.secrets);
  client = createLanguageClient(context, tokens);
  const runs = new RunsModel(runsStore(context));
  const log = new RunLog();
  const codeLenses = new RunCodeLensProvider();
  const runner = new Runner(client, runs, tokens, log);
  const runEvent = (params: RunEventParams): void => {
    runs.apply(params.uri, params.event, params.engine);
    log.event(params);
  };
  context.subscriptions.push(
    client,
    runs,
    log,
    client.onNotification(RUN_EVENT_NOTIFICATION, runEvent),
    client.onNotification(RUN_EVENTS_NOTIFICATION, ({ uri, events, engine }: RunEventsParams) => {
      for (const event of events) runEvent({ uri, event, ...(engine !== undefined && { engine }) });
    }),
    ...followDurableRuns(client, runs),
    ...createRunTree(runs),
    ...createRunStatusBarItem(runs),
    new RunDecorations(runs),
    codeLenses,
    languages.registerCodeLensProvider({ language: 'acmp-dag' }, codeLenses),
    workspace.registerTextDocumentContentProvider(TASK_OUTPUT_SCHEME, new TaskOutputProvider(runs)),
    workspace.registerTextDocumentContentProvider(RUN_REPORT_SCHEME, new RunReportProvider(runs)),
    ...registerCommands(runs, runner, tokens),
    ...registerPlanView(client, tokens),
    ...registerRaiseBudget(client, runs, runner),
    ...registerRunTask(runner),
    ...registerResultStore(client),
  );
  registerGraphView(context, client, runs);
  await client.start();
  return { runs: () => runs.runs, onDidChangeRuns: runs.onDidChange };
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
