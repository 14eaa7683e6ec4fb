// A DAG with errors is not run (design.md §5): both drivers refuse it the same way, before anything starts.
import type { DagAnalysis } from '../dag/analyze';
import type { DagDiagnostic } from '../dag/diagnostic';

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
