// The market in a real VS Code: with providers configured, a task no provider offers and a max_price_cu below every
// price are diagnosed where they are, and their quick fixes change the text; ACMP: Show Plan opens the plan; a run
// its budget cannot cover stops, and says so in the tree and at its end.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AcmpApi } from '../../../client/src/extension';
import { runDescription, runEndMessage } from '../../../client/src/runText';
import type { ProviderConfig } from '../../../server/src/protocol/settings';
import { codeOf, diagnosticsWhen } from './diagnostics';
import { examplePipeline, extension, root, runDag, runOf, setProviders, setSetting } from './runHelpers';

/** The market fixture: its DAG, and the providers its options configure (never reached: a plan reads their terms). */
const fixture = (name: string): string => path.join(root(), 'test', 'fixtures', 'diagnostics', `market.${name}`);

async function quickFix(uri: vscode.Uri, range: vscode.Range, title: string): Promise<void> {
  const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
    'vscode.executeCodeActionProvider',
    uri,
    range,
    vscode.CodeActionKind.QuickFix.value,
  );
  const fix = actions.find((action) => action.title === title);
  assert.ok(fix?.edit, `offered: ${actions.map((action) => action.title).join(', ')}`);
  assert.ok(await vscode.workspace.applyEdit(fix.edit));
}

suite('The market in VS Code', () => {
  let api: AcmpApi;
  let folder: string;
  let uri: vscode.Uri;

  suiteSetup(async () => {
    api = await extension().activate();
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'acmp-market-'));
    const { providers } = JSON.parse(fs.readFileSync(fixture('options.json'), 'utf8')) as {
      providers: ProviderConfig[];
    };
    await setProviders(providers);
    uri = vscode.Uri.file(path.join(folder, 'market.acmp-dag.json'));
    fs.copyFileSync(fixture('acmp-dag.json'), uri.fsPath);
  });
  suiteTeardown(async () => {
    await setProviders(undefined);
    await setSetting('run.maxCostCu', undefined);
    await setSetting('cache.enabled', undefined);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    fs.rmSync(folder, { recursive: true, force: true });
  });

  test('no-provider and over-budget appear where they are, and their quick fixes change the text', async () => {
    const editor = await vscode.window.showTextDocument(uri);
    const found = await diagnosticsWhen(uri, (all) => all.some((d) => codeOf(d) === 'no-provider'));
    const shown = found.map((d) => [codeOf(d), editor.document.getText(d.range)]);
    assert.deepEqual(shown, [
      ['over-budget', '0.01'],
      ['over-budget', '0.001'],
      ['no-provider', '"ocr"'],
    ]);
    const french = found[1]!;
    await quickFix(uri, french.range, 'Raise max_price_cu to 0.004');
    assert.equal(editor.document.getText(french.range.with({ end: french.range.start.translate(0, 5) })), '0.004');
    const ocr = found[2]!;
    await quickFix(uri, ocr.range, 'Use capability "summarization"');
    assert.match(editor.document.lineAt(ocr.range.start.line).text, /"capability": "summarization"/);
    const after = await diagnosticsWhen(uri, (all) => !all.some((d) => codeOf(d) === 'no-provider'));
    // Left: task_summary's, whose 2,000 tokens cost more; a summary without a token estimate has no known price.
    assert.deepEqual(
      after.map((d) => [codeOf(d), editor.document.getText(d.range)]),
      [['over-budget', '0.01']],
    );
  });

  test('ACMP: Show Plan opens the plan of the DAG as a document', async () => {
    await vscode.window.showTextDocument(uri);
    await vscode.commands.executeCommand('acmp.showPlan', uri);
    const plan = vscode.workspace.textDocuments.find((document) => document.uri.scheme === 'acmp-plan');
    assert.ok(plan, 'a plan document is open');
    assert.match(plan.getText(), /^## Plan for dag_market: 5 tasks, routing cheapest/);
    assert.match(plan.getText(), /\| task_enough \| translation \| wordsmith \| 0\.004 CU \(advertised\) \|/);
  });

  test('a run its budget cannot cover stops, and says so in the tree and at its end', async () => {
    await setProviders(undefined);
    await setSetting('run.maxCostCu', 0.000001);
    // Stored results of the example, from the suites before, would cost nothing and never meet the budget.
    await setSetting('cache.enabled', false);
    const run = runOf(api, await runDag(examplePipeline()));
    assert.equal(run.budget?.stopped, true, JSON.stringify(run.budget));
    assert.match(runDescription(run), /^stopped by its budget · .+ · [\d.e-]+ \/ 0\.000001 CU$/);
    assert.match(runEndMessage(run), /stopped by its budget: spent .* of 0\.000001 CU; \d+ tasks? it could not cover/);
  });
});
