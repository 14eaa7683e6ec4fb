// How runs and tasks look: state icons, colours and one-line summaries, shared by the tree, the editor and the log.
import { ThemeColor, ThemeIcon } from 'vscode';
import type { RunStatus, TaskState } from '../../server/src/protocol/report';
import type { TaskSnapshot } from './runSnapshot';
import { STATE_SYMBOL, joined, taskCost, taskDuration } from './runText';

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

export const stateIcon = (state: Shown): ThemeIcon => new ThemeIcon(ICON[state], COLOR[state]);
export const stateColor = (state: Shown): ThemeColor | undefined => COLOR[state];

/**
 * `✓ completed · 120 ms · 0.003 CU`: a task's last state, inline after its declaration; `✓ cached` for an output the
 * result store had (no time taken, nothing paid).
 */
export const taskSummary = (task: TaskSnapshot): string =>
  task.cached === undefined
    ? joined([`${STATE_SYMBOL[task.state]} ${task.state}`, taskDuration(task), taskCost(task)])
    : `${STATE_SYMBOL[task.state]} cached`;

/** The start of a JSON value, for a tooltip. */
export function preview(value: unknown, maxChars = 600): string {
  const text = JSON.stringify(value, null, 2) ?? String(value);
  return text.length <= maxChars ? text : `${text.slice(0, maxChars)}…`;
}
