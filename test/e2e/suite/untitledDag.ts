// A new untitled DAG document with a given text, for suites that must not change fixtures.
import * as vscode from 'vscode';

/**
 * An untitled acmp-dag document holding `content`. VS Code gives a new untitled document the name of one just
 * reverted and closed, and at times that one's text rather than the text asked for (seen in e2e runs: a graph test
 * got the previous test's DAG); the text is then set again.
 */
export async function openUntitledDag(content: string): Promise<vscode.TextDocument> {
  const document = await vscode.workspace.openTextDocument({ language: 'acmp-dag', content });
  if (document.getText() === content) return document;
  console.log(`${document.uri.toString()} opened with another document's text; set again`);
  const edit = new vscode.WorkspaceEdit();
  edit.replace(
    document.uri,
    new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length)),
    content,
  );
  if (!(await vscode.workspace.applyEdit(edit)) || document.getText() !== content) {
    throw new Error(`could not give ${document.uri.toString()} its text`);
  }
  return document;
}
