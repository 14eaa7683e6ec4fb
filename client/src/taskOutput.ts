// "Show Output" and "Show Report": a task's output (or error) and a finished run's report, read-only documents of
// their own schemes.
import { type TextDocumentContentProvider, Uri } from 'vscode';
import { runReport } from './runReport';
import type { RunsModel } from './runs';
import type { TaskSnapshot } from './runSnapshot';
import { showsOutputAsJson, taskGoneText, taskOutputText } from './taskOutputText';

/** A document that says why there is nothing to show. */
const messageDocument = (message: string): string => JSON.stringify({ message }, null, 2) + '\n';

export const TASK_OUTPUT_SCHEME = 'acmp-output';

/** The name of a task's document: its id, the extension its language (taskOutputText.ts). */
const JSON_DOCUMENT = '.jsonc';
const MARKDOWN_DOCUMENT = '.md';

/** `acmp-output:/<task_id>.jsonc?<run_id>` for an output, `….md` for an error: the tab shows the task's id. */
export const taskOutputUri = (runId: string, task: TaskSnapshot): Uri =>
  Uri.from({
    scheme: TASK_OUTPUT_SCHEME,
    path: `/${task.taskId}${showsOutputAsJson(task) ? JSON_DOCUMENT : MARKDOWN_DOCUMENT}`,
    query: runId,
  });

export class TaskOutputProvider implements TextDocumentContentProvider {
  constructor(private readonly runs: RunsModel) {}

  provideTextDocumentContent(uri: Uri): string {
    const asJson = uri.path.endsWith(JSON_DOCUMENT);
    const taskId = uri.path.slice(1, -(asJson ? JSON_DOCUMENT : MARKDOWN_DOCUMENT).length);
    const run = this.runs.get(uri.query);
    const task = run?.tasks.find((candidate) => candidate.taskId === taskId);
    return run === undefined || task === undefined ? taskGoneText(taskId, asJson) : taskOutputText(task, run);
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
