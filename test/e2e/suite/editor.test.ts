// The extension in a real VS Code: language, activation, diagnostics on fixtures and after edits, undo and close.
// Everything is asserted through the `vscode` API; waits are on VS Code's events, never on timers alone.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { codeOf, diagnosticsWhen } from './diagnostics';
import { screenshotTaken } from './askRunner';

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

/** Capabilities of the market, none of them offered by the built-in provider. */
const MARKET_CAPABILITIES = ['summarization', 'translation', 'classification'];

/**
 * A DAG of `layers` × `width` tasks, one line each: every task below the first layer reads the task above it in its
 * column, with the edge that says so. `last` is the last task; `root` heads its column.
 */
function layeredDag(layers: number, width: number) {
  const id = (layer: number, column: number): string =>
    `task_l${String(layer).padStart(2, '0')}_n${String(column).padStart(2, '0')}`;
  const tasks: string[] = [];
  const edges: string[] = [];
  for (let layer = 0; layer < layers; layer++) {
    for (let column = 0; column < width; column++) {
      const capability = MARKET_CAPABILITIES[(layer + column) % MARKET_CAPABILITIES.length]!;
      const input =
        layer === 0
          ? `{ "type": "text", "data": "Report ${column}." }`
          : `{ "source": { "from_task": "${id(layer - 1, column)}" } }`;
      tasks.push(`    { "task_id": "${id(layer, column)}", "capability": "${capability}", "input": ${input} }`);
      if (layer > 0) edges.push(`    { "from": "${id(layer - 1, column)}", "to": "${id(layer, column)}" }`);
    }
  }
  const text = `{\n  "dag_id": "dag_layered",\n  "tasks": [\n${tasks.join(',\n')}\n  ],\n  "edges": [\n${edges.join(',\n')}\n  ]\n}\n`;
  const column = width - 1;
  return {
    text,
    root: id(0, column),
    last: id(layers - 1, column),
    /** The edges from `root` down to `last`, in order. */
    chain: Array.from({ length: layers - 1 }, (_, layer) => [id(layer, column), id(layer + 1, column)] as const),
  };
}

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

  test('one wrong edge among 300 tasks is one Problems row, on that edge, naming the cycle; undo clears it', async () => {
    const dag = layeredDag(30, 10);
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'acmp-e2e-layered-'));
    const uri = vscode.Uri.file(path.join(folder, 'layered.acmp-dag.json'));
    fs.writeFileSync(uri.fsPath, dag.text);
    const editor = await vscode.window.showTextDocument(uri);
    // Clean, though no provider is configured and no capability is built in: no no-provider either.
    await diagnosticsWhen(uri, (found) => found.length === 0);

    const backEdge = `,\n    { "from": "${dag.last}", "to": "${dag.root}" }`;
    // Just after the last edge.
    const at = dag.text.lastIndexOf('\n  ]');
    const edit = new vscode.WorkspaceEdit();
    edit.insert(uri, editor.document.positionAt(at), backEdge);
    assert.ok(await vscode.workspace.applyEdit(edit));
    const found = await diagnosticsWhen(uri, (current) => current.length > 0, 5_000);
    assert.deepEqual(
      found.map((d) => `${codeOf(d)}@${d.range.start.line + 1}`),
      [`cycle@${editor.document.positionAt(at).line + 2}`],
    );
    // The path through the closing edge (a long one may be shortened in the middle); related information points at
    // other edges of the cycle, each once.
    const [cycle] = found;
    for (const [from, to] of [dag.chain[0]!, [dag.last, dag.root]]) {
      assert.ok(cycle!.message.includes(`${from} → ${to}`), cycle!.message);
    }
    const onCycle = new Set(dag.chain.map(([from, to]) => `{ "from": "${from}", "to": "${to}" }`));
    const related = (cycle!.relatedInformation ?? []).map(({ location }) => editor.document.getText(location.range));
    assert.ok(related.length > 0);
    assert.equal(new Set(related).size, related.length, related.join('\n'));
    assert.ok(
      related.every((edge) => onCycle.has(edge)),
      related.join('\n'),
    );
    await vscode.commands.executeCommand('workbench.actions.view.problems');
    await screenshotTaken('problems-one-cycle');

    await vscode.commands.executeCommand('undo');
    await diagnosticsWhen(uri, (current) => current.length === 0, 5_000);
    assert.equal(editor.document.getText(), dag.text);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    fs.rmSync(folder, { recursive: true, force: true });
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
