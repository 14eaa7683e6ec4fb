// What the extension says about runs: the notifications at a run's end and at a refusal, the tree's tooltips, and
// the report Show Report rebuilds in the server's shape.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runReport } from '../../client/src/runReport';
import {
  budgetInputError,
  firstFailure,
  needsUpstreamMessage,
  refusalMessage,
  runDescription,
  runDetails,
  runEndMessage,
  stateCounts,
  suggestedBudget,
  taskDescription,
  taskDetails,
} from '../../client/src/runText';
import type { RunSnapshot, TaskSnapshot } from '../../client/src/runSnapshot';

const failed: TaskSnapshot = {
  taskId: 'task_translate',
  state: 'failed',
  capability: 'translation',
  providerId: 'local',
  startedAt: '2026-01-01T10:00:00.100Z',
  finishedAt: '2026-01-01T10:00:00.220Z',
  error: { code: -33002, message: 'no provider offers translation' },
  proof: 'absent',
};

const run = (tasks: TaskSnapshot[], status: RunSnapshot['status']): RunSnapshot => ({
  runId: 'run-1',
  uri: 'file:///work/my%20pipeline.acmp-dag.json',
  dagId: 'dag_pipeline',
  status,
  startedAt: '2026-01-01T10:00:00.000Z',
  finishedAt: '2026-01-01T10:00:01.500Z',
  costCu: 0.0042,
  tasks,
  finishedTasks: tasks.length,
  policy: 'fail-fast',
});

const completed: TaskSnapshot = {
  taskId: 'task_split',
  state: 'completed',
  capability: 'text-split',
  providerId: 'local',
  startedAt: '2026-01-01T10:00:00.000Z',
  finishedAt: '2026-01-01T10:00:00.100Z',
  costCu: 0.0042,
  tokensUsed: 1,
  output: { type: 'json', data: { chunks: ['One.'], count: 1 } },
  proof: 'verified',
  wireTaskId: 'wire-1',
};
const cancelled: TaskSnapshot = { taskId: 'task_after', state: 'cancelled', finishedAt: '2026-01-01T10:00:00.220Z' };

test('a failed run names the DAG, its file, the counts and the first failure with its error', () => {
  const ended = run([completed, failed, cancelled], 'failed');
  assert.equal(
    runEndMessage(ended),
    'dag_pipeline (my pipeline.acmp-dag.json) failed: 1 completed, 1 failed, 1 cancelled. ' +
      'First failure: task_translate: no provider offers translation (-33002)',
  );
  assert.equal(firstFailure(ended)?.taskId, 'task_translate');
});

test('a cancelled run without a failure gives the counts alone', () => {
  const ended = run([completed, cancelled], 'cancelled');
  assert.equal(runEndMessage(ended), 'dag_pipeline (my pipeline.acmp-dag.json) cancelled: 1 completed, 1 cancelled.');
  assert.equal(firstFailure(ended), undefined);
});

test('a refusal says how many errors, singular or plural', () => {
  const uri = 'file:///work/my%20pipeline.acmp-dag.json';
  assert.equal(refusalMessage(uri, 1), 'my pipeline.acmp-dag.json was not run: the DAG has 1 error.');
  assert.equal(refusalMessage(uri, 191), 'my pipeline.acmp-dag.json was not run: the DAG has 191 errors.');
});

test("the tooltips hold what the tree's rows leave out: capability, provider, timings, cost, proof, error", () => {
  assert.deepEqual(taskDetails(completed), [
    'text-split · provider local',
    '100 ms · 0.0042 CU · 1 token · proof verified',
  ]);
  assert.deepEqual(taskDetails(failed), [
    'translation · provider local',
    '120 ms',
    'Error -33002: no provider offers translation',
  ]);
  assert.deepEqual(taskDetails(cancelled), []);
  const [file, totals, states, id] = runDetails(run([completed, failed, cancelled], 'failed'));
  assert.match(file!, /^my pipeline\.acmp-dag\.json · started /);
  assert.equal(totals, '3/3 tasks finished · 1.5 s · 0.0042 CU');
  assert.equal(states, '1 completed, 1 failed, 1 cancelled');
  assert.equal(id, 'run run-1');
});

test('a durable run says so after its state, counts and start, and its tooltip names the run and its engine', () => {
  const local = run([completed], 'running');
  const durable: RunSnapshot = { ...local, runId: 'run-7', engine: 'http://127.0.0.1:8080' };
  assert.match(runDescription(durable), /^running · 1\/1 · [^·]+ · durable$/);
  assert.match(runDescription(local), /^running · 1\/1 · [^·]+$/);
  assert.equal(runDetails(durable).at(-1), 'durable run run-7 on http://127.0.0.1:8080');
  assert.equal(runDetails(local).at(-1), 'run run-1');
});

