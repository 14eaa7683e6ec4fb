// A DagPlan for people: the one-line summary (the CLI, the editor's hover and CodeLens), the full text of
// `acmp-dag plan`, and the same as Markdown for the editor's Show Plan. Every figure carries its basis.
import type { DagPlan, Figure, PlannedTask } from '../protocol/market';
import type { CachedFrom } from '../protocol/report';

/** CU with three significant digits (0.00612 CU, 12.4 CU); more would claim a precision no estimate has. */
export const formatCu = (value: number): string => `${Number(value.toPrecision(3))} CU`;

/** `850 ms`, `3.2 s`, `42 s`, `2 min 5 s`, `1 h 3 min`. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

const twoDigits = (value: number): string => String(value).padStart(2, '0');

/** An ISO-8601 time in local time to the minute: `2026-12-06 10:41`. */
export function minuteText(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const date = `${at.getFullYear()}-${twoDigits(at.getMonth() + 1)}-${twoDigits(at.getDate())}`;
  return `${date} ${twoDigits(at.getHours())}:${twoDigits(at.getMinutes())}`;
}

/** Where a stored result came from, for people: `run 1b2c3d4e…, 2026-12-06 10:41`. */
export const cachedFromText = (cached: Pick<CachedFrom, 'run_id' | 'made_at'>): string =>
  `run ${cached.run_id.slice(0, 8)}…, ${minuteText(cached.made_at)}`;

