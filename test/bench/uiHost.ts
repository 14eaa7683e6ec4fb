// The extension-host side of `npm run bench:ui` (test/bench/ui.ts starts the window): opens each generated DAG of the
// workspace and its graph, which the runner measures, then runs the DAG on the built-in provider with the graph
// closed and open, and hands each measured run to the runner.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AcmpApi } from '../../client/src/extension';
import { askRunner } from '../e2e/suite/askRunner';
import { measuredRun } from '../e2e/suite/measuredRun';
import { type RunFigures, SIZES_VARIABLE, benchDagFile, handedProbes, openedDagFile } from './uiWorkspace';

/**
 * Opens the DAG and, once VS Code is done with opening it (tokenizing 10,000 tasks' text holds the window for seconds,
 * the webview's start with it), its graph, profiled when asked (test/e2e/cpuProfiler.ts); returns when Show Graph was
 * run: from the command, as a user's click, the server's layout, the page's start and its first frame all count.
 */
async function showGraphOfOpenedFile(uri: vscode.Uri): Promise<number> {
  await vscode.window.showTextDocument(uri);
  await askRunner('window-settled');
  await askRunner('cpu-profile-start');
  const since = Date.now();
  await vscode.commands.executeCommand('acmp.showGraph', uri);
  return since;
}

/** Resolves once the document `uri` has diagnostics (fails after a minute: the DAG opened is made to have one). */
function diagnosed(uri: vscode.Uri): Promise<void> {
  return new Promise((resolve, reject) => {
    const has = (): boolean => vscode.languages.getDiagnostics(uri).length > 0;
    const done = (settle: () => void): void => {
      subscription.dispose();
      clearTimeout(timer);
      settle();
    };
    const subscription = vscode.languages.onDidChangeDiagnostics(() => {
      if (has()) done(resolve);
    });
    const timer = setTimeout(
      () => done(() => reject(new Error(`no diagnostics of ${uri.toString()} within a minute`))),
      60_000,
    );
    if (has()) done(resolve);
  });
}

/**
 * Opens the DAG of `size` tasks with nothing else open, as an ACMP DAG or as plain JSON (VS Code alone), while the
 * runner records the window's frames: from the open command until the editor shows it, the extension's diagnostics
 * (of the DAG) came and the window settled.
 */
async function measuredOpen(folder: vscode.Uri, size: number, asDag: boolean): Promise<void> {
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  const uri = vscode.Uri.joinPath(folder, openedDagFile(size, asDag));
  await askRunner('open-probe-start');
  const analysed = asDag ? diagnosed(uri) : Promise.resolve();
  await vscode.window.showTextDocument(uri, { preview: false });
  await analysed;
  await askRunner('window-settled');
  await askRunner('open-probe-result', { size, asDag });
}

/**
 * With ACMP_BENCH_PROFILE=DIR (test/e2e/cpuProfiler.ts profiles the window), a CPU profile of this extension host
 * during `work` too, as DIR/host-NAME.cpuprofile: the extension's share of a run, or of a graph's first drawing.
 */
async function profiledHost<T>(name: string, work: () => Promise<T>): Promise<T> {
  const folder = process.env.ACMP_BENCH_PROFILE;
  if (folder === undefined) return work();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(join(folder, `host-${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

export async function run(): Promise<void> {
  await vscode.extensions.getExtension<AcmpApi>('acmp-dag.acmp-dag')!.activate();
  const folder = vscode.workspace.workspaceFolders![0]!.uri;
  const sizes = process.env[SIZES_VARIABLE]!.split(',').map(Number);
  // The window's first webview waits seconds for VS Code's webview host to start (its service worker): measured
  // apart, with the smallest DAG, so that each graph below is what a user waits for once a webview has been shown.
  const first = vscode.Uri.joinPath(folder, benchDagFile(Math.min(...sizes)));
  await askRunner('first-webview', { since: await showGraphOfOpenedFile(first) });
  await askRunner('cpu-profile-stop', { name: 'first-webview' });
  // The window has opened a DAG already (the first webview's): neither opening pays for the window's first file.
  const largest = Math.max(...sizes);
  for (const asDag of [false, true]) await measuredOpen(folder, largest, asDag);
  for (const size of sizes) {
    const uri = vscode.Uri.joinPath(folder, benchDagFile(size));
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await profiledHost(`graph-${size}`, async () =>
      askRunner('graph-figures', { size, since: await showGraphOfOpenedFile(uri) }),
    );
    await askRunner('cpu-profile-stop', { name: `graph-${size}` });
    for (const graph of [false, true]) {
      const { runMs, finalAfterMs, probes, cpuMs } = await profiledHost(`${size}-${graph ? 'graph' : 'no-graph'}`, () =>
        measuredRun(uri, { graph }),
      );
      await askRunner('run-figures', {
        size,
        graph,
        run: { runMs, finalAfterMs, probes: handedProbes(probes), cpuMs },
      } satisfies RunFigures);
      console.log(`bench:ui: ${size} tasks, graph ${graph ? 'open' : 'closed'}: measured`);
    }
  }
}
