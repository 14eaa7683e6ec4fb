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

/** A number of CU as the editor shows it: three significant digits at most. */
const cu = (value: number): number => Number(value.toPrecision(3));

export const formatCost = (costCu: number): string => `${cu(costCu)} CU`;

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

/** The price a task went at and how it was agreed: `offer 0.002 CU`, `direct 0.002 CU`, `direct` (price unknown). */
export function taskPrice(task: TaskSnapshot): string | undefined {
  if (task.pricing === undefined) return task.priceCu === undefined ? undefined : formatCost(task.priceCu);
  return task.priceCu === undefined ? task.pricing : `${task.pricing} ${formatCost(task.priceCu)}`;
}

/**
 * A task's row beside its id: `completed · 0.0019 CU · offer 0.002 CU` (its state, its cost, its price), or
 * `completed · cached` for an output the result store had (it cost nothing and had no price).
 */
export const taskDescription = (task: TaskSnapshot): string =>
  task.cached === undefined ? joined([task.state, taskCost(task), taskPrice(task)]) : joined([task.state, 'cached']);

/** A time of day, `10:41`, with its date when it is not today's. */
function madeAt(iso: string): string {
  const made = new Date(iso);
  const time = made.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return made.toDateString() === new Date().toDateString() ? time : `${made.toLocaleDateString()} ${time}`;
}

/** A run id as the editor shows it where room is short: `1b2c3d4e…`. */
const shortRunId = (runId: string): string => (runId.length > 9 ? `${runId.slice(0, 8)}…` : runId);

/** Where a cached task's output came from: `from run 1b2c3d4e… (made 10:41, saved 0.001 CU)`. */
export const cachedFrom = ({ run_id: runId, made_at: made, cost_cu: cost }: NonNullable<TaskSnapshot['cached']>) =>
  `from run ${shortRunId(runId)} (made ${madeAt(made)}, saved ${formatCost(cost)})`;

/** The lines of a task's tooltip below its id and state: what the tree row has no room for. */
export function taskDetails(task: TaskSnapshot): string[] {
  return [
    joined([task.capability, task.providerId && `provider ${task.providerId}`]),
    joined([
      taskPrice(task) && `price: ${taskPrice(task)}`,
      task.offers === undefined ? undefined : counted(task.offers, 'offer'),
    ]),
    joined([
      taskDuration(task),
      taskCost(task),
      task.tokensUsed === undefined ? undefined : counted(task.tokensUsed, 'token'),
      task.proof === undefined || task.proof === 'absent' ? undefined : `proof ${task.proof}`,
    ]),
    task.cached === undefined ? '' : `result store: ${cachedFrom(task.cached)}`,
    task.error === undefined ? '' : `Error ${task.error.code}: ${task.error.message}`,
  ].filter((line) => line !== '');
}

/** The run stopped because its budget could not cover some task. */
export const stoppedOnBudget = (run: RunSnapshot): boolean => run.budget?.stopped === true;

/** What a run spent against its total budget, `0.012 / 0.02 CU`; undefined without one. */
export function budgetSpend(run: RunSnapshot): string | undefined {
  const cap = run.budget?.total_cap_cu;
  return cap === undefined ? undefined : `${cu(run.budget!.spent_cu)} / ${formatCost(cap)}`;
}

/** The tasks of a run whose outputs came from the result store, and what they had cost when they were made. */
export function cachedTasks(run: RunSnapshot): { readonly tasks: number; readonly savedCu: number } {
  let tasks = 0;
  let savedCu = 0;
  for (const { cached } of run.tasks) {
    if (cached === undefined) continue;
    tasks += 1;
    savedCu += cached.cost_cu;
  }
  return { tasks, savedCu };
}

/** The symbol of a state where no icon can go: inline in the editor, and in counts of tasks. */
export const STATE_SYMBOL: Record<TaskSnapshot['state'], string> = {
  pending: '○',
  running: '◔',
  completed: '✓',
  failed: '✗',
  cancelled: '⊘',
};

const SHOWN_STATES = ['completed', 'failed', 'cancelled', 'running', 'pending'] as const;

/**
 * How many tasks of a run are in each state, the non-zero ones, each state named by `name`; the completed say how
 * many came from the result store.
 */
function eachStateCount(run: RunSnapshot, name: (state: TaskSnapshot['state']) => string, separator: string): string {
  const counts = new Map<TaskSnapshot['state'], number>();
  for (const task of run.tasks) counts.set(task.state, (counts.get(task.state) ?? 0) + 1);
  const cached = cachedTasks(run).tasks;
  return SHOWN_STATES.filter((state) => counts.has(state))
    .map(
      (state) =>
        `${counts.get(state)} ${name(state)}${state === 'completed' && cached > 0 ? ` (${cached} cached)` : ''}`,
    )
    .join(separator);
}

/**
 * How many tasks of a run ended in each state: `1 completed, 1 failed, 2 cancelled`, or
 * `3 completed (2 cached), 1 failed` where outputs came from the result store.
 */
export const stateCounts = (run: RunSnapshot): string => eachStateCount(run, (state) => state, ', ');

/**
 * A run's tasks in a few characters: `512/1000` finished while it runs (the status bar's figure), `512/1000, 3 ✗`
 * with failures; once it ended, each state's count, `2 ✓ 1 ✗ 1 ⊘`, or `12 ✓ (10 cached)` where outputs came from
 * the result store.
 */
export function runCounts(run: RunSnapshot): string {
  if (run.status !== 'running') return eachStateCount(run, (state) => STATE_SYMBOL[state], ' ');
  const failures = run.tasks.filter((task) => task.state === 'failed').length;
  return `${run.finishedTasks}/${run.tasks.length}${failures === 0 ? '' : `, ${failures} ${STATE_SYMBOL.failed}`}`;
}

