// Input resolution (design.md §5, Layer 2 §3): the literal `{type, data}` a task's invoke carries, made from its
// literal input or from the outputs of the tasks its `source` names, with the core's one field-path implementation.
import { type FieldPathSegment, parseFieldPath, resolveFieldPath } from '../dag/fieldPath';
import type { TaskDeclaration } from '../dag/model';
import type { TaskError, TaskOutput } from '../protocol/report';

/** The code of a task whose input could not be made (JSON-RPC "invalid params": no invoke was sent). */
export const INPUT_UNRESOLVED = -32602;

export type InputResolution =
  { readonly ok: true; readonly input: TaskOutput } | { readonly ok: false; readonly error: TaskError };

/** Whether the task's input is the whole output of one upstream task, which is what lets an edge stream (§5). */
export const takesWholeOutput = (task: TaskDeclaration): boolean =>
  task.sourceForm === 'single' && (task.field === undefined || task.field === 'data');

/**
 * The input of `task`: its `literal` input as written, or its source resolved against the completed upstream
 * outputs (`outputOf` answers for every task the source names).
 */
export function resolveInput(
  task: TaskDeclaration,
  literal: unknown,
  outputOf: (taskId: string) => TaskOutput,
): InputResolution {
  if (task.inputForm !== 'reference') return { ok: true, input: literal as TaskOutput };
  // The most common reference, the whole output of one task, without the list of values the others gather.
  if (task.sourceForm === 'single' && task.field === undefined)
    return { ok: true, input: outputOf(task.referencedId(0)) };
  let segments: readonly FieldPathSegment[] | undefined;
  if (task.field !== undefined) {
    const parsed = parseFieldPath(task.field);
    if (!parsed.ok) return unresolved(`field "${task.field}" is not a valid path: ${parsed.message}`);
    segments = parsed.segments;
  }
  const values: unknown[] = [];
  for (let position = 0; position < task.referenceCount; position++) {
    const upstream = task.referencedId(position);
    const output = outputOf(upstream);
    if (segments === undefined) {
      values.push(output);
      continue;
    }
    const found = resolveFieldPath(output, segments);
    if (!found.found) {
      return unresolved(
        `field "${task.field}" does not resolve in the output of task "${upstream}": nothing at ${found.at}`,
      );
    }
    values.push(found.value);
  }
  if (task.sourceForm === 'many') return { ok: true, input: { type: 'json', data: values } };
  const [value] = values;
  if (segments === undefined) return { ok: true, input: value as TaskOutput };
  // `field: "data"` selects the whole payload, so the upstream's type still describes it.
  if (segments.length === 1) return { ok: true, input: { type: outputOf(task.referencedId(0)).type, data: value } };
  return { ok: true, input: { type: typeof value === 'string' ? 'text' : 'json', data: value } };
}

const unresolved = (message: string): InputResolution => ({
  ok: false,
  error: { code: INPUT_UNRESOLVED, message },
});
