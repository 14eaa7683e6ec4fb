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

/** Tasks and edges on one line each. */
const dagOf = (tasks: string[], edges: string[] = []) => `{
  "dag_id": "dag_fix",
  "tasks": [
    ${tasks.join(',\n    ')}
  ],
  "edges": [${edges.length === 0 ? '' : `\n    ${edges.join(',\n    ')}\n  `}]
}`;
/** A task with more properties after its input. */
const withMore = (task: string, more: string) => `${task.slice(0, -2)}, ${more} }`;
const ROOT = '{ "task_id": "task_a", "capability": "echo", "input": { "type": "text", "data": "hi" } }';
const task = (id: string, rest: string) => `{ "task_id": "${id}", "capability": "echo", ${rest} }`;
const titles = (actions: CodeAction[]) => actions.map((a) => [a.title, a.isPreferred ?? false]);

describe('quick fix: json-syntax trailing comma', () => {
  test('removes the comma, preferred', async () => {
    const text = dagOf([ROOT + ',']);
    const { actions } = await actionsFor(text, 'json-syntax');
    assert.deepEqual(titles(actions), [['Remove trailing comma', true]]);
    assert.equal(await applyFix(text, 'json-syntax', 'Remove trailing comma'), dagOf([ROOT]));
  });
});

describe('quick fix: schema', () => {
  test('a value outside an enum: one change per allowed value, the closest preferred', async () => {
    const text = dagOf([withMore(ROOT, '"preferred_tier": "s"')]);
    const { actions } = await actionsFor(text, 'schema');
    assert.deepEqual(titles(actions), [
      ['Change to "S"', true],
      ['Change to "A"', false],
      ['Change to "B"', false],
    ]);
    assert.match(await applyFix(text, 'schema', 'Change to "B"'), /"preferred_tier": "B" }/);
  });

  test('an unknown property: rename to a close name it does not have, or remove it', async () => {
    const text = dagOf([withMore(ROOT, '"timeout_sm": 5')]);
    const { actions } = await actionsFor(text, 'schema');
    assert.deepEqual(titles(actions), [
      ['Rename to "timeout_ms"', true],
      ['Remove property "timeout_sm"', false],
    ]);
    assert.match(await applyFix(text, 'schema', 'Rename to "timeout_ms"'), /"timeout_ms": 5 }/);
    assert.equal(await applyFix(text, 'schema', 'Remove property "timeout_sm"'), dagOf([ROOT]));
    // "task_id" is there already: never offered as the new name of "task_idd".
    const present = await actionsFor(dagOf([withMore(ROOT, '"task_idd": "x"')]), 'schema');
    assert.deepEqual(titles(present.actions), [['Remove property "task_idd"', false]]);
  });

  test('a missing task_id, capability or input gets a valid one', async () => {
    const b = task('task_b', '"input": { "source": { "from_task": "task_a" } }');
    const edge = ['{ "from": "task_a", "to": "task_b" }'];
    const noId = '{ "capability": "echo", "input": { "type": "text", "data": "x" } }';
    assert.match(
      await applyFix(dagOf([ROOT, b, noId], edge), 'schema', 'Add "task_id"'),
      /"data": "x" }, "task_id": "task_04" }/,
    );
    const noCapability = '{ "task_id": "task_c", "input": { "type": "text", "data": "x" } }';
    assert.match(
      await applyFix(dagOf([ROOT, b, noCapability], edge), 'schema', 'Add "capability"'),
      /"data": "x" }, "capability": "echo" }/,
    );
    const bare = '{ "task_id": "task_c" }';
    const { actions } = await actionsFor(dagOf([ROOT, bare]), 'schema');
    assert.deepEqual(titles(actions), [
      ['Add "capability" and "input"', true],
      ['Add "capability"', false],
      ['Add "input"', false],
    ]);
    assert.match(
      await applyFix(dagOf([ROOT, bare]), 'schema', 'Add "capability" and "input"'),
      /\{ "task_id": "task_c", "capability": "echo", "input": \{ "type": "text", "data": "" \} \}/,
    );
  });

  test("an edge's missing end is a task that reads the other end without its edge", async () => {
    const b = task('task_b', '"input": { "source": { "from_task": "task_a" } }');
    const fixed = await applyFix(dagOf([ROOT, b], ['{ "from": "task_a" }']), 'schema', 'Add "to"');
    assert.equal(fixed, dagOf([ROOT, b], ['{ "from": "task_a", "to": "task_b" }']));
    const both = await applyFix(dagOf([ROOT, b], ['{}']), 'schema', 'Add "from" and "to"');
    assert.equal(both, dagOf([ROOT, b], ['{ "from": "task_a", "to": "task_b" }']));
  });
});

