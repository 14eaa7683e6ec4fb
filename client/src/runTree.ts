// The tree view "ACMP Runs": one node per run, its tasks as children, refreshed on every change of the runs.
import {
  type Disposable,
  EventEmitter,
  commands,
  MarkdownString,
  type TreeDataProvider,
  TreeItem,
  TreeItemCollapsibleState,
  window,
} from 'vscode';
import { preview, stateIcon } from './presentation';
import { runDescription, runDetails, taskDetails } from './runText';
import type { RunSnapshot, RunsModel, TaskSnapshot } from './runs';

export const RUNS_VIEW = 'acmpRuns';

export interface RunNode {
  readonly kind: 'run';
  readonly run: RunSnapshot;
  readonly newest: boolean;
}

export interface TaskNode {
  readonly kind: 'task';
  readonly runId: string;
  readonly task: TaskSnapshot;
}

/** What the tree's context actions receive. */
export type RunTreeNode = RunNode | TaskNode;

/** Menus in package.json select the actions by these (`viewItem`). */
function runContext(run: RunSnapshot): string {
  if (run.status === 'running') return 'run-running';
  const rerunnable = run.tasks.some((task) => task.state === 'failed' || task.state === 'cancelled');
  return rerunnable ? 'run-rerunnable' : 'run-finished';
}

function taskContext(task: TaskSnapshot): string {
  if (task.state === 'pending' || task.state === 'running') return 'task-active';
  const shows =
    task.output !== undefined ||
    task.error !== undefined ||
    task.outputNotKeptBytes !== undefined ||
    task.outputNotSentBytes !== undefined;
  return shows ? 'task-output' : 'task-finished';
}

/**
 * The newest run and running ones open, older finished runs closed. VS Code remembers a node's expansion by its id, so
 * the id changes with the state it should open in: a run that stops being the newest collapses, whatever it was.
 */
const opens = ({ run, newest }: RunNode): boolean => newest || run.status === 'running';

function runItem(node: RunNode): TreeItem {
  const { run } = node;
  const open = opens(node);
  const item = new TreeItem(run.dagId, open ? TreeItemCollapsibleState.Expanded : TreeItemCollapsibleState.Collapsed);
  item.id = `run:${run.runId}:${open ? 'open' : 'closed'}`;
  item.description = runDescription(run);
  item.iconPath = stateIcon(run.status);
  item.contextValue = runContext(run);
  item.tooltip = new MarkdownString()
    .appendMarkdown(`**${run.dagId}** · ${run.status}\n\n`)
    .appendText(runDetails(run).join('\n'));
  return item;
}

/** The task's id and state in the row, where the default side bar width has room; the rest in the tooltip. */
function taskItem({ runId, task }: TaskNode): TreeItem {
  const item = new TreeItem(task.taskId, TreeItemCollapsibleState.None);
  item.id = `task:${runId}:${task.taskId}`;
  item.description = task.state;
  item.iconPath = stateIcon(task.state);
  item.contextValue = taskContext(task);
  const tooltip = new MarkdownString()
    .appendMarkdown(`**${task.taskId}** · ${task.state}\n\n`)
    .appendText(taskDetails(task).join('\n'));
  if (task.error === undefined && task.output !== undefined) tooltip.appendCodeblock(preview(task.output), 'json');
  item.tooltip = tooltip;
  const node: TaskNode = { kind: 'task', runId, task };
  item.command = { command: 'acmp.revealTask', title: 'Reveal Task', arguments: [node] };
  return item;
}

class RunTreeProvider implements TreeDataProvider<RunTreeNode> {
  private readonly changed = new EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly runs: RunsModel) {}

  refresh(): void {
    this.changed.fire();
  }

  getChildren(node?: RunTreeNode): RunTreeNode[] {
    if (node === undefined) {
      return this.runs.runs.map((run, index): RunNode => ({ kind: 'run', run, newest: index === 0 }));
    }
    if (node.kind === 'task') return [];
    const run = this.runs.get(node.run.runId);
    return run?.tasks.map((task): TaskNode => ({ kind: 'task', runId: run.runId, task })) ?? [];
  }

  getTreeItem(node: RunTreeNode): TreeItem {
    return node.kind === 'run' ? runItem(node) : taskItem(node);
  }

  getParent(node: RunTreeNode): RunTreeNode | undefined {
    if (node.kind === 'run') return undefined;
    const run = this.runs.get(node.runId);
    return run === undefined ? undefined : { kind: 'run', run, newest: this.runs.runs[0]?.runId === run.runId };
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** The tree view; a run that starts is shown (without taking the focus); `acmp.showRun` selects one. */
export function createRunTree(runs: RunsModel): Disposable[] {
  const provider = new RunTreeProvider(runs);
  const view = window.createTreeView(RUNS_VIEW, { treeDataProvider: provider, showCollapseAll: true });
  let revealedRunId: string | undefined;
  const following = runs.onDidChange(() => {
    provider.refresh();
    const newest = runs.activeRuns()[0];
    if (newest === undefined || newest.runId === revealedRunId) return;
    revealedRunId = newest.runId;
    const run = runs.get(newest.runId)!;
    // Showing the run is a courtesy: a view that cannot reveal it now (hidden by the user) is left as it is.
    view
      .reveal({ kind: 'run', run, newest: true }, { select: false, focus: false, expand: true })
      .then(undefined, () => undefined);
  });
  /** Focuses the view on a run, e.g. from the notification at its end. */
  const showRun = async (runId: string): Promise<void> => {
    const run = runs.get(runId);
    if (run === undefined) return;
    await view.reveal({ kind: 'run', run, newest: runs.runs[0]?.runId === runId }, { select: true, focus: true });
  };
  return [provider, view, following, commands.registerCommand('acmp.showRun', showRun)];
}
