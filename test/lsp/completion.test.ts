// Completion over stdio, as an editor asks for it: the items, their order, what they replace and insert.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  type CompletionItem,
  CompletionItemTag,
  type CompletionList,
  type TextEdit,
} from 'vscode-languageserver-types';
import { MAX_TASK_ID_ITEMS } from '../../server/src/features/completion';
import { CURSOR, applyEdits, atCursor, textOf } from '../support/cursor';
import { diamondWith } from '../support/diamond';
import { type LspSession, startLspSession } from '../support/lspHarness';

const PIPELINE = readFileSync(resolve(__dirname, '../../examples/text-pipeline.acmp-dag.json'), 'utf8');

/** The example pipeline with its first `search` replaced. */
function pipelineWith(search: string, replacement: string): string {
  if (!PIPELINE.includes(search)) throw new Error(`the example has no ${search}`);
  return PIPELINE.replace(search, replacement);
}

/** A chain task_c1 → task_c2 → … → task_c7 and one more edge, `last`. */
function chainWith(last: string): string {
  const ids = Array.from({ length: 7 }, (_, k) => `task_c${k + 1}`);
  const tasks = ids.map((id) =>
    JSON.stringify({ task_id: id, capability: 'echo', input: { type: 'text', data: 'x' } }),
  );
  const edges = ids.slice(1).map((id, k) => JSON.stringify({ from: ids[k], to: id }));
  return `{ "dag_id": "dag_chain", "tasks": [${tasks.join(', ')}],\n "edges": [${edges.join(', ')}, ${last}] }`;
}

