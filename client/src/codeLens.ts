// The lenses of a DAG file, in trusted workspaces only: "Run DAG" above its `dag_id`, and "Run Task" and "Run From
// Here" above each task's `task_id` in a DAG of at most MAX_TASKS_WITH_LENSES tasks.
//
// "Run DAG" has no arguments: VS Code turns a lens command with arguments into a cached stand-in (`acmp.runDag /N`)
// that it drops when the lenses are provided again, yet a lens out of view keeps the stand-in after the file changed
// (on disk, say), and its click then fails with "Actual command not found". Clicking a lens focuses its editor first,
// so acmp.runDag without arguments runs the active editor's DAG: the one clicked. A task's lens must name its task,
// so it has arguments; the editor's context menu runs the task under the cursor without any.
import { CodeLens, type CodeLensProvider, type Disposable, EventEmitter, type TextDocument, workspace } from 'vscode';
import { dagIdKeyRange, taskIdRanges } from './declarations';
import type { TaskTarget } from './runTask';

/**
 * Above this many tasks a DAG has no task lenses. Each lens line is a view zone the editor keeps for the whole
 * document and lays out again on each edit, and the lenses are provided again after each edit: 20,000 of them for a
 * 10,000-task DAG would cost every keystroke. Lenses of only the tasks in view would make the lines move as they come
 * and go while scrolling. Such a DAG runs a task from the context menu or the Command Palette (the task at the cursor).
 */
export const MAX_TASKS_WITH_LENSES = 500;

export class RunCodeLensProvider implements CodeLensProvider, Disposable {
  private readonly changed = new EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly trustGranted = workspace.onDidGrantWorkspaceTrust(() => this.changed.fire());

  provideCodeLenses(document: TextDocument): CodeLens[] {
    const range = workspace.isTrusted ? dagIdKeyRange(document) : undefined;
    if (range === undefined) return [];
    const lenses = [new CodeLens(range, { title: '$(play) Run DAG', command: 'acmp.runDag' })];
    const tasks = taskIdRanges(document);
    if (tasks.size > MAX_TASKS_WITH_LENSES) return lenses;
    const uri = document.uri.toString();
    for (const [taskId, idRange] of tasks) {
      const target: TaskTarget = { uri, taskId };
      lenses.push(
        new CodeLens(idRange, { title: 'Run Task', command: 'acmp.runTask', arguments: [target] }),
        new CodeLens(idRange, { title: 'Run From Here', command: 'acmp.runFromHere', arguments: [target] }),
      );
    }
    return lenses;
  }

  dispose(): void {
    this.trustGranted.dispose();
    this.changed.dispose();
  }
}
