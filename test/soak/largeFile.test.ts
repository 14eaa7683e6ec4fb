// A 50 MB DAG file: under the default size limit it gets the limit diagnostic at once, in the analysis and from the
// language server; with the limit raised it is analysed, whole or cut off, without crashing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';
import { startLspSession } from '../support/lspHarness';

const MB = 1024 * 1024;

/** A valid DAG of at least `megabytes` MB: pairs of a task with 20 KB of literal text and a task reading it. */
function largeDag(megabytes: number): { text: string; taskCount: number } {
  const payload = 'All work and no play makes a large DAG. '.repeat(512);
  const pairs = Math.ceil((megabytes * MB) / payload.length);
  const tasks = Array.from({ length: pairs }, (_, i) => [
    { task_id: `task_${i}_text`, capability: 'echo', input: { type: 'text', data: payload } },
    { task_id: `task_${i}_echo`, capability: 'echo', input: { source: { from_task: `task_${i}_text` } } },
  ]).flat();
  const edges = Array.from({ length: pairs }, (_, i) => ({ from: `task_${i}_text`, to: `task_${i}_echo` }));
  return { text: JSON.stringify({ dag_id: 'dag_large', tasks, edges }, null, 2), taskCount: tasks.length };
}

const seconds = (started: number): string => ((performance.now() - started) / 1000).toFixed(2);

describe('a 50 MB file', () => {
  const { text, taskCount } = largeDag(50);
  const raised = { limits: { maxFileBytes: 100 * MB } };

  test('gets the limit diagnostic at once under the default limit', () => {
    assert.ok(text.length >= 50 * MB, `${text.length} characters`);
    const started = performance.now();
    const { diagnostics } = analyzeDag(text);
    assert.ok(performance.now() - started < 1000, `${seconds(started)} s`);
    assert.deepEqual(
      diagnostics.map((d) => [d.code, d.start, d.end]),
      [['limit', 0, 1]],
    );
  });

  test('is analysed with the limit raised', () => {
    const started = performance.now();
    const analysis = analyzeDag(text, raised);
    assert.deepEqual(analysis.diagnostics, []);
    assert.equal(analysis.model.tasks.length, taskCount);
    console.log(`50 MB analysed in ${seconds(started)} s`);
  });

  test('cut off in the middle, is analysed with the limit raised: syntax errors inside the text', () => {
    const cut = text.slice(0, Math.floor(text.length * 0.75));
    const started = performance.now();
    const { diagnostics } = analyzeDag(cut, raised);
    assert.ok(diagnostics.some((d) => d.code === 'json-syntax'));
    assert.ok(diagnostics.every((d) => d.start >= 0 && d.start <= d.end && d.end <= cut.length));
    console.log(`37 MB cut off analysed in ${seconds(started)} s`);
  });

  test('gets the limit diagnostic from the language server, which keeps answering', { timeout: 60_000 }, async () => {
    const session = await startLspSession();
    try {
      const uri = 'file:///virtual/large.acmp-dag.json';
      const published = session.diagnostics(uri);
      await session.open(uri, text);
      const { diagnostics } = await published;
      assert.deepEqual(
        diagnostics.map((d) => d.code),
        ['limit'],
      );
      const symbols = await session.connection.sendRequest<unknown[]>('textDocument/documentSymbol', {
        textDocument: { uri },
      });
      assert.deepEqual(symbols, []);
    } finally {
      await session.stop();
    }
  });
});
