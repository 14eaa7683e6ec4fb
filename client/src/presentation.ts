// How runs and tasks look: state icons, colours and one-line summaries, shared by the tree, the editor and the log.
import { ThemeColor, ThemeIcon } from 'vscode';
import type { RunStatus, TaskState } from '../../server/src/run/types';
import type { RunSnapshot, TaskSnapshot } from './runs';

type Shown = TaskState | RunStatus | 'running';

const COLOR: Record<Shown, ThemeColor | undefined> = {
  pending: new ThemeColor('testing.iconQueued'),
  running: undefined,
  completed: new ThemeColor('testing.iconPassed'),
  failed: new ThemeColor('testing.iconFailed'),
  cancelled: new ThemeColor('testing.iconSkipped'),
};

const ICON: Record<Shown, string> = {
  pending: 'circle-outline',
  running: 'sync~spin',
  completed: 'pass',
  failed: 'error',
  cancelled: 'circle-slash',
};

/** The symbol before a state where no icon can go (inline in the editor). */
const SYMBOL: Record<TaskState, string> = {
  pending: '○',
  running: '◔',
  completed: '✓',
  failed: '✗',
  cancelled: '⊘',
};

export const stateIcon = (state: Shown): ThemeIcon => new ThemeIcon(ICON[state], COLOR[state]);
export const stateColor = (state: Shown): ThemeColor | undefined => COLOR[state];

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

const joined = (parts: readonly (string | undefined)[]): string =>
  parts.filter((part) => part !== undefined && part !== '').join(' · ');

const taskDuration = (task: TaskSnapshot): string | undefined => {
  const ms = durationMs(task.startedAt, task.finishedAt);
  return ms === undefined ? undefined : formatDuration(ms);
};
const taskCost = (task: TaskSnapshot): string | undefined =>
  task.costCu === undefined ? undefined : formatCost(task.costCu);

/** `✓ completed · 120 ms · 0.003 CU`: a task's last state, inline after its declaration. */
export const taskSummary = (task: TaskSnapshot): string =>
  joined([`${SYMBOL[task.state]} ${task.state}`, taskDuration(task), taskCost(task)]);

/** `sentiment-analysis · local · 120 ms · 0.003 CU`: what the tree shows beside a task's id. */
export const taskDescription = (task: TaskSnapshot): string =>
  joined([task.capability, task.providerId, taskDuration(task), taskCost(task)]);

/** `completed · 14:03:22 · 1.2 s · 0.012 CU`: what the tree shows beside a run's dag_id. */
export function runDescription(run: RunSnapshot): string {
  const ms = durationMs(run.startedAt, run.finishedAt);
  return joined([
    run.status,
    new Date(run.startedAt).toLocaleTimeString(),
    ms === undefined ? undefined : formatDuration(ms),
    formatCost(run.costCu),
  ]);
}

/** The start of a JSON value, for a tooltip. */
export function preview(value: unknown, maxChars = 600): string {
  const text = JSON.stringify(value, null, 2) ?? String(value);
  return text.length <= maxChars ? text : `${text.slice(0, maxChars)}…`;
}