test("a run's row starts with its state and counts, what a narrow side bar shows; its tooltip has the rest", () => {
  // 512 of 1,000 tasks finished, 3 of them failed (best-effort), on the engine: the status bar's figure comes first.
  const tasks: TaskSnapshot[] = Array.from({ length: 1000 }, (_, index) => ({
    taskId: `task_${index}`,
    state: index < 3 ? 'failed' : index < 512 ? 'completed' : 'pending',
  }));
  const durable: RunSnapshot = {
    ...run(tasks, 'running'),
    finishedAt: undefined,
    finishedTasks: 512,
    engine: 'http://127.0.0.1:8080',
    budget: {
      total_cap_cu: 0.02,
      spent_cu: 0.012,
      stopped: false,
      denied_tasks: [],
      rest: { known_cu: 0, unpriced: 0 },
    },
  };
  const startedAt = new Date(durable.startedAt).toLocaleTimeString();
  assert.equal(runDescription(durable), `running · 512/1000, 3 ✗ · ${startedAt} · 0.012 / 0.02 CU · durable`);
  assert.equal(
    runDescription({ ...durable, status: 'failed' }),
    `failed · 509 ✓ 3 ✗ 488 ○ · ${startedAt} · 0.012 / 0.02 CU · durable`,
  );
  // The tooltip keeps what the row shows after the status: the file and start, the spend, that it is durable.
  const details = runDetails(durable);
  assert.match(details[0]!, /^my pipeline\.acmp-dag\.json · started /);
  assert.equal(details[1], '512/1000 tasks finished · 0.0042 CU');
  assert.equal(details[2], '509 completed, 3 failed, 488 pending');
  assert.ok(details.includes('budget 0.02 CU: spent 0.012 CU'));
  assert.equal(details.at(-1), 'durable run run-1 on http://127.0.0.1:8080');
});

test("Show Report rebuilds the server's report: its members, in its order, the leaves' outputs as the result", () => {
  const ended = { ...run([completed, failed, cancelled], 'failed'), tokensUsed: 1, resultTaskIds: ['task_split'] };
  const report = runReport({ ...ended, status: 'failed' });
  assert.deepEqual(Object.keys(report), [
    'dag_id',
    'run_id',
    'status',
    'policy',
    'started_at',
    'finished_at',
    'tasks',
    'result',
    'totals',
    'streamed_edges',
  ]);
  assert.deepEqual(report.tasks[0], {
    task_id: 'task_split',
    state: 'completed',
    provider_id: 'local',
    output: completed.output,
    cost_cu: 0.0042,
    tokens_used: 1,
    proof: 'verified',
    started_at: '2026-01-01T10:00:00.000Z',
    wire_task_id: 'wire-1',
    finished_at: '2026-01-01T10:00:00.100Z',
  });
  assert.deepEqual(report.tasks[1]?.error, failed.error);
  assert.deepEqual(report.tasks[2], {
    task_id: 'task_after',
    state: 'cancelled',
    proof: 'absent',
    finished_at: '2026-01-01T10:00:00.220Z',
  });
  assert.deepEqual(report.result, { task_split: completed.output });
  assert.deepEqual(report.totals, { cost_cu: 0.0042, tokens_used: 1 });
  assert.equal(report.status, 'failed');
});

test("a task's row shows its state, its cost and the price it went at, by offer or direct", () => {
  const offered: TaskSnapshot = { ...completed, costCu: 0.0019, priceCu: 0.002, pricing: 'offer', offers: 2 };
  assert.equal(taskDescription(offered), 'completed · 0.0019 CU · offer 0.002 CU');
  assert.equal(
    taskDescription({ ...completed, priceCu: 0.004, pricing: 'direct' }),
    'completed · 0.0042 CU · direct 0.004 CU',
  );
  // Running: the price agreed, no cost yet; a direct invoke of unknown price says direct alone.
  assert.equal(
    taskDescription({ taskId: 'task_x', state: 'running', priceCu: 0.002, pricing: 'offer' }),
    'running · offer 0.002 CU',
  );
  assert.equal(taskDescription({ taskId: 'task_x', state: 'running', pricing: 'direct' }), 'running · direct');
  assert.equal(taskDescription(cancelled), 'cancelled');
  assert.deepEqual(taskDetails(offered).slice(0, 2), [
    'text-split · provider local',
    'price: offer 0.002 CU · 2 offers',
  ]);
});

const stopped: RunSnapshot = {
  ...run(
    [completed, { ...cancelled, error: { code: -32800, message: 'not started', data: { reason: 'budget' } } }],
    'cancelled',
  ),
  budget: {
    total_cap_cu: 0.005,
    spent_cu: 0.0042,
    stopped: true,
    denied_tasks: ['task_after'],
    rest: { known_cu: 0.003, unpriced: 1 },
  },
};

