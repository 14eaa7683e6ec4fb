// What a user sees of runs beyond the tree's data, in a real VS Code: the Run DAG lens still runs after the file
// changed on disk, a run that fails says so with its actions, a refused DAG says how many errors, the tree keeps only
// the newest run open and offers a finished run's actions, Run DAG without an editor offers the workspace's DAGs, and
// DAG files have their icon. What the `vscode` API cannot show is read from the page (browser.ts).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { MAX_TASKS_WITH_LENSES } from '../../../client/src/codeLens';
import type { AcmpApi } from '../../../client/src/extension';
import type { RunNode } from '../../../client/src/runTree';
import type { RunReport } from '../../../server/src/protocol/report';
import { diamondWith } from '../../support/diamond';
import { hasBrowser, inBrowser } from './browser';
import { examplePipeline, extension, runDag, runOf, runWhen } from './runHelpers';
import { screenshotTaken } from './askRunner';

/** `tasks` echo tasks, one line each: long enough that the `dag_id` line scrolls out of view. */
function longDag(tasks: number, data: string): string {
  const lines = Array.from(
    { length: tasks },
    (_, index) =>
      `    { "task_id": "task_${String(index).padStart(3, '0')}", "capability": "echo", "input": { "type": "text", "data": "${data} ${index}" } }`,
  );
  return `{\n  "dag_id": "dag_long",\n  "tasks": [\n${lines.join(',\n')}\n  ],\n  "edges": []\n}\n`;
}

/** A task whose capability nobody offers fails; the task after it is cancelled. */
const FAILING = `{
  "dag_id": "dag_fails",
  "tasks": [
    { "task_id": "task_split", "capability": "text-split", "input": { "type": "text", "data": "One. Two." } },
    { "task_id": "task_score", "capability": "sentiment-analysis", "input": { "source": { "from_task": "task_split" } } },
    { "task_id": "task_after", "capability": "echo", "input": { "source": { "from_task": "task_score" } } }
  ],
  "edges": [
    { "from": "task_split", "to": "task_score" },
    { "from": "task_score", "to": "task_after" }
  ]
}
`;

/**
 * The notification whose text has `text`, and its buttons, in the Notifications center: VS Code shows no toasts
 * under the smoke-test driver the runner needs (NotificationsToasts.addToast), the center shows the same items.
 */
const notification = (text: string): string =>
  `.notifications-center .notification-list-item:has-text(${JSON.stringify(text)})`;
const notificationButtons = (text: string): string => `${notification(text)} .monaco-button`;

/** The notification that has `text`, seen in the Notifications center, and the labels of its buttons. */
async function notified(text: string): Promise<{ text: string; buttons: string[] }> {
  await vscode.commands.executeCommand('notifications.showList');
  const [seen] = await inBrowser({ action: 'elements', selector: notification(text), wait: true });
  const buttons = await inBrowser({ action: 'elements', selector: notificationButtons(text) });
  return { text: seen!.text, buttons: buttons.map((button) => button.text) };
}
/** A row of the ACMP Runs tree: the runs are its first level. */
const runRow = (position: number): string =>
  `.pane:has(.title:has-text("ACMP Runs")) .monaco-list-row[aria-level="1"][aria-posinset="${position}"]`;

/** Resolves when the active editor shows `uri`. */
function activeEditorShows(uri: vscode.Uri, ms = 10_000): Promise<vscode.TextEditor> {
  return new Promise((resolve, reject) => {
    const check = (editor: vscode.TextEditor | undefined): void => {
      if (editor?.document.uri.toString() !== uri.toString()) return;
      subscription.dispose();
      clearTimeout(timer);
      resolve(editor);
    };
    const subscription = vscode.window.onDidChangeActiveTextEditor(check);
    const timer = setTimeout(() => {
      subscription.dispose();
      reject(new Error(`the active editor shows ${vscode.window.activeTextEditor?.document.uri.toString()}`));
    }, ms);
    check(vscode.window.activeTextEditor);
  });
}

/** Resolves on the next time `event` fires with what `accept` takes. */
const next = <T>(event: vscode.Event<T>, accept: (value: T) => boolean = () => true): Promise<T> =>
  new Promise((resolve) => {
    const subscription = event((value) => {
      if (!accept(value)) return;
      subscription.dispose();
      resolve(value);
    });
  });