describe('quick fix: metadata-dag-id', () => {
  const withMetadata = (metadata: string) => dagOf([withMore(ROOT, `"metadata": ${metadata}`)]);
  test("sets it to the file's dag_id (preferred) or removes it", async () => {
    const text = withMetadata('{ "requester": "me", "dag_id": "dag_old" }');
    const { actions } = await actionsFor(text, 'metadata-dag-id');
    assert.deepEqual(titles(actions), [
      ['Set metadata.dag_id to "dag_fix"', true],
      ['Remove metadata.dag_id', false],
    ]);
    assert.equal(
      await applyFix(text, 'metadata-dag-id', 'Set metadata.dag_id to "dag_fix"'),
      withMetadata('{ "requester": "me", "dag_id": "dag_fix" }'),
    );
    assert.equal(
      await applyFix(text, 'metadata-dag-id', 'Remove metadata.dag_id'),
      withMetadata('{ "requester": "me" }'),
    );
  });
});

describe('quick fix: input-shape and source-shape', () => {
  const edge = ['{ "from": "task_a", "to": "task_b" }'];
  const b = (input: string) => task('task_b', `"input": ${input}`);

  test('an input with both forms keeps one', async () => {
    const text = dagOf([ROOT, b('{ "source": { "from_task": "task_a" }, "type": "text", "data": "x" }')], edge);
    const { actions } = await actionsFor(text, 'input-shape');
    assert.deepEqual(titles(actions), [
      ['Keep the source', true],
      ['Keep the literal (type/data)', false],
    ]);
    assert.equal(
      await applyFix(text, 'input-shape', 'Keep the source'),
      dagOf([ROOT, b('{ "source": { "from_task": "task_a" } }')], edge),
    );
    assert.equal(
      await applyFix(text, 'input-shape', 'Keep the literal (type/data)'),
      dagOf([ROOT, b('{ "type": "text", "data": "x" }')], edge),
    );
  });

  test('an empty input reads from the task with an edge into it, or gets a literal', async () => {
    const text = dagOf([ROOT, b('{}')], edge);
    const { actions } = await actionsFor(text, 'input-shape');
    assert.deepEqual(titles(actions), [
      ['Read from "task_a"', true],
      ['Add a literal input (type/data)', false],
    ]);
    assert.equal(
      await applyFix(text, 'input-shape', 'Read from "task_a"'),
      dagOf([ROOT, b('{ "source": { "from_task": "task_a" } }')], edge),
    );
    const root = dagOf([ROOT, b('{}')]);
    assert.deepEqual(titles((await actionsFor(root, 'input-shape')).actions), [
      ['Add a literal input (type/data)', true],
    ]);
    assert.equal(
      await applyFix(root, 'input-shape', 'Add a literal input (type/data)'),
      dagOf([ROOT, b('{ "type": "text", "data": "" }')]),
    );
  });

  test('a source with both, neither or an empty from_tasks', async () => {
    const both = dagOf([ROOT, b('{ "source": { "from_task": "task_a", "from_tasks": ["task_a"] } }')], edge);
    assert.deepEqual(titles((await actionsFor(both, 'source-shape')).actions), [
      ['Keep "from_task"', false],
      ['Keep "from_tasks"', false],
    ]);
    assert.equal(
      await applyFix(both, 'source-shape', 'Keep "from_tasks"'),
      dagOf([ROOT, b('{ "source": { "from_tasks": ["task_a"] } }')], edge),
    );
    const neither = dagOf([ROOT, b('{ "source": { "field": "data" } }')], edge);
    assert.equal(
      await applyFix(neither, 'source-shape', 'Read from "task_a"'),
      dagOf([ROOT, b('{ "source": { "field": "data", "from_task": "task_a" } }')], edge),
    );
    const c = task('task_c', '"input": { "type": "text", "data": "c" }');
    const empty = dagOf(
      [ROOT, c, b('{ "source": { "from_tasks": [] } }')],
      [...edge, '{ "from": "task_c", "to": "task_b" }'],
    );
    assert.equal(
      await applyFix(empty, 'source-shape', 'Read from "task_a", "task_c"'),
      dagOf(
        [ROOT, c, b('{ "source": { "from_tasks": ["task_a", "task_c"] } }')],
        [...edge, '{ "from": "task_c", "to": "task_b" }'],
      ),
    );
  });
});

