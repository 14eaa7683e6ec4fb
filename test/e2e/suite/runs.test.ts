// Running DAGs in a real VS Code: the run command on the built-in provider and on provider processes, a task
// cancelled with its downstream, a failed branch re-run on the outputs that completed, a DAG with errors refused,
// a 1,000-task run that the tree keeps up with, showing it from its start with the counts of the status bar.
// Asserted through the extension's API (the runs its tree shows) and the editors a user sees; waits are on events.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as vscode from 'vscode';
import type { AcmpApi } from '../../../client/src/extension';
import type { RunNode, TaskNode } from '../../../client/src/runTree';
import type { RunSnapshot, TaskSnapshot } from '../../../client/src/runSnapshot';
import type { RunReport } from '../../../server/src/protocol/report';
import type { ProviderConfig } from '../../../server/src/protocol/settings';
import { diamondWith } from '../../support/diamond';
import { echoLayersDag } from '../../support/echoDag';
import type { CountersSeen } from '../runRowProbe';
import { askRunner, runnerAnswers, screenshotTaken } from './askRunner';
import { measuredRun } from './measuredRun';
import { examplePipeline, extension, root, runDag, runOf, runWhen, setProviders, setSetting } from './runHelpers';

/** Node under Electron too (@vscode/test-electron), where the extension host's executable is Electron. */
const NODE_ENV = { ELECTRON_RUN_AS_NODE: '1' };

/** The built CLI's built-in provider as an MCP server over stdio. */
const servedProvider = (): ProviderConfig => ({
  id: 'served',
  transport: 'stdio',
  command: process.execPath,
  args: [path.join(root(), 'dist', 'cli.js'), 'serve', '--stdio'],
  env: NODE_ENV,
});

/**
 * A provider process that takes `capabilities` and never answers an invoke; priced below the built-in provider, so
 * that the run's routing (cheapest, by default) sends it those tasks.
 */
const silentProvider = (capabilities: string[]): ProviderConfig => ({
  id: 'silent',
  transport: 'stdio',
  command: process.execPath,
  args: [
    '--import',
    pathToFileURL(require.resolve('tsx', { paths: [root()] })).href,
    path.join(root(), 'test', 'fixtures', 'providers', 'never-answers.ts'),
  ],
  env: NODE_ENV,
  capabilities,
  'acmp:price_cu': 0.0001,
});

/**
 * A provider process whose `gate` tasks answer once the file their input names exists, and whose `paced` tasks after
 * the milliseconds their input says (gated.ts).
 */
const gatedProvider = (): ProviderConfig => ({
  id: 'gated',
  transport: 'stdio',
  command: process.execPath,
  args: [
    '--import',
    pathToFileURL(require.resolve('tsx', { paths: [root()] })).href,
    path.join(root(), 'test', 'fixtures', 'providers', 'gated.ts'),
  ],
  env: NODE_ENV,
  capabilities: ['gate', 'paced'],
});

const [PACED_LAYERS, PACED_MS] = [10, 100];

/**
 * 1,000 tasks: a first stage of PACED_LAYERS layers of paced tasks, each layer answering PACED_MS after the one
 * before (the run reports progress steadily for a second: the tree must show it meanwhile, not once it pauses), then
 * a stage of echo tasks after each gate, the gates held by the gated provider until their files exist. The run stops
 * at `held[i]` finished tasks until gate i opens.
 */
function gatedDag(dagId: string, gateFiles: readonly string[]): { text: string; held: number[] } {
  const stage = 250;
  const pacedLayer = stage / PACED_LAYERS;
  const tasks: object[] = gateFiles.map((file, gate) => ({
    task_id: `task_gate_${gate}`,
    capability: 'gate',
    input: { type: 'text', data: file },
  }));
  const edges: { from: string; to: string }[] = [];
  for (let index = 0; tasks.length < 1_000; index++) {
    const gate = Math.floor(index / stage) - 1;
    if (gate < 0) {
      const above = index - pacedLayer;
      tasks.push({
        task_id: `task_paced_${index}`,
        capability: 'paced',
        input: above < 0 ? { type: 'text', data: String(PACED_MS) } : { source: { from_task: `task_paced_${above}` } },
        // A layer's results differ from the one's above: none is served from another's (resultKey.ts).
        metadata: { layer: Math.floor(index / pacedLayer) },
      });
      if (above >= 0) edges.push({ from: `task_paced_${above}`, to: `task_paced_${index}` });
      continue;
    }
    tasks.push({
      task_id: `task_echo_${index}`,
      capability: 'echo',
      input: { source: { from_task: `task_gate_${gate}` } },
    });
    edges.push({ from: `task_gate_${gate}`, to: `task_echo_${index}` });
  }
  // Before gate i opens: the stages before it and the gates opened before it.
  const held = gateFiles.map((_, gate) => (gate + 1) * stage + gate);
  return { text: JSON.stringify({ dag_id: dagId, tasks, edges }, null, 2), held };
}

