// Navigation, rename and hover over stdio: definition, references, highlights, rename with its refusals, and what
// hovering shows.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ResponseError } from 'vscode-jsonrpc';
import type { Hover, Location, WorkspaceEdit } from 'vscode-languageserver-types';
import { analyzeDag } from '../../server/src/dag/analyze';
import { CURSOR, applyEdits, atCursor, textOf } from '../support/cursor';
import { DIAMOND, diamondWith } from '../support/diamond';
import { type LspSession, startLspSession } from '../support/lspHarness';

/** DIAMOND with a cursor: `marked` is a piece of it with the cursor (`‸`) written in. */
const cursorIn = (marked: string): string => diamondWith(marked.replace(CURSOR, ''), marked);

describe('navigation, rename and hover over stdio', () => {
  let session: LspSession;
  let counter = 0;
  before(async () => {
    session = await startLspSession();
  });
  after(() => session.stop());

  async function request<T>(method: string, marked: string, extra: object = {}) {
    const uri = `file:///navigation-${++counter}.acmp-dag.json`;
    const cursor = atCursor(marked, uri);
    await session.open(uri, cursor.text);
    try {
      const result = await session.connection.sendRequest<T>(method, {
        textDocument: { uri },
        position: cursor.position,
        ...extra,
      });
      return { result, cursor };
    } finally {
      await session.close(uri);
    }
  }

  /** The text of each location, with the line it is on. */
  const shown = (cursor: ReturnType<typeof atCursor>, locations: readonly { range: Location['range'] }[]) =>
    locations.map(({ range }) => `${range.start.line + 1}:${textOf(cursor.document, range)}`);

  test('go to definition from an edge end, from_task and a from_tasks element', async () => {
    for (const marked of [
      '{ "from": "task_split", "to": "task_le‸ft" }',
      '"from_task": "‸task_split", "field": "data.chunks[0]"',
      '["task_left", "task_right‸"]',
    ]) {
      const { result, cursor } = await request<Location[]>('textDocument/definition', cursorIn(marked));
      const expected = /"(task_[a-z]*‸[a-z]*|‸task_[a-z]+)"/.exec(marked)![1]!.replace('‸', '');
      assert.equal(result.length, 1, marked);
      assert.equal(textOf(cursor.document, result[0]!.range), `"${expected}"`);
      assert.match(cursor.text.split('\n')[result[0]!.range.start.line]!, new RegExp(`"task_id": "${expected}"`));
    }
  });

  test('no definition off a task id, nor for an id no task declares', async () => {
    assert.deepEqual(
      (await request<Location[]>('textDocument/definition', cursorIn('"capability": "te‸xt-split"'))).result,
      [],
    );
    const dangling = DIAMOND.replace('"to": "task_left" }', '"to": "task_lo‸st" }');
    assert.deepEqual((await request<Location[]>('textDocument/definition', dangling)).result, []);
  });

  test('find all references: the declaration, every edge end and every source, in text order', async () => {
    const marked = cursorIn('{ "task_id": "task_le‸ft"');
    const { result, cursor } = await request<Location[]>('textDocument/references', marked, {
      context: { includeDeclaration: true },
    });
    assert.deepEqual(shown(cursor, result), ['5:"task_left"', '10:"task_left"', '14:"task_left"', '16:"task_left"']);
    const without = await request<Location[]>('textDocument/references', marked, {
      context: { includeDeclaration: false },
    });
    assert.deepEqual(shown(without.cursor, without.result), ['10:"task_left"', '14:"task_left"', '16:"task_left"']);
  });

  test('document highlights mark the declaration as written and the others as read', async () => {
    const { result, cursor } = await request<{ range: Location['range']; kind: number }[]>(
      'textDocument/documentHighlight',
      cursorIn('{ "from": "task_sp‸lit", "to": "task_left" }'),
    );
    assert.deepEqual(
      result.map((highlight) => `${shown(cursor, [highlight])[0]} ${highlight.kind === 3 ? 'write' : 'read'}`),
      [
        '4:"task_split" write',
        '6:"task_split" read',
        '8:"task_split" read',
        '14:"task_split" read',
        '15:"task_split" read',
      ],
    );
  });

  test('rename from a reference changes the declaration, every edge end and every source', async () => {
    const marked = cursorIn('"from_task": "task_spl‸it", "field": "data.chunks[1]"');
    const prepared = await request<{ range: Location['range']; placeholder: string }>(
      'textDocument/prepareRename',
      marked,
    );
    assert.equal(prepared.result.placeholder, 'task_split');
    // The id without its quotes, as the editor selects it for typing.
    assert.equal(textOf(prepared.cursor.document, prepared.result.range), 'task_split');

    const { result, cursor } = await request<WorkspaceEdit>('textDocument/rename', marked, { newName: 'task_chunker' });
    const edits = result.changes![cursor.document.uri]!;
    assert.equal(edits.length, 5);
    const renamed = applyEdits(cursor.document, edits);
    assert.equal(renamed, DIAMOND.replaceAll('"task_split"', '"task_chunker"'));
    assert.deepEqual(analyzeDag(renamed).diagnostics, []);
  });

  test('rename refusals answer RequestFailed with a sentence naming the ids and why, for the rename box', async () => {
    /** The refusal's message, once it is checked to be a ResponseError with LSP's RequestFailed (-32803). */
    const refusal = async (method: string, marked: string, extra: object = {}): Promise<string> => {
      let message = '';
      await assert.rejects(request(method, marked, extra), (error: unknown) => {
        assert.ok(error instanceof ResponseError, String(error));
        assert.equal(error.code, -32803);
        assert.match(error.message, /^[A-Z]/);
        message = error.message;
        return true;
      });
      return message;
    };
    const notAnId = /^Only a task id can be renamed: place the cursor on a task_id/;
    for (const method of ['textDocument/prepareRename', 'textDocument/rename']) {
      assert.match(await refusal(method, cursorIn('"capability": "ec‸ho"'), { newName: 'task_x' }), notAnId);
      assert.match(await refusal(method, cursorIn('"dag_id": "dag_dia‸mond"'), { newName: 'task_x' }), notAnId);
      const dangling = DIAMOND.replace('"to": "task_left" }', '"to": "task_lo‸st" }');
      assert.match(
        await refusal(method, dangling, { newName: 'task_found' }),
        /^No task declares "task_lost", so there is nothing to rename/,
      );
    }
    const onLeft = cursorIn('{ "from": "task_split", "to": "task_le‸ft" }');
    const rename = (newName: string) => refusal('textDocument/rename', onLeft, { newName });
    assert.equal(
      await rename('task_right'),
      'Cannot rename "task_left" to "task_right": task #3 (line 7) already has that id, and task ids must be unique.',
    );
    for (const written of ['task left', 'task_"left"', 'task\\left']) {
      assert.equal(
        await rename(written),
        `Cannot rename "task_left" to ${JSON.stringify(written)}: a task id has letters, digits and _ . : - / @ only (no spaces, quotes or backslashes).`,
      );
    }
    assert.equal(
      await rename('left'),
      'Cannot rename "task_left" to "left": task ids are of the form task_<random> (Layer 2 §1).',
    );
    assert.equal(await rename(''), 'Cannot rename "task_left" to an empty id: a task id needs at least one character.');
  });

  const hoverText = async (marked: string): Promise<string | undefined> => {
    const { result } = await request<Hover | null>('textDocument/hover', cursorIn(marked));
    return result === null ? undefined : (result.contents as { value: string }).value;
  };

  test('hover on a task reference shows the task: capability, input, upstream, downstream; then its plan', async () => {
    const text = await hoverText('["task_left‸", "task_right"]');
    assert.equal(
      text,
      [
        '**`task_left`** · `sentiment-analysis`',
        '',
        '- input: the output of `task_split` (field `data.chunks[0]`)',
        '- upstream: `task_split`',
        '- downstream: `task_join`',
        '',
        // No provider configured: the plan is the built-in provider's, at its catalog price.
        '**Plan:** `builtin` at 0.002 CU (advertised), the only provider that offers the capability (routing cheapest)',
        '',
        '| provider | price | latency | tier | |',
        '| --- | --- | --- | --- | --- |',
        '| `builtin` ✓ | 0.002 CU (advertised) | unknown | — | chosen |',
      ].join('\n'),
    );
    assert.match(
      (await hoverText('{ "from": "task_right", "to": "task_jo‸in" }'))!,
      /input: the outputs of `task_left`, `task_right`, in order\n- upstream: `task_left`, `task_right`\n- downstream: none \(a leaf\)/,
    );
  });

  test('hover on dag_id shows the plan’s summary and the DAG’s figures', async () => {
    const priced = DIAMOND.replace(
      '"capability": "text-split",',
      '"capability": "text-split", "max_price_cu": 0.25, "input_tokens_est": 40,',
    ).replace('"capability": "echo",', '"capability": "echo", "max_price_cu": 0.5,');
    const { result } = await request<Hover>('textDocument/hover', priced.replace('"dag_diamond"', '"dag_dia‸mond"'));
    assert.equal(
      (result.contents as { value: string }).value,
      [
        '**Plan:** ≈ 0.0061 CU · critical path unknown · ACMP: Show Plan for the whole plan',
        '',
        '**`dag_diamond`** · 5 tasks, 4 edges',
        '',
        '- roots: `task_split`, `task_note`',
        '- leaves: `task_join`, `task_note`',
        '- depth: 3 tasks; longest path: `task_split` → `task_right` → `task_join`',
        '- Σ max_price_cu: 0.75 (3 of 5 tasks set none)',
        '- Σ input_tokens_est: 40',
      ].join('\n'),
    );
  });

  test('hover on a field path says what it selects; on a property, the schema’s text', async () => {
    assert.match(
      (await hoverText('"field": "data.chun‸ks[1]"'))!,
      /^Selects element 1 of member `chunks` of the payload from the output of `task_split`\.\n\nIn the documented output of `text-split`: string, e\.g\./,
    );
    assert.match((await hoverText('"capa‸bility": "echo"'))!, /^`capability`: Capability tag/);
    assert.match(
      (await hoverText('{ "from": "task_split", "t‸o": "task_left" }'))!,
      /^`to`: task_id of the downstream task/,
    );
    assert.equal(await hoverText('"data": "A‸. B."'), undefined);
  });
});
