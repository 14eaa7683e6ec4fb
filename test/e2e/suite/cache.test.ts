// The result store in a real VS Code: Run Task after a full run runs that task alone, on its upstream's stored output;
// Re-run Failed runs a DAG fixed in the editor (not saved) from its failed task, the tasks that had completed coming
// from the store; a task whose upstream the store lacks is refused with the tasks missing, and "Run Them Too" runs
// them. The store is a folder of this suite (`acmp.cache.folder`), empty at its start. Which tasks were sent is read
// from the run: a task from the store has `cached` (no invoke was sent for it), a task that ran has not.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AcmpApi } from '../../../client/src/extension';
import type { RunNode } from '../../../client/src/runTree';
import type { TaskTarget } from '../../../client/src/runTask';
import type { RunSnapshot, TaskSnapshot } from '../../../client/src/runSnapshot';
import type { RunReport } from '../../../server/src/protocol/report';
import type { NeedsUpstreamData, RunRefusedData } from '../../../server/src/protocol/runMessages';
import { screenshotTaken } from './askRunner';
import { hasBrowser, inBrowser } from './browser';
import { extension, runDag, runOf, runWhen, setSetting } from './runHelpers';

type RunAnswer = RunReport | RunRefusedData | NeedsUpstreamData | undefined;

/** split → score → echo, the split's text given; `scoreInput` is the score task's input. */
const chain = (dagId: string, text: string, scoreInput: string): string => `{
  "dag_id": "${dagId}",
  "tasks": [
    { "task_id": "task_split", "capability": "text-split", "input": { "type": "text", "data": "${text}" } },
    { "task_id": "task_score", "capability": "sentiment-analysis",
      "input": ${scoreInput} },
    { "task_id": "task_after", "capability": "echo", "input": { "source": { "from_task": "task_score" } } }
  ],
  "edges": [
    { "from": "task_split", "to": "task_score" },
    { "from": "task_score", "to": "task_after" }
  ]
}
`;
/** The first sentence of the split: a text the sentiment analysis reads. */
const FIRST_CHUNK = '{ "source": { "from_task": "task_split", "field": "data.chunks[0]" } }';
/** The split's whole output, `{chunks, count}`: no text, so the sentiment analysis fails. */
const WHOLE_SPLIT = '{ "source": { "from_task": "task_split" } }';

const taskOf = (run: RunSnapshot, taskId: string): TaskSnapshot => {
  const task = run.tasks.find((candidate) => candidate.taskId === taskId);
  assert.ok(task, `${taskId} is in run ${run.runId}: ${run.tasks.map((other) => other.taskId).join(', ')}`);
  return task;
};
const idsOf = (run: RunSnapshot): string[] => run.tasks.map((task) => task.taskId).sort();
/** The tasks a run sent to a provider: those it did not complete from the store. */
const sent = (run: RunSnapshot): string[] =>
  run.tasks.filter((task) => task.cached === undefined).map((task) => task.taskId);

