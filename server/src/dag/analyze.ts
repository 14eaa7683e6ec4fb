// The analysis entry point: text in, model and diagnostics out. Pure, total and iterative.
import { type AnalysisLimits, type CheckOptions, runChecks } from './checks';
import type { DagDiagnostic } from './diagnostic';
import { type JsonDocument, type SyntaxError, parseJson } from './json';
import { type DagModel, buildModel } from './model';
import { type SchemaProblem, schemaDiagnostics, schemaProblems } from './schemaCheck';

export interface AnalysisOptions {
  readonly limits?: Partial<AnalysisLimits>;
  readonly knownCapabilities?: readonly string[] | undefined;
}

export const DEFAULT_LIMITS: AnalysisLimits = { maxTasks: 10_000, maxDepth: 1_000, maxFanOut: 1_000 };

export interface DagAnalysis {
  /** The parsed text: nodes and offsets on demand. */
  readonly document: JsonDocument;
  readonly model: DagModel;
  readonly diagnostics: readonly DagDiagnostic[];
}

/**
 * Parses, validates and models the text. The plain value lives only in here, so the checks that follow run without
 * it (collections during the checks no longer copy it: about a tenth off the analysis at 10,000 tasks).
 */
function read(text: string): {
  document: JsonDocument;
  errors: readonly SyntaxError[];
  problems: readonly SchemaProblem[];
  model: DagModel;
} {
  const parsed = parseJson(text);
  return {
    document: parsed.document,
    errors: parsed.errors,
    problems: schemaProblems(parsed.value),
    model: buildModel(parsed),
  };
}

export function analyzeDag(text: string, options: AnalysisOptions = {}): DagAnalysis {
  const { document, errors, problems, model } = read(text);
  const diagnostics: DagDiagnostic[] = errors.map((error) => ({
    code: 'json-syntax',
    severity: 'error',
    start: error.offset,
    end: error.offset + error.length,
    message: error.message,
  }));
  const checkOptions: CheckOptions = {
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    knownCapabilities: options.knownCapabilities,
  };

  // An input that is both or neither form gets one input-shape diagnostic, not the union's schema issues too.
  const shapeless = new Set(
    model.tasks.filter((task) => task.inputForm === 'both' || task.inputForm === 'neither').map((task) => task.index),
  );
  diagnostics.push(
    ...schemaDiagnostics(
      document,
      problems,
      (path) => path[0] === 'tasks' && path[2] === 'input' && shapeless.has(path[1] as number),
    ),
  );
  runChecks(model, checkOptions, (code, severity, node, message, related) => {
    diagnostics.push({
      code,
      severity,
      start: node.offset,
      end: node.offset + node.length,
      message,
      ...(related !== undefined && related.length > 0 ? { related } : {}),
    });
  });
  diagnostics.sort((a, b) => a.start - b.start || a.end - b.end);
  return { document, model, diagnostics };
}
