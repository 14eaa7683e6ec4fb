// What `acmp-dag run` and the durable runs print on a terminal: a line per event worth one, then a summary.
import type { RunEvent, RunReport, TaskState } from '../protocol/report';
import { cachedFromText } from '../run/planText';
import { StoredOutput } from '../run/spilledOutputs';

const STATE_MARK: Record<TaskState, string> = {
  pending: '·',
  running: '▶',
  completed: '✓',
  failed: '✗',
  cancelled: '⊘',
};

/** A compact one-line JSON, cut at `limit` characters; an output kept on disk is not read for it. */
function preview(value: unknown, limit = 160): string {
  if (value instanceof StoredOutput) {
    return `{"type":${JSON.stringify(value.type)},"data":…} (${(value.bytes / 1024 / 1024).toFixed(1)} MB; --json prints it)`;
  }
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

const formatCost = (cost: number): string => `${Number(cost.toPrecision(6))} CU`;

/** Prints each event worth a line: state changes (with duration and cost when a task ends), heartbeats, violations. */
export function progressPrinter(write: (line: string) => void): (event: RunEvent) => void {
  let startedAt = 0;
  const taskStarted = new Map<string, number>();
  const costs = new Map<string, number>();
  const width = { id: 12 };
  const elapsed = (at: string): string => `${String(Date.parse(at) - startedAt).padStart(6)} ms`;
  return (event) => {
    switch (event.type) {
      case 'run-started':
        startedAt = Date.parse(event.at);
        width.id = Math.min(32, Math.max(12, ...event.tasks.map((id) => id.length)));
        write(`Running ${event.dag_id}: ${event.tasks.length} task(s), policy ${event.policy}`);
        return;
      case 'task-state': {
        if (event.state === 'pending') return;
        if (event.cached !== undefined) {
          const { cost_cu: saved } = event.cached;
          write(
            `${elapsed(event.at)}  ${STATE_MARK.completed}  ${event.task_id.padEnd(width.id)}  ${'cached'.padEnd(9)}  ${cachedFromText(event.cached)}${saved > 0 ? `, ${formatCost(saved)} saved` : ''}`,
          );
          return;
        }
        const parts = [
          elapsed(event.at),
          STATE_MARK[event.state],
          event.task_id.padEnd(width.id),
          event.state.padEnd(9),
        ];
        const at = Date.parse(event.at);
        if (event.state === 'running') {
          taskStarted.set(event.task_id, at);
          if (event.provider_id !== undefined) parts.push(`on ${event.provider_id}`);
        } else {
          const started = taskStarted.get(event.task_id);
          if (started !== undefined) parts.push(`${at - started} ms`);
          const cost = costs.get(event.task_id);
          if (cost !== undefined) parts.push(formatCost(cost));
          if (event.error !== undefined) parts.push(`${event.error.code} ${event.error.message}`);
        }
        write(parts.join('  '));
        return;
      }
      case 'heartbeat': {
        const progress = event.progress === undefined ? '' : ` ${Math.round(event.progress * 100)}%`;
        write(
          `${elapsed(event.at)}  …  ${event.task_id.padEnd(width.id)}  alive${progress}${event.detail ? ` ${event.detail}` : ''}`,
        );
        return;
      }
      case 'cost':
        costs.set(event.task_id, event.cost_cu);
        if (event.violation) {
          write(
            `${elapsed(event.at)}  !  ${event.task_id.padEnd(width.id)}  cost ${formatCost(event.cost_cu)} is above max_price_cu ${formatCost(event.max_price_cu ?? 0)}`,
          );
        }
        return;
      default:
        return;
    }
  };
}

/** `; 5 from the result store, 0.005 CU saved`, when the store served tasks. */
function cachedText(report: RunReport): string {
  const cached = report.totals.cached;
  if (cached === undefined || cached.tasks === 0) return '';
  return `; ${cached.tasks} from the result store, ${formatCost(cached.saved_cu)} saved`;
}

export function summary(report: RunReport): string {
  const count = (state: TaskState) => report.tasks.filter((task) => task.state === state).length;
  const duration = Date.parse(report.finished_at) - Date.parse(report.started_at);
  const lines = [
    '',
    `${report.status} in ${duration} ms: ${count('completed')} completed, ${count('failed')} failed, ${count('cancelled')} cancelled; ${formatCost(report.totals.cost_cu)}, ${report.totals.tokens_used} tokens${cachedText(report)}`,
  ];
  const mismatched = report.tasks.filter((task) => task.proof === 'mismatch').map((task) => task.task_id);
  if (mismatched.length > 0) lines.push(`result-hash proof MISMATCH: ${mismatched.join(', ')}`);
  const verified = report.tasks.filter((task) => task.proof === 'verified').length;
  if (verified > 0) lines.push(`result-hash proofs verified: ${verified}`);
  if (report.streamed_edges.length > 0) {
    lines.push(`streamed edges: ${report.streamed_edges.map((edge) => `${edge.from} → ${edge.to}`).join(', ')}`);
  }
  const leaves = Object.entries(report.result);
  if (leaves.length > 0) {
    lines.push('result:');
    for (const [taskId, output] of leaves) lines.push(`  ${taskId}: ${preview(output)}`);
  }
  return lines.join('\n');
}
