// The graph view in a real VS Code: `acmp.showGraph` opens one webview panel beside the DAG, markup in its ids
// included. The document is untitled: no fixture changes.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { diamondWith } from '../../support/diamond';

/** VS Code reports an extension's webview type with this prefix on the tab's input. */
const isGraphTab = (tab: vscode.Tab): boolean =>
  tab.input instanceof vscode.TabInputWebview && tab.input.viewType.endsWith('acmp.graph');

const graphTabs = (): vscode.Tab[] => vscode.window.tabGroups.all.flatMap((group) => group.tabs.filter(isGraphTab));

/** Resolves with the first tab `accept` takes, now or when the tabs change; fails after `ms` with the tabs seen. */
function tabWhen(accept: (tab: vscode.Tab) => boolean, ms = 20_000): Promise<vscode.Tab> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const found = vscode.window.tabGroups.all.flatMap((group) => group.tabs).find(accept);
      if (found === undefined) return;
      subscription.dispose();
      clearTimeout(timer);
      resolve(found);
    };
    const subscription = vscode.window.tabGroups.onDidChangeTabs(check);
    const timer = setTimeout(() => {
      subscription.dispose();
      const seen = vscode.window.tabGroups.all.flatMap((group) => group.tabs.map((tab) => tab.label));
      reject(new Error(`no such tab after ${ms} ms; tabs: ${seen.join(', ')}`));
    }, ms);
    check();
  });
}

suite('ACMP DAG graph view in VS Code', () => {
  teardown(async () => {
    await vscode.window.tabGroups.close(graphTabs());
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  test('acmp.showGraph opens the graph beside the DAG once, showing markup in ids as text', async () => {
    const text = diamondWith('"dag_diamond"', '"dag_<i>diamond</i>"').replace('"task_note"', '"task_<b>x</b>"');
    const document = await vscode.workspace.openTextDocument({ language: 'acmp-dag', content: text });
    const editor = await vscode.window.showTextDocument(document);

    await vscode.commands.executeCommand('acmp.showGraph', document.uri);
    const tab = await tabWhen((candidate) => isGraphTab(candidate) && candidate.label === 'Graph: dag_<i>diamond</i>');
    assert.notEqual(tab.group.viewColumn, editor.viewColumn, 'the graph opens beside the editor');
    assert.equal(vscode.window.activeTextEditor?.document, document, 'the editor keeps the focus');

    // Asked again, the command shows the same panel rather than a second one.
    await vscode.commands.executeCommand('acmp.showGraph', document.uri);
    assert.equal(graphTabs().length, 1);
  });
});