describe('quick fix: a task that reads itself', () => {
  const b = (from: string) => task('task_b', `"input": { "source": { "from_task": "${from}" } }`);
  const c = task('task_c', '"input": { "type": "text", "data": "c" }');

  test('never a self-loop: read from another task, those with an edge into it first', async () => {
    const edges = ['{ "from": "task_c", "to": "task_b" }'];
    const text = dagOf([ROOT, b('task_b'), c], edges);
    const { actions } = await actionsFor(text, 'missing-edge');
    assert.deepEqual(titles(actions), [
      ['Read from "task_c"', true],
      ['Read from "task_a"', false],
    ]);
    assert.equal(await applyFix(text, 'missing-edge', 'Read from "task_c"'), dagOf([ROOT, b('task_c'), c], edges));
    // Another task gets its edge with the reference, so no missing edge takes the place of the fixed one.
    assert.equal(
      await applyFix(text, 'missing-edge', 'Read from "task_a"'),
      dagOf([ROOT, b('task_a'), c], [...edges, '{ "from": "task_a", "to": "task_b" }']),
    );
  });

  test('an unknown id or a dangling edge end never suggests the task itself', async () => {
    const unknown = await actionsFor(dagOf([ROOT, b('task_bb')]), 'unknown-task');
    assert.deepEqual(titles(unknown.actions), [['Change to "task_a"', true]]);
    const dangling = await actionsFor(
      dagOf([ROOT, b('task_a')], ['{ "from": "task_a", "to": "task_b" }', '{ "from": "task_bb", "to": "task_b" }']),
      'dangling-edge',
    );
    assert.ok(
      !dangling.actions.some((a) => a.title === 'Change to "task_b"'),
      JSON.stringify(titles(dangling.actions)),
    );
  });
});

describe('quick fix: dangling-edge toward the id the task reads', () => {
  test('a renamed upstream: the id the task reads without an edge comes first, preferred', async () => {
    const fetch = task('task_fetch_page', '"input": { "type": "text", "data": "u" }');
    const fetched = task('task_fetched', '"input": { "type": "text", "data": "v" }');
    const summarize = task('task_summarize', '"input": { "source": { "from_task": "task_fetch_page" } }');
    const text = dagOf([fetch, fetched, summarize], ['{ "from": "task_fetch", "to": "task_summarize" }']);
    const { actions } = await actionsFor(text, 'dangling-edge');
    assert.deepEqual(titles(actions), [
      ['Change to "task_fetch_page"', true],
      ['Change to "task_fetched"', false],
      ['Remove edge "task_fetch" → "task_summarize"', false],
    ]);
    const fixed = await applyFix(text, 'dangling-edge', 'Change to "task_fetch_page"');
    assert.deepEqual((await openText(fixed)).diagnostics, []);
  });
});

