// The extension in a real VS Code: language, activation, diagnostics on fixtures and after edits, undo and close.
// Everything is asserted through the `vscode` API; waits are on VS Code's events, never on timers alone.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { codeOf, diagnosticsWhen } from './diagnostics';
import { screenshotTaken } from './screenshots';

const workspace = (): string => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
const fixture = (name: string): vscode.Uri => vscode.Uri.file(path.join(workspace(), name));

interface Expected {
  readonly code: string;
  readonly severity: 'error' | 'warning' | 'information';
  readonly line: number;
  readonly text: string;
}

const SEVERITY: Record<Expected['severity'], vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  information: vscode.DiagnosticSeverity.Information,
};

/** The extension under test, found by its manifest's name. */
const ourExtension = (): vscode.Extension<unknown> | undefined =>
  vscode.extensions.all.find((e) => (e.packageJSON as { name?: string }).name === 'acmp-dag');

suite('ACMP DAG in VS Code', () => {
  suiteSetup(() => {
    assert.ok(ourExtension(), 'the acmp-dag extension is installed');
  });

  // Before any test opens documents through the API: VS Code keeps those alive for minutes after their editor
  // closes, while a document opened like a user opens it closes with its editor.
  test('closing a document clears its diagnostics', async () => {
    const uri = fixture('references.acmp-dag.json');
    const closed = new Promise<void>((resolve) => {
      const subscription = vscode.workspace.onDidCloseTextDocument((document) => {
        if (document.uri.toString() !== uri.toString()) return;
        subscription.dispose();
        resolve();
      });
    });
    await vscode.commands.executeCommand('vscode.open', uri);
    await diagnosticsWhen(uri, (found) => found.length > 0);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    await closed;
    await diagnosticsWhen(uri, (found) => found.length === 0);
  });

  test('*.acmp-dag.json opens as acmp-dag, a plain .json file does not (even with DAG content)', async () => {
    const dag = await vscode.workspace.openTextDocument(fixture('valid-diamond.acmp-dag.json'));
    assert.equal(dag.languageId, 'acmp-dag');
    const plain = await vscode.workspace.openTextDocument(fixture('not-a-dag.json'));
    assert.equal(plain.languageId, 'json');
  });

  test('opening a DAG activates the extension and its server publishes diagnostics', async () => {
    const uri = fixture('every-error.acmp-dag.json');
    await vscode.window.showTextDocument(uri);
    await diagnosticsWhen(uri, (found) => found.length > 0);
    assert.equal(ourExtension()?.isActive, true);
  });

  test('every fixture shows exactly its expected codes and ranges; clean ones show none', async () => {
    // Fixtures with an options file need settings this window does not have; the LSP tests cover them.
    const names = fs
      .readdirSync(workspace())
      .filter(
        (name) =>
          name.endsWith('.acmp-dag.json') &&
          !fs.existsSync(path.join(workspace(), name.replace('.acmp-dag.json', '.options.json'))),
      );
    assert.ok(names.length >= 10, `fixtures found: ${names.length}`);
    for (const name of names) {
      const expected = JSON.parse(
        fs.readFileSync(path.join(workspace(), name.replace('.acmp-dag.json', '.expected.json')), 'utf8'),
      ) as Expected[];
      const uri = fixture(name);
      const document = await vscode.workspace.openTextDocument(uri);
      const key = (d: Expected) => `${d.code} ${d.severity} ${d.line} ${d.text}`;
      const found = await diagnosticsWhen(uri, (current) => current.length === expected.length);
      const actual = found.map((d) =>
        key({
          code: codeOf(d),
          severity: (Object.keys(SEVERITY) as Expected['severity'][]).find((s) => SEVERITY[s] === d.severity)!,
          line: d.range.start.line + 1,
          text: document.getText(d.range),
        }),
      );
      assert.deepEqual(actual.sort(), expected.map(key).sort(), name);
    }
  });

  test('an edit that closes a cycle is reported within seconds, and undo clears it', async () => {
    const uri = fixture('valid-diamond.acmp-dag.json');
    const editor = await vscode.window.showTextDocument(uri);
    await diagnosticsWhen(uri, (found) => found.length === 0);
    const text = editor.document.getText();
    // An edge from the diamond's sink back to its source, just after the last edge.
    const lastEdgeEnd = text.lastIndexOf('}', text.lastIndexOf(']'));
    const edit = new vscode.WorkspaceEdit();
    edit.insert(uri, editor.document.positionAt(lastEdgeEnd + 1), ', { "from": "task_join", "to": "task_split" }');
    assert.ok(await vscode.workspace.applyEdit(edit));
    const cycles = await diagnosticsWhen(uri, (found) => found.some((d) => codeOf(d) === 'cycle'), 5_000);
    assert.ok(cycles.every((d) => codeOf(d) === 'cycle'));
    assert.match(cycles[0]!.message, /task_split/);
    await vscode.commands.executeCommand('undo');
    await diagnosticsWhen(uri, (found) => found.length === 0, 5_000);
    assert.equal(editor.document.getText(), text);
  });

  test('the Problems panel shows the diagnostics of the file with every error', async () => {
    const uri = fixture('every-error.acmp-dag.json');
    await vscode.window.showTextDocument(uri);
    await diagnosticsWhen(uri, (found) => found.length > 10);
    await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
    await vscode.commands.executeCommand('workbench.actions.view.problems');
    await screenshotTaken('problems-panel');
  });
});
