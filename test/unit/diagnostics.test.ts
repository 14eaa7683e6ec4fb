// The analysis core against fixture files with their expected diagnostics: every code fires where it must and
// stays silent on valid input.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { type AnalysisOptions, analyzeDag } from '../../server/src/dag/analyze';
import { DIAGNOSTIC_CODES } from '../../server/src/dag/diagnostic';
import { analysisOptionsOf, readFixtureOptions } from '../support/fixtureOptions';
import { marketDag } from '../support/marketDag';

const FIXTURES = join(__dirname, '../fixtures/diagnostics');
const names = readdirSync(FIXTURES)
  .filter((file) => file.endsWith('.acmp-dag.json'))
  .map((file) => file.slice(0, -'.acmp-dag.json'.length));

const seen = new Set<string>();

for (const name of names) {
  test(`fixture ${name}`, () => {
    const text = readFileSync(join(FIXTURES, `${name}.acmp-dag.json`), 'utf8');
    const optionsFile = join(FIXTURES, `${name}.options.json`);
    const options = analysisOptionsOf(readFixtureOptions(optionsFile));
    const expected = JSON.parse(readFileSync(join(FIXTURES, `${name}.expected.json`), 'utf8')) as unknown[];
    const document = TextDocument.create('file:///f', 'acmp-dag', 1, text);
    const { diagnostics } = analyzeDag(text, options);
    for (const d of diagnostics) {
      assert.ok(d.start >= 0 && d.start <= d.end && d.end <= text.length, `${d.code} range inside the text`);
      assert.ok(d.message.length > 10, 'a message that says something');
      for (const related of d.related ?? []) assert.ok(related.end <= text.length);
      seen.add(d.code);
    }
    assert.deepEqual(
      [...diagnostics]
        .sort((a, b) => a.start - b.start || a.end - b.end)
        .map((d) => ({
          code: d.code,
          severity: d.severity,
          line: document.positionAt(d.start).line + 1,
          text: text.slice(d.start, d.end),
        })),
      expected,
    );
  });
}

test('the fixtures exercise every diagnostic code', () => {
  assert.deepEqual(
    DIAGNOSTIC_CODES.filter((code) => !seen.has(code)),
    [],
  );
});

test('messages name the tasks involved', () => {
  const text = readFileSync(join(FIXTURES, 'every-error.acmp-dag.json'), 'utf8');
  const diagnostics = analyzeDag(text).diagnostics;
  const cycle = diagnostics.find((d) => d.code === 'cycle' && d.message.includes('task_split'))!;
  assert.match(cycle.message, /the cycle task_split → task_left → task_join → task_split:.*remove this edge/);
  assert.deepEqual(
    cycle.related!.map((related) => [related.message, text.slice(related.start, related.end)]),
    [
      ['edge task_split → task_left on the cycle', '{ "from": "task_split", "to": "task_left" }'],
      ['edge task_left → task_join on the cycle', '{ "from": "task_left", "to": "task_join" }'],
    ],
  );
  const messages = diagnostics.map((d) => `${d.code}: ${d.message}`);
  assert.ok(
    messages.some((m) => m.startsWith('unknown-task') && m.includes('"task_rihgt"') && m.includes('"task_join"')),
  );
  const self = messages.find((m) => m.startsWith('missing-edge'))!;
  assert.match(self, /"task_split" reads its own output.*cannot depend on itself/);
  assert.doesNotMatch(self, /task_split → task_split|"from": "task_split", "to": "task_split"/);
});

/** The file's diagnostics as `code: the text they are on`. */
function found(text: string, options: AnalysisOptions = {}): string[] {
  return analyzeDag(text, options).diagnostics.map((d) => `${d.code}: ${text.slice(d.start, d.end)}`);
}

const literal = { type: 'text', data: 'x' };
const task = (id: string, input: unknown, extra: object = {}) => ({ task_id: id, capability: 'echo', input, ...extra });
const dagText = (tasks: unknown[], edges: unknown[]): string =>
  JSON.stringify({ dag_id: 'dag_cascade', tasks, edges }, null, 2);