describe('completion over stdio', () => {
  let session: LspSession;
  let counter = 0;
  let workspace: string;
  before(async () => {
    // Another DAG file of the workspace, on disk only: its capabilities are offered too.
    workspace = mkdtempSync(join(tmpdir(), 'acmp-completion-'));
    writeFileSync(
      join(workspace, 'other.acmp-dag.json'),
      JSON.stringify({
        dag_id: 'dag_other',
        tasks: [{ task_id: 'task_scan', capability: 'ocr-scan', input: { type: 'text', data: 'x' } }],
        edges: [],
      }),
    );
    session = await startLspSession(
      {
        providers: [
          { id: 'local', transport: 'builtin' },
          { id: 'gpu', transport: 'stdio', command: 'x', capabilities: ['image-caption'] },
        ],
      },
      { workspaceFolder: workspace },
    );
  });
  after(async () => {
    await session.stop();
    rmSync(workspace, { recursive: true, force: true });
  });

  /** The items at the cursor of `marked`, in the order the editor shows them. */
  async function complete(marked: string) {
    const uri = `file:///completion-${++counter}.acmp-dag.json`;
    const cursor = atCursor(marked, uri);
    await session.open(uri, cursor.text);
    const list = await session.connection.sendRequest<CompletionList>('textDocument/completion', {
      textDocument: { uri },
      position: cursor.position,
    });
    // As VS Code orders them before the user types: by sortText (or label), compared as plain strings.
    const key = (item: CompletionItem): string => item.sortText ?? item.label;
    const items = [...list.items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    await session.close(uri);
    return { items, labels: items.map((item) => item.label), cursor, incomplete: list.isIncomplete };
  }

  /** The text after accepting `item` (its one edit; snippets keep their placeholders). */
  const accept = (cursor: ReturnType<typeof atCursor>, item: CompletionItem): string => {
    assert.ok(item.textEdit && 'range' in item.textEdit, `${item.label} has a text edit`);
    return applyEdits(cursor.document, [item.textEdit]);
  };

  test('an edge target offers the tasks that keep the graph acyclic first, the source itself last', async () => {
    const { items, labels, cursor } = await complete(
      diamondWith(
        '{ "from": "task_right", "to": "task_join" }',
        `{ "from": "task_right", "to": "task_join" },\n    { "from": "task_right", "to": "task_${CURSOR}j" }`,
      ),
    );
    // right → join exists already; right → split would close a cycle; right → right is a self-loop.
    assert.deepEqual(labels, ['task_left', 'task_note', 'task_join', 'task_split', 'task_right']);
    assert.equal(items.at(-2)!.detail, 'text-split · would close a cycle: task_right → task_split → task_right');
    assert.equal(items.at(-1)!.detail, 'sentiment-analysis · would close a cycle: task_right → task_right');
    assert.match(items.at(-3)!.detail!, /this edge exists already/);
    assert.equal(items.at(-3)!.labelDetails?.description, 'edge exists · result-aggregation');
    assert.equal(items[0]!.labelDetails?.description, 'sentiment-analysis');
    // The whole string being typed is replaced, quotes included.
    assert.equal(textOf(cursor.document, (items[0]!.textEdit as TextEdit).range), '"task_j"');
    assert.match(accept(cursor, items[0]!), /\{ "from": "task_right", "to": "task_left" \}/);
  });

  test('an edge source ranks the tasks downstream of the target last', async () => {
    const { labels, items } = await complete(
      diamondWith(
        '{ "from": "task_split", "to": "task_left" }',
        `{ "from": "task_split", "to": "task_left" },\n    { "from": "${CURSOR}", "to": "task_left" }`,
      ),
    );
    // split → left exists already; join is downstream of left; left → left is a self-loop.
    assert.deepEqual(labels, ['task_right', 'task_note', 'task_split', 'task_left', 'task_join']);
    assert.match(items.at(-1)!.detail!, /would close a cycle: task_join → task_left → task_join/);
  });

  test('an edge target ranks first the task that reads the source without that edge; a cycle last, struck through', async () => {
    const { items, labels } = await complete(
      pipelineWith(
        '{ "from": "task_sent_02b", "to": "task_agg_03" }',
        `{ "from": "task_sent_02b", "to": "${CURSOR}" }`,
      ),
    );
    // task_agg_03 reads task_sent_02b and lacks the edge; split → sent_02b makes sent_02b → split a cycle.
    assert.deepEqual(labels, ['task_agg_03', 'task_sent_02a', 'task_split_01', 'task_sent_02b']);
    const [reader, other, upstream, self] = items;
    assert.equal(reader!.detail, 'result-aggregation · reads task_sent_02b; no edge yet');
    assert.equal(reader!.labelDetails?.description, 'needs this edge · result-aggregation');
    assert.equal(other!.labelDetails?.description, 'sentiment-analysis');
    assert.equal(upstream!.detail, 'text-split · would close a cycle: task_sent_02b → task_split_01 → task_sent_02b');
    // The mark shows in the list itself, not only in the selected item's detail.
    assert.equal(upstream!.labelDetails?.description, 'closes a cycle · text-split');
    assert.equal(self!.detail, 'sentiment-analysis · would close a cycle: task_sent_02b → task_sent_02b');
    assert.deepEqual(
      items.map((item) => item.tags ?? []),
      [[], [], [CompletionItemTag.Deprecated], [CompletionItemTag.Deprecated]],
    );

    // Completing again over the end already written: that edge is the one being edited, not a duplicate.
    const again = await complete(pipelineWith('"to": "task_agg_03" }\n', `"to": "task_agg${CURSOR}_03" }\n`));
    assert.equal(again.items[0]!.label, 'task_agg_03');
    assert.equal(again.items[0]!.detail, 'result-aggregation · reads task_sent_02b; no edge yet');
  });

  test('an edge source ranks first what the target reads without the edge; a cycle through a reference last', async () => {
    const { items, labels } = await complete(
      pipelineWith(
        '{ "from": "task_sent_02b", "to": "task_agg_03" }',
        `{ "from": "${CURSOR}", "to": "task_agg_03" }`,
      ).replace(
        '  ],\n  "edges"',
        '  ,{ "task_id": "task_report_04", "capability": "echo", "input": { "source": { "from_task": "task_agg_03" } } }\n  ],\n  "edges"',
      ),
    );
    // task_report_04 reads task_agg_03 with no edge yet: it is downstream all the same.
    assert.deepEqual(labels, ['task_sent_02b', 'task_split_01', 'task_sent_02a', 'task_agg_03', 'task_report_04']);
    assert.equal(items[0]!.detail, 'sentiment-analysis · read by task_agg_03; no edge yet');
    assert.match(items[2]!.detail!, /this edge exists already/);
    assert.equal(items[4]!.detail, 'echo · would close a cycle: task_report_04 → task_agg_03 → task_report_04');
  });

  test('a cycle along a long way names its ends and elides the middle', async () => {
    const target = await complete(chainWith(`{ "from": "task_c7", "to": "${CURSOR}" }`));
    const detailOf = (list: typeof target, label: string): string | undefined =>
      list.items.find((item) => item.label === label)?.detail;
    assert.equal(detailOf(target, 'task_c1'), 'echo · would close a cycle: task_c7 → task_c1 → task_c2 → … → task_c7');
    assert.equal(
      detailOf(target, 'task_c4'),
      'echo · would close a cycle: task_c7 → task_c4 → task_c5 → task_c6 → task_c7',
    );
    const source = await complete(chainWith(`{ "from": "${CURSOR}", "to": "task_c1" }`));
    assert.equal(detailOf(source, 'task_c7'), 'echo · would close a cycle: task_c7 → task_c1 → … → task_c6 → task_c7');
  });

  test('from_task inside a task: its upstream tasks first, itself and its downstream last', async () => {
    const { labels } = await complete(
      diamondWith(
        '"from_task": "task_split", "field": "data.chunks[1]"',
        `"from_task": "${CURSOR}", "field": "data.chunks[1]"`,
      ),
    );
    // Inside task_right: split has an edge into it; join is downstream of it.
    assert.deepEqual(labels, ['task_split', 'task_left', 'task_note', 'task_right', 'task_join']);
  });

  test('from_tasks offers the ids not listed yet, between elements and in a typed element', async () => {
    const between = await complete(diamondWith('["task_left", "task_right"]', `["task_left", ${CURSOR}]`));
    // task_join reading itself would be a cycle.
    assert.deepEqual(between.labels, ['task_right', 'task_split', 'task_note', 'task_join']);
    assert.equal(accept(between.cursor, between.items[0]!).includes('["task_left", "task_right"]'), true);
    const typed = await complete(diamondWith('["task_left", "task_right"]', `["task_left", "task_r${CURSOR}"]`));
    // What is typed before the cursor narrows the list (letters in order, any case).
    assert.deepEqual(typed.labels, ['task_right']);
  });

  test('a large DAG gets the best-ranked ids first, the list marked incomplete, narrowed as the user types', async () => {
    const count = MAX_TASK_ID_ITEMS + 100;
    const tasks = Array.from({ length: count }, (_, i) => ({
      task_id: `task_${String(i).padStart(4, '0')}`,
      capability: 'echo',
      input: i === 0 ? { type: 'text', data: 'x' } : { source: { from_task: 'task_0000' } },
    }));
    const edges = tasks.slice(1).map((task) => ({ from: 'task_0000', to: task.task_id }));
    // The last task reads task_0000 and task_0250 feeds it: both rank first, wherever they are declared.
    edges.push({ from: 'task_0250', to: `task_${String(count - 1).padStart(4, '0')}` });
    const text = JSON.stringify({ dag_id: 'dag_large', tasks, edges }, null, 2);
    const marked = text.replace(
      `"task_id": "task_${String(count - 1).padStart(4, '0')}",\n      "capability": "echo",\n      "input": {\n        "source": {\n          "from_task": "task_0000"`,
      `"task_id": "task_${String(count - 1).padStart(4, '0')}",\n      "capability": "echo",\n      "input": {\n        "source": {\n          "from_task": "${CURSOR}task_0000"`,
    );
    assert.notEqual(marked, text);
    const all = await complete(marked);
    assert.equal(all.incomplete, true);
    assert.equal(all.labels.length, MAX_TASK_ID_ITEMS);
    assert.deepEqual(all.labels.slice(0, 3), ['task_0000', 'task_0250', 'task_0001']);
    const narrowed = await complete(marked.replace(`"${CURSOR}task_0000"`, `"task_025${CURSOR}"`));
    assert.equal(narrowed.incomplete, false);
    // Narrowed to the ids with the typed characters in order (the editor's fuzzy filter sees no fewer).
    assert.equal(narrowed.labels[0], 'task_0250');
    for (let k = 1; k < 10; k++) assert.ok(narrowed.labels.includes(`task_025${k}`));
    assert.ok(narrowed.labels.every((label) => /t.*a.*s.*k.*_.*0.*2.*5/.test(label)));
  });

  test('task ids complete in text that is not valid JSON yet', async () => {
    const { labels } = await complete(
      diamondWith('{ "from": "task_right", "to": "task_join" }\n', `{ "from": "task_right", "to": "task_${CURSOR}\n`),
    );
    // The edge being typed replaced right → join, which task_join needs: it reads task_right.
    assert.deepEqual(labels, ['task_join', 'task_left', 'task_note', 'task_split', 'task_right']);
  });

  test('capabilities: the providers’, this file’s, the workspace’s, and none twice', async () => {
    const { items, labels } = await complete(diamondWith('"capability": "echo"', `"capability": "${CURSOR}"`));
    assert.deepEqual(labels.slice(0, 5).sort(), [
      'echo',
      'image-caption',
      'result-aggregation',
      'sentiment-analysis',
      'text-split',
    ]);
    // Those no provider offers come after them.
    assert.deepEqual(labels.slice(5), ['ocr-scan']);
    assert.equal(items.at(-1)!.detail, 'workspace');
    assert.equal(new Set(labels).size, labels.length);
    const sentiment = items.find((item) => item.label === 'sentiment-analysis')!;
    assert.equal(sentiment.detail, 'provider local · 2 tasks here');
    assert.match(sentiment.documentation as string, /AFINN/);
    assert.equal(items.find((item) => item.label === 'image-caption')!.detail, 'provider gpu');
  });

  test('field paths follow the upstream’s documented output, members and indexes', async () => {
    const { labels, items, cursor } = await complete(
      diamondWith('"field": "data.chunks[1]"', `"field": "data.${CURSOR}"`),
    );
    assert.deepEqual(labels, ['data', 'data.chunks', 'data.count', 'data.chunks[0]', 'data.chunks[1]']);
    assert.equal(items[1]!.detail, 'array (2 in the example)');
    assert.match(accept(cursor, items[3]!), /"field": "data\.chunks\[0\]"/);
  });

  test('field paths of an echo are those of its literal input', async () => {
    const marked = diamondWith(
      '"from_tasks": ["task_left", "task_right"]',
      `"from_task": "task_note", "field": "d${CURSOR}"`,
    );
    const { labels } = await complete(marked);
    assert.deepEqual(labels, ['data', 'data.lines', 'data.n', 'data.lines[0]']);
  });

  test('schema property names and values, each offered once', async () => {
    const properties = await complete(diamondWith('"capability": "echo", ', `"capability": "echo", ${CURSOR}`));
    for (const name of [
      'output_type',
      'max_price_cu',
      'preferred_tier',
      'metadata',
      'timeout_ms',
      'input_tokens_est',
    ]) {
      assert.ok(properties.labels.includes(name), `${name} in ${properties.labels.join()}`);
    }
    assert.ok(!properties.labels.includes('capability'), 'a property already there is not offered');
    assert.equal(new Set(properties.labels).size, properties.labels.length);

    const tier = await complete(
      diamondWith('"capability": "echo", ', `"capability": "echo", "preferred_tier": ${CURSOR}, `),
    );
    assert.deepEqual(tier.labels.sort(), ['"A"', '"B"', '"S"']);

    const type = await complete(
      diamondWith('"type": "json", "data": { "lines"', `"type": "${CURSOR}", "data": { "lines"`),
    );
    assert.deepEqual(type.labels.sort(), [
      '"audio/wav"',
      '"binary"',
      '"image/jpeg"',
      '"image/png"',
      '"json"',
      '"text"',
    ]);

    const metadata = await complete(
      diamondWith('"capability": "echo", ', `"capability": "echo", "metadata": { ${CURSOR} }, `),
    );
    assert.deepEqual(metadata.labels.sort(), ['dag_id', 'priority', 'requester']);

    const stream = await complete(
      diamondWith(
        '{ "from": "task_split", "to": "task_left" }',
        `{ "from": "task_split", "to": "task_left", "stream_eligible": ${CURSOR} }`,
      ),
    );
    assert.deepEqual(stream.labels.sort(), ['false', 'true']);
  });

  test('snippets: a new task, a new edge, a literal input and a reference', async () => {
    const task = await complete(diamondWith('"tasks": [\n', `"tasks": [\n    ${CURSOR}\n`));
    assert.deepEqual(task.labels, ['New task', 'New root task']);
    // A fresh id, and a comma before the task that follows.
    assert.match((task.items[0]!.textEdit as { newText: string }).newText, /"task_id": "\$\{1:task_06\}"[\s\S]*\},$/);

    const edge = await complete(
      diamondWith(
        '{ "from": "task_right", "to": "task_join" }',
        `{ "from": "task_right", "to": "task_join" },\n    ${CURSOR}`,
      ),
    );
    assert.deepEqual(edge.labels, ['New edge']);
    assert.equal((edge.items[0]!.textEdit as { newText: string }).newText, '{ "from": "$1", "to": "$2" }');

    const input = await complete(
      diamondWith(
        '"capability": "echo", "input": { "type": "json", "data": { "lines": ["x"], "n": 1 } }',
        `"capability": "echo", "input": ${CURSOR}`,
      ),
    );
    assert.deepEqual(input.labels.slice(0, 3), ['Reference input', 'Aggregation input', 'Literal input']);
    assert.equal((input.items[0]!.textEdit as { newText: string }).newText, '{ "source": { "from_task": "$1" } }');
  });
});