/**
 * A second lens provider for DAG files that watches what the editor does with lenses: its lens on the last line has
 * no command, so the editor resolves it when it comes into view, after each time the lenses were provided.
 */
class LensWatcher implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly providedEmitter = new vscode.EventEmitter<void>();
  private readonly resolvedEmitter = new vscode.EventEmitter<void>();
  readonly provided = this.providedEmitter.event;
  readonly resolved = this.resolvedEmitter.event;
  private readonly registration = vscode.languages.registerCodeLensProvider({ language: 'acmp-dag' }, this);

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    this.providedEmitter.fire();
    return [new vscode.CodeLens(document.lineAt(document.lineCount - 1).range)];
  }

  resolveCodeLens(lens: vscode.CodeLens): vscode.CodeLens {
    lens.command = { title: 'watched', command: '' };
    this.resolvedEmitter.fire();
    return lens;
  }

  dispose(): void {
    this.registration.dispose();
    this.providedEmitter.dispose();
    this.resolvedEmitter.dispose();
  }
}

suite('Run feedback in VS Code', () => {
  let api: AcmpApi;
  let folder: string;

  function dagFile(name: string, text: string): vscode.Uri {
    const uri = vscode.Uri.file(path.join(folder, `${name}.acmp-dag.json`));
    fs.writeFileSync(uri.fsPath, text);
    return uri;
  }

  suiteSetup(async function () {
    // Every test here reads or clicks the page: only the code-server runner drives one.
    if (!hasBrowser()) this.skip();
    api = await extension().activate();
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'acmp-feedback-'));
  });
  setup(() => vscode.commands.executeCommand('notifications.clearAll'));
  teardown(async () => {
    await vscode.commands.executeCommand('notifications.hideList');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
  suiteTeardown(() => folder !== undefined && fs.rmSync(folder, { recursive: true, force: true }));

  test('the Run DAG lens runs the file after it changed on disk while the lens was out of view', async () => {
    // More tasks than have lenses of their own (codeLens.ts): the watcher's lens is then the only one it resolves.
    const tasks = MAX_TASKS_WITH_LENSES + 1;
    const uri = dagFile('long', longDag(tasks, 'before'));
    const watcher = new LensWatcher();
    try {
      const editor = await vscode.window.showTextDocument(uri);
      await inBrowser({ action: 'elements', selector: '.codelens-decoration a:has-text("Run DAG")', wait: true });
      // Scrolled to the bottom: the Run DAG lens is out of view, the watcher's in view.
      const bottom = new vscode.Range(editor.document.lineCount - 1, 0, editor.document.lineCount - 1, 0);
      const scrolled = next(watcher.resolved);
      editor.selection = new vscode.Selection(bottom.start, bottom.start);
      editor.revealRange(bottom, vscode.TextEditorRevealType.AtTop);
      await scrolled;

      // The file changes on disk, the dag_id where it was: VS Code reloads it and provides the lenses again; once the
      // new ones in view are resolved, it drops the old ones, the Run DAG lens out of view keeping its old command.
      const reloaded = next(vscode.workspace.onDidChangeTextDocument, (event) => event.document === editor.document);
      const provided = next(watcher.provided);
      fs.writeFileSync(uri.fsPath, longDag(tasks, 'after'));
      await reloaded;
      await provided;
      await next(watcher.resolved);

      // Ctrl+Home and a click on the lens as it appears, before the editor resolves the lenses now in view (250 ms).
      const before = api.runs()[0]?.runId;
      const clicked = inBrowser({
        action: 'click',
        selector: '.codelens-decoration a:has-text("Run DAG")',
        atOnce: true,
      });
      const top = new vscode.Position(0, 0);
      editor.selection = new vscode.Selection(top, top);
      editor.revealRange(new vscode.Range(top, top), vscode.TextEditorRevealType.AtTop);
      await clicked;
      const run = await runWhen(
        api,
        (runs) => runs.find((candidate) => candidate.runId !== before && candidate.uri === uri.toString()),
        15_000,
      ).catch(async (error: unknown) => {
        await vscode.commands.executeCommand('notifications.showList');
        const items = await inBrowser({
          action: 'elements',
          selector: '.notifications-center .notification-list-item',
        });
        throw new Error(`${String(error)}; notifications: ${items.map((seen) => seen.text).join(' | ')}`);
      });
      assert.equal(run.dagId, 'dag_long');
    } finally {
      watcher.dispose();
    }
  });

  test('with two DAG editors side by side, a lens runs the file of the editor it is in', async () => {
    const left = dagFile('left', longDag(2, 'left').replace('dag_long', 'dag_left'));
    const right = dagFile('right', longDag(2, 'right').replace('dag_long', 'dag_right'));
    const lensIn = (file: string): string =>
      `.editor-group-container:has(.tab.active:has-text("${file}")) .codelens-decoration a:has-text("Run DAG")`;
    // Each editor's lens drawn before the next editor opens: an editor that loses the focus cancels its lenses' request.
    await vscode.window.showTextDocument(right, { viewColumn: vscode.ViewColumn.Two });
    await inBrowser({ action: 'elements', selector: lensIn('right.acmp-dag.json'), wait: true });
    await vscode.window.showTextDocument(left, { viewColumn: vscode.ViewColumn.One });
    await inBrowser({ action: 'elements', selector: lensIn('left.acmp-dag.json'), wait: true });
    const before = api.runs()[0]?.runId;
    await inBrowser({ action: 'click', selector: lensIn('right.acmp-dag.json') });
    const run = await runWhen(api, (runs) => (runs[0]?.runId === before ? undefined : runs[0]), 15_000);
    assert.equal(run.uri, right.toString());
  });

  test('a failed run says so with its first failure and offers Show Output, Re-run Failed and Show Run', async () => {
    const uri = dagFile('fails', FAILING);
    await vscode.window.showTextDocument(uri);
    const run = runOf(api, await runDag(uri));
    assert.equal(run.status, 'failed');

    const seen = await notified('dag_fails');
    assert.match(seen.text, /dag_fails \(fails\.acmp-dag\.json\) failed: 1 completed, 1 failed, 1 cancelled\./);
    assert.match(seen.text, /First failure: task_score: /);
    assert.deepEqual(seen.buttons, ['Show Output', 'Re-run Failed', 'Show Run']);

    await screenshotTaken('run-failed');

    // Re-run Failed runs the failed and cancelled tasks again (on the split's output): they fail again, and say so.
    const rerun = runWhen(api, (runs) =>
      runs.find((other) => other.uri === uri.toString() && other.runId !== run.runId && other.status === 'failed'),
    );
    await inBrowser({ action: 'click', selector: `${notificationButtons('dag_fails')}:has-text("Re-run Failed")` });
    const again = await rerun;
    assert.deepEqual(
      again.tasks.map((task) => task.state),
      ['completed', 'failed', 'cancelled'],
    );

    // Show Output opens the failed task's error as Markdown: the error first, then the task's own id.
    await notified('dag_fails');
    const output = vscode.Uri.from({ scheme: 'acmp-output', path: '/task_score.md', query: again.runId });
    const shown = activeEditorShows(output);
    await inBrowser({ action: 'click', selector: `${notificationButtons('dag_fails')}:has-text("Show Output")` });
    const { document } = await shown;
    const error = again.tasks.find((task) => task.taskId === 'task_score')!.error!;
    assert.equal(document.languageId, 'markdown');
    assert.ok(document.getText().startsWith(`# Error ${error.code}`), document.getText());
    assert.ok(document.getText().includes('\n- task: `task_score` (failed)\n'), document.getText());

    // Show Run selects the run in the tree.
    await vscode.commands.executeCommand('acmp.showRun', again.runId);
    await inBrowser({
      action: 'elements',
      selector: `${runRow(1)}[aria-selected="true"]:has-text("dag_fails")`,
      wait: true,
    });
  });

  test('a refused DAG says how many errors it has and offers Show Problems', async () => {
    const cycle = diamondWith(
      '{ "from": "task_right", "to": "task_join" }',
      '{ "from": "task_right", "to": "task_join" },\n    { "from": "task_join", "to": "task_split" }',
    );
    const uri = dagFile('refused', cycle);
    await vscode.window.showTextDocument(uri);
    const refused = await runDag(uri);
    assert.ok(refused !== undefined && 'errors' in refused);
    // By its words: the run's progress notification, on its way out, names the file too.
    const seen = await notified('refused.acmp-dag.json was not run');
    const count = refused.errors.length;
    assert.ok(
      seen.text.includes(`refused.acmp-dag.json was not run: the DAG has ${count} error${count === 1 ? '' : 's'}.`),
      seen.text,
    );
    assert.deepEqual(seen.buttons, ['Show Problems']);
  });

  test("the newest run stays open, older ones close; a finished run's menu offers Re-run, Show Report, Remove", async () => {
    const uri = examplePipeline();
    const older = runOf(api, await runDag(uri));
    const newest = runOf(api, await runDag(uri));
    await vscode.commands.executeCommand('acmpRuns.focus');
    await inBrowser({ action: 'elements', selector: `${runRow(1)}[aria-expanded="true"]`, wait: true });
    await inBrowser({ action: 'elements', selector: `${runRow(2)}[aria-expanded="false"]`, wait: true });
    const open = await inBrowser({
      action: 'elements',
      selector: '.pane:has(.title:has-text("ACMP Runs")) .monaco-list-row[aria-level="1"][aria-expanded="true"]',
    });
    assert.equal(open.length, 1, 'one run open');
    await screenshotTaken('run-tree-collapsed');

    // The context menu of the older run.
    await inBrowser({ action: 'click', selector: runRow(2), button: 'right' });
    const items = await inBrowser({ action: 'elements', selector: '.monaco-menu .action-label', wait: true });
    await inBrowser({ action: 'press', key: 'Escape' });
    const labels = items.map((item) => item.text.trim()).filter((label) => label !== '');
    for (const label of ['Re-run', 'Show Report', 'Remove']) assert.ok(labels.includes(label), labels.join(', '));

    // Show Report: the run's report as JSON, as `acmp-dag run --json` gives it.
    const olderNode: RunNode = { kind: 'run', run: older, newest: false };
    await vscode.commands.executeCommand('acmp.showRunReport', olderNode);
    const report = JSON.parse(vscode.window.activeTextEditor!.document.getText()) as RunReport;
    assert.equal(vscode.window.activeTextEditor!.document.languageId, 'json');
    assert.equal(report.run_id, older.runId);
    assert.equal(report.dag_id, 'dag_f4e2a1');
    assert.equal(report.status, 'completed');
    assert.equal(report.policy, 'fail-fast');
    assert.deepEqual(
      report.tasks.map((task) => [task.task_id, task.state]),
      older.tasks.map((task) => [task.taskId, 'completed']),
    );
    assert.deepEqual(Object.keys(report.result), ['task_agg_03']);
    assert.equal(report.totals.cost_cu, older.costCu);

    // Remove forgets that run only.
    await vscode.commands.executeCommand('acmp.removeRun', olderNode);
    assert.equal(
      api.runs().some((run) => run.runId === older.runId),
      false,
    );
    assert.equal(
      api.runs().some((run) => run.runId === newest.runId),
      true,
    );

    // Re-run runs the whole DAG again.
    const newestNode: RunNode = { kind: 'run', run: newest, newest: true };
    const again = runOf(api, await vscode.commands.executeCommand<RunReport>('acmp.rerunDag', newestNode));
    assert.notEqual(again.runId, newest.runId);
    assert.equal(again.uri, uri.toString());
    assert.equal(again.status, 'completed');
  });

  test("Run DAG with no DAG editor offers the workspace's DAG files", async () => {
    const picked = vscode.commands.executeCommand('acmp.runDag');
    const rows = await inBrowser({ action: 'elements', selector: '.quick-input-widget .monaco-list-row', wait: true });
    const labels = rows.map((row) => row.ariaLabel ?? row.text);
    assert.ok(
      labels.some((label) => label.includes('valid-diamond.acmp-dag.json')),
      labels.join(', '),
    );
    assert.ok(labels.every((label) => label.includes('.acmp-dag.json')));
    await inBrowser({ action: 'press', key: 'Escape' });
    assert.equal(await picked, undefined);
  });

  test('DAG files have their own icon in the Explorer', async () => {
    const uri = vscode.Uri.file(
      path.join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, 'valid-diamond.acmp-dag.json'),
    );
    await vscode.commands.executeCommand('revealInExplorer', uri);
    const [icon] = await inBrowser({
      action: 'elements',
      selector: '.explorer-folders-view .monaco-icon-label.acmp-dag-lang-file-icon',
      wait: true,
    });
    assert.match(icon!.beforeImage, /dag-file-(dark|light)\.svg/);
    await screenshotTaken('explorer-dag-icon');
  });
});