describe('quick fix: no-provider, over-budget and id-format', () => {
  // Both need configured providers that list what they offer and their prices: here the built-in provider's catalog.
  let withoutProviders: LspSession;
  before(async () => {
    withoutProviders = session;
    session = await startLspSession({ providers: [{ id: 'local', transport: 'builtin' }] });
  });
  after(async () => {
    await session.stop();
    session = withoutProviders;
  });

  test('the offered capabilities nearest the name, a likely typo of it preferred', async () => {
    const text = dagOf([ROOT.replace('"echo"', '"sentiment-analysys"')]);
    const { actions } = await actionsFor(text, 'no-provider');
    assert.deepEqual(titles(actions), [
      ['Use capability "sentiment-analysis"', true],
      ['Use capability "text-split"', false],
      ['Use capability "echo"', false],
    ]);
    assert.equal(
      await applyFix(text, 'no-provider', 'Use capability "sentiment-analysis"'),
      dagOf([ROOT.replace('"echo"', '"sentiment-analysis"')]),
    );
  });

  test('a name like none offered: the nearest, none preferred, so fix-all leaves it to the user', async () => {
    const text = dagOf([ROOT.replace('"echo"', '"translate"')]);
    const { actions } = await actionsFor(text, 'no-provider');
    assert.deepEqual(titles(actions), [
      ['Use capability "text-split"', false],
      ['Use capability "echo"', false],
      ['Use capability "result-aggregation"', false],
    ]);
    assert.equal(await applyFix(text, 'no-provider', 'Use capability "echo"'), dagOf([ROOT]));
  });

  test('max_price_cu below the cheapest price raised to it, preferred', async () => {
    const priced = withMore(ROOT.replace('"echo"', '"sentiment-analysis"'), '"max_price_cu": 0.0015');
    const text = dagOf([priced]);
    const { diagnostic, actions } = await actionsFor(text, 'over-budget');
    assert.equal(
      diagnostic.message,
      'The max_price_cu 0.0015 of task "task_a" is below the price of every provider that offers "sentiment-analysis": the cheapest, "local", asks 0.002 CU, so none would take the task. Raise max_price_cu to 0.002.',
    );
    assert.deepEqual(titles(actions), [['Raise max_price_cu to 0.002', true]]);
    assert.equal(
      await applyFix(text, 'over-budget', 'Raise max_price_cu to 0.002'),
      dagOf([priced.replace('0.0015', '0.002')]),
    );
  });

  test('a task id renamed to task_<id> everywhere it is written', async () => {
    const b = task('fetch', '"input": { "type": "text", "data": "u" }');
    const c = task('task_c', '"input": { "source": { "from_task": "fetch" } }');
    const text = dagOf([b, c], ['{ "from": "fetch", "to": "task_c" }']);
    const fixed = await applyFix(text, 'id-format', 'Rename to "task_fetch"');
    assert.equal(fixed, text.replaceAll('"fetch"', '"task_fetch"'));
  });
});

