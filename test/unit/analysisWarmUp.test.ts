// The DAG the server analyses while idle to compile the analysis: it must take the paths a user's file takes (a DAG
// with problems would compile the error paths instead).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { warmUpDag } from '../../server/src/analysisWarmUp';
import { analyzeDag } from '../../server/src/dag/analyze';

test('the warm-up DAG is clean and uses every input form', () => {
  const analysis = analyzeDag(warmUpDag(1_000));
  assert.deepEqual(analysis.diagnostics, []);
  const { tasks, edges } = analysis.model;
  assert.equal(tasks.length, 1_000);
  assert.ok(edges.length > 1_000);
  const forms = new Set(tasks.map((task) => `${task.inputForm} ${task.sourceForm} ${task.field !== undefined}`));
  assert.deepEqual([...forms].sort(), [
    'literal absent false',
    'reference many false',
    'reference single false',
    'reference single true',
  ]);
});
