// Starting and cancelling runs: the language server executes them (workspace/executeCommand); this forwards the
// request with the provider tokens, follows the run in a cancellable notification, and explains a refusal.
import { randomUUID } from 'node:crypto';
import { ProgressLocation, Uri, commands, window, workspace } from 'vscode';
import { ExecuteCommandRequest, LSPErrorCodes, type LanguageClient, ResponseError } from 'vscode-languageclient/node';
import {
  type CancelRunArguments,
  type CancelTaskArguments,
  type DagGraph,
  GRAPH_REQUEST,
  type GraphParams,
  type NeedsUpstreamData,
  RUN_COMMANDS,
  RUN_NEEDS_UPSTREAM,
  type RunDagArguments,
  type RunRefusedData,
} from '../../server/src/protocol/runMessages';
import type { RunReport } from '../../server/src/protocol/report';
import type { RunLog } from './runLog';
import type { RunSnapshot } from './runSnapshot';
import {
  fileName,
  firstFailure,
  needsUpstreamMessage,
  refusalMessage,
  runEndMessage,
  stoppedOnBudget,
} from './runText';
import type { RunNode, TaskNode } from './runTree';
import type { RunsModel } from './runs';
import { type TaskSymbol, taskSymbols } from './taskSymbols';
import type { ProviderTokens } from './tokens';

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function refusal(error: unknown): RunRefusedData | undefined {
  if (!(error instanceof ResponseError) || error.code !== LSPErrorCodes.RequestFailed) return undefined;
  const data = error.data as Partial<RunRefusedData> | undefined;
  return Array.isArray(data?.errors) ? (data as RunRefusedData) : undefined;
}

/** The upstream tasks a run of part of a DAG needs and the result store lacks, when that is why it was refused. */
function missingUpstream(error: unknown): NeedsUpstreamData | undefined {
  if (!(error instanceof ResponseError) || error.code !== RUN_NEEDS_UPSTREAM) return undefined;
  const data = error.data as Partial<NeedsUpstreamData> | undefined;
  return Array.isArray(data?.missing) ? (data as NeedsUpstreamData) : undefined;
}

/**
 * What a run is asked for beyond the DAG (RunDagArguments): a part of it, outputs of an earlier run by task id, a
 * budget over the settings'.
 */
export type RunChoices = Pick<RunDagArguments, 'tasks' | 'from' | 'withUpstream' | 'reuse' | 'maxCostCu'>;

/** What a run that failed or was cancelled offers: its first failure's output, Re-run Failed, the run. */
function failureActions(run: RunSnapshot): Record<string, () => unknown> {
  const failure = firstFailure(run);
  const { runId } = run;
  return {
    ...(failure !== undefined && {
      'Show Output': () => {
        const node: TaskNode = { kind: 'task', runId, task: failure };
        return commands.executeCommand('acmp.showTaskOutput', node);
      },
    }),
    'Re-run Failed': () => {
      const node: RunNode = { kind: 'run', run, newest: false };
      return commands.executeCommand('acmp.rerunFailed', node);
    },
    'Show Run': () => commands.executeCommand('acmp.showRun', runId),
  };
}

/** What a run its budget stopped offers: the DAG's plan, a re-run with a larger budget, the run. */
const budgetStopActions = (run: RunSnapshot): Record<string, () => unknown> => ({
  'Show Plan': () => commands.executeCommand('acmp.showPlan', Uri.parse(run.uri)),
  'Raise Budget and Re-run': () => commands.executeCommand('acmp.raiseBudgetAndRerun', run.runId),
  'Show Run': () => commands.executeCommand('acmp.showRun', run.runId),
});

export class Runner {
  constructor(
    private readonly client: LanguageClient,
    private readonly runs: RunsModel,
    private readonly tokens: ProviderTokens,
    private readonly log: RunLog,
  ) {}