test('a half-typed property is a syntax error only, not also a missing property', () => {
  const half = (edge: string, id = '"task_a"') =>
    `{"dag_id": "dag_x", "tasks": [{"task_id": ${id}, "capability": "echo", "input": {"type": "text", "data": 1}}], "edges": [${edge}]}`;
  assert.deepEqual(found(half('{ "from": , "to": "task_a" }')), ['json-syntax: ,']);
  assert.deepEqual(found(half('{ "from": "task_a", "to": }')), ['json-syntax: }']);
  assert.deepEqual(found(half('', '')), ['json-syntax: ,']);
  // Without the key, the property is missing.
  assert.deepEqual(found(half('{ "to": "task_a" }')), ['schema: { "to": "task_a" }']);
});

test('a renamed edge end is one dangling-edge naming the id the reference reads, not also a missing-edge', () => {
  const text = dagText(
    [task('task_real', literal), task('task_t', { source: { from_task: 'task_real' } })],
    [{ from: 'task_ghost', to: 'task_t' }],
  );
  const [diagnostic, ...rest] = analyzeDag(text).diagnostics;
  assert.deepEqual(rest, []);
  assert.equal(diagnostic!.code, 'dangling-edge');
  assert.equal(text.slice(diagnostic!.start, diagnostic!.end), '"task_ghost"');
  assert.match(
    diagnostic!.message,
    /"task_ghost", but no task has that id; task "task_t" reads "task_real".*change it to "task_real"/,
  );
  assert.deepEqual(
    diagnostic!.related!.map((related) => text.slice(related.start, related.end)),
    ['"task_real"'],
  );
});

test('renamed ends pair with the references that lack their edges in order; the rest stay as they are', () => {
  const text = dagText(
    [
      task('task_a', literal),
      task('task_b', literal),
      task('task_c', literal),
      task('task_t', { source: { from_tasks: ['task_a', 'task_b', 'task_c'] } }),
    ],
    [
      { from: 'task_x', to: 'task_t' },
      { from: 'task_y', to: 'task_t' },
    ],
  );
  const diagnostics = analyzeDag(text).diagnostics;
  assert.deepEqual(
    diagnostics.map((d) => `${d.code}: ${text.slice(d.start, d.end)}`),
    ['missing-edge: "task_c"', 'dangling-edge: "task_x"', 'dangling-edge: "task_y"'],
  );
  assert.match(diagnostics[1]!.message, /change it to "task_a"/);
  assert.match(diagnostics[2]!.message, /change it to "task_b"/);
  // An unpaired dangling end, and an edge dangling at both ends, keep the plain message.
  const unpaired = dagText(
    [task('task_a', literal)],
    [
      { from: 'task_x', to: 'task_a' },
      { from: 'task_y', to: 'task_z' },
    ],
  );
  assert.deepEqual(found(unpaired), ['dangling-edge: "task_x"', 'dangling-edge: "task_y"', 'dangling-edge: "task_z"']);
  for (const d of analyzeDag(unpaired).diagnostics)
    assert.match(d.message, /no task has that id: change it to an existing/);
});

test('a task that reads its own output is told it cannot, not to add a self-loop; a self-loop edge is its own cycle', () => {
  const self = task('task_x', { source: { from_task: 'task_x' } });
  const [alone] = analyzeDag(dagText([self], [])).diagnostics;
  assert.equal(alone!.code, 'missing-edge');
  assert.match(alone!.message, /^Task "task_x" reads its own output.*cannot depend on itself.*another|upstream task/);
  assert.doesNotMatch(alone!.message, /add/);
  const withLoop = dagText([self], [{ from: 'task_x', to: 'task_x' }]);
  assert.deepEqual(found(withLoop), [
    'missing-edge: "task_x"',
    'cycle: {\n      "from": "task_x",\n      "to": "task_x"\n    }',
  ]);
  assert.match(
    analyzeDag(withLoop).diagnostics[1]!.message,
    /task_x → task_x: a task cannot depend on itself; remove this edge/,
  );
});

test('a deleted task with 50 dependents: one diagnostic in each place that names it, none twice', () => {
  const dependents = Array.from({ length: 50 }, (_, i) => task(`task_d${i}`, { source: { from_task: 'task_gone' } }));
  const text = dagText(
    dependents,
    dependents.map((dependent) => ({ from: 'task_gone', to: dependent.task_id })),
  );
  const diagnostics = analyzeDag(text).diagnostics;
  assert.equal(diagnostics.filter((d) => d.code === 'unknown-task').length, 50);
  assert.equal(diagnostics.filter((d) => d.code === 'dangling-edge').length, 50);
  assert.equal(diagnostics.length, 100);
  assert.equal(new Set(diagnostics.map((d) => d.start)).size, 100, 'no place twice');
  for (const d of diagnostics) {
    assert.equal(text.slice(d.start, d.end), '"task_gone"');
    assert.equal(d.message.split('"task_gone"').length, 2, `names the missing id once: ${d.message}`);
  }
});

