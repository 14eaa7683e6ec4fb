// "Raise Budget and Re-run": a run its budget stopped runs again with a larger total budget, for that run only (the
// run request's `maxCostCu`; the settings stay as they are). The suggestion comes from the server's plan.
import { type Disposable, Uri, commands, window } from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { PLAN_REQUEST, type PlanParams, type PlanResult } from '../../server/src/protocol/runMessages';
import type { Runner } from './runner';
import type { RunNode } from './runTree';
import type { RunsModel } from './runs';
import type { RunSnapshot } from './runSnapshot';
import { budgetInputError, stoppedOnBudget, suggestedBudget } from './runText';

/** The run a call means: the one named (the notification passes its id, the tree its node), else the newest stopped. */
function runOf(runs: RunsModel, target: unknown): RunSnapshot | undefined {
  if (typeof target === 'string') return runs.get(target);
  if ((target as RunNode | undefined)?.kind === 'run') return runs.get((target as RunNode).run.runId);
  return runs.runs.find(stoppedOnBudget);
}

export function registerRaiseBudget(client: LanguageClient, runs: RunsModel, runner: Runner): Disposable[] {
  const raiseBudgetAndRerun = async (target?: unknown) => {
    const run = runOf(runs, target);
    if (run === undefined || run.status === 'running') {
      void window.showInformationMessage('No finished ACMP run to re-run with a larger budget.');
      return undefined;
    }
    const params: PlanParams = { uri: run.uri };
    // Without a plan (the file closed, the server busy) the old budget alone suggests the new one.
    const plan = await client.sendRequest<PlanResult>(PLAN_REQUEST, params).catch(() => undefined);
    const suggested = suggestedBudget(plan?.plan.total, run.budget?.total_cap_cu);
    const typed = await window.showInputBox({
      title: `Re-run ${run.dagId} with a budget of (CU)`,
      prompt: plan === undefined ? undefined : `The plan: ${plan.summary}`,
      value: suggested === undefined ? '' : String(suggested),
      validateInput: budgetInputError,
      ignoreFocusOut: true,
    });
    if (typed === undefined) return undefined;
    return runner.run(Uri.parse(run.uri), { maxCostCu: Number(typed.trim()) });
  };
  return [commands.registerCommand('acmp.raiseBudgetAndRerun', raiseBudgetAndRerun)];
}