const plural = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`;

/** A price with its basis: `0.002 CU (advertised)`, or `unknown`. */
export const priceText = (figure: Figure): string =>
  figure.value === undefined ? 'unknown' : `${formatCu(figure.value)} (${figure.basis})`;

/** A latency with its basis: `850 ms (offer)`, or `unknown`. */
export const latencyText = (figure: Figure): string =>
  figure.value === undefined ? 'unknown' : `${formatMs(figure.value)} (${figure.basis})`;

/** The tasks the run could not serve: no provider, or every provider excluded. */
const unservable = (plan: DagPlan): readonly PlannedTask[] =>
  plan.tasks.filter((task) => task.provider_id === undefined);

/** `2 s` or, when tasks of unknown latency are on it, `≥ 2 s`; `unknown` when nothing on it is known. */
function timeText(ms: number, unknown: number, tasks: number): string {
  if (unknown > 0 && unknown >= tasks) return 'unknown';
  return `${unknown > 0 ? '≥ ' : ''}${formatMs(ms)}`;
}

/** A time and how much of it is unknown, in words: `1.2 s`, `≥ 1.2 s (2 tasks of unknown latency counted as 0 ms)`. */
function latencyWithUnknown(ms: number, unknown: number, tasks: number): string {
  const time = timeText(ms, unknown, tasks);
  if (time === 'unknown') return 'unknown (no latency known)';
  return unknown === 0 ? time : `${time} (${plural(unknown, 'task')} of unknown latency counted as 0 ms)`;
}

/** Whether the plan fits `maxCostCu`: `yes`, `no`, or `unknown` while unpriced tasks could take it over. */
export function fitsBudget(plan: DagPlan, maxCostCu: number): 'yes' | 'no' | 'unknown' {
  if (plan.total.known_cu > maxCostCu) return 'no';
  return plan.total.unpriced > 0 ? 'unknown' : 'yes';
}

const FITS_TEXT = { yes: 'within', no: 'over', unknown: 'maybe over' } as const;

/**
 * The plan in one line: `≈ 12.4 CU · 3.2 s critical path · 7 tasks unpriced` (and what cannot run, and the budget
 * when one is given).
 */
export function planSummary(plan: DagPlan, maxCostCu?: number): string {
  const served = plan.tasks.length - unservable(plan).length;
  const cached = plan.total.cached ?? 0;
  const toBuy = served - cached;
  const parts: string[] = [];
  const price = toBuy > plan.total.unpriced ? `≈ ${formatCu(plan.total.known_cu)}` : 'price unknown';
  if (cached === 0) parts.push(price);
  else if (toBuy === 0) parts.push(`0 CU: ${cached === 1 ? 'the task is' : `all ${cached} tasks are`} cached`);
  else parts.push(`${price} for ${plural(toBuy, 'task')} (${cached} cached)`);
  const path = plan.critical_path;
  const pathTime = timeText(path.latency_ms, path.unknown, path.task_ids.length);
  parts.push(pathTime === 'unknown' ? 'critical path unknown' : `${pathTime} critical path`);
  if (plan.total.unpriced > 0) parts.push(`${plural(plan.total.unpriced, 'task')} unpriced`);
  const cannot = plan.tasks.length - served;
  if (cannot > 0) parts.push(`${plural(cannot, 'task')} cannot run`);
  if (maxCostCu !== undefined)
    parts.push(`${FITS_TEXT[fitsBudget(plan, maxCostCu)]} the ${formatCu(maxCostCu)} budget`);
  return parts.join(' · ');
}

/** The columns of the table of tasks: task, capability, provider, price (basis), latency (basis), why. */
function rows(plan: DagPlan): string[][] {
  return plan.tasks.map((task) => [
    task.task_id,
    task.capability,
    task.provider_id ?? '—',
    priceText(task.price),
    latencyText(task.latency),
    whyText(task),
  ]);
}

/** The routing's reason, then the providers the run would not take and why. */
function whyText(task: PlannedTask): string {
  const excluded = task.candidates.filter((candidate) => candidate.excluded !== undefined);
  if (excluded.length === 0) return task.reason;
  return `${task.reason}; ${excluded.map((candidate) => `${candidate.provider_id}: ${candidate.excluded}`).join('; ')}`;
}

const HEADER = ['task', 'capability', 'provider', 'price', 'latency', 'why'];

/** The sections after the table, as [heading, lines] pairs; a section with nothing to say is left out. */
function sections(plan: DagPlan, maxCostCu: number | undefined): [string, string[]][] {
  const found: [string, string[]][] = [];
  const { total, critical_path: path, wall_time: wall } = plan;
  const cached = total.cached ?? 0;
  const toBuy = plan.tasks.length - unservable(plan).length - cached;
  const priced = toBuy - total.unpriced;
  const totalLines: string[] = [];
  if (priced > 0) totalLines.push(`${formatCu(total.known_cu)} for the ${plural(priced, 'task')} of known price`);
  else if (toBuy > 0 || cached === 0) totalLines.push('no task has a known price');
  if (cached > 0) totalLines.push(`${plural(cached, 'task')} cached (the result store holds the results): 0 CU`);
  if (total.unpriced > 0) totalLines.push(`${plural(total.unpriced, 'task')} of unknown price, not counted`);
  if (maxCostCu !== undefined) {
    const fits = fitsBudget(plan, maxCostCu);
    totalLines.push(
      fits === 'yes'
        ? `within the budget of ${formatCu(maxCostCu)}`
        : fits === 'no'
          ? `over the budget of ${formatCu(maxCostCu)} by ${formatCu(total.known_cu - maxCostCu)}`
          : `within the budget of ${formatCu(maxCostCu)} so far, but ${plural(total.unpriced, 'task')} of unknown price could take it over`,
    );
  }
  found.push(['Total', totalLines]);
  found.push([
    'Critical path',
    [
      `${latencyWithUnknown(path.latency_ms, path.unknown, path.task_ids.length)}, ${plural(path.task_ids.length, 'task')}: ${path.task_ids.join(' → ')}`,
    ],
  ]);
  found.push([
    'Wall time',
    [`${latencyWithUnknown(wall.ms, wall.unknown, plan.tasks.length)} at ${wall.concurrency} in flight`],
  ]);
  if (plan.no_provider.length > 0) {
    const byCapability = new Map<string, string[]>();
    for (const { task_id, capability } of plan.no_provider) {
      const ids = byCapability.get(capability);
      if (ids === undefined) byCapability.set(capability, [task_id]);
      else ids.push(task_id);
    }
    found.push([
      'No provider offers',
      [
        ...[...byCapability].map(([capability, ids]) => `${capability}: ${ids.join(', ')}`),
        `The providers offer: ${plan.offered_capabilities.join(', ') || 'no listed capability'}`,
      ],
    ]);
  }
  if (plan.over_budget.length > 0) {
    const byId = new Map(plan.tasks.map((task) => [task.task_id, task]));
    found.push([
      'Over budget',
      plan.over_budget.map((id) => {
        const over = byId.get(id)?.over_budget;
        return over === undefined
          ? id
          : `${id}: at most ${formatCu(over.max_price_cu)}, the cheapest provider asks ${formatCu(over.cheapest_cu)}`;
      }),
    ]);
  }
  const excludedAll = unservable(plan).filter((task) => task.no_provider !== true && task.over_budget === undefined);
  if (excludedAll.length > 0) {
    found.push(['Every provider excluded', excludedAll.map((task) => `${task.task_id}: ${whyText(task)}`)]);
  }
  if (plan.warnings.length > 0) found.push(['Warnings', [...plan.warnings]]);
  return found;
}

function title(plan: DagPlan): string {
  return `Plan for ${plan.dag_id || 'the DAG'}: ${plural(plan.tasks.length, 'task')}, routing ${plan.policy}`;
}

/** The full plan as `acmp-dag plan` prints it: the summary, a table of the tasks, then totals and what cannot run. */
export function planText(plan: DagPlan, maxCostCu?: number): string {
  const table = [HEADER, ...rows(plan)];
  const widths = HEADER.map((_, column) =>
    column === HEADER.length - 1 ? 0 : Math.max(...table.map((row) => row[column]!.length)),
  );
  const lines = [title(plan), planSummary(plan, maxCostCu), ''];
  for (const row of table)
    lines.push(
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    );
  for (const [heading, body] of sections(plan, maxCostCu)) {
    lines.push('', `${heading}:`, ...body.map((line) => `  ${line}`));
  }
  return lines.join('\n');
}

/** A table cell of Markdown: pipes escaped, no line breaks. */
const cell = (text: string): string => text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

/** Rows of the Markdown table at most: a larger plan's table ends with how many rows were left out. */
export const MARKDOWN_MAX_ROWS = 500;

/** The plan as Markdown (the editor's Show Plan): the same as `planText`, the table cut at `maxRows` rows. */
export function planMarkdown(
  plan: DagPlan,
  { maxCostCu, maxRows = MARKDOWN_MAX_ROWS }: { maxCostCu?: number; maxRows?: number } = {},
): string {
  const lines = [`## ${cell(title(plan))}`, '', `**${cell(planSummary(plan, maxCostCu))}**`, ''];
  lines.push(`| ${HEADER.join(' | ')} |`, `|${HEADER.map(() => ' --- |').join('')}`);
  const all = rows(plan);
  for (const row of all.slice(0, maxRows)) lines.push(`| ${row.map(cell).join(' | ')} |`);
  if (all.length > maxRows) {
    lines.push('', `_${all.length - maxRows} more tasks not shown: \`acmp-dag plan FILE\` prints them all._`);
  }
  for (const [heading, body] of sections(plan, maxCostCu)) {
    lines.push('', `### ${heading}`, '', ...body.map((line) => `- ${cell(line)}`));
  }
  return lines.join('\n');
}