test('one fault in one place is one diagnostic', () => {
  const tiers = dagText(
    Array.from({ length: 5 }, (_, i) => task(`task_${i}`, literal, { preferred_tier: 'C' })),
    [],
  );
  assert.deepEqual(found(tiers), Array(5).fill('schema: "C"'));
  // The same upstream read twice without its edge: one edit (the edge) settles both references.
  const twice = dagText(
    [task('task_a', literal), task('task_b', { source: { from_tasks: ['task_a', 'task_a'] } })],
    [],
  );
  assert.deepEqual(found(twice), ['missing-edge: "task_a"']);
  assert.equal(analyzeDag(twice).diagnostics[0]!.related!.length, 2);
  // A sub-field with from_tasks over a stream_eligible edge: removing the field settles both warnings.
  const streamed = dagText(
    [task('task_a', literal), task('task_b', { source: { from_tasks: ['task_a'], field: 'data.x' } })],
    [{ from: 'task_a', to: 'task_b', stream_eligible: true }],
  );
  assert.deepEqual(found(streamed), ['from-tasks-field: "data.x"']);
  // A second declaration of an id is to be renamed: its form is not reported on top.
  const again = dagText([task('a', literal), task('a', literal)], []);
  assert.deepEqual(found(again), ['id-format: "a"', 'duplicate-task-id: "a"']);
});

test('a clean file of 1,000 market tasks gets no diagnostic; one wrong edge in it is one error, on that edge', () => {
  const dag = marketDag(1_000);
  assert.deepEqual(analyzeDag(JSON.stringify(dag, null, 2)).diagnostics, []);
  // As after a mistaken edit: an edge from a late task back to its ancestor 20 steps up (through first upstreams).
  const firstUpstream = new Map(dag.edges.map((edge): [string, string] => [edge.to, edge.from]).reverse());
  let ancestor = 'task_900';
  for (let step = 0; step < 20; step++) ancestor = firstUpstream.get(ancestor) ?? ancestor;
  const wrong = { from: 'task_900', to: ancestor };
  const edges = [...dag.edges];
  edges.splice(edges.length / 2, 0, wrong);
  const text = JSON.stringify({ ...dag, edges }, null, 2);
  const diagnostics = analyzeDag(text).diagnostics;
  assert.deepEqual(
    diagnostics.map((d) => [d.code, text.slice(d.start, d.end)]),
    [['cycle', JSON.stringify(wrong, null, 2).replace(/\n/g, '\n    ')]],
  );
  assert.match(diagnostics[0]!.message, new RegExp(`cycle ${ancestor} → .* → task_900 → ${ancestor}:`));
});

test('messages read as sentences, with lines and columns rather than offsets and empty strings named as empty', () => {
  const unclosed = analyzeDag('{\n  "dag_id": "dag_x",\n  "tasks": [').diagnostics;
  assert.match(unclosed[0]!.message, /expected '\]' to close the array opened at line 3, column 12$/);
  const empty = dagText(
    [task('task_a', { source: { from_task: '' } }, { capability: '' })],
    [{ from: '', to: 'task_a' }],
  );
  assert.deepEqual(
    analyzeDag(empty, analysisOptionsOf({ knownCapabilities: ['echo'] })).diagnostics.map(
      (d) => d.message.split(/[,:;]/)[0],
    ),
    [
      'No provider offers an empty capability (task "task_a"). Offered',
      'Task "task_a" references an empty task id in from_task',
      'Edge #1 "from" names an empty task id',
    ],
  );
  const [emptyId] = analyzeDag(dagText([task('task_a', literal), task('', literal)], [])).diagnostics;
  assert.match(emptyId!.message, /^Task #2 has an empty task_id/);
  const texts = names.map((name) => readFileSync(join(FIXTURES, `${name}.acmp-dag.json`), 'utf8'));
  for (const text of [...texts, empty]) {
    for (const d of analyzeDag(text).diagnostics) {
      assert.match(d.message, /^[A-Z]/, `starts a sentence: ${d.message}`);
      assert.doesNotMatch(d.message, /\boffset\b|""/, d.message);
    }
  }
});
