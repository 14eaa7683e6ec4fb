// Quick fixes over stdio: for each diagnostic code, the fix's edit applied to the text gives the exact expected text
// (layout kept), valid JSON, and a file where that diagnostic is gone.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { CodeAction, Diagnostic } from 'vscode-languageserver-types';
import { type LspSession, startLspSession } from '../support/lspHarness';

let session: LspSession;
let opened = 0;

/** Opens the text under a fresh uri and returns its first published diagnostics. */
async function openText(text: string): Promise<{ uri: string; diagnostics: Diagnostic[] }> {
  const uri = `file:///virtual/fix-${++opened}.acmp-dag.json`;
  const published = session.diagnostics(uri);
  await session.open(uri, text);
  return { uri, diagnostics: (await published).diagnostics };
}

/** The code actions for a diagnostic: quick fixes only, the kinds `only` lists, or, with 'any', unfiltered. */
const requestActions = (uri: string, diagnostic: Diagnostic, only: string[] | 'any' = ['quickfix']) =>
  session.connection.sendRequest<CodeAction[]>('textDocument/codeAction', {
    textDocument: { uri },
    range: diagnostic.range,
    context: { diagnostics: [diagnostic], ...(only === 'any' ? {} : { only }) },
  });

/** The `nth` diagnostic of `code` in the text, and the quick fixes offered for it. */
async function actionsFor(text: string, code: string, nth = 0) {
  const { uri, diagnostics } = await openText(text);
  const ofCode = diagnostics.filter((d) => d.code === code);
  const diagnostic = ofCode[nth];
  assert.ok(diagnostic, `no ${code} diagnostic #${nth} in ${JSON.stringify(diagnostics.map((d) => d.code))}`);
  return { uri, diagnostic, diagnostics, ofCode, actions: await requestActions(uri, diagnostic) };
}

const errorsAndWarnings = (diagnostics: readonly Diagnostic[]) => diagnostics.filter((d) => (d.severity ?? 1) <= 2);
const countByCode = (diagnostics: readonly Diagnostic[]) => {
  const counts = new Map<string, number>();
  for (const d of errorsAndWarnings(diagnostics)) counts.set(String(d.code), (counts.get(String(d.code)) ?? 0) + 1);
  return counts;
};

/**
 * Applies an action's edit to the text as the editor would, sends the result as a change of the document and waits
 * for its diagnostics; checks that the result parses and that no code has more errors or warnings than before.
 */
async function applyAction(uri: string, text: string, before: readonly Diagnostic[], action: CodeAction) {
  const changes = action.edit?.changes;
  assert.deepEqual(Object.keys(changes ?? {}), [uri]);
  const result = TextDocument.applyEdits(TextDocument.create(uri, 'acmp-dag', 1, text), changes![uri]!);
  assert.doesNotThrow(() => JSON.parse(result), result);
  const version = ++versions;
  const published = session.diagnostics(uri, (p) => p.version === version);
  await session.change(uri, version, result);
  const after = (await published).diagnostics;
  const counts = countByCode(before);
  for (const [code, count] of countByCode(after)) {
    assert.ok(count <= (counts.get(code) ?? 0), `new ${code}: ${JSON.stringify(after.map((d) => d.message))}`);
  }
  return { text: result, diagnostics: after };
}
let versions = 1;

/**
 * Applies the quick fix titled `title` for the `nth` diagnostic of `code`, checks the action's shape, that the
 * diagnostic is gone and that no new error appears, and returns the resulting text.
 */
async function applyFix(text: string, code: string, title: string, nth = 0): Promise<string> {
  const { uri, diagnostic, diagnostics, ofCode, actions } = await actionsFor(text, code, nth);
  const action = actions.find((a) => a.title === title);
  assert.ok(action, `no action ${JSON.stringify(title)} among ${JSON.stringify(actions.map((a) => a.title))}`);
  assert.equal(action.kind, 'quickfix');
  assert.deepEqual(action.diagnostics, [diagnostic]);
  const fixed = await applyAction(uri, text, diagnostics, action);
  const after = fixed.diagnostics.filter((d) => d.code === code);
  assert.ok(after.length < ofCode.length, `${code} left: ${JSON.stringify(after.map((d) => d.message))}`);
  assert.ok(!after.some((d) => d.message === diagnostic.message), diagnostic.message as string);
  return fixed.text;
}