/**
 * Beside a run's dag_id in the tree, its status first, which the default side bar width has room for:
 * `running · 512/1000 · 14:03:22 · durable`, `failed · 2 ✓ 1 ✗ 1 ⊘ · 14:03:22`,
 * `stopped by its budget · 1 ✓ 1 ⊘ · 14:03:22 · 0.012 / 0.02 CU`. The tooltip (runDetails) has all of it.
 */
export const runDescription = (run: RunSnapshot): string =>
  joined([
    stoppedOnBudget(run) ? 'stopped by its budget' : run.status,
    runCounts(run),
    new Date(run.startedAt).toLocaleTimeString(),
    budgetSpend(run),
    run.engine === undefined ? undefined : 'durable',
  ]);

/** What the result store saved a run: `2 outputs from the result store saved 0.003 CU`; '' where it gave none. */
function savedLine(run: RunSnapshot): string {
  const { tasks, savedCu } = cachedTasks(run);
  return tasks === 0 ? '' : `${counted(tasks, 'output')} from the result store saved ${formatCost(savedCu)}`;
}

/** The run's budget in the tooltip: its limits, what it spent, and what it stopped on. */
function budgetLine({ budget }: RunSnapshot): string {
  if (budget === undefined) return '';
  const limits = joined([
    budget.total_cap_cu === undefined ? undefined : `budget ${formatCost(budget.total_cap_cu)}`,
    budget.per_task_max_cu === undefined ? undefined : `at most ${formatCost(budget.per_task_max_cu)} a task`,
  ]);
  const stopped = budget.stopped ? `, stopped: ${counted(budget.denied_tasks.length, 'task')} not covered` : '';
  return `${limits}: spent ${formatCost(budget.spent_cu)}${stopped}`;
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
    savedLine(run),
    budgetLine(run),
    run.engine === undefined ? `run ${run.runId}` : `durable run ${run.runId} on ${run.engine}`,
  ].filter((line) => line !== '');
}

/** The first task that failed, in the DAG's order; undefined when none did. */
export const firstFailure = (run: RunSnapshot): TaskSnapshot | undefined =>
  run.tasks.find((task) => task.state === 'failed');

/** What the tasks the budget did not cover would have cost: `0.01 CU more`, `0.01 CU and 1 task of unknown price more`. */
function restCost({ known_cu: known, unpriced }: { known_cu: number; unpriced: number }): string {
  return unpriced === 0
    ? `${formatCost(known)} more`
    : `${formatCost(known)} and ${counted(unpriced, 'task')} of unknown price more`;
}

/** What the notification at the end of a run that did not complete says. */
export function runEndMessage(run: RunSnapshot): string {
  const { budget } = run;
  if (budget?.stopped === true) {
    const cap = budget.total_cap_cu === undefined ? '' : ` of ${formatCost(budget.total_cap_cu)}`;
    const denied = counted(budget.denied_tasks.length, 'task');
    return (
      `${run.dagId} (${fileName(run.uri)}) stopped by its budget: spent ${formatCost(budget.spent_cu)}${cap}; ` +
      `${denied} it could not cover did not start (${budget.denied_tasks.slice(0, 3).join(', ')}` +
      `${budget.denied_tasks.length > 3 ? ', …' : ''}), which would have cost ${restCost(budget.rest)}.`
    );
  }
  const failure = firstFailure(run);
  const said = `${run.dagId} (${fileName(run.uri)}) ${run.status}: ${stateCounts(run)}.`;
  if (failure === undefined) return said;
  const reason = failure.error === undefined ? '' : `: ${failure.error.message} (${failure.error.code})`;
  return `${said} First failure: ${failure.taskId}${reason}`;
}

/**
 * What the notification says when a run of part of a DAG (Run Task, Run From Here, Re-run Failed) needs outputs of
 * upstream tasks that the result store does not have.
 */
export function needsUpstreamMessage(uri: string, missing: readonly string[]): string {
  const shown = missing.slice(0, 5).join(', ');
  const more = missing.length > 5 ? ` and ${missing.length - 5} more` : '';
  const them = missing.length === 1 ? 'it' : 'them';
  return `${fileName(uri)}: the result store has no output of ${shown}${more}, which this run needs. Run ${them} too?`;
}

/** What the notification says when the server refused to run a DAG with errors. */
export const refusalMessage = (uri: string, errors: number): string =>
  `${fileName(uri)} was not run: the DAG has ${counted(errors, 'error')}.`;

/**
 * The budget Raise Budget and Re-run suggests: the plan's estimate when it is known whole and above the old budget,
 * else twice the old budget (or the estimate, if more); undefined when neither is known.
 */
export function suggestedBudget(
  estimate: { readonly known_cu: number; readonly unpriced: number } | undefined,
  oldBudget: number | undefined,
): number | undefined {
  const doubled = oldBudget === undefined ? undefined : cu(2 * oldBudget);
  if (estimate === undefined || estimate.known_cu <= 0) return doubled;
  const planned = cu(estimate.known_cu);
  if (estimate.unpriced === 0 && (oldBudget === undefined || planned > oldBudget)) return planned;
  return Math.max(planned, doubled ?? 0);
}

/** Why a budget typed in is not one (a positive number of CU); undefined when it is. */
export function budgetInputError(text: string): string | undefined {
  const value = Number(text.trim());
  return text.trim() !== '' && Number.isFinite(value) && value > 0 ? undefined : 'A positive number of CU, e.g. 0.05';
}
