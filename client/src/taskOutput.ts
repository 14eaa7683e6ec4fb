// "Show output": a task's output (or error) as a read-only JSON document of its own scheme.
import { type TextDocumentContentProvider, Uri } from 'vscode';
import type { RunsModel } from './runs';
import { outputNotKept, outputNotSent } from './storedRuns';

export const TASK_OUTPUT_SCHEME = 'acmp-output';

/** `acmp-output:/<task_id>.json?<run_id>`: the tab shows the task's id. */
export const taskOutputUri = (runId: string, taskId: string): Uri =>
  Uri.from({ scheme: TASK_OUTPUT_SCHEME, path: `/${taskId}.json`, query: runId });

export class TaskOutputProvider implements TextDocumentContentProvider {
  constructor(private readonly runs: RunsModel) {}

  provideTextDocumentContent(uri: Uri): string {
    const taskId = uri.path.slice(1, -'.json'.length);
    const task = this.runs.get(uri.query)?.tasks.find((candidate) => candidate.taskId === taskId);
    const shown = task?.error ?? task?.output;
    if (shown === undefined && task?.outputNotSentBytes !== undefined) {
      return JSON.stringify({ message: outputNotSent(taskId, task.outputNotSentBytes) }, null, 2) + '\n';
    }
    if (shown === undefined && task?.outputNotKeptBytes !== undefined) {
      return JSON.stringify({ message: outputNotKept(taskId, task.outputNotKeptBytes) }, null, 2) + '\n';
    }
    if (shown === undefined) return JSON.stringify({ message: `No output of ${taskId} is kept.` }, null, 2);
    return JSON.stringify(shown, null, 2) + '\n';
  }
}