/** A DAG written by hand: one-line tasks, inputs and edges, two-space indentation. */
const handWritten = (edges: string, third = '') => `{
  "dag_id": "dag_fix",
  "tasks": [
    { "task_id": "task_a", "capability": "echo", "input": { "type": "text", "data": "hi" } },
    { "task_id": "task_b", "capability": "echo", "input": { "source": { "from_task": "task_a" } } }${third}
  ],
${edges}
}
`;
const TASK_C = `,
    { "task_id": "task_c", "capability": "echo", "input": { "source": { "from_tasks": ["task_a", "task_b"] } } }`;

/** The same kind of DAG as plain data, for the layouts JSON.stringify makes. */
const dagValue = (edges: { from: string; to: string }[] | undefined) => ({
  dag_id: 'dag_fix',
  tasks: [
    { task_id: 'task_a', capability: 'echo', input: { type: 'text', data: 'hi' } },
    { task_id: 'task_b', capability: 'echo', input: { source: { from_task: 'task_a' } } },
    { task_id: 'task_c', capability: 'echo', input: { source: { from_tasks: ['task_a', 'task_b'] } } },
  ],
  ...(edges === undefined ? {} : { edges }),
});
const AB = { from: 'task_a', to: 'task_b' };
const AC = { from: 'task_a', to: 'task_c' };
const BC = { from: 'task_b', to: 'task_c' };

before(async () => {
  session = await startLspSession();
});
after(async () => session.stop());

describe('quick fix: missing-edge adds the edge', () => {
  test('after one-line edges, as a one-line edge, preferred', async () => {
    const text = handWritten(
      `  "edges": [
    { "from": "task_a", "to": "task_b" },
    { "from": "task_a", "to": "task_c" }
  ]`,
      TASK_C,
    );
    const { actions } = await actionsFor(text, 'missing-edge');
    assert.deepEqual(
      actions.map((a) => [a.title, a.isPreferred]),
      [['Add edge "task_b" → "task_c"', true]],
    );
    const fixed = await applyFix(text, 'missing-edge', 'Add edge "task_b" → "task_c"');
    assert.equal(
      fixed,
      handWritten(
        `  "edges": [
    { "from": "task_a", "to": "task_b" },
    { "from": "task_a", "to": "task_c" },
    { "from": "task_b", "to": "task_c" }
  ]`,
        TASK_C,
      ),
    );
  });

  test('after multi-line edges, as a multi-line edge with the same indentation', async () => {
    const text = JSON.stringify(dagValue([AB, AC]), null, 2);
    const fixed = await applyFix(text, 'missing-edge', 'Add edge "task_b" → "task_c"');
    assert.equal(fixed, JSON.stringify(dagValue([AB, AC, BC]), null, 2));
  });

  test('into an empty edges list, on its own line in the style of the sources', async () => {
    const text = handWritten('  "edges": []');
    const fixed = await applyFix(text, 'missing-edge', 'Add edge "task_a" → "task_b"');
    assert.equal(fixed, handWritten('  "edges": [\n    { "from": "task_a", "to": "task_b" }\n  ]'));
  });

  test('into an empty edges list indented with tabs', async () => {
    const text = JSON.stringify(dagValue([AB, AC]), null, '\t').replace(/"edges": \[[^\]]*\]/, '"edges": []');
    const fixed = await applyFix(text, 'missing-edge', 'Add edge "task_a" → "task_b"');
    assert.equal(fixed, JSON.stringify(dagValue([AB]), null, '\t'));
  });

  test('creates the edges property when it is absent', async () => {
    const withoutEdges = handWritten('').replace('  ],\n\n}', '  ]\n}');
    const fixed = await applyFix(withoutEdges, 'missing-edge', 'Add edge "task_a" → "task_b"');
    assert.equal(fixed, handWritten('  "edges": [\n    { "from": "task_a", "to": "task_b" }\n  ]'));

    const stringified = JSON.stringify(dagValue(undefined), null, 2);
    const fixedStringified = await applyFix(stringified, 'missing-edge', 'Add edge "task_a" → "task_b"');
    assert.equal(fixedStringified, JSON.stringify(dagValue([AB]), null, 2));
  });

  test('in a file on one line, on one line', async () => {
    assert.equal(
      await applyFix(JSON.stringify(dagValue(undefined)), 'missing-edge', 'Add edge "task_a" → "task_b"'),
      JSON.stringify(dagValue([AB])),
    );
    assert.equal(
      await applyFix(JSON.stringify(dagValue([AB, AC])), 'missing-edge', 'Add edge "task_b" → "task_c"'),
      JSON.stringify(dagValue([AB, AC, BC])),
    );
  });
});

