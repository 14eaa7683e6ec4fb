// What the suites about runs share: the extension's API, waiting for a run, running a DAG.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AcmpApi } from '../../../client/src/extension';
import type { RunSnapshot } from '../../../client/src/runSnapshot';
import type { RunReport } from '../../../server/src/protocol/report';
import type { NeedsUpstreamData, RunRefusedData } from '../../../server/src/protocol/runMessages';
import type { ProviderConfig } from '../../../server/src/protocol/settings';

/** The extension under test, by its manifest's `publisher.name`. */
export const extension = (): vscode.Extension<AcmpApi> => vscode.extensions.getExtension<AcmpApi>('acmp-dag.acmp-dag')!;
export const root = (): string => extension().extensionPath;
export const examplePipeline = (): vscode.Uri =>
  vscode.Uri.file(path.join(root(), 'examples', 'text-pipeline.acmp-dag.json'));

/** Resolves with the run `find` picks, looked for on every change of the runs; fails after `ms` with the newest. */
export function runWhen(
  api: AcmpApi,
  find: (runs: readonly RunSnapshot[]) => RunSnapshot | undefined,
  ms = 30_000,
): Promise<RunSnapshot> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const found = find(api.runs());
      if (found === undefined) return;
      stop();
      resolve(found);
    };
    const subscription = api.onDidChangeRuns(check);
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no such run after ${ms} ms; the newest: ${JSON.stringify(api.runs()[0] ?? null)}`));
    }, ms);
    const stop = (): void => {
      subscription.dispose();
      clearTimeout(timer);
    };
    check();
  });
}

export const runOf = (
  api: AcmpApi,
  report: RunReport | RunRefusedData | NeedsUpstreamData | undefined,
): RunSnapshot => {
  assert.ok(report !== undefined && 'run_id' in report, `the DAG ran: ${JSON.stringify(report)}`);
  return api.runs().find((run) => run.runId === report.run_id)!;
};
export const runDag = (uri: vscode.Uri) =>
  vscode.commands.executeCommand<RunReport | RunRefusedData | undefined>('acmp.runDag', uri);

/** Sets the setting `acmp.<name>` (user settings: the fixture folder stays untouched) and waits until VS Code has it. */
export async function setSetting(name: string, value: unknown): Promise<void> {
  const configuration = vscode.workspace.getConfiguration('acmp');
  if (configuration.inspect(name)?.globalValue === value) return;
  const changed = new Promise<void>((resolve) => {
    const subscription = vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration(`acmp.${name}`)) return;
      subscription.dispose();
      resolve();
    });
  });
  await configuration.update(name, value, vscode.ConfigurationTarget.Global);
  await changed;
}

export const setProviders = (providers: readonly ProviderConfig[] | undefined): Promise<void> =>
  setSetting('providers', providers);
