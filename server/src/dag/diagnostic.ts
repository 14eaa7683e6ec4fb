// The diagnostics the analysis emits: stable codes (design.md §4), offsets into the text, no editor types.
export const DIAGNOSTIC_CODES = [
  'json-syntax',
  'schema',
  'input-shape',
  'source-shape',
  'duplicate-task-id',
  'unknown-task',
  'dangling-edge',
  'missing-edge',
  'cycle',
  'duplicate-edge',
  'invalid-field-path',
  'stream-field',
  'from-tasks-field',
  'id-format',
  'metadata-dag-id',
  'no-provider',
  'over-budget',
  'limit',
] as const;
export type DiagnosticCode = (typeof DIAGNOSTIC_CODES)[number];

export type Severity = 'error' | 'warning' | 'information';

export interface TextSpan {
  readonly start: number;
  readonly end: number;
}

export interface RelatedSpan extends TextSpan {
  readonly message: string;
}

export interface DagDiagnostic extends TextSpan {
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  readonly message: string;
  readonly related?: readonly RelatedSpan[];
}

/** A short description of each code, for SARIF rules and the README. */
export const DIAGNOSTIC_DESCRIPTIONS: Record<DiagnosticCode, string> = {
  'json-syntax': 'The text is not JSON (comments and trailing commas included).',
  schema: 'The structure does not match the Task/DAG schema.',
  'input-shape': 'An input has both the literal form (type/data) and source, or neither.',
  'source-shape': 'A source has both or neither of from_task / from_tasks, or an empty from_tasks.',
  'duplicate-task-id': 'A task_id is declared more than once.',
  'unknown-task': 'from_task / from_tasks names no task.',
  'dangling-edge': "An edge's from or to names no task.",
  'missing-edge': 'A reference to a task without an edge from it into the referencing task.',
  cycle: 'An edge lies on a cycle; the graph must be acyclic.',
  'duplicate-edge': 'The same from/to pair appears twice.',
  'invalid-field-path': 'A field path outside the grammar of Layer 2 §3.',
  'stream-field': 'A stream_eligible edge whose reference selects a sub-field runs non-streaming.',
  'from-tasks-field': 'field together with from_tasks is not defined by the spec.',
  'id-format': 'task_id not of the form task_<...>, dag_id not dag_<...>.',
  'metadata-dag-id': "metadata.dag_id differs from the file's dag_id.",
  'no-provider': 'No provider (configured or discovered) offers the capability.',
  'over-budget': "max_price_cu is below every known price of the providers that offer the task's capability.",
  limit:
    'More tasks, depth or fan-out than the configured limits, a file too large to analyse, or a value nested deeper than a run can take.',
};