describe('quick fix: dangling-edge', () => {
  const withEdges = (edges: string) =>
    `{
  "dag_id": "dag_fix",
  "tasks": [
    { "task_id": "task_fetch", "capability": "echo", "input": { "type": "text", "data": "hi" } },
    { "task_id": "task_summarize", "capability": "echo", "input": { "source": { "from_task": "task_fetch" } } },
    { "task_id": "task_sentiment", "capability": "echo", "input": { "type": "text", "data": "ok" } }
  ],
  "edges": [${edges}]
}`;

  test('offers the closest id, preferred, then removing the edge', async () => {
    const text = withEdges('{ "from": "task_fetch", "to": "task_sumarize" }');
    const { actions } = await actionsFor(text, 'dangling-edge');
    assert.deepEqual(
      actions.map((a) => [a.title, a.isPreferred ?? false]),
      [
        ['Change to "task_summarize"', true],
        ['Remove edge "task_fetch" → "task_sumarize"', false],
      ],
    );
    const fixed = await applyFix(text, 'dangling-edge', 'Change to "task_summarize"');
    assert.equal(fixed, withEdges('{ "from": "task_fetch", "to": "task_summarize" }'));
    assert.deepEqual((await openText(fixed)).diagnostics, []);
  });

  test('removing the only edge leaves []', async () => {
    const text = withEdges('\n    { "from": "task_fetch", "to": "task_zzz" }\n  ');
    const fixed = await applyFix(text, 'dangling-edge', 'Remove edge "task_fetch" → "task_zzz"');
    assert.equal(fixed, withEdges(''));
  });

  test('offers at most three close ids, never the other end, and no far ones unless they lack the edge', async () => {
    const close = withEdges('{ "from": "task_fetch", "to": "task_fetcx" }')
      .replace('"task_summarize"', '"task_fetch2"')
      .replace('"task_sentiment"', '"task_fetch3"')
      .replace('"from_task": "task_fetch"', '"from_task": "task_fetcx"');
    const { actions } = await actionsFor(close, 'dangling-edge');
    assert.deepEqual(
      actions.map((a) => a.title),
      ['Change to "task_fetch2"', 'Change to "task_fetch3"', 'Remove edge "task_fetch" → "task_fetcx"'],
    );
    const far = await actionsFor(withEdges('{ "from": "task_fetch", "to": "totally_other" }'), 'dangling-edge');
    // task_summarize reads task_fetch without an edge: it is what this edge was meant to reach, however far.
    assert.deepEqual(
      far.actions.map((a) => a.title),
      ['Change to "task_summarize"', 'Remove edge "task_fetch" → "totally_other"'],
    );
    const unrelated = withEdges(
      '{ "from": "task_fetch", "to": "totally_other" }, { "from": "task_fetch", "to": "task_summarize" }',
    );
    assert.deepEqual(
      (await actionsFor(unrelated, 'dangling-edge')).actions.map((a) => a.title),
      ['Remove edge "task_fetch" → "totally_other"'],
    );
  });
});

