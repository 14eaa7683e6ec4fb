// The tree view "ACMP Runs": one node per run, its tasks as children (a large run's by state). Each change of the
// runs (coalesced by the model, runs.ts) redraws the runs it names, so that a run's row counts with the status bar;
// the whole tree only when runs start, end or are cleared.
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
import { runDescription, runDetails, taskDescription, taskDetails } from './runText';
import type { RunsChange, RunsModel } from './runs';
import type { RunSnapshot, TaskSnapshot } from './runSnapshot';
import type { TaskState } from '../../server/src/protocol/report';

export const RUNS_VIEW = 'acmpRuns';
/**
 * A run of more tasks than this lists them by state, failed first, each state a closed node: a redraw of the run
 * then redraws a few nodes rather than every task's row (what crosses to the window grows with the rows a redraw
 * lists). Its routine log lines are at debug level (runLog.ts).
 */
export const MAX_TASKS_LISTED = 500;
const GROUP_ORDER: readonly TaskState[] = ['failed', 'cancelled', 'running', 'pending', 'completed'];

/** `run` is the run as it was when the tree last listed the runs; its item shows the run as it is now. */
export interface RunNode {
  readonly kind: 'run';
  readonly run: RunSnapshot;
  readonly newest: boolean;
}

/** `task` is the task as it was when the tree listed the run's tasks; its item shows the task as it is now. */
export interface TaskNode {
  readonly kind: 'task';
  readonly runId: string;
  readonly task: TaskSnapshot;
}

/** The tasks of a large run in one state (MAX_TASKS_LISTED). */
export interface GroupNode {
  readonly kind: 'group';
  readonly runId: string;
  readonly state: TaskState;
}

/** What the tree's context actions receive. */
export type RunTreeNode = RunNode | GroupNode | TaskNode;

const grouped = (run: RunSnapshot): boolean => run.tasks.length > MAX_TASKS_LISTED;

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
  return item;
}

function runTooltip(run: RunSnapshot): MarkdownString {
  return new MarkdownString()
    .appendMarkdown(`**${run.dagId}** · ${run.status}\n\n`)
    .appendText(runDetails(run).join('\n'));
}

/** The task's id and state in the row, where the default side bar width has room; the rest in the tooltip. */
function taskItem({ runId, task }: TaskNode): TreeItem {
  const item = new TreeItem(task.taskId, TreeItemCollapsibleState.None);
  item.id = `task:${runId}:${task.taskId}`;
  item.description = taskDescription(task);
  item.iconPath = stateIcon(task.state);
  item.contextValue = taskContext(task);
  const node: TaskNode = { kind: 'task', runId, task };
  item.command = { command: 'acmp.revealTask', title: 'Reveal Task', arguments: [node] };
  return item;
}

function groupItem({ runId, state }: GroupNode, tasks: number): TreeItem {
  const item = new TreeItem(state, TreeItemCollapsibleState.Collapsed);
  item.id = `group:${runId}:${state}`;
  item.description = `${tasks.toLocaleString('en')} task${tasks === 1 ? '' : 's'}`;
  item.iconPath = stateIcon(state);
  item.contextValue = 'task-group';
  return item;
}

function taskTooltip(task: TaskSnapshot): MarkdownString {
  const tooltip = new MarkdownString()
    .appendMarkdown(`**${task.taskId}** · ${task.state}\n\n`)
    .appendText(taskDetails(task).join('\n'));
  if (task.error === undefined && task.output !== undefined) tooltip.appendCodeblock(preview(task.output), 'json');
  return tooltip;
}

class RunTreeProvider implements TreeDataProvider<RunTreeNode> {
  private readonly changed = new EventEmitter<RunTreeNode[] | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  /**
   * The run nodes the tree was last given, by run id: VS Code knows a node by its object, so redrawing a run means
   * firing the very object the tree has.
   */
  private runNodes = new Map<string, RunNode>();

  constructor(private readonly runs: RunsModel) {}

  /**
   * Redraws what changed: the whole tree when runs came or went, else each run that changed, with its tasks (VS Code
   * redraws a node with what it shows open under it): its row's counts are those the status bar shows of the change.
   */
  refresh(change: RunsChange): void {
    if (change.listChanged) {
      this.changed.fire(undefined);
      return;
    }
    const changed = [...change.runIds].flatMap((runId) => this.runNodes.get(runId) ?? []);
    if (changed.length > 0) this.changed.fire(changed);
  }

  getChildren(node?: RunTreeNode): RunTreeNode[] {
    if (node === undefined) {
      const runs = this.runs.runs.map((run, index): RunNode => ({ kind: 'run', run, newest: index === 0 }));
      this.runNodes = new Map(runs.map((runNode) => [runNode.run.runId, runNode]));
      return runs;
    }
    if (node.kind === 'task') return [];
    const run = this.runs.get(node.kind === 'run' ? node.run.runId : node.runId);
    if (run === undefined) return [];
    if (node.kind === 'run' && grouped(run)) {
      const states = new Set(run.tasks.map((task) => task.state));
      return GROUP_ORDER.filter((state) => states.has(state)).map((state) => ({
        kind: 'group',
        runId: run.runId,
        state,
      }));
    }
    const listed = node.kind === 'group' ? run.tasks.filter((task) => task.state === node.state) : run.tasks;
    return listed.map((task): TaskNode => ({ kind: 'task', runId: run.runId, task }));
  }

  getTreeItem(node: RunTreeNode): TreeItem {
    if (node.kind === 'run') return runItem({ ...node, run: this.currentRun(node) });
    if (node.kind === 'group') {
      const tasks = this.runs.get(node.runId)?.tasks.filter((task) => task.state === node.state).length ?? 0;
      return groupItem(node, tasks);
    }
    return taskItem({ ...node, task: this.currentTask(node) });
  }

  /** Tooltips only when hovered: a run's end redraws every task row, and their tooltips were most of what it sent. */
  resolveTreeItem(item: TreeItem, node: RunTreeNode): TreeItem {
    if (node.kind === 'run') item.tooltip = runTooltip(this.currentRun(node));
    else if (node.kind === 'task') item.tooltip = taskTooltip(this.currentTask(node));
    return item;
  }

  private currentRun(node: RunNode): RunSnapshot {
    return this.runs.get(node.run.runId) ?? node.run;
  }

  private currentTask(node: TaskNode): TaskSnapshot {
    return this.runs.task(node.runId, node.task.taskId) ?? node.task;
  }

  getParent(node: RunTreeNode): RunTreeNode | undefined {
    if (node.kind === 'run') return undefined;
    const runNode = this.runNodes.get(node.runId);
    if (node.kind === 'group' || runNode === undefined || !grouped(runNode.run)) return runNode;
    return { kind: 'group', runId: node.runId, state: this.currentTask(node).state };
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
  const following = runs.onDidChange((change) => {
    provider.refresh(change);
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