suite('The result store in VS Code', () => {
  let api: AcmpApi;
  let folder: string;
  let store: string;

  async function openDag(name: string, text: string): Promise<vscode.TextEditor> {
    const file = path.join(folder, `${name}.acmp-dag.json`);
    fs.writeFileSync(file, text);
    return vscode.window.showTextDocument(vscode.Uri.file(file));
  }

  /** Puts the cursor in the object of `taskId` (on its capability, after its `task_id`). */
  function cursorIn(editor: vscode.TextEditor, taskId: string): void {
    const text = editor.document.getText();
    const at = editor.document.positionAt(text.indexOf('"capability"', text.indexOf(`"${taskId}"`)));
    editor.selection = new vscode.Selection(at, at);
  }

  suiteSetup(async () => {
    api = await extension().activate();
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'acmp-cache-dags-'));
    store = fs.mkdtempSync(path.join(os.tmpdir(), 'acmp-cache-store-'));
    await setSetting('cache.folder', store);
  });
  teardown(async () => {
    // An edit a test left unsaved is dropped: closing would ask to save it.
    for (const document of vscode.workspace.textDocuments) {
      if (!document.isDirty) continue;
      await vscode.window.showTextDocument(document);
      await vscode.commands.executeCommand('workbench.action.files.revert');
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
  suiteTeardown(async () => {
    await setSetting('cache.folder', undefined);
    for (const made of [folder, store]) if (made !== undefined) fs.rmSync(made, { recursive: true, force: true });
  });

  test('Run Task after a full run sends that task alone: its upstream output comes from the store', async () => {
    const editor = await openDag('run-task', chain('dag_run_task', 'It works. It is great.', FIRST_CHUNK));
    const { uri } = editor.document;
    const full = runOf(api, await runDag(uri));
    assert.equal(full.status, 'completed');
    assert.deepEqual(sent(full).sort(), ['task_after', 'task_score', 'task_split'], 'the store was empty');
    assert.ok(
      fs.readdirSync(store).some((name) => name.endsWith('.pack')),
      `the results went to acmp.cache.folder: ${fs.readdirSync(store).join(', ')}`,
    );

    // Each task has its lenses, which name it.
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri);
    const scoreLenses = lenses.filter((lens) => (lens.command?.arguments?.[0] as TaskTarget)?.taskId === 'task_score');
    assert.deepEqual(scoreLenses.map((lens) => lens.command?.title).sort(), ['Run From Here', 'Run Task']);

    // Run Task from the context menu's command: the task under the cursor.
    cursorIn(editor, 'task_score');
    const part = runOf(api, await vscode.commands.executeCommand<RunAnswer>('acmp.runTask'));
    assert.equal(part.status, 'completed');
    assert.deepEqual(idsOf(part), ['task_score', 'task_split'], 'the task and its upstream; not its downstream');
    assert.deepEqual(sent(part), ['task_score'], 'one invoke: the task run');
    const split = taskOf(part, 'task_split');
    assert.equal(split.state, 'completed');
    assert.equal(split.cached?.run_id, full.runId, 'the split came from the full run, through the store');
    assert.equal(split.costCu, 0);
    assert.deepEqual(split.output, taskOf(full, 'task_split').output);
    assert.equal(taskOf(part, 'task_score').state, 'completed');

    await vscode.commands.executeCommand('acmpRuns.focus');
    await screenshotTaken('run-task-cached');
  });

  test('Re-run Failed runs the DAG as fixed in the editor, unsaved, from the failed task; what completed is reused', async () => {
    const editor = await openDag('rerun-edited', chain('dag_rerun_edited', 'This is great. It works.', WHOLE_SPLIT));
    const { document } = editor;
    const failed = runOf(api, await runDag(document.uri));
    assert.equal(failed.status, 'failed');
    assert.deepEqual(
      failed.tasks.map((task) => [task.taskId, task.state]),
      [
        ['task_split', 'completed'],
        ['task_score', 'failed'],
        ['task_after', 'cancelled'],
      ],
    );

    // The fix: the score reads the first sentence. The document is left unsaved: the run takes the editor's text.
    const text = document.getText();
    const start = document.positionAt(text.indexOf(WHOLE_SPLIT));
    const fixed = await editor.edit((edit) =>
      edit.replace(new vscode.Range(start, start.translate(0, WHOLE_SPLIT.length)), FIRST_CHUNK),
    );
    assert.ok(fixed && document.isDirty, 'the fix is in the editor, not on disk');

    const node: RunNode = { kind: 'run', run: failed, newest: true };
    const rerun = runOf(api, await vscode.commands.executeCommand<RunAnswer>('acmp.rerunFailed', node));
    assert.notEqual(rerun.runId, failed.runId);
    assert.equal(rerun.status, 'completed');
    assert.deepEqual(
      rerun.tasks.map((task) => [task.taskId, task.state]),
      [
        ['task_split', 'completed'],
        ['task_score', 'completed'],
        ['task_after', 'completed'],
      ],
    );
    assert.deepEqual(sent(rerun), ['task_score', 'task_after'], 'the fixed task and its downstream were sent');
    assert.equal(taskOf(rerun, 'task_split').cached?.run_id, failed.runId, 'the split was not paid for again');
    assert.equal((taskOf(rerun, 'task_score').output?.data as { label?: string }).label, 'positive');
  });

  test('Run Task whose upstream the store lacks names it, and Run Them Too runs it first', async function () {
    const editor = await openDag('needs-upstream', chain('dag_needs_upstream', 'Brand new. Never run.', FIRST_CHUNK));
    const { uri } = editor.document;
    const target: TaskTarget = { uri: uri.toString(), taskId: 'task_score' };
    const before = api.runs().length;
    const refused = await vscode.commands.executeCommand<RunAnswer>('acmp.runTask', target);
    assert.deepEqual(refused, { missing: ['task_split'] });
    assert.equal(api.runs().length, before, 'no run started');

    // The notification's button (the page's: the API cannot press it) runs the task with its upstream.
    if (!hasBrowser()) this.skip();
    const ran = runWhen(api, (runs) => runs.find((run) => run.uri === uri.toString() && run.status !== 'running'));
    await vscode.commands.executeCommand('notifications.showList');
    await inBrowser({
      action: 'click',
      selector: `.notifications-center .notification-list-item:has-text("task_split") .monaco-button:has-text("Run Them Too")`,
    });
    const run = await ran;
    assert.equal(run.status, 'completed');
    assert.deepEqual(idsOf(run), ['task_score', 'task_split']);
    assert.deepEqual(sent(run).sort(), ['task_score', 'task_split']);
    await vscode.commands.executeCommand('notifications.clearAll');
    await vscode.commands.executeCommand('notifications.hideList');
  });
});
