// What Show Output shows of a task: an error as Markdown to read (the error first, wrapped, the task's own id, its
// facts, the error's data), an output as pretty JSON headed by the task's id.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TaskSnapshot } from '../../client/src/runSnapshot';
import { WRAP_COLUMNS, showsOutputAsJson, taskOutputText, wrapped } from '../../client/src/taskOutputText';

const run = { runId: '7f3a9c1e-2b4d-4e6f-8a0b-1c2d3e4f5a6b', dagId: 'dag_fails' };
const wireId = 'task_score-0d9c8b7a-6f5e-4d3c-2b1a-0f9e8d7c6b5a';
const message =
  'no provider offers sentiment-analysis: the providers configured in acmp.providers (local, served) do not list ' +
  'it, and the built-in provider does not serve it; add a provider that offers it or change the capability';

const failed: TaskSnapshot = {
  taskId: 'task_score',
  state: 'failed',
  capability: 'sentiment-analysis',
  providerId: 'served',
  startedAt: '2026-01-01T10:00:00.100Z',
  finishedAt: '2026-01-01T10:00:00.220Z',
  costCu: 0.003,
  error: { code: -33002, message, data: { task_id: wireId, capability: 'sentiment-analysis' } },
  wireTaskId: wireId,
};

test("a failed task's output is its error first, wrapped, then its own id, provider, times, cost and the data", () => {
  assert.equal(showsOutputAsJson(failed), false);
  const text = taskOutputText(failed, run);
  assert.equal(
    text,
    [
      '# Error -33002 (capability not found)',
      '',
      'no provider offers sentiment-analysis: the providers configured in acmp.providers (local, served) do',
      'not list it, and the built-in provider does not serve it; add a provider that offers it or change',
      'the capability',
      '',
      '- task: `task_score` (failed)',
      '- capability: sentiment-analysis',
      '- provider: served',
      '- started: 2026-01-01T10:00:00.100Z',
      '- finished: 2026-01-01T10:00:00.220Z · after 120 ms',
      '- cost: 0.003 CU',
      '- run: `7f3a9c1e-2b4d-4e6f-8a0b-1c2d3e4f5a6b` of `dag_fails`',
      '',
      '## Error data',
      '',
      'As the provider sent it. Its `task_id` is the wire task id, the id this run sent the provider for',
      "`task_score`, not the DAG's.",
      '',
      '```json',
      '{',
      `  "task_id": "${wireId}",`,
      '  "capability": "sentiment-analysis"',
      '}',
      '```',
      '',
    ].join('\n'),
  );
  // The wire id is there once, in the data and said to be what it is.
  assert.equal(text.split(wireId).length - 1, 1);
  for (const line of text.split('\n')) assert.ok(line.length <= WRAP_COLUMNS, line);
});

test('a wire id not in the data is listed once, labelled, after the task own id; no data, no data section', () => {
  const text = taskOutputText({ ...failed, error: { code: -33003, message: 'timed out after 30000 ms' } }, run);
  assert.match(text, /^# Error -33003 \(timeout\)\n\ntimed out after 30000 ms\n\n- task: `task_score` \(failed\)\n/);
  assert.ok(text.includes(`\n- wire task id, sent to the provider: \`${wireId}\`\n`));
  assert.equal(text.split(wireId).length - 1, 1);
  assert.equal(text.includes('## Error data'), false);
  // A code outside Layer 1's table is its number alone.
  assert.match(
    taskOutputText({ ...failed, error: { code: -32603, message: 'internal error' } }, run),
    /^# Error -32603\n/,
  );
});

test("a message's own lines, indentation and unbreakable words are kept; a fence longer than the data's backticks", () => {
  const url = `https://example.com/${'x'.repeat(120)}`;
  assert.deepEqual(wrapped(`see ${url} for more\n  at step 2`), ['see', url, 'for more', '  at step 2']);
  assert.deepEqual(wrapped(`- ${'word '.repeat(30).trim()}`, '  '), [
    `- ${'word '.repeat(19).trim()}`,
    `  ${'word '.repeat(11).trim()}`,
  ]);
  const text = taskOutputText({ ...failed, error: { code: -33099, message: 'bad', data: { note: '```' } } }, run);
  assert.ok(text.includes('\n````json\n{\n  "note": "```"\n}\n````\n'), text);
});

test("a completed task's output stays pretty JSON, headed by a comment with its own id and facts", () => {
  const completed: TaskSnapshot = {
    taskId: 'task_split',
    state: 'completed',
    providerId: 'local',
    startedAt: '2026-01-01T10:00:00.000Z',
    finishedAt: '2026-01-01T10:00:00.100Z',
    costCu: 0.0042,
    output: { type: 'json', data: { chunks: ['One.'], count: 1 } },
    wireTaskId: 'task_split-0d9c8b7a',
  };
  assert.equal(showsOutputAsJson(completed), true);
  const text = taskOutputText(completed, run);
  const [heading, ...json] = text.split('\n');
  assert.equal(heading, '// task_split · completed · local · 100 ms · 0.0042 CU');
  assert.equal(json.join('\n'), `${JSON.stringify(completed.output, null, 2)}\n`);
});

test('a task whose output was not kept says why, wrapped, with its facts', () => {
  const notKept: TaskSnapshot = { taskId: 'task_big', state: 'completed', outputNotKeptBytes: 12 * 1024 * 1024 };
  assert.equal(showsOutputAsJson(notKept), false);
  const text = taskOutputText(notKept, run);
  assert.match(text, /^# task_big: no output\n\nThe output of task_big \(12\.0 MB\) was not kept across the window/);
  assert.ok(text.includes('\n- task: `task_big` (completed)\n'));
  for (const line of text.split('\n')) assert.ok(line.length <= WRAP_COLUMNS, line);
});
