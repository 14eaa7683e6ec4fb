// Show Report: a finished run's report (design.md §7) rebuilt from what the extension keeps of it, in the server's
// shape and member order, so that it reads like `acmp-dag run FILE --json`.
import type { TaskOutput, RunReport, TaskReport } from '../../server/src/protocol/report';
import type { RunSnapshot, TaskSnapshot } from './runSnapshot';

function taskReport(task: TaskSnapshot): TaskReport {
  return {
    task_id: task.taskId,
    state: task.state,
    ...(task.providerId !== undefined && { provider_id: task.providerId }),
    ...(task.output !== undefined && { output: task.output }),
    ...(task.outputNotSentBytes !== undefined && { output_not_sent_bytes: task.outputNotSentBytes }),
    ...(task.outputRedacted === true && { output_redacted: true as const }),
    ...(task.error !== undefined && { error: task.error }),
    ...(task.costCu !== undefined && { cost_cu: task.costCu, tokens_used: task.tokensUsed }),
    proof: task.proof ?? 'absent',
    ...(task.startedAt !== undefined && { started_at: task.startedAt }),
    ...(task.wireTaskId !== undefined && { wire_task_id: task.wireTaskId }),
    ...(task.finishedAt !== undefined && { finished_at: task.finishedAt }),
    ...(task.violations !== undefined && { violations: task.violations }),
  };
}

/**
 * The report of a finished run. Outputs the extension no longer has (over the budget it keeps across a reload) are
 * missing from `tasks` and `result`, as they are in the tree.
 */
export function runReport(run: RunSnapshot & { readonly status: RunReport['status'] }): RunReport {
  const outputs = new Map(run.tasks.map((task) => [task.taskId, task.output]));
  const result = (run.resultTaskIds ?? []).flatMap((taskId): [string, TaskOutput][] => {
    const output = outputs.get(taskId);
    return output === undefined ? [] : [[taskId, output]];
  });
  return {
    dag_id: run.dagId,
    run_id: run.runId,
    status: run.status,
    policy: run.policy ?? 'fail-fast',
    started_at: run.startedAt,
    finished_at: run.finishedAt ?? run.startedAt,
    tasks: run.tasks.map(taskReport),
    result: Object.fromEntries(result),
    totals: { cost_cu: run.costCu, tokens_used: run.tokensUsed ?? 0 },
    streamed_edges: run.streamedEdges ?? [],
    ...(run.budget !== undefined && { budget: run.budget }),
  };
}
