// What a task's output is known to look like: its real output in the last run, else the documented output of a
// built-in capability or, for `echo`, its own input. Field-path completion and hover read it.
import type { DagAnalysis } from '../dag/analyze';
import { builtinCapability } from '../protocol/builtinCatalog';
import type { TaskOutput } from '../protocol/report';
import type { TaskDeclaration } from '../dag/model';

/** How far `echo` tasks are followed upstream (each passes its input on). */
const MAX_ECHO_CHAIN = 16;

/** An output whose shape is known, and where it comes from, as a sentence names it ("the last run's output of …"). */
export interface KnownOutput {
  readonly output: TaskOutput;
  readonly source: string;
}

/** The task's output in the document's last run, when there was one; else what its capability documents. */
export function knownOutput(
  analysis: DagAnalysis,
  task: TaskDeclaration,
  lastRun: ReadonlyMap<string, TaskOutput> | undefined,
): KnownOutput | undefined {
  const real = task.id === undefined ? undefined : lastRun?.get(task.id);
  if (real !== undefined) return { output: real, source: `the last run's output of \`${task.id}\`` };
  let current: TaskDeclaration | undefined = task;
  for (let hops = 0; current !== undefined && hops < MAX_ECHO_CHAIN; hops++) {
    const capability = builtinCapability(current.capability ?? '');
    if (capability === undefined) return undefined;
    const source = `the documented output of \`${current.capability}\``;
    if (capability.exampleOutput !== 'the input') return { output: capability.exampleOutput, source };
    if (current.inputForm === 'literal') {
      const input = current.inputNode?.value as Partial<TaskOutput> | undefined;
      return typeof input?.type === 'string' ? { output: { type: input.type, data: input.data }, source } : undefined;
    }
    // An echo of a whole upstream output has that output's shape.
    if (current.sourceForm !== 'single' || current.field !== undefined) return undefined;
    current = analysis.model.taskById.get(current.referencedId(0));
  }
  return undefined;
}

export interface OutputPath {
  readonly path: string;
  readonly value: unknown;
}

/** Paths into an example output to offer: members at any depth, the first few indexes of arrays; bounded. */
const MAX_PATHS = 200;
const MAX_INDEXES = 3;
const MAX_DEPTH = 6;

export function outputPaths(output: TaskOutput): OutputPath[] {
  const paths: OutputPath[] = [];
  const queue: { path: string; value: unknown; depth: number }[] = [{ path: 'data', value: output.data, depth: 0 }];
  for (let head = 0; head < queue.length && paths.length < MAX_PATHS; head++) {
    const { path, value, depth } = queue[head]!;
    paths.push({ path, value });
    if (depth >= MAX_DEPTH || value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      value
        .slice(0, MAX_INDEXES)
        .forEach((element, index) => queue.push({ path: `${path}[${index}]`, value: element, depth: depth + 1 }));
    } else {
      for (const [key, member] of Object.entries(value)) {
        // Only members the path grammar can name (identifiers).
        if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
          queue.push({ path: `${path}.${key}`, value: member, depth: depth + 1 });
      }
    }
  }
  return paths;
}

/** A value's kind, as a person names it. */
export function describeValue(value: unknown): string {
  if (Array.isArray(value)) return `array (${value.length} in the example)`;
  if (value === null) return 'null';
  return typeof value;
}

/** The value as indented JSON, cut short. */
export function preview(value: unknown): string {
  const text = JSON.stringify(value, null, 2);
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}