test('a run with a budget shows its spend against it; one its budget stopped says so in its row, tooltip and end', () => {
  assert.match(runDescription(stopped), /^stopped by its budget · 1 ✓ 1 ⊘ · [^·]+ · 0\.0042 \/ 0\.005 CU$/);
  const within: RunSnapshot = {
    ...stopped,
    status: 'completed',
    budget: { ...stopped.budget!, stopped: false, denied_tasks: [] },
  };
  assert.match(runDescription(within), /^completed · 1 ✓ 1 ⊘ · [^·]+ · 0\.0042 \/ 0\.005 CU$/);
  assert.match(runDescription(run([completed], 'completed')), /^completed · 1 ✓ · [^·]+$/);
  assert.ok(runDetails(stopped).includes('budget 0.005 CU: spent 0.0042 CU, stopped: 1 task not covered'));
  assert.equal(
    runEndMessage(stopped),
    'dag_pipeline (my pipeline.acmp-dag.json) stopped by its budget: spent 0.0042 CU of 0.005 CU; 1 task it could not ' +
      'cover did not start (task_after), which would have cost 0.003 CU and 1 task of unknown price more.',
  );
});

test("Raise Budget suggests the plan's estimate when known and above the old budget, else twice the old budget", () => {
  assert.equal(suggestedBudget({ known_cu: 0.012, unpriced: 0 }, 0.005), 0.012);
  // The estimate fits the old budget (the prices moved), or leaves tasks out: twice the old, or the estimate if more.
  assert.equal(suggestedBudget({ known_cu: 0.004, unpriced: 0 }, 0.005), 0.01);
  assert.equal(suggestedBudget({ known_cu: 0.004, unpriced: 2 }, 0.005), 0.01);
  assert.equal(suggestedBudget({ known_cu: 0.03, unpriced: 2 }, 0.005), 0.03);
  assert.equal(suggestedBudget(undefined, 0.005), 0.01);
  assert.equal(suggestedBudget({ known_cu: 0, unpriced: 3 }, undefined), undefined);
  for (const bad of ['', ' ', '0', '-1', 'abc', 'Infinity', '1e400'])
    assert.ok(budgetInputError(bad), `refused: ${bad}`);
  for (const good of ['0.05', ' 2 ', '1e-3']) assert.equal(budgetInputError(good), undefined, good);
});

test('a task from the result store says so in its row and tooltip, and its run counts such tasks and what they saved', () => {
  const madeAt = new Date();
  madeAt.setHours(10, 41, 0, 0);
  const cached: TaskSnapshot = {
    ...completed,
    taskId: 'task_score',
    costCu: 0,
    cached: {
      run_id: '1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901',
      task_id: 'task_score',
      made_at: madeAt.toISOString(),
      cost_cu: 0.001,
    },
  };
  assert.equal(taskDescription(cached), 'completed · cached');
  const storeLine = taskDetails(cached).find((line) => line.startsWith('result store: '));
  assert.match(storeLine ?? '', /^result store: from run 1b2c3d4e… \(made 10:41(?: AM)?, saved 0\.001 CU\)$/);
  assert.equal(
    taskDetails(completed).find((line) => line.startsWith('result store: ')),
    undefined,
  );

  const mixed = run([completed, cached, { ...cached, taskId: 'task_other' }, failed], 'failed');
  assert.match(runDescription(mixed), /^failed · 3 ✓ \(2 cached\) 1 ✗ · [^·]+$/);
  assert.equal(stateCounts(mixed), '3 completed (2 cached), 1 failed');
  assert.ok(runDetails(mixed).includes('2 outputs from the result store saved 0.002 CU'));
  // A run without cached tasks reads as before.
  assert.match(runDescription(run([completed], 'completed')), /^completed · 1 ✓ · [^·]+$/);
  assert.equal(stateCounts(run([completed, failed], 'failed')), '1 completed, 1 failed');
});

test('a part of a DAG refused for upstream outputs the store lacks names them, the first five and how many more', () => {
  assert.equal(
    needsUpstreamMessage('file:///work/my%20pipeline.acmp-dag.json', ['task_split']),
    'my pipeline.acmp-dag.json: the result store has no output of task_split, which this run needs. Run it too?',
  );
  const many = Array.from({ length: 7 }, (_, index) => `task_${index}`);
  assert.equal(
    needsUpstreamMessage('file:///work/d.acmp-dag.json', many),
    'd.acmp-dag.json: the result store has no output of task_0, task_1, task_2, task_3, task_4 and 2 more, which ' +
      'this run needs. Run them too?',
  );
});
