// The outline and workspace symbols over stdio: what a user sees in the Outline view and in "Go to Symbol in
// Workspace", including DAG files on disk that change while the server runs and open documents not yet saved.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { type DocumentSymbol, type SymbolInformation, SymbolKind } from 'vscode-languageserver-types';
import { textOf } from '../support/cursor';
import { type LspSession, startLspSession } from '../support/lspHarness';

const OUTLINED = `{
  "dag_id": "dag_outline",
  "tasks": [
    { "task_id": "task_split", "capability": "text-split", "input": { "type": "text", "data": "A. B." } },
    { "capability": "echo", "input": { "type": "text", "data": "no id" } },
    { "task_id": "task_join", "capability": "result-aggregation",
      "input": { "source": { "from_tasks": ["task_split"] } } }
  ],
  "edges": [
    { "from": "task_split", "to": "task_join", "stream_eligible": true },
    { "from": "task_split" }
  ]
}
`;

interface ShownSymbol {
  name: string;
  detail?: string;
  kind: SymbolKind;
  /** The text the range covers, and the text of the selection range. */
  range: string;
  selection: string;
  children?: ShownSymbol[];
}

function shown(document: TextDocument, symbols: readonly DocumentSymbol[]): ShownSymbol[] {
  return symbols.map((symbol) => ({
    name: symbol.name,
    ...(symbol.detail === undefined ? {} : { detail: symbol.detail }),
    kind: symbol.kind,
    range: textOf(document, symbol.range),
    selection: textOf(document, symbol.selectionRange),
    ...(symbol.children === undefined ? {} : { children: shown(document, symbol.children) }),
  }));
}

/** A line of OUTLINED, without its indentation. */
const line = (n: number): string => OUTLINED.split('\n')[n]!.trim();

describe('document symbols over stdio', () => {
  let session: LspSession;
  before(async () => {
    session = await startLspSession();
  });
  after(async () => session.stop());

  test('the outline names tasks by task_id with their capability, and edges as from → to', async () => {
    const uri = 'file:///virtual/outline.acmp-dag.json';
    await session.open(uri, OUTLINED);
    const symbols = await session.connection.sendRequest<DocumentSymbol[]>('textDocument/documentSymbol', {
      textDocument: { uri },
    });
    const document = TextDocument.create(uri, 'acmp-dag', 1, OUTLINED);
    const tasks = OUTLINED.slice(OUTLINED.indexOf('"tasks"'), OUTLINED.indexOf('],\n  "edges"') + 1);
    const edges = OUTLINED.slice(OUTLINED.indexOf('"edges"'), OUTLINED.lastIndexOf(']') + 1);
    assert.deepEqual(shown(document, symbols), [
      {
        name: 'dag_id',
        detail: 'dag_outline',
        kind: SymbolKind.Key,
        range: '"dag_id": "dag_outline"',
        selection: '"dag_outline"',
        children: [],
      },
      {
        name: 'tasks',
        kind: SymbolKind.Array,
        range: tasks,
        selection: '"tasks"',
        children: [
          {
            name: 'task_split',
            detail: 'text-split',
            kind: SymbolKind.Function,
            range: line(3).slice(0, -1),
            selection: '"task_split"',
          },
          {
            name: '#2 (no task_id)',
            detail: 'echo',
            kind: SymbolKind.Function,
            range: line(4).slice(0, -1),
            selection: line(4).slice(0, -1),
          },
          {
            name: 'task_join',
            detail: 'result-aggregation',
            kind: SymbolKind.Function,
            range: `${line(5)}\n      ${line(6)}`,
            selection: '"task_join"',
          },
        ],
      },
      {
        name: 'edges',
        kind: SymbolKind.Array,
        range: edges,
        selection: '"edges"',
        children: [
          {
            name: 'task_split → task_join',
            detail: 'stream_eligible',
            kind: SymbolKind.Operator,
            range: line(9).slice(0, -1),
            selection: '"task_split"',
          },
          { name: 'task_split → ?', kind: SymbolKind.Operator, range: line(10), selection: '"task_split"' },
        ],
      },
    ]);
    await session.close(uri);
  });

  test('a half-typed file still has its outline, and an empty task_id is named ""', async () => {
    const uri = 'file:///virtual/broken-outline.acmp-dag.json';
    await session.open(uri, '{ "tasks": [ { "task_id": "", "capability": "echo" }, { "task_id": "task_b", "capa');
    const symbols = await session.connection.sendRequest<DocumentSymbol[]>('textDocument/documentSymbol', {
      textDocument: { uri },
    });
    assert.deepEqual(
      symbols.map((symbol) => [symbol.name, symbol.children?.map((child) => [child.name, child.detail])]),
      [
        [
          'tasks',
          [
            ['""', 'echo'],
            ['task_b', undefined],
          ],
        ],
      ],
    );
    await session.close(uri);
  });
});

