// What Show Output shows of a task: its output as JSON headed by its id, or its error (or why no output is kept) as
// a Markdown document of lines short enough to read whole, since VS Code wraps neither JSON nor Markdown by default.
// No `vscode` import: the unit tests check these texts directly.
import { ACMP_ERRORS } from '../../server/src/protocol/acmpMessages';
import type { RunSnapshot, TaskSnapshot } from './runSnapshot';
import { joined, taskCost, taskDuration, taskPrice } from './runText';
import { outputNotKept, outputNotSent } from './storedRuns';

/** Prose lines are wrapped at this width: a side by side editor at the default font still shows them whole. */
export const WRAP_COLUMNS = 100;

/** The run a task belongs to, as its document names it. */
export type TaskRun = Pick<RunSnapshot, 'runId' | 'dagId'>;

/** A task's document: JSON (with a comment for its heading) for an output, Markdown for anything else. */
export const showsOutputAsJson = (task: TaskSnapshot | undefined): boolean =>
  task?.error === undefined && task?.output !== undefined;

/**
 * The lines of `text` wrapped between words at WRAP_COLUMNS: its own line breaks and each line's indentation kept,
 * `hang` more before the lines a wrap made, a word longer than a line left whole on a line of its own.
 */
export function wrapped(text: string, hang = ''): string[] {
  const lines: string[] = [];
  for (const own of text.split(/\r?\n/)) {
    const indent = /^\s*/.exec(own)![0];
    let line = '';
    for (const word of own.slice(indent.length).split(/\s+/)) {
      if (word === '') continue;
      if (line === '') line = indent + word;
      else if (line.length + 1 + word.length <= WRAP_COLUMNS) line += ` ${word}`;
      else {
        lines.push(line);
        line = indent + hang + word;
      }
    }
    lines.push(line);
  }
  return lines;
}

/** Backticks one more than the longest run of them in `text`, at least `least`: a code span or fence it cannot end. */
function backticksAround(text: string, least: number): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  return '`'.repeat(Math.max(least, longest + 1));
}

/** `text` as inline code. */
function code(text: string): string {
  const ticks = backticksAround(text, 1);
  return ticks.length === 1 ? `\`${text}\`` : `${ticks} ${text} ${ticks}`;
}

/** `text` as a fenced block of `language`. */
function fenced(text: string, language: string): string[] {
  const fence = backticksAround(text, 3);
  return [`${fence}${language}`, text, fence];
}

/** `-33002 (capability not found)` for a Layer 1 code; the number alone for any other. */
function errorCode(code: number): string {
  const name = Object.entries(ACMP_ERRORS).find(([, value]) => value === code)?.[0];
  return name === undefined ? String(code) : `${code} (${name.replace(/_/g, ' ')})`;
}

/** The `task_id` in an invoke error's data: a provider knows no other id than the one the run sent (the wire id). */
function wireIdInData(task: TaskSnapshot): string | undefined {
  const data = task.error?.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const named = (data as Record<string, unknown>).task_id;
  return typeof named === 'string' && named !== task.taskId ? named : undefined;
}

/** The task's facts, one list item each: its own id and state, where it ran, when, at what cost, in which run. */
function facts(task: TaskSnapshot, run: TaskRun): string[] {
  const finished = task.finishedAt && joined([task.finishedAt, taskDuration(task) && `after ${taskDuration(task)}`]);
  const wireIdShown = task.wireTaskId !== undefined && task.wireTaskId !== wireIdInData(task);
  return [
    `task: ${code(task.taskId)} (${task.state})`,
    task.capability && `capability: ${task.capability}`,
    task.providerId && `provider: ${task.providerId}`,
    task.startedAt && `started: ${task.startedAt}`,
    finished && `finished: ${finished}`,
    taskCost(task) && `cost: ${taskCost(task)}`,
    taskPrice(task) && `price: ${taskPrice(task)}`,
    `run: ${code(run.runId)} of ${code(run.dagId)}`,
    wireIdShown ? `wire task id, sent to the provider: ${code(task.wireTaskId)}` : undefined,
  ].flatMap((fact) => (fact === undefined || fact === '' ? [] : wrapped(`- ${fact}`, '  ')));
}

/** The error's data, pretty-printed; a `task_id` in it said to be the wire id. */
function errorData(task: TaskSnapshot): string[] {
  const data = task.error?.data;
  if (data === undefined) return [];
  const wireId = wireIdInData(task);
  const said =
    wireId === undefined
      ? 'As the provider sent it:'
      : `As the provider sent it. Its \`task_id\` is the wire task id, the id this run sent the provider for ` +
        `${code(task.taskId)}, not the DAG's.`;
  return ['', '## Error data', '', ...wrapped(said), '', ...fenced(JSON.stringify(data, null, 2), 'json')];
}

/** Why there is no output to show. */
function nothingKept(task: TaskSnapshot): string {
  if (task.outputNotSentBytes !== undefined) return outputNotSent(task.taskId, task.outputNotSentBytes);
  if (task.outputNotKeptBytes !== undefined) return outputNotKept(task.taskId, task.outputNotKeptBytes);
  return `No output of ${task.taskId} is kept.`;
}

/**
 * What Show Output shows of a task: an output as today's pretty JSON under a comment with the task's id; an error
 * as Markdown, the error first (its code, then its message wrapped as prose), then the task's own id, where and when
 * it ran, its cost, and the error's data; for a task with neither, why, as Markdown.
 */
export function taskOutputText(task: TaskSnapshot, run: TaskRun): string {
  if (showsOutputAsJson(task)) {
    const heading = joined([task.taskId, task.state, task.providerId, taskDuration(task), taskCost(task)]);
    return `// ${heading}\n${JSON.stringify(task.output, null, 2)}\n`;
  }
  const { error } = task;
  const lines =
    error === undefined
      ? [`# ${task.taskId}: no output`, '', ...wrapped(nothingKept(task)), '', ...facts(task, run)]
      : [
          `# Error ${errorCode(error.code)}`,
          '',
          ...wrapped(error.message),
          '',
          ...facts(task, run),
          ...errorData(task),
        ];
  return `${lines.join('\n')}\n`;
}

/** What Show Output shows of a task whose run is no longer kept, in its document's language (showsOutputAsJson). */
export const taskGoneText = (taskId: string, asJson: boolean): string =>
  `${asJson ? '// ' : ''}No output of ${taskId} is kept: its run was removed.\n`;