/** split → wait → aggregate: `task_wait` scores the first chunk, whoever its provider is. */
const CHAIN = `{
  "dag_id": "dag_chain",
  "tasks": [
    { "task_id": "task_split", "capability": "text-split", "input": { "type": "text", "data": "It works. It is great." } },
    { "task_id": "task_wait", "capability": "sentiment-analysis",
      "input": { "source": { "from_task": "task_split", "field": "data.chunks[0]" } } },
    { "task_id": "task_after", "capability": "result-aggregation",
      "input": { "source": { "from_tasks": ["task_wait"] } } }
  ],
  "edges": [
    { "from": "task_split", "to": "task_wait" },
    { "from": "task_wait", "to": "task_after" }
  ]
}
`;

const statesOf = (run: RunSnapshot): Record<string, string> =>
  Object.fromEntries(run.tasks.map((task) => [task.taskId, task.state]));
const taskOf = (run: RunSnapshot, taskId: string): TaskSnapshot => run.tasks.find((task) => task.taskId === taskId)!;
suite('Running DAGs in VS Code', () => {
  let api: AcmpApi;
  let folder: string;

  /** A DAG file in a scratch folder, shown in an editor (files, unlike untitled documents, close without a prompt). */
  async function openDag(name: string, text: string): Promise<vscode.Uri> {
    const file = path.join(folder, `${name}.acmp-dag.json`);
    fs.writeFileSync(file, text);
    const uri = vscode.Uri.file(file);
    await vscode.window.showTextDocument(uri);
    return uri;
  }

  suiteSetup(async () => {
    api = await extension().activate();
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'acmp-runs-'));
  });
  teardown(async () => {
    await setProviders(undefined);
    await setSetting('cache.enabled', undefined);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
  suiteTeardown(() => fs.rmSync(folder, { recursive: true, force: true }));

  test('the example pipeline runs on the built-in provider: every task completes, in the tree and in the editor', async () => {
    const uri = examplePipeline();
    await vscode.window.showTextDocument(uri);
    const run = runOf(api, await runDag(uri));
    assert.equal(run.status, 'completed');
    assert.equal(run.dagId, 'dag_f4e2a1');
    assert.deepEqual(statesOf(run), {
      task_split_01: 'completed',
      task_sent_02a: 'completed',
      task_sent_02b: 'completed',
      task_agg_03: 'completed',
    });
    assert.deepEqual(
      run.tasks.map((task) => task.capability),
      ['text-split', 'sentiment-analysis', 'sentiment-analysis', 'result-aggregation'],
    );

    // Selecting a task in the tree reveals its declaration.
    const sentiment = taskOf(run, 'task_sent_02b');
    const node: TaskNode = { kind: 'task', runId: run.runId, task: sentiment };
    await vscode.commands.executeCommand('acmp.revealTask', node);
    const editor = vscode.window.activeTextEditor!;
    assert.equal(editor.document.uri.toString(), uri.toString());
    assert.equal(editor.document.getText(editor.selection), '"task_sent_02b"');

    // Show output opens the task's output as a read-only JSON document, headed by a comment with the task's id.
    await vscode.commands.executeCommand('acmp.showTaskOutput', node);
    const output = vscode.window.activeTextEditor!.document;
    assert.equal(output.languageId, 'jsonc');
    const [heading, ...json] = output.getText().split('\n');
    assert.match(heading!, /^\/\/ task_sent_02b · completed/);
    assert.deepEqual(JSON.parse(json.join('\n')), sentiment.output);
    assert.equal((sentiment.output?.data as { label?: string }).label, 'positive');
  });

  test('a stdio provider process runs every task', async () => {
    await setProviders([servedProvider()]);
    // The example's results, stored by the test before, would complete every task without the provider.
    await setSetting('cache.enabled', false);
    const run = runOf(api, await runDag(examplePipeline()));
    assert.equal(run.status, 'completed');
    for (const task of run.tasks) {
      assert.equal(task.state, 'completed', task.taskId);
      assert.equal(task.providerId, 'served', task.taskId);
    }
  });

  test('cancelling a slow task cancels its downstream, keeps its upstream; re-running runs only those', async () => {
    await setProviders([silentProvider(['sentiment-analysis']), { id: 'local', transport: 'builtin' }]);
    const uri = await openDag('chain', CHAIN);
    const running = runDag(uri);
    const started = await runWhen(api, (runs) =>
      runs.find((run) => run.uri === uri.toString() && taskOf(run, 'task_wait').state === 'running'),
    );
    assert.equal(taskOf(started, 'task_split').state, 'completed');
    const slow: TaskNode = { kind: 'task', runId: started.runId, task: taskOf(started, 'task_wait') };
    await vscode.commands.executeCommand('acmp.cancelTask', slow);
    const cancelled = runOf(api, await running);
    assert.deepEqual(statesOf(cancelled), { task_split: 'completed', task_wait: 'cancelled', task_after: 'cancelled' });

    // With a provider that answers, Re-run failed runs the cancelled tasks on the split's earlier output (stored).
    await setProviders([{ id: 'local', transport: 'builtin' }]);
    const node: RunNode = { kind: 'run', run: cancelled, newest: true };
    const rerun = runOf(api, await vscode.commands.executeCommand<RunReport | undefined>('acmp.rerunFailed', node));
    assert.notEqual(rerun.runId, cancelled.runId);
    assert.deepEqual(statesOf(rerun), { task_split: 'completed', task_wait: 'completed', task_after: 'completed' });
    assert.deepEqual(taskOf(rerun, 'task_split').output, taskOf(cancelled, 'task_split').output);
    assert.equal(taskOf(rerun, 'task_split').cached?.run_id, cancelled.runId);
    assert.equal(taskOf(rerun, 'task_wait').providerId, 'local');
  });

  test('a DAG with errors is refused with its errors, and no run starts', async () => {
    const cycle = diamondWith(
      '{ "from": "task_right", "to": "task_join" }',
      '{ "from": "task_right", "to": "task_join" },\n    { "from": "task_join", "to": "task_split" }',
    );
    const uri = await openDag('cycle', cycle);
    const before = api.runs().length;
    const refused = await runDag(uri);
    assert.ok(refused !== undefined && 'errors' in refused, 'the run was refused');
    assert.ok(refused.errors.some((error) => error.code === 'cycle'));
    assert.equal(api.runs().length, before);
  });

  // How soon after the run's end is a figure of `npm run bench:ui` (target: a second); a test does not time it.
  test('a 1,000-task run shows its final states in the tree', async function () {
    // Only the code-server runner sees the window's DOM (askRunner.ts).
    if (runnerAnswers === undefined) this.skip();
    const uri = await openDag('echo-1000', echoLayersDag(1_000, 'dag_echo_1000'));
    const { report, finalAfterMs } = await measuredRun(uri, { graph: false, displays: ['tree'] });
    assert.equal(report.status, 'completed');
    assert.equal(runOf(api, report).finishedTasks, 1_000);
    assert.ok(finalAfterMs.tree !== undefined, 'the tree showed the final states');
  });

  test('a 1,000-task run shows in the tree as it starts, its row counting with the status bar', async function () {
    // Only the code-server runner sees the window's DOM (askRunner.ts).
    if (runnerAnswers === undefined) this.skip();
    await setProviders([gatedProvider(), { id: 'local', transport: 'builtin' }]);
    const gateFiles = [0, 1, 2].map((gate) => path.join(folder, 'gates', `gate-${gate}`));
    fs.mkdirSync(path.join(folder, 'gates'));
    const dagId = 'dag_gated_1000';
    const { text, held } = gatedDag(dagId, gateFiles);
    const uri = await openDag('gated-1000', text);
    await vscode.commands.executeCommand('acmp.clearRuns');
    await vscode.commands.executeCommand('acmpRuns.focus');
    // Opening a 1,000-task DAG keeps the window busy for a while (tokenizing, folding): that is not the run's.
    await askRunner('window-settled');
    await askRunner('run-row-watch', { dagId });
    const isOurs = (run: RunSnapshot) => run.uri === uri.toString() && run.status === 'running';
    // When the extension heard of the run's start: the tree is timed from it.
    const heardStart = runWhen(api, (runs) => runs.find(isOurs)).then(() => Date.now());
    const running = runDag(uri);
    const startedAt = await heardStart;
    const rowAfterMs = (await askRunner<number>('run-row-seen')) - startedAt;
    assert.ok(rowAfterMs <= 500, `the tree showed the run ${rowAfterMs} ms after its start`);

    // At each gate the run holds still: the tree's row, once it shows the count, and the status bar agree.
    const samples: CountersSeen[] = [];
    for (const [gate, finished] of held.entries()) {
      await runWhen(api, (runs) => runs.find((run) => isOurs(run) && run.finishedTasks === finished));
      const counter = `${finished}/1000`;
      const seen = await askRunner<CountersSeen>('run-row-counters', { dagId, counter });
      samples.push(seen);
      fs.writeFileSync(gateFiles[gate]!, 'open');
    }
    assert.deepEqual(
      samples,
      held.map((finished) => ({ treeRow: `${finished}/1000`, statusBar: `${finished}/1000` })),
    );
    const report = await running;
    assert.ok(report !== undefined && 'status' in report && report.status === 'completed', JSON.stringify(report));
  });

  test('a finished run in the tree, its states in the editor and the graph (screenshot)', async () => {
    const uri = examplePipeline();
    await vscode.window.showTextDocument(uri);
    // The graph beside the editor colours its tasks as the run's events come.
    await vscode.commands.executeCommand('acmp.showGraph');
    const run = runOf(api, await runDag(uri));
    await vscode.commands.executeCommand('workbench.action.closePanel');
    // The editor has the focus: narrowing it widens the side bar, enough for the tasks' descriptions.
    for (let step = 0; step < 2; step += 1) await vscode.commands.executeCommand('workbench.action.decreaseViewWidth');
    await vscode.commands.executeCommand('acmpRuns.focus');
    const node: TaskNode = { kind: 'task', runId: run.runId, task: taskOf(run, 'task_agg_03') };
    await vscode.commands.executeCommand('acmp.revealTask', node);
    await screenshotTaken('run-tree');
  });
});