describe('quick fix: unknown-task', () => {
  const dag = (id: string) => `{
  "dag_id": "dag_fix",
  "tasks": [
    { "task_id": "task_fetch", "capability": "echo", "input": { "type": "text", "data": "hi" } },
    { "task_id": "task_summarize", "capability": "echo", "input": { "source": { "from_task": "${id}" } } }
  ],
  "edges": [
    { "from": "${id}", "to": "task_summarize" }
  ]
}`;

  test('changes the reference and the edges into the task that name the same id', async () => {
    const text = dag('task_fecth');
    const { actions } = await actionsFor(text, 'unknown-task');
    assert.deepEqual(
      actions.map((a) => [a.title, a.isPreferred]),
      [['Change to "task_fetch"', true]],
    );
    const fixed = await applyFix(text, 'unknown-task', 'Change to "task_fetch"');
    assert.equal(fixed, dag('task_fetch'));
    assert.deepEqual((await openText(fixed)).diagnostics, [], 'no dangling edge left behind');
  });

  test("never suggests an id the task's from_tasks already names", async () => {
    const text = `{
  "dag_id": "dag_fix",
  "tasks": [
    { "task_id": "task_part_1", "capability": "echo", "input": { "type": "text", "data": "a" } },
    { "task_id": "task_part_2", "capability": "echo", "input": { "type": "text", "data": "b" } },
    { "task_id": "task_join", "capability": "result-aggregation",
      "input": { "source": { "from_tasks": ["task_part_1", "task_part_3"] } } }
  ],
  "edges": [
    { "from": "task_part_1", "to": "task_join" },
    { "from": "task_part_2", "to": "task_join" }
  ]
}`;
    const { actions } = await actionsFor(text, 'unknown-task');
    assert.deepEqual(
      actions.map((a) => [a.title, a.isPreferred]),
      [['Change to "task_part_2"', true]],
    );
  });
});

describe('quick fix: duplicate-edge removes the later edge', () => {
  test('the last element, with the comma before it', async () => {
    const text = handWritten(
      `  "edges": [
    { "from": "task_a", "to": "task_b" },
    { "from": "task_a", "to": "task_b" }
  ]`,
    );
    const { actions } = await actionsFor(text, 'duplicate-edge');
    assert.deepEqual(
      actions.map((a) => [a.title, a.isPreferred]),
      [['Remove duplicate edge "task_a" → "task_b"', true]],
    );
    const fixed = await applyFix(text, 'duplicate-edge', 'Remove duplicate edge "task_a" → "task_b"');
    assert.equal(fixed, handWritten('  "edges": [\n    { "from": "task_a", "to": "task_b" }\n  ]'));
  });

  test('a middle element of a multi-line list', async () => {
    const text = JSON.stringify(dagValue([AB, AC, AB, BC]), null, 2);
    const fixed = await applyFix(text, 'duplicate-edge', 'Remove duplicate edge "task_a" → "task_b"');
    assert.equal(fixed, JSON.stringify(dagValue([AB, AC, BC]), null, 2));
  });

  test('a middle element of a list on one line', async () => {
    const oneLine = (edges: string) =>
      handWritten(
        `  "edges": [{ "from": "task_a", "to": "task_b" }, ${edges}{ "from": "task_b", "to": "task_c" }]`,
        TASK_C,
      );
    const fixed = await applyFix(
      oneLine('{ "from": "task_a", "to": "task_b" }, { "from": "task_a", "to": "task_c" }, '),
      'duplicate-edge',
      'Remove duplicate edge "task_a" → "task_b"',
    );
    assert.equal(fixed, oneLine('{ "from": "task_a", "to": "task_c" }, '));
  });
});

describe('quick fix: duplicate-task-id', () => {
  test('gives the second declaration the first free suffix, and nothing else', async () => {
    const dag = (second: string) => `{
  "dag_id": "dag_fix",
  "tasks": [
    { "task_id": "task_a", "capability": "echo", "input": { "type": "text", "data": "hi" } },
    { "task_id": "task_a_2", "capability": "echo", "input": { "source": { "from_task": "task_a" } } },
    { "task_id": "${second}", "capability": "echo", "input": { "type": "text", "data": "again" } }
  ],
  "edges": [{ "from": "task_a", "to": "task_a_2" }]
}`;
    const { actions } = await actionsFor(dag('task_a'), 'duplicate-task-id');
    assert.deepEqual(
      actions.map((a) => a.title),
      ['Rename this task to "task_a_3"'],
    );
    assert.equal(await applyFix(dag('task_a'), 'duplicate-task-id', 'Rename this task to "task_a_3"'), dag('task_a_3'));
  });
});

