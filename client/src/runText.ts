// What the extension says about runs in words: durations, costs, the tree's tooltips and the notifications at a run's
// end or refusal. No `vscode` import: the unit tests check these texts directly.
import type { RunSnapshot, TaskSnapshot } from './runSnapshot';

/** Milliseconds between two ISO-8601 times; undefined until both are known. */
export function durationMs(startedAt: string | undefined, finishedAt: string | undefined): number | undefined {
  if (startedAt === undefined || finishedAt === undefined) return undefined;
  return Date.parse(finishedAt) - Date.parse(startedAt);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export const formatCost = (costCu: number): string => `${Number(costCu.toPrecision(3))} CU`;

export const joined = (parts: readonly (string | undefined)[]): string =>
  parts.filter((part) => part !== undefined && part !== '').join(' · ');

/** `1 error`, `2 errors`. */
const counted = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** The file name of a document's URI string. */
export const fileName = (uri: string): string => decodeURIComponent(uri.slice(uri.lastIndexOf('/') + 1));

const duration = (startedAt: string | undefined, finishedAt: string | undefined): string | undefined => {
  const ms = durationMs(startedAt, finishedAt);
  return ms === undefined ? undefined : formatDuration(ms);
};

/** How long a task ran; undefined until it finished. */
export const taskDuration = (task: TaskSnapshot): string | undefined => duration(task.startedAt, task.finishedAt);

/** What a task cost; undefined until its provider said. */
export const taskCost = (task: TaskSnapshot): string | undefined =>
  task.costCu === undefined ? undefined : formatCost(task.costCu);

/** The lines of a task's tooltip below its id and state: what the tree row has no room for. */
export function taskDetails(task: TaskSnapshot): string[] {
  return [
    joined([task.capability, task.providerId && `provider ${task.providerId}`]),
    joined([
      taskDuration(task),
      taskCost(task),
      task.tokensUsed === undefined ? undefined : counted(task.tokensUsed, 'token'),
      task.proof === undefined || task.proof === 'absent' ? undefined : `proof ${task.proof}`,
    ]),
    task.error === undefined ? '' : `Error ${task.error.code}: ${task.error.message}`,
  ].filter((line) => line !== '');
}

/** `completed · 14:03:22`, `durable · running · 14:03:22`: beside a run's dag_id in the tree. */
export const runDescription = (run: RunSnapshot): string =>
  joined([run.engine === undefined ? undefined : 'durable', run.status, new Date(run.startedAt).toLocaleTimeString()]);

/** How many tasks of a run ended in each state, the non-zero ones: `1 completed, 1 failed, 2 cancelled`. */
export function stateCounts(run: RunSnapshot): string {
  const counts = new Map<string, number>();
  for (const task of run.tasks) counts.set(task.state, (counts.get(task.state) ?? 0) + 1);
  return ['completed', 'failed', 'cancelled', 'running', 'pending']
    .filter((state) => counts.has(state))
    .map((state) => `${counts.get(state)} ${state}`)
    .join(', ');
}

/** The lines of a run's tooltip below its dag_id and status. */
export function runDetails(run: RunSnapshot): string[] {
  return [
    `${fileName(run.uri)} · started ${new Date(run.startedAt).toLocaleString()}`,
    joined([
      `${run.finishedTasks}/${counted(run.tasks.length, 'task')} finished`,
      duration(run.startedAt, run.finishedAt),
      formatCost(run.costCu),
    ]),
    stateCounts(run),
    run.engine === undefined ? `run ${run.runId}` : `durable run ${run.runId} on ${run.engine}`,
  ];
}

/** The first task that failed, in the DAG's order; undefined when none did. */
export const firstFailure = (run: RunSnapshot): TaskSnapshot | undefined =>
  run.tasks.find((task) => task.state === 'failed');

/** What the notification at the end of a run that did not complete says. */
export function runEndMessage(run: RunSnapshot): string {
  const failure = firstFailure(run);
  const said = `${run.dagId} (${fileName(run.uri)}) ${run.status}: ${stateCounts(run)}.`;
  if (failure === undefined) return said;
  const reason = failure.error === undefined ? '' : `: ${failure.error.message} (${failure.error.code})`;
  return `${said} First failure: ${failure.taskId}${reason}`;
}

/** What the notification says when the server refused to run a DAG with errors. */
export const refusalMessage = (uri: string, errors: number): string =>
  `${fileName(uri)} was not run: the DAG has ${counted(errors, 'error')}.`;
