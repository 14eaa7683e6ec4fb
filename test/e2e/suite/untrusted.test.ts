// Restricted Mode in a real VS Code: the second phase of `npm run test:e2e` opens a folder no one has trusted, whose
// `.vscode/settings.json` names a stdio provider that would write a marker file if it ever started, and an engine
// that would write another if it were ever asked. The extension declares `untrustedWorkspaces: limited`: the editor
// features work, running a DAG and following an engine do not.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AcmpApi } from '../../../client/src/extension';
import type { RunRefusedData } from '../../../server/src/protocol/runMessages';
import type { RunReport } from '../../../server/src/protocol/report';
import { DIAMOND, diamondWith } from '../../support/diamond';
import { codeOf, diagnosticsWhen } from './diagnostics';

const extension = (): vscode.Extension<AcmpApi> => vscode.extensions.getExtension<AcmpApi>('acmp-dag.acmp-dag')!;

suite('ACMP DAG in an untrusted workspace (Restricted Mode)', () => {
  let api: AcmpApi;
  let folder: vscode.Uri;
  /** Where the folder's provider would write if it were started (set by the runner, outside the folder). */
  let marker: string;

  /** A DAG file in the untrusted folder, shown in an editor. */
  async function openDag(name: string, text: string): Promise<vscode.Uri> {
    const uri = vscode.Uri.joinPath(folder, `${name}.acmp-dag.json`);
    fs.writeFileSync(uri.fsPath, text);
    await vscode.window.showTextDocument(uri);
    return uri;
  }

  suiteSetup(async () => {
    // In a trusted window every test below would pass or fail for other reasons: refuse to run there.
    assert.equal(vscode.workspace.isTrusted, false, 'the window trusts its folder: this suite would prove nothing');
    marker =
      process.env.ACMP_E2E_PROVIDER_MARKER ?? assert.fail('ACMP_E2E_PROVIDER_MARKER is not set (npm run test:e2e)');
    folder = vscode.workspace.workspaceFolders?.[0]?.uri ?? assert.fail('the window has no folder');
    api = await extension().activate();
  });
  teardown(() => vscode.commands.executeCommand('workbench.action.closeAllEditors'));

  test('diagnostics still appear: the language server runs in Restricted Mode', async () => {
    const uri = await openDag('broken', diamondWith('"to": "task_join" }', '"to": "task_ghost" }'));
    const found = await diagnosticsWhen(uri, (current) => current.some((d) => codeOf(d) === 'dangling-edge'));
    assert.match(found.find((d) => codeOf(d) === 'dangling-edge')!.message, /task_ghost/);
  });

  test("the folder's acmp.providers is not applied: VS Code drops a restricted setting's workspace value", () => {
    // The folder does configure the provider: without this, the assertions below would hold vacuously.
    const settings = JSON.parse(fs.readFileSync(path.join(folder.fsPath, '.vscode', 'settings.json'), 'utf8')) as {
      'acmp.providers': { transport: string }[];
    };
    assert.equal(settings['acmp.providers'][0]?.transport, 'stdio');

    const configuration = vscode.workspace.getConfiguration('acmp', folder);
    const providers = configuration.inspect('providers');
    assert.deepEqual(
      {
        workspaceValue: providers?.workspaceValue,
        workspaceFolderValue: providers?.workspaceFolderValue,
        effective: configuration.get('providers'),
      },
      { workspaceValue: undefined, workspaceFolderValue: undefined, effective: [] },
    );
  });

  test('Run DAG on a valid DAG starts no run and no provider process', async () => {
    const uri = await openDag('valid', DIAMOND);
    let changes = 0;
    const counting = api.onDidChangeRuns(() => changes++);
    // A run that starts resolves the command only once it has finished: by then its provider would have started.
    let result: RunReport | RunRefusedData | undefined;
    try {
      result = await vscode.commands.executeCommand<RunReport | RunRefusedData | undefined>('acmp.runDag', uri);
    } finally {
      counting.dispose();
    }
    // Everything a user could notice, compared at once so that a failure shows all of it.
    const runs = api.runs().map((run) => {
      const providers = new Set(run.tasks.flatMap((task) => (task.providerId === undefined ? [] : [task.providerId])));
      return `${run.dagId} ${run.status} on providers [${[...providers].join(', ')}]`;
    });
    assert.deepEqual(
      {
        runs,
        runsViewChanges: changes,
        commandResult: result === undefined ? 'none' : `status ${'status' in result ? result.status : 'refused'}`,
        providerCommandStarted: fs.existsSync(marker),
      },
      { runs: [], runsViewChanges: 0, commandResult: 'none', providerCommandStarted: false },
    );
  });

  // After Run DAG: the window has started, asked its server for runs and run a command by now.
  test("the folder's acmp.engine.url is not applied, and no engine is asked", () => {
    const configuration = vscode.workspace.getConfiguration('acmp', folder);
    const engine = configuration.inspect('engine.url');
    const engineMarker =
      process.env.ACMP_E2E_ENGINE_MARKER ?? assert.fail('ACMP_E2E_ENGINE_MARKER is not set (npm run test:e2e)');
    assert.deepEqual(
      {
        workspaceValue: engine?.workspaceValue,
        effective: configuration.get('engine.url'),
        engineAsked: fs.existsSync(engineMarker) ? fs.readFileSync(engineMarker, 'utf8') : 'no',
      },
      { workspaceValue: undefined, effective: '', engineAsked: 'no' },
    );
  });

  test('no Run DAG lens above dag_id', async () => {
    const uri = await openDag('lens', DIAMOND);
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri);
    const runLenses = lenses.filter((lens) => lens.command?.command === 'acmp.runDag');
    assert.deepEqual(
      runLenses.map((lens) => `${lens.command!.title} @${lens.range.start.line + 1}`),
      [],
    );
  });
});