  /**
   * Runs the DAG document `uri` as it is now (in its editor, else on disk), or the part of it `choices` names, with a
   * total budget over the settings' when given. Resolves with the run's report, with the errors the server refused the
   * DAG for, with the upstream tasks whose outputs the result store lacks for a part (the user is offered to run them
   * too), or undefined when no run started.
   */
  async run(uri: Uri, choices: RunChoices = {}): Promise<RunReport | RunRefusedData | NeedsUpstreamData | undefined> {
    if (!workspace.isTrusted) {
      void window.showWarningMessage(
        'Running DAGs is disabled in this untrusted workspace: its settings could name a provider command to start.',
      );
      return undefined;
    }
    const runId = randomUUID();
    const [tokens, capabilities] = await Promise.all([this.tokens.forProviders(uri), this.capabilitiesOf(uri)]);
    this.runs.expect(runId, capabilities);
    const args: RunDagArguments = {
      uri: uri.toString(),
      runId,
      tokens,
      // One notification per batch of events: one per event costs the extension host more than the run (server/README.md).
      eventBatches: true,
      ...choices,
    };
    try {
      const report = await window.withProgress(
        { location: ProgressLocation.Notification, title: `Running ${fileName(uri.toString())}`, cancellable: true },
        async (progress, cancellation) => {
          cancellation.onCancellationRequested(() => void this.cancelRun(runId));
          // The counter the status bar shows too, read on the same (coalesced) change: the two agree at every moment.
          let shownPercent = 0;
          let shownFinished = 0;
          const following = this.runs.onDidChange(({ runIds }) => {
            if (!runIds.has(runId)) return;
            const run = this.runs.activeRuns().find((active) => active.runId === runId);
            if (run === undefined || run.totalTasks === 0 || run.finishedTasks === shownFinished) return;
            const percent = (run.finishedTasks * 100) / run.totalTasks;
            progress.report({
              increment: percent - shownPercent,
              message: `${run.finishedTasks}/${run.totalTasks} tasks finished`,
            });
            shownPercent = percent;
            shownFinished = run.finishedTasks;
          });
          try {
            return await this.execute<RunReport>(RUN_COMMANDS.runDag, args);
          } finally {
            following.dispose();
          }
        },
      );
      // In batches the run's end comes only with this answer (no `run-finished` event).
      this.runs.finish(report);
      this.log.finished(report);
      this.showEnd(report.run_id);
      return report;
    } catch (error) {
      this.runs.abandon(runId, new Date().toISOString());
      const refused = refusal(error);
      if (refused !== undefined) {
        this.showRefusal(uri, refused);
        return refused;
      }
      const needs = missingUpstream(error);
      if (needs !== undefined) {
        this.offerUpstream(uri, choices, needs);
        return needs;
      }
      const message = messageOf(error);
      this.log.failed(uri.toString(), message);
      void window.showErrorMessage(`The run of ${fileName(uri.toString())} failed: ${message}`);
      return undefined;
    }
  }

  async cancelRun(runId: string): Promise<void> {
    await this.cancel(RUN_COMMANDS.cancelRun, { runId, reason: 'cancelled by the user' } satisfies CancelRunArguments);
  }

  async cancelTask(runId: string, taskId: string): Promise<void> {
    const args: CancelTaskArguments = { runId, taskId, reason: 'cancelled by the user' };
    await this.cancel(RUN_COMMANDS.cancelTask, args);
  }

  private async cancel(command: string, args: CancelRunArguments | CancelTaskArguments): Promise<void> {
    try {
      await this.execute(command, args);
    } catch (error) {
      void window.showWarningMessage(`The run could not be cancelled: ${messageOf(error)}`);
    }
  }

  private execute<T = unknown>(command: string, args: object): Promise<T> {
    return this.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [args] }) as Promise<T>;
  }

  /** The tasks the DAG document declares now (its editor's text, else the file's), from the server's outline. */
  async tasksOf(uri: Uri): Promise<readonly TaskSymbol[]> {
    // The server's outline is of documents open in the editor: opening one (without showing it) sends it.
    await workspace.openTextDocument(uri);
    return taskSymbols(this.client, uri);
  }

  /** Each task's capability for the tree (run events do not carry them), from the server's graph of the DAG. */
  private async capabilitiesOf(uri: Uri): Promise<ReadonlyMap<string, string>> {
    // No critical path: planning 10,000 tasks takes most of a second, which the run need not wait for.
    const params: GraphParams = { uri: uri.toString(), waitForPlan: false };
    const graph = await this.client.sendRequest<DagGraph>(GRAPH_REQUEST, params).catch(() => undefined);
    return new Map(graph?.nodes.flatMap((node) => (node.capability === undefined ? [] : [[node.id, node.capability]])));
  }

  private showRefusal(uri: Uri, refused: RunRefusedData): void {
    this.log.refused(uri.toString(), refused);
    const showProblems = 'Show Problems';
    void window.showErrorMessage(refusalMessage(uri.toString(), refused.errors.length), showProblems).then((choice) => {
      if (choice === showProblems) void commands.executeCommand('workbench.actions.view.problems');
    });
  }

  /** Says which upstream outputs the store lacks for a part of the DAG, and offers to run that part with them. */
  private offerUpstream(uri: Uri, choices: RunChoices, { missing }: NeedsUpstreamData): void {
    const runThem = 'Run Them Too';
    void window.showWarningMessage(needsUpstreamMessage(uri.toString(), missing), runThem).then((choice) => {
      if (choice === runThem) void this.run(uri, { ...choices, withUpstream: true });
    });
  }

  /**
   * A run that did not complete says so, with what to do next: its first failure's output, a re-run, the run; a run
   * its budget stopped, its plan and a re-run with a larger budget.
   */
  private showEnd(runId: string): void {
    const run = this.runs.get(runId);
    if (run === undefined || run.status === 'running' || (run.status === 'completed' && !stoppedOnBudget(run))) return;
    const actions = stoppedOnBudget(run) ? budgetStopActions(run) : failureActions(run);
    const show = run.status === 'failed' ? window.showErrorMessage : window.showWarningMessage;
    void show(runEndMessage(run), ...Object.keys(actions)).then((choice) => {
      if (choice !== undefined) void actions[choice]?.();
    });
  }
}
