// "Show Output" and "Show Report": a task's output (or error) and a finished run's report, read-only JSON documents of
// their own schemes.
import { type TextDocumentContentProvider, Uri } from 'vscode';
import { runReport } from './runReport';
import type { RunsModel } from './runs';
import { outputNotKept, outputNotSent } from './storedRuns';

/** A document that says why there is nothing to show. */
const messageDocument = (message: string): string => JSON.stringify({ message }, null, 2) + '\n';

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
      return messageDocument(outputNotSent(taskId, task.outputNotSentBytes));
    }
    if (shown === undefined && task?.outputNotKeptBytes !== undefined) {
      return messageDocument(outputNotKept(taskId, task.outputNotKeptBytes));
    }
    if (shown === undefined) return messageDocument(`No output of ${taskId} is kept.`);
    return JSON.stringify(shown, null, 2) + '\n';
  }
}

export const RUN_REPORT_SCHEME = 'acmp-report';

/** `acmp-report:/<dag_id>.report.json?<run_id>`: the tab shows the DAG's id. */
export const runReportUri = (runId: string, dagId: string): Uri =>
  Uri.from({ scheme: RUN_REPORT_SCHEME, path: `/${dagId}.report.json`, query: runId });

export class RunReportProvider implements TextDocumentContentProvider {
  constructor(private readonly runs: RunsModel) {}

  provideTextDocumentContent(uri: Uri): string {
    const run = this.runs.get(uri.query);
    if (run === undefined) return messageDocument('This run is no longer kept.');
    if (run.status === 'running') return messageDocument(`${run.dagId} is still running.`);
    return JSON.stringify(runReport({ ...run, status: run.status }), null, 2) + '\n';
  }
}
