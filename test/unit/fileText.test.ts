// What the analysis makes of texts that are JSON but not as a run can take them (nesting deeper than a run's
// recursion), of a leading byte order mark, and of file bytes that are not UTF-8.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';
import { MAX_NESTING } from '../../server/src/dag/nesting';
import { analyzeFileText, decodeFileText } from '../../server/src/fileText';

/** A DAG of one task whose input data is `data` (its text), and optionally more task properties. */
const dagWith = (data: string, extra = ''): string =>
  `{"dag_id":"dag_x","tasks":[{"task_id":"task_a","capability":"echo"${extra},"input":{"type":"json","data":${data}}}],"edges":[]}`;

/** An array nest of `levels` levels. */
const arrays = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);

test('nesting up to the limit is clean; one level more is a limit error on the first bracket beyond it', () => {
  // The input data sits at level 5: the top-level object, tasks, the task, its input.
  assert.deepEqual(analyzeDag(dagWith(arrays(MAX_NESTING - 4))).diagnostics, []);
  const text = dagWith(arrays(MAX_NESTING - 3));
  const [diagnostic, ...others] = analyzeDag(text).diagnostics;
  assert.deepEqual(others, []);
  assert.equal(diagnostic!.code, 'limit');
  assert.equal(diagnostic!.severity, 'error', 'run must refuse it, whatever the settings');
  assert.equal(text.slice(diagnostic!.start, diagnostic!.end), '[');
  assert.equal(diagnostic!.start, text.indexOf('[[') + MAX_NESTING - 4);
  assert.match(diagnostic!.message, /^Task "task_a" nests 1001 levels deep here .* more than the 1000 a run can take/);
});

test('objects nest the same; metadata and properties outside the schema are measured too', () => {
  const objects = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
  const inMetadata = analyzeDag(dagWith('1', `,"metadata":{"deep":${objects(2_000)}}`));
  assert.deepEqual(
    inMetadata.diagnostics.map((d) => [d.code, d.message.split(' levels')[0]]),
    [['limit', 'Task "task_a" nests 2004']],
  );
  // An unknown property is a schema warning, and its value is measured as much as the data.
  const unknown = analyzeDag(dagWith('1', `,"extra":${arrays(5_000)}`));
  assert.deepEqual(
    unknown.diagnostics.map((d) => d.code),
    ['schema', 'limit'],
  );
  const beside = analyzeDag(
    `{"dag_id":"dag_x","tasks":[],"edges":[{"from":"a","to":"b","x":${arrays(3_000)}}],"more":${arrays(3_000)}}`,
  );
  assert.deepEqual(
    beside.diagnostics.filter((d) => d.code === 'limit').map((d) => d.message.split(' levels')[0]),
    ['Edge #1 nests 3003', 'Property "more" nests 3001'],
  );
});

test('a leading byte order mark is no syntax error, and offsets still count it', () => {
  const text = '\uFEFF' + dagWith('"x"').replace('"dag_x"', '"x"');
  const diagnostics = analyzeDag(text).diagnostics;
  assert.deepEqual(
    diagnostics.map((d) => [d.code, text.slice(d.start, d.end)]),
    [['id-format', '"x"']],
  );
  // The recovering parser skips it too.
  const broken = analyzeDag('\uFEFF{"dag_id":"dag_x","tasks":[],"edges":[],}').diagnostics;
  assert.deepEqual(
    broken.map((d) => [d.code, d.start]),
    [['json-syntax', 40]],
  );
  // Elsewhere it is no whitespace.
  assert.deepEqual(
    analyzeDag('{"dag_id":"dag_x",\uFEFF"tasks":[],"edges":[]}').diagnostics.map((d) => d.code),
    ['json-syntax'],
  );
});

test('file bytes: a byte order mark is dropped, and bytes that are not UTF-8 are one error at their place', () => {
  const dag = dagWith('"héllo"');
  assert.deepEqual(decodeFileText(Buffer.from('\uFEFF' + dag)), { text: dag });
  assert.deepEqual(analyzeFileText(decodeFileText(Buffer.from('\uFEFF' + dag))).diagnostics, []);

  // A U+FFFD the file holds as UTF-8 is text like any other; the byte 0xFF on line 2 is not UTF-8.
  const before = Buffer.from('{"dag_id":"dag_\uFFFD",\n  "tasks":[{"task_id":"task_');
  const after = Buffer.from('","capability":"echo","input":{"type":"text","data":"x"}}],"edges":[]}');
  const file = decodeFileText(Buffer.concat([before, Buffer.from([0xff]), after]));
  assert.equal(file.notUtf8At, before.toString('utf8').length);
  const { diagnostics, model } = analyzeFileText(file);
  assert.deepEqual(
    diagnostics.map((d) => [d.code, d.severity, d.start, d.end]),
    [['json-syntax', 'error', file.notUtf8At, before.toString('utf8').length + 1]],
  );
  assert.match(diagnostics[0]!.message, /not valid UTF-8: the bytes at line 2, column 29 /);
  assert.deepEqual(model.tasks, [], 'no task id made of replaced bytes');
  // Cut inside a character at the end.
  const cut = decodeFileText(Buffer.from('{"dag_id":"é"}').subarray(0, 12));
  assert.equal(cut.notUtf8At, 11);
});
