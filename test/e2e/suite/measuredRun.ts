// A run of a DAG as a user sees it, measured from the browser (askRunner.ts, workbenchProbe.ts): how long after the
// run's end each display showed the final states, and the longest frame of the window meanwhile. The e2e suite
// asserts on it; `npm run bench:ui` prints it.
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunRefusedData } from '../../../server/src/protocol/runMessages';
import type { RunReport } from '../../../server/src/protocol/report';
import type { Display, ProbeResult, RunMeasure } from '../workbenchProbe';
import { askRunner } from './askRunner';

/** The displays but the graph, which shows only when its panel is open. */
export const RUN_DISPLAYS: readonly Display[] = ['tree', 'statusBar', 'notification', 'decorations'];

export interface MeasuredRun extends RunMeasure {
  readonly report: RunReport;
}

/**
 * The CPU time (user and system, ms) of this process's child processes (the language server, which runs the DAG) so
 * far, from Linux's /proc; undefined elsewhere.
 */
function childrenCpuMs(): number | undefined {
  try {
    const children = readdirSync(`/proc/${process.pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean),
    );
    const ticks = children.reduce((sum, child) => {
      // After the command's name in parentheses: utime and stime are the 12th and 13th fields.
      const fields = readFileSync(`/proc/${child}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return sum + Number(fields[11]) + Number(fields[12]);
    }, 0);
    // Linux's clock ticks are 100 a second on every common build.
    return ticks * 10;
  } catch {
    return undefined;
  }
}

/** Nothing finished stays undefined longer than this after the run's end: the probe gives up. */
const SETTLE_TIMEOUT_MS = 60_000;

/**
 * Runs the DAG `uri` with an empty runs view in sight, the DAG in the editor scrolled to its last task (among the
 * last to finish), and its graph beside it if `graph`; measures `displays` (the graph's added with `graph`).
 */
export async function measuredRun(
  uri: vscode.Uri,
  { graph, displays = RUN_DISPLAYS }: { graph: boolean; displays?: readonly Display[] },
): Promise<MeasuredRun> {
  // Every editor closed but the DAG's: closing its editor too would make VS Code read and tokenize a large file again,
  // in the background for seconds, during the run (a CPU profile of a 10,000-task run showed 0.3 s of it).
  const editor = await vscode.window.showTextDocument(uri, { viewColumn: vscode.ViewColumn.One, preview: false });
  await vscode.commands.executeCommand('workbench.action.closeOtherEditors');
  await vscode.commands.executeCommand('workbench.action.closeEditorsInOtherGroups');
  await vscode.commands.executeCommand('acmp.clearRuns');
  // The secondary side bar (VS Code's chat) would narrow the editor and the tree.
  await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
  const lastTask = editor.document.positionAt(editor.document.getText().lastIndexOf('"task_id"'));
  editor.revealRange(new vscode.Range(lastTask, lastTask), vscode.TextEditorRevealType.InCenter);
  if (graph) await vscode.commands.executeCommand('acmp.showGraph', uri);
  await vscode.commands.executeCommand('acmpRuns.focus');
  const dagId = (JSON.parse(editor.document.getText()) as { dag_id: string }).dag_id;
  await askRunner('probe-start', {
    fileName: path.basename(uri.fsPath),
    dagId,
    displays: graph ? [...displays, 'graph'] : displays,
  });
  const [hostBefore, serverBefore] = [process.cpuUsage(), childrenCpuMs()];
  const report = await vscode.commands.executeCommand<RunReport | RunRefusedData | undefined>('acmp.runDag', uri);
  if (report === undefined || !('run_id' in report)) throw new Error(`the DAG did not run: ${JSON.stringify(report)}`);
  const probes = await askRunner<ProbeResult[]>('probe-result', { timeoutMs: SETTLE_TIMEOUT_MS });
  const host = process.cpuUsage(hostBefore);
  const serverAfter = childrenCpuMs();
  const cpuMs = {
    extensionHost: Math.round((host.user + host.system) / 1000),
    ...(serverBefore !== undefined && serverAfter !== undefined && { server: serverAfter - serverBefore }),
  };
  const ended = Date.parse(report.finished_at);
  const finalAfterMs: Partial<Record<Display, number>> = {};
  for (const probe of probes) {
    for (const [display, since] of Object.entries(probe.finalSince) as [Display, number][]) {
      finalAfterMs[display] = Math.max(0, since - ended);
    }
  }
  return { report, runMs: ended - Date.parse(report.started_at), finalAfterMs, probes, cpuMs };
}
