// Editing intelligence in a real VS Code, through the commands its UI runs: completion of task ids at an edge end,
// a rename applied across a file, the missing-edge quick fix applied. Documents are untitled: no fixture changes.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { DIAMOND, diamondWith } from '../../support/diamond';
import { codeOf, diagnosticsWhen } from './diagnostics';
import { openUntitledDag } from './untitledDag';

/** An untitled acmp-dag document with `text`, shown in an editor (the client sends it to the server first). */
async function openDag(text: string): Promise<vscode.TextEditor> {
  return vscode.window.showTextDocument(await openUntitledDag(text));
}

const labelOf = (item: vscode.CompletionItem): string =>
  typeof item.label === 'string' ? item.label : item.label.label;

suite('ACMP DAG editing in VS Code', () => {
  teardown(() => vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor'));

  test('completion offers the task ids at an edge end, ranked, with their capabilities', async () => {
    const text = diamondWith(
      '{ "from": "task_right", "to": "task_join" }',
      '{ "from": "task_right", "to": "task_join" },\n    { "from": "task_left", "to": "" }',
    );
    const editor = await openDag(text);
    await diagnosticsWhen(editor.document.uri, (found) => found.some((d) => codeOf(d) === 'dangling-edge'));
    const position = editor.document.positionAt(text.indexOf('"to": ""') + '"to": "'.length);
    const list = await vscode.commands.executeCommand<vscode.CompletionList>(
      'vscode.executeCompletionItemProvider',
      editor.document.uri,
      position,
    );
    const ours = list.items
      .filter((item) => item.kind === vscode.CompletionItemKind.Reference)
      .sort((a, b) => (a.sortText! < b.sortText! ? -1 : 1));
    // left → right and left → note are new; left → join exists; left → split would close a cycle, and so would
    // left → left.
    assert.deepEqual(ours.map(labelOf), ['task_right', 'task_note', 'task_join', 'task_split', 'task_left']);
    assert.match(ours[3]!.detail!, /would close a cycle/);
    assert.equal(typeof ours[0]!.label === 'string' ? undefined : ours[0]!.label.description, 'sentiment-analysis');

    // Accepting the first one writes it, quoted, over the empty string.
    const first = ours[0]!;
    const range = first.range instanceof vscode.Range ? first.range : first.range!.replacing;
    const newText = typeof first.insertText === 'string' ? first.insertText : first.insertText!.value;
    assert.ok(await editor.edit((builder) => builder.replace(range, newText)));
    assert.match(editor.document.getText(), /\{ "from": "task_left", "to": "task_right" \}/);
    await diagnosticsWhen(editor.document.uri, (found) => found.length === 0);
  });

  test('rename of a task id from a reference changes it everywhere in the file', async () => {
    const editor = await openDag(DIAMOND);
    const position = editor.document.positionAt(
      DIAMOND.indexOf('"from_task": "task_split"') + '"from_task": "ta'.length,
    );
    const edit = await vscode.commands.executeCommand<vscode.WorkspaceEdit>(
      'vscode.executeDocumentRenameProvider',
      editor.document.uri,
      position,
      'task_chunker',
    );
    assert.ok(await vscode.workspace.applyEdit(edit));
    assert.equal(editor.document.getText(), DIAMOND.replaceAll('"task_split"', '"task_chunker"'));
  });

  test('the missing-edge quick fix adds the edge and the error goes away', async () => {
    const text = diamondWith('    { "from": "task_right", "to": "task_join" }\n', '').replace(
      '{ "from": "task_left", "to": "task_join" },',
      '{ "from": "task_left", "to": "task_join" }',
    );
    const editor = await openDag(text);
    const uri = editor.document.uri;
    const [missing] = await diagnosticsWhen(uri, (found) => found.some((d) => codeOf(d) === 'missing-edge'));
    assert.equal(editor.document.getText(missing!.range), '"task_right"');
    const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
      'vscode.executeCodeActionProvider',
      uri,
      missing!.range,
      vscode.CodeActionKind.QuickFix.value,
    );
    const fix = actions.find((action) => action.title === 'Add edge "task_right" → "task_join"');
    assert.ok(fix?.edit, `offered: ${actions.map((action) => action.title).join(', ')}`);
    assert.equal(fix.isPreferred, true);
    assert.ok(await vscode.workspace.applyEdit(fix.edit));
    assert.match(
      editor.document.getText(),
      /\{ "from": "task_left", "to": "task_join" \},\n {4}\{ "from": "task_right", "to": "task_join" \}\n {2}\]/,
    );
    await diagnosticsWhen(uri, (found) => found.length === 0);
  });
});
