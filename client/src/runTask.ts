// "Run Task" and "Run From Here": one task of a DAG document (or it and everything downstream of it) runs on the DAG
// as it is in the editor, the outputs of the tasks it reads taken from the result store; where the store lacks one,
// the runner says which and offers to run them too. Invoked from a task's CodeLens (which names the task), the
// editor's context menu or the Command Palette (the task under the cursor, else one picked).
import { type Disposable, Uri, commands, window } from 'vscode';
import type { Runner } from './runner';

/** What a task's CodeLens passes: the DAG document and the task. */
export interface TaskTarget {
  readonly uri: string;
  readonly taskId: string;
}

const isTaskTarget = (value: unknown): value is TaskTarget =>
  typeof (value as Partial<TaskTarget> | undefined)?.uri === 'string' &&
  typeof (value as Partial<TaskTarget> | undefined)?.taskId === 'string';

/** The task a command means: the lens's, else the one whose object holds the active editor's cursor, else one picked. */
async function taskTarget(runner: Runner, target: unknown, title: string): Promise<TaskTarget | undefined> {
  if (isTaskTarget(target)) return target;
  const editor = window.activeTextEditor;
  if (editor?.document.languageId !== 'acmp-dag') {
    void window.showInformationMessage(`Open an ACMP DAG file (*.acmp-dag.json) to ${title.toLowerCase()}.`);
    return undefined;
  }
  const uri = editor.document.uri;
  const tasks = await runner.tasksOf(uri);
  const cursor = editor.selection.active;
  const atCursor = tasks.find((task) => task.range.contains(cursor));
  if (atCursor !== undefined) return { uri: uri.toString(), taskId: atCursor.id };
  if (tasks.length === 0) {
    void window.showInformationMessage('This DAG declares no task to run.');
    return undefined;
  }
  const picked = await window.showQuickPick(
    tasks.map((task) => task.id),
    { title, placeHolder: 'The task to run (put the cursor in a task to run it directly)' },
  );
  return picked === undefined ? undefined : { uri: uri.toString(), taskId: picked };
}

export function registerRunTask(runner: Runner): Disposable[] {
  const runTask = async (target?: unknown) => {
    const task = await taskTarget(runner, target, 'Run Task');
    return task === undefined ? undefined : runner.run(Uri.parse(task.uri), { tasks: [task.taskId] });
  };
  const runFromHere = async (target?: unknown) => {
    const task = await taskTarget(runner, target, 'Run From Here');
    return task === undefined ? undefined : runner.run(Uri.parse(task.uri), { from: [task.taskId] });
  };
  return [commands.registerCommand('acmp.runTask', runTask), commands.registerCommand('acmp.runFromHere', runFromHere)];
}