describe('workspace symbols over stdio', () => {
  const folder = mkdtempSync(join(tmpdir(), 'acmp-symbols-'));
  const file = (relative: string): { path: string; uri: string } => {
    const path = join(folder, relative);
    return { path, uri: pathToFileURL(path).href };
  };
  const write = (relative: string, text: string): void => {
    mkdirSync(join(file(relative).path, '..'), { recursive: true });
    writeFileSync(file(relative).path, text);
  };
  const dag = (dagId: string | undefined, tasks: Record<string, string>): string =>
    JSON.stringify(
      {
        ...(dagId === undefined ? {} : { dag_id: dagId }),
        tasks: Object.entries(tasks).map(([id, capability]) => ({
          task_id: id,
          capability,
          input: { type: 'text', data: 'x' },
        })),
        edges: [],
      },
      null,
      2,
    );
  /** The texts the server read the files from, to show what each symbol's range covers. */
  const texts = new Map<string, string>();
  const put = (relative: string, text: string): void => {
    write(relative, text);
    texts.set(file(relative).uri, text);
  };

  let session: LspSession;
  before(async () => {
    put('pipeline.acmp-dag.json', dag('dag_pipeline', { task_fetch: 'http-fetch', task_parse: 'html-parse' }));
    put('nested/deeper/extra.acmp-dag.json', dag(undefined, { task_fetch_more: 'http-fetch' }));
    put('broken.acmp-dag.json', '{ "dag_id": "dag_broken", "tasks": [ { "task_id": "task_half", "capability": ');
    // Skipped: dependencies, dot-folders, other names, files over 5 MB.
    write('node_modules/pkg/dep.acmp-dag.json', dag('dag_dep', { task_dependency: 'x' }));
    write('.hidden/secret.acmp-dag.json', dag('dag_hidden', { task_hidden: 'x' }));
    write('plain.json', dag('dag_plain', { task_plain: 'x' }));
    write('huge.acmp-dag.json', dag('dag_huge', { task_huge: 'x' }) + ' '.repeat(5 * 1024 * 1024));
    session = await startLspSession({}, { workspaceFolder: folder });
  });
  after(async () => {
    await session.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  const symbols = async (query: string): Promise<string[]> => {
    const found = await session.connection.sendRequest<SymbolInformation[]>('workspace/symbol', { query });
    return found
      .map((symbol) => {
        const { uri, range } = symbol.location;
        const relative = decodeURIComponent(uri.slice(pathToFileURL(folder).href.length + 1));
        const text = textOf(TextDocument.create(uri, 'acmp-dag', 0, texts.get(uri) ?? ''), range);
        return `${symbol.name} in ${symbol.containerName} at ${relative} ${text}`;
      })
      .sort();
  };

  test('every task of the DAG files on disk, named by task id in its dag_id or file', async () => {
    assert.deepEqual(await symbols(''), [
      'task_fetch in dag_pipeline at pipeline.acmp-dag.json "task_fetch"',
      'task_fetch_more in extra.acmp-dag.json at nested/deeper/extra.acmp-dag.json "task_fetch_more"',
      'task_half in dag_broken at broken.acmp-dag.json "task_half"',
      'task_parse in dag_pipeline at pipeline.acmp-dag.json "task_parse"',
    ]);
  });

  test('the query matches a subsequence of the name, ignoring case', async () => {
    assert.deepEqual(await symbols('TFM'), [
      'task_fetch_more in extra.acmp-dag.json at nested/deeper/extra.acmp-dag.json "task_fetch_more"',
    ]);
    assert.deepEqual(await symbols('fetch'), [
      'task_fetch in dag_pipeline at pipeline.acmp-dag.json "task_fetch"',
      'task_fetch_more in extra.acmp-dag.json at nested/deeper/extra.acmp-dag.json "task_fetch_more"',
    ]);
    assert.deepEqual(await symbols('parsef'), []);
  });

  test('files changed, created and deleted on disk are followed through the file watcher', async () => {
    put('pipeline.acmp-dag.json', dag('dag_pipeline', { task_fetch: 'http-fetch', task_render: 'html-render' }));
    put('added.acmp-dag.json', `\n\n${dag('dag_added', { task_added: 'echo' })}`);
    write('node_modules/pkg/other.acmp-dag.json', dag('dag_dep', { task_other_dependency: 'x' }));
    unlinkSync(file('broken.acmp-dag.json').path);
    rmSync(join(folder, 'nested'), { recursive: true });
    await session.filesChanged([
      { uri: file('pipeline.acmp-dag.json').uri, type: 2 },
      { uri: file('added.acmp-dag.json').uri, type: 1 },
      { uri: file('node_modules/pkg/other.acmp-dag.json').uri, type: 1 },
      { uri: file('broken.acmp-dag.json').uri, type: 3 },
      // A deleted folder comes as one event.
      { uri: file('nested').uri, type: 3 },
    ]);
    assert.deepEqual(await symbols(''), [
      'task_added in dag_added at added.acmp-dag.json "task_added"',
      'task_fetch in dag_pipeline at pipeline.acmp-dag.json "task_fetch"',
      'task_render in dag_pipeline at pipeline.acmp-dag.json "task_render"',
    ]);
  });

  test('an open document counts as edited, not as saved, until it is closed', async () => {
    const { uri } = file('added.acmp-dag.json');
    const unsaved = dag('dag_unsaved', { task_typed: 'echo', task_added: 'echo' });
    await session.open(uri, unsaved);
    const saved = texts.get(uri)!;
    texts.set(uri, unsaved);
    assert.deepEqual(await symbols('task_'), [
      'task_added in dag_unsaved at added.acmp-dag.json "task_added"',
      'task_fetch in dag_pipeline at pipeline.acmp-dag.json "task_fetch"',
      'task_render in dag_pipeline at pipeline.acmp-dag.json "task_render"',
      'task_typed in dag_unsaved at added.acmp-dag.json "task_typed"',
    ]);
    await session.close(uri);
    texts.set(uri, saved);
    assert.deepEqual(await symbols('added'), ['task_added in dag_added at added.acmp-dag.json "task_added"']);
  });
});

describe('workspace symbols: bounds', () => {
  test('at most 1,000 symbols answer a query', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'acmp-symbols-many-'));
    const tasks = Array.from({ length: 1_200 }, (_, n) => ({ task_id: `task_${n}`, capability: 'echo' }));
    writeFileSync(join(folder, 'many.acmp-dag.json'), JSON.stringify({ dag_id: 'dag_many', tasks, edges: [] }));
    const session = await startLspSession({}, { workspaceFolder: folder });
    try {
      const all = await session.connection.sendRequest<SymbolInformation[]>('workspace/symbol', { query: '' });
      assert.equal(all.length, 1_000);
      const some = await session.connection.sendRequest<SymbolInformation[]>('workspace/symbol', { query: '1199' });
      assert.deepEqual(
        some.map((symbol) => symbol.name),
        ['task_1199'],
      );
    } finally {
      await session.stop();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('workspace symbols: folders added to and removed from the workspace', () => {
  const first = mkdtempSync(join(tmpdir(), 'acmp-symbols-first-'));
  const second = mkdtempSync(join(tmpdir(), 'acmp-symbols-second-'));
  const folderOf = (path: string) => ({ uri: pathToFileURL(path).href, name: path });
  after(() => [first, second].forEach((folder) => rmSync(folder, { recursive: true, force: true })));

  test('the files of an added folder are found, those of a removed folder forgotten', async () => {
    const one = (dagId: string, taskId: string) =>
      JSON.stringify({ dag_id: dagId, tasks: [{ task_id: taskId, capability: 'echo' }], edges: [] });
    writeFileSync(join(first, 'first.acmp-dag.json'), one('dag_first', 'task_in_first'));
    writeFileSync(join(second, 'second.acmp-dag.json'), one('dag_second', 'task_in_second'));
    const session = await startLspSession({}, { workspaceFolder: first });
    const symbols = async () =>
      (await session.connection.sendRequest<SymbolInformation[]>('workspace/symbol', { query: '' }))
        .map((symbol) => `${symbol.name} in ${symbol.containerName}`)
        .sort();
    const foldersChanged = (added: string[], removed: string[]) =>
      session.connection.sendNotification('workspace/didChangeWorkspaceFolders', {
        event: { added: added.map(folderOf), removed: removed.map(folderOf) },
      });
    try {
      assert.deepEqual(await symbols(), ['task_in_first in dag_first']);
      await foldersChanged([second], []);
      assert.deepEqual(await symbols(), ['task_in_first in dag_first', 'task_in_second in dag_second']);
      await foldersChanged([], [first]);
      assert.deepEqual(await symbols(), ['task_in_second in dag_second']);
      // The watcher reports files anywhere; only the workspace's folders count.
      await session.filesChanged([{ uri: pathToFileURL(join(first, 'first.acmp-dag.json')).href, type: 2 }]);
      assert.deepEqual(await symbols(), ['task_in_second in dag_second']);
    } finally {
      await session.stop();
    }
  });
});
