// Durable runs in a real VS Code. The folder's `acmp.engine.url` names a Restate engine the runner started
// (run.ts) with a worker and the counting provider, whose `hold` tasks answer when the runner is asked to release
// them. A run started from the CLI appears in the ACMP Runs view, marked durable, and is followed live to its end; a
// second one is left running and the window reloaded (`workbench.action.reloadWindow`): VS Code then calls this entry
// again, and the state file (outside the folder) says which half runs. In the reloaded window, whose language server
// is a new process, the first run is still listed with its final state and the second is followed again, from the
// start of its event log, to its end.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AcmpApi } from '../../../client/src/extension';
import type { RunSnapshot } from '../../../client/src/runSnapshot';
import { DURABLE_E2E_DAGS } from '../durableDags';
import { askRunner } from './askRunner';
import { inBrowser } from './browser';
import { extension, root, runWhen } from './runHelpers';

interface StateAcrossReload {
  readonly finishedRunId: string;
  readonly runningRunId: string;
}

const stateFile = process.env.ACMP_E2E_DURABLE_STATE;
const [FIRST, SECOND] = DURABLE_E2E_DAGS;

/** The ACMP Runs view's row of a durable run of `dagId` in `state`, once the view shows it. */
const runRowShown = async (dagId: string, state: RunSnapshot['status']): Promise<void> => {
  await vscode.commands.executeCommand('acmpRuns.focus');
  const row = `.pane:has(.title:has-text("ACMP Runs")) .monaco-list-row[aria-level="1"]:has-text("${dagId}")`;
  await inBrowser({
    action: 'elements',
    selector: `${row}:has-text("${state} · "):has-text(" · durable")`,
    wait: true,
  });
};

/** `acmp-dag run FILE --engine URL --detach`, the CLI of this build; resolves with the run's id. */
function submitFromCli(file: vscode.Uri, engine: string): Promise<string> {
  const cli = path.join(root(), 'dist', 'cli.js');
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [cli, 'run', file.fsPath, '--engine', engine, '--detach'], (error, stdout, stderr) =>
      error === null ? resolve(stdout.trim()) : reject(new Error(`${error.message}\n${stderr}`)),
    ),
  );
}

const dagFile = (name: string): vscode.Uri =>
  vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0]!.uri, `${name}.acmp-dag.json`);

/** The run, once the view's model has it with `task_b` (held at the provider) running. */
const heldRun = (api: AcmpApi, runId: string): Promise<RunSnapshot> =>
  runWhen(api, (runs) =>
    runs.find(
      (run) => run.runId === runId && run.tasks.some((task) => task.taskId === 'task_b' && task.state === 'running'),
    ),
  );

/** Each DIAMOND run executes four tasks at the provider; its held two answer once `executions` in all were seen. */
const release = (executions: number): Promise<void> => askRunner('release', { executions });

const completedRun = (api: AcmpApi, runId: string): Promise<RunSnapshot> =>
  runWhen(api, (runs) => runs.find((run) => run.runId === runId && run.status === 'completed'));

function assertCompleted(run: RunSnapshot, engine: string, name: string): void {
  assert.equal(run.engine, engine);
  assert.equal(run.uri, dagFile(name).toString());
  assert.deepEqual(
    run.tasks.map((task) => `${task.taskId}:${task.state}`),
    ['task_a:completed', 'task_b:completed', 'task_c:completed', 'task_d:completed'],
  );
}

suite('Durable runs on a Restate engine', () => {
  let api: AcmpApi;
  let engine: string;

  suiteSetup(async () => {
    assert.ok(stateFile, 'ACMP_E2E_DURABLE_STATE is not set (npm run test:e2e)');
    engine = vscode.workspace.getConfiguration('acmp').get<string>('engine.url') ?? '';
    assert.match(engine, /^unix:\/.*\/ingress\.sock$/, 'the folder names the engine the runner started');
    api = await extension().activate();
  });

  if (stateFile === undefined || !fs.existsSync(stateFile)) {
    test('a run started from the CLI appears in the Runs view, durable, and is followed live to its end', async () => {
      const runId = await submitFromCli(dagFile(FIRST), engine);
      const live = await heldRun(api, runId);
      assert.equal(live.status, 'running');
      assert.equal(live.engine, engine);
      await runRowShown(`dag_e2e_${FIRST}`, 'running');
      await release(3);
      assertCompleted(await completedRun(api, runId), engine, FIRST);
      await runRowShown(`dag_e2e_${FIRST}`, 'completed');
    });

    test('a run still running when the window reloads', async function () {
      // The window's reload ends this extension host: the test never ends here, the reloaded window goes on.
      this.timeout(0);
      const runId = await submitFromCli(dagFile(SECOND), engine);
      await heldRun(api, runId);
      await runRowShown(`dag_e2e_${SECOND}`, 'running');
      const finishedRunId = api.runs().find((run) => run.dagId === `dag_e2e_${FIRST}`)!.runId;
      fs.writeFileSync(stateFile!, JSON.stringify({ finishedRunId, runningRunId: runId } satisfies StateAcrossReload));
      await vscode.commands.executeCommand('workbench.action.reloadWindow');
      await new Promise(() => undefined);
    });
  } else {
    const state = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as StateAcrossReload;

    test('after the reload, the finished run is still listed with its final state', async () => {
      assertCompleted(await completedRun(api, state.finishedRunId), engine, FIRST);
      await runRowShown(`dag_e2e_${FIRST}`, 'completed');
    });

    test('after the reload, the running run is followed again from the start of its log to its end', async () => {
      const live = await heldRun(api, state.runningRunId);
      assert.equal(live.engine, engine);
      // Replayed from the start of its log: task_a's completion, from before the reload, is there.
      assert.equal(live.tasks.find((task) => task.taskId === 'task_a')?.state, 'completed');
      await runRowShown(`dag_e2e_${SECOND}`, 'running');
      await release(7);
      assertCompleted(await completedRun(api, state.runningRunId), engine, SECOND);
      await runRowShown(`dag_e2e_${SECOND}`, 'completed');
    });
  }
});