describe('fix all', () => {
  /** The file's source.fixAll action, asked for as an editor does on save: no diagnostics in the context. */
  async function fixAll(text: string) {
    const { uri, diagnostics } = await openText(text);
    const actions = await session.connection.sendRequest<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri },
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
      context: { diagnostics: [], only: ['source.fixAll'] },
    });
    assert.deepEqual(
      actions.map((a) => a.kind),
      ['source.fixAll'],
    );
    return { title: actions[0]!.title, ...(await applyAction(uri, text, diagnostics, actions[0]!)) };
  }

  const TIERS = Array.from({ length: 20 }, (_, n) =>
    withMore(task(`task_${n}`, `"input": { "type": "text", "data": "${n}" }`), '"preferred_tier": "C"'),
  );

  test('every tier wrong: one quick fix, and the source action, fix all 20 in one edit', async () => {
    const text = dagOf(TIERS);
    const { uri, diagnostic, diagnostics, actions } = await actionsFor(text, 'schema', 7);
    const all = actions.find((a) => a.title === 'Fix all schema problems in this file (20)');
    assert.ok(all, JSON.stringify(titles(actions)));
    assert.equal(all.kind, 'quickfix');
    assert.deepEqual(all.diagnostics, [diagnostic]);
    const fixed = await applyAction(uri, text, diagnostics, all);
    assert.deepEqual(fixed.diagnostics, []);
    assert.equal(fixed.text, text.replaceAll('"preferred_tier": "C"', '"preferred_tier": "S"'));
    const source = await fixAll(text);
    assert.equal(source.title, 'Fix all problems in this file (20)');
    assert.equal(source.text, fixed.text);
  });

  test('five missing edges: one action adds all five, to an empty list or to none', async () => {
    const readers = Array.from({ length: 5 }, (_, n) =>
      task(`task_r${n}`, '"input": { "source": { "from_task": "task_a" } }'),
    );
    const edges = readers.map((_, n) => `{ "from": "task_a", "to": "task_r${n}" }`);
    const text = dagOf([ROOT, ...readers]);
    const { uri, diagnostics, actions } = await actionsFor(text, 'missing-edge', 2);
    const all = actions.find((a) => a.title === 'Fix all missing-edge problems in this file (5)');
    assert.ok(all, JSON.stringify(titles(actions)));
    const fixed = await applyAction(uri, text, diagnostics, all);
    assert.equal(fixed.text, dagOf([ROOT, ...readers], edges));
    assert.deepEqual(fixed.diagnostics, []);

    const withoutEdges = text.replace('],\n  "edges": []', ']');
    const added = await fixAll(withoutEdges);
    assert.equal(added.text, dagOf([ROOT, ...readers], edges));
  });

  test('several kinds at once, removals side by side in one list included, make valid text without them', async () => {
    const b = task('task_b', '"input": { "source": { "from_task": "task_a" } }');
    const c = withMore(
      task('task_c', '"input": { "source": { "from_task": "task_a" } }'),
      '"metadata": { "dag_id": "dag_other" }, "timeout_sm": 5',
    );
    const ab = '{ "from": "task_a", "to": "task_b" }';
    const text = dagOf([ROOT, b, c + ','], [ab, ab, ab, ab + ',']);
    const { title, text: fixed, diagnostics } = await fixAll(text);
    assert.equal(title, 'Fix all problems in this file (8)');
    assert.deepEqual(
      diagnostics.map((d) => d.code),
      [],
    );
    assert.equal(
      fixed,
      dagOf(
        [
          ROOT,
          b,
          withMore(
            task('task_c', '"input": { "source": { "from_task": "task_a" } }'),
            '"metadata": { "dag_id": "dag_fix" }, "timeout_ms": 5',
          ),
        ],
        [ab, '{ "from": "task_a", "to": "task_c" }'],
      ),
    );
  });

  test('a file without fixable problems gets no fix-all', async () => {
    const { uri } = await openText(dagOf([ROOT]));
    const actions = await session.connection.sendRequest<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri },
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
      context: { diagnostics: [] },
    });
    assert.deepEqual(actions, []);
  });
});

describe('quick fix: an edge that cannot be completed', () => {
  test('with one task, an edge without "to" can only be removed', async () => {
    const text = dagOf([ROOT], ['{ "from": "task_a" }']);
    const { actions } = await actionsFor(text, 'schema');
    assert.deepEqual(titles(actions), [['Remove edge "task_a" → "?"', false]]);
    assert.equal(await applyFix(text, 'schema', 'Remove edge "task_a" → "?"'), dagOf([ROOT]));
  });
});
