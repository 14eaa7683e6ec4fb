// A DAG with errors is not run (design.md §5), nor one with a task no provider offers (docs/market.md): both drivers
// refuse them the same way, before anything starts.
import type { DagAnalysis } from '../dag/analyze';
import type { DagDiagnostic } from '../dag/diagnostic';
import type { DagModel } from '../dag/model';
import type { ProviderConfig } from '../protocol/settings';
import { knownCapabilities, mayOffer, servingProviders } from './pricing';

/** A run of a DAG with errors was refused; `diagnostics` are those errors. */
export class RunRefused extends Error {
  constructor(readonly diagnostics: readonly DagDiagnostic[]) {
    const list = diagnostics.map((diagnostic) => `  ${diagnostic.code}: ${diagnostic.message}`).join('\n');
    super(`the DAG has ${diagnostics.length} error(s); fix them to run it:\n${list}`);
    this.name = 'RunRefused';
  }
}

/** The diagnostics that keep a DAG from running: its errors, or the one warning of a file too large to analyse. */
export const blockingDiagnostics = (analysis: DagAnalysis): DagDiagnostic[] =>
  // A file too large to analyse has no model to run: its one warning is the refusal's reason.
  analysis.diagnostics.filter((diagnostic) => diagnostic.severity === 'error' || analysis.tooLarge);

/** Throws RunRefused when the analysis found errors. */
export function refuseDagWithErrors(analysis: DagAnalysis): void {
  const errors = blockingDiagnostics(analysis);
  if (errors.length > 0) throw new RunRefused(errors);
}

/** A task whose capability no provider offers. */
export interface UnservedTask {
  readonly taskId: string;
  readonly capability: string;
}

/**
 * The tasks of `model` that no provider of `providers` (none: the built-in provider) offers the capability of, each
 * capability looked up once; empty when every task has a provider that may take it.
 */
export function unservedTasks(model: DagModel, providers: readonly ProviderConfig[]): UnservedTask[] {
  const serving = servingProviders(providers);
  const served = new Map<string, boolean>();
  const unserved: UnservedTask[] = [];
  for (const task of model.tasks) {
    const capability = task.capability;
    if (capability === undefined) continue;
    let offered = served.get(capability);
    if (offered === undefined) {
      offered = serving.some((provider) => mayOffer(provider, capability));
      served.set(capability, offered);
    }
    if (!offered) unserved.push({ taskId: task.id ?? '(no id)', capability });
  }
  return unserved;
}

/** A run refused before it started because no provider offers some task's capability (docs/market.md). */
export class NoProviderRefused extends Error {
  constructor(
    readonly tasks: readonly UnservedTask[],
    readonly offered: readonly string[] | undefined,
  ) {
    const shown = tasks.slice(0, 10).map((task) => `${task.taskId} (${task.capability})`);
    const more = tasks.length > shown.length ? ` and ${tasks.length - shown.length} more` : '';
    const offers = offered === undefined ? '' : `; the providers offer ${offered.join(', ') || 'nothing'}`;
    super(`no provider offers the capability of ${tasks.length} task(s): ${shown.join(', ')}${more}${offers}`);
    this.name = 'NoProviderRefused';
  }
}

/** The refusal of a run in which no provider offers some task's capability; undefined when every task has one. */
export function unservedRefusal(model: DagModel, providers: readonly ProviderConfig[]): NoProviderRefused | undefined {
  const unserved = unservedTasks(model, providers);
  if (unserved.length === 0) return undefined;
  return new NoProviderRefused(unserved, knownCapabilities(servingProviders(providers)));
}
