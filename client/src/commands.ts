// The extension's commands: what each takes from where it is invoked (a file, a tree node, nothing) and whom it asks.
import { type Disposable, Uri, commands, window, workspace } from 'vscode';
import type { TaskOutput } from '../../server/src/protocol/report';
import type { RunSnapshot } from './runSnapshot';
import { taskIdRanges } from './declarations';
import type { RunNode, TaskNode } from './runTree';
import type { Runner } from './runner';
import type { RunsModel } from './runs';
import { fileName } from './runText';
import { runReportUri, taskOutputUri } from './taskOutput';
import type { ProviderTokens } from './tokens';

const hasRerunnableTasks = (run: RunSnapshot): boolean =>
  run.status !== 'running' && run.tasks.some((task) => task.state === 'failed' || task.state === 'cancelled');

/** The outputs of a run's completed tasks, by task id, that a re-run may hand back to the server (`reuse`). */
function reusableOutputs(run: RunSnapshot): Record<string, TaskOutput> {
  const reuse: Record<string, TaskOutput> = {};
  // An output shown without its tokens is not the provider's: that task runs again rather than pass it on.
  for (const task of run.tasks)
    if (task.state === 'completed' && task.output && task.outputRedacted !== true) reuse[task.taskId] = task.output;
  return reuse;
}

/**
 * The DAG a run command means: the file it was invoked on (Explorer, editor title), else the active editor's DAG (the
 * CodeLens, whose click focuses its editor first, passes nothing), else one the user picks among the workspace's.
 */
async function dagUri(target: unknown): Promise<Uri | undefined> {
  if (target instanceof Uri) return target;
  const document = window.activeTextEditor?.document;
  if (document?.languageId === 'acmp-dag') return document.uri;
  const files = await workspace.findFiles('**/*.acmp-dag.json', '**/node_modules/**');
  if (files.length === 0) {
    void window.showInformationMessage('This workspace has no ACMP DAG file (*.acmp-dag.json) to run.');
    return undefined;
  }
  const picked = await window.showQuickPick(
    files.map((uri) => ({ label: workspace.asRelativePath(uri), uri })).sort((a, b) => a.label.localeCompare(b.label)),
    { title: 'Run DAG', placeHolder: 'The ACMP DAG file to run' },
  );
  return picked?.uri;
}

export function registerCommands(runs: RunsModel, runner: Runner, tokens: ProviderTokens): Disposable[] {
  const runDag = async (target?: unknown) => {
    const uri = await dagUri(target);
    return uri === undefined ? undefined : runner.run(uri);
  };

  const cancelRun = async (node?: RunNode) => {
    const runId = node?.run.runId ?? runs.activeRuns()[0]?.runId;
    if (runId === undefined) void window.showInformationMessage('No ACMP run is in progress.');
    else await runner.cancelRun(runId);
  };

  /**
   * Runs a run's failed and cancelled tasks again, and what is downstream of them, on the DAG as it is now in its
   * editor (a fix made since included): the outputs of the completed tasks they read come from the result store. An
   * engine runs whole DAGs only: a durable run's DAG runs again whole, its completed tasks' outputs handed back.
   */
  const rerunFailed = async (node?: RunNode) => {
    const run = node === undefined ? runs.runs.find(hasRerunnableTasks) : runs.get(node.run.runId);
    if (run === undefined || !hasRerunnableTasks(run)) {
      void window.showInformationMessage('No finished run has failed or cancelled tasks.');
      return undefined;
    }
    const uri = Uri.parse(run.uri);
    if (run.engine !== undefined) return runner.run(uri, { reuse: reusableOutputs(run) });
    const unfinished = run.tasks
      .filter((task) => task.state === 'failed' || task.state === 'cancelled')
      .map((task) => task.taskId);
    let declared: ReadonlySet<string>;
    try {
      declared = new Set((await runner.tasksOf(uri)).map((task) => task.id));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      void window.showWarningMessage(`The DAG of that run, ${run.uri}, cannot be opened to re-run: ${reason}`);
      return undefined;
    }
    const again = unfinished.filter((taskId) => declared.has(taskId));
    if (again.length === 0) {
      const listed = `${unfinished.slice(0, 5).join(', ')}${unfinished.length > 5 ? ', …' : ''}`;
      void window.showInformationMessage(
        `None of the failed or cancelled tasks of that run (${listed}) is in ${fileName(run.uri)} now: nothing to re-run.`,
      );
      return undefined;
    }
    return runner.run(uri, { from: again });
  };

  const showRunReport = async ({ run }: RunNode) => {
    const document = await workspace.openTextDocument(runReportUri(run.runId, run.dagId));
    await window.showTextDocument(document, { preview: true });
  };

  const showTaskOutput = async ({ runId, task }: TaskNode) => {
    const document = await workspace.openTextDocument(taskOutputUri(runId, task));
    await window.showTextDocument(document, { preview: true });
  };

  /** Shows the task's `task_id` declaration in its DAG file. */
  const revealTask = async ({ runId, task }: TaskNode) => {
    const run = runs.get(runId);
    if (run === undefined) return;
    const document = await workspace.openTextDocument(Uri.parse(run.uri));
    const selection = taskIdRanges(document).get(task.taskId);
    await window.showTextDocument(document, { preview: true, preserveFocus: true, ...(selection && { selection }) });
  };

  return [
    commands.registerCommand('acmp.runDag', runDag),
    commands.registerCommand('acmp.cancelRun', cancelRun),
    commands.registerCommand('acmp.cancelTask', ({ runId, task }: TaskNode) => runner.cancelTask(runId, task.taskId)),
    commands.registerCommand('acmp.rerunFailed', rerunFailed),
    commands.registerCommand('acmp.rerunDag', ({ run }: RunNode) => runner.run(Uri.parse(run.uri))),
    commands.registerCommand('acmp.showRunReport', showRunReport),
    commands.registerCommand('acmp.removeRun', ({ run }: RunNode) => runs.remove(run.runId)),
    commands.registerCommand('acmp.showTaskOutput', showTaskOutput),
    commands.registerCommand('acmp.revealTask', revealTask),
    commands.registerCommand('acmp.clearRuns', () => runs.clear()),
    commands.registerCommand('acmp.setProviderToken', () => tokens.promptAndStore()),
  ];
}