describe('quick fix: stream-field', () => {
  const dag = (source: string, edge: string) => `{
  "dag_id": "dag_fix",
  "tasks": [
    { "task_id": "task_a", "capability": "echo", "input": { "type": "text", "data": "hi" } },
    { "task_id": "task_b", "capability": "echo", "input": { "source": ${source} } }
  ],
  "edges": [
    ${edge}
  ]
}`;
  const SOURCE = '{ "from_task": "task_a", "field": "data.text" }';
  const EDGE = '{ "from": "task_a", "to": "task_b", "stream_eligible": true }';

  test('offers dropping stream_eligible or the field', async () => {
    const { actions } = await actionsFor(dag(SOURCE, EDGE), 'stream-field');
    assert.deepEqual(
      actions.map((a) => a.title),
      ['Drop stream_eligible from edge "task_a" → "task_b"', 'Remove field "data.text"'],
    );
  });

  test('drops stream_eligible, the last property of a one-line edge', async () => {
    const fixed = await applyFix(
      dag(SOURCE, EDGE),
      'stream-field',
      'Drop stream_eligible from edge "task_a" → "task_b"',
    );
    assert.equal(fixed, dag(SOURCE, '{ "from": "task_a", "to": "task_b" }'));
  });

  test('drops stream_eligible, a middle property of a multi-line edge', async () => {
    const multiLine = (middle: string) => `{
      "from": "task_a",${middle}
      "to": "task_b"
    }`;
    const fixed = await applyFix(
      dag(SOURCE, multiLine('\n      "stream_eligible": true,')),
      'stream-field',
      'Drop stream_eligible from edge "task_a" → "task_b"',
    );
    assert.equal(fixed, dag(SOURCE, multiLine('')));
  });

  test('removes the field, the first property of the source', async () => {
    const fieldFirst = '{ "field": "data.text", "from_task": "task_a" }';
    const fixed = await applyFix(dag(fieldFirst, EDGE), 'stream-field', 'Remove field "data.text"');
    assert.equal(fixed, dag('{ "from_task": "task_a" }', EDGE));
  });
});

describe('quick fix: cycle', () => {
  test('removes the edge the diagnostic is on: the first of a multi-line list', async () => {
    const BA = { from: 'task_b', to: 'task_a' };
    const text = JSON.stringify(dagValue([BA, AB, AC, BC]), null, 2);
    const { actions } = await actionsFor(text, 'cycle');
    assert.deepEqual(
      actions.map((a) => [a.title, a.isPreferred ?? false]),
      [['Remove edge "task_b" → "task_a"', false]],
    );
    const fixed = await applyFix(text, 'cycle', 'Remove edge "task_b" → "task_a"');
    assert.equal(fixed, JSON.stringify(dagValue([AB, AC, BC]), null, 2));
    assert.deepEqual((await openText(fixed)).diagnostics, []);
  });
});

describe('quick fixes answer only for their own current diagnostics', () => {
  test('a stale range, a foreign source or another requested kind gets no action', async () => {
    const text = handWritten('  "edges": []');
    const { uri, diagnostic } = await actionsFor(text, 'missing-edge');
    const shifted = { ...diagnostic, range: { ...diagnostic.range, end: diagnostic.range.start } };
    assert.deepEqual(await requestActions(uri, shifted), []);
    assert.deepEqual(
      (await requestActions(uri, shifted, 'any')).map((a) => a.kind),
      ['source.fixAll'],
      'unfiltered, only the fix-all of the whole file',
    );
    assert.deepEqual(await requestActions(uri, { ...diagnostic, source: 'other-linter' }), []);
    assert.deepEqual(await requestActions(uri, diagnostic, ['refactor']), []);
    assert.equal((await requestActions(uri, diagnostic, ['quickfix'])).length, 1);
  });

  test('a broken text still gets an answer', async () => {
    const broken = handWritten('  "edges": [').slice(0, -3);
    const { uri, diagnostics } = await openText(broken);
    for (const diagnostic of diagnostics) assert.ok(Array.isArray(await requestActions(uri, diagnostic)));
    const missing = diagnostics.find((d) => d.code === 'missing-edge');
    assert.ok(missing, JSON.stringify(diagnostics.map((d) => d.code)));
    assert.equal((await requestActions(uri, missing)).length, 1);
  });
});
