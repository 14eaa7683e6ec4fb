// Formatting, folding ranges and selection ranges over stdio: the text after the edits an editor applies, the lines
// that fold, and the ranges "Expand Selection" goes through.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SyntaxKind, createScanner } from 'jsonc-parser';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { FoldingRange, FormattingOptions, Range, SelectionRange, TextEdit } from 'vscode-languageserver-types';
import { applyEdits, atCursor, textOf } from '../support/cursor';
import { type LspSession, startLspSession } from '../support/lspHarness';

const COMPACT =
  '{"dag_id":"dag_f","tasks":[{"task_id":"task_a","capability":"echo","input":{"type":"text","data":"hi"}}],' +
  '"edges":[{"from":"task_a","to":"task_a","stream_eligible":true}]}';

let session: LspSession;
let documents = 0;
before(async () => {
  session = await startLspSession();
});
after(async () => session.stop());

/** Opens `text` as a new document: its uri and what the client knows of it. */
async function opened(text: string): Promise<{ uri: string; document: TextDocument }> {
  const uri = `file:///virtual/format-${++documents}.acmp-dag.json`;
  await session.open(uri, text);
  return { uri, document: TextDocument.create(uri, 'acmp-dag', 1, text) };
}

async function formatted(text: string, options: FormattingOptions, range?: Range): Promise<string> {
  const { uri, document } = await opened(text);
  const edits = await session.connection.sendRequest<TextEdit[]>(
    range === undefined ? 'textDocument/formatting' : 'textDocument/rangeFormatting',
    { textDocument: { uri }, options, ...(range === undefined ? {} : { range }) },
  );
  await session.close(uri);
  return applyEdits(document, edits);
}

/** The text's tokens (comments included): formatting may change only what lies between them. */
function tokens(text: string): string[] {
  const scanner = createScanner(text, true);
  const found: string[] = [];
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    found.push(text.slice(scanner.getTokenOffset(), scanner.getTokenOffset() + scanner.getTokenLength()));
  }
  return found;
}

describe('formatting over stdio', () => {
  test('indents with tabs, or with 2 or 4 spaces, as the editor says', async () => {
    const expected = (indent: string): string =>
      [
        '{',
        '@"dag_id": "dag_f",',
        '@"tasks": [',
        '@@{',
        '@@@"task_id": "task_a",',
        '@@@"capability": "echo",',
        '@@@"input": {',
        '@@@@"type": "text",',
        '@@@@"data": "hi"',
        '@@@}',
        '@@}',
        '@],',
        '@"edges": [',
        '@@{',
        '@@@"from": "task_a",',
        '@@@"to": "task_a",',
        '@@@"stream_eligible": true',
        '@@}',
        '@]',
        '}',
      ]
        .join('\n')
        .replaceAll('@', indent);
    assert.equal(await formatted(COMPACT, { tabSize: 4, insertSpaces: false }), expected('\t'));
    assert.equal(await formatted(COMPACT, { tabSize: 2, insertSpaces: true }), expected('  '));
    assert.equal(await formatted(COMPACT, { tabSize: 4, insertSpaces: true }), expected('    '));
  });

  test('formats literal data nested 46, 47 and 200 levels deep (a line indented by exactly 200)', async () => {
    // jsonc-parser 3.3.1 fails on a line indented by exactly 200 characters: 4 spaces × level 50, 2 × 100, 200 tabs.
    const nested = (levels: number): string => {
      let data: unknown = 'x';
      for (let level = 0; level < levels; level++) data = [data];
      const dag = {
        dag_id: 'dag_deep',
        tasks: [{ task_id: 'task_a', capability: 'echo', input: { type: 'json', data } }],
      };
      return JSON.stringify(dag);
    };
    const cases: [levels: number, options: FormattingOptions, indent: string][] = [
      [46, { tabSize: 4, insertSpaces: true }, '    '],
      [47, { tabSize: 4, insertSpaces: true }, '    '],
      [97, { tabSize: 2, insertSpaces: true }, '  '],
      [200, { tabSize: 4, insertSpaces: false }, '\t'],
      [200, { tabSize: 4, insertSpaces: true }, '    '],
    ];
    for (const [levels, options, indent] of cases) {
      const compact = nested(levels);
      assert.equal(await formatted(compact, options), JSON.stringify(JSON.parse(compact), null, indent), `${levels}`);
    }
  });

  test('keeps the file’s line ending and follows the final-newline options', async () => {
    const crlf = '{"dag_id": "dag_f",\r\n"tasks": [], "edges": []}';
    assert.equal(
      await formatted(crlf, { tabSize: 2, insertSpaces: true }),
      '{\r\n  "dag_id": "dag_f",\r\n  "tasks": [],\r\n  "edges": []\r\n}',
    );
    const tight = '{ "edges": [] }';
    assert.equal(await formatted(tight, { tabSize: 2, insertSpaces: true }), '{\n  "edges": []\n}');
    assert.equal(
      await formatted(tight, { tabSize: 2, insertSpaces: true, insertFinalNewline: true }),
      '{\n  "edges": []\n}\n',
    );
    const trailing = '{ "edges": [] }  \n\n\n';
    assert.equal(await formatted(trailing, { tabSize: 2, insertSpaces: true }), '{\n  "edges": []\n}\n\n\n');
    assert.equal(
      await formatted(trailing, { tabSize: 2, insertSpaces: true, trimFinalNewlines: true }),
      '{\n  "edges": []\n}\n',
    );
  });

  test('answers minimal edits: none for a formatted file, two spaces less per level for 4 → 2', async () => {
    const four = await formatted(COMPACT, { tabSize: 4, insertSpaces: true });
    const { uri, document } = await opened(four);
    const options = { tabSize: 4, insertSpaces: true };
    assert.deepEqual(
      await session.connection.sendRequest('textDocument/formatting', { textDocument: { uri }, options }),
      [],
    );
    const edits = await session.connection.sendRequest<TextEdit[]>('textDocument/formatting', {
      textDocument: { uri },
      options: { tabSize: 2, insertSpaces: true },
    });
    // One edit per indented line, each deleting as many spaces as the line's depth (the lines of depth 1 … 4).
    assert.equal(edits.length, four.split('\n').length - 2);
    for (const edit of edits) {
      assert.equal(edit.newText, '');
      assert.equal(edit.range.start.line, edit.range.end.line);
      assert.match(textOf(document, edit.range), /^( {2}){1,4}$/);
    }
    assert.equal(applyEdits(document, edits), await formatted(COMPACT, { tabSize: 2, insertSpaces: true }));
    await session.close(uri);
  });

  test('range formatting changes only the lines of the range', async () => {
    const lines = ['{"dag_id":"dag_f",', '"tasks":[{"task_id":"task_a","capability":"echo"}],', '"edges":[]}'];
    const text = lines.join('\n');
    const range = { start: { line: 1, character: 0 }, end: { line: 1, character: lines[1]!.length } };
    assert.equal(
      await formatted(text, { tabSize: 2, insertSpaces: true }, range),
      [
        '{"dag_id":"dag_f",',
        '"tasks": [',
        '  {',
        '    "task_id": "task_a",',
        '    "capability": "echo"',
        '  }',
        '],',
        '"edges":[]}',
      ].join('\n'),
    );
  });

  const broken = {
    'a missing comma': '{"dag_id":"dag_f" "tasks":[{"task_id":"task_a"}],"edges":[]}',
    'an unterminated string': '{"dag_id":"dag_f","tasks":[{"task_id":"task_a  \n, "capability":"echo"}],"edges":[]}',
    'a missing closing brace': '{"dag_id":"dag_f","tasks":[{"task_id":"task_a"',
    'stray characters': '{"dag_id":"dag_f",@@ "tasks":[ ],  "edges":[]}',
    'comments and a trailing comma': '{"dag_id":"dag_f", // the id\n"tasks":[/* none */],"edges":[],}',
    'a number cut short': '{"dag_id":"dag_f","limit":1. ,"tasks":[]}',
  };
  for (const [fault, text] of Object.entries(broken)) {
    test(`a text with ${fault} is formatted around the fault and keeps its tokens`, async () => {
      const result = await formatted(text, { tabSize: 2, insertSpaces: true });
      assert.deepEqual(tokens(result), tokens(text));
      assert.ok(result.startsWith('{\n  "dag_id": "dag_f"'), result);
    });
  }
});

describe('folding ranges over stdio', () => {
  test('a task over several lines folds, as do its input and the lists', async () => {
    const text = [
      '{', // 0
      '  "dag_id": "dag_f",', // 1
      '  "tasks": [', // 2
      '    {', // 3
      '      "task_id": "task_a",', // 4
      '      "input": {', // 5
      '        "type": "text",', // 6
      '        "data": "hi"', // 7
      '      }', // 8
      '    },', // 9
      '    { "task_id": "task_b", "input": { "type": "text", "data": "one line" } }', // 10
      '  ],', // 11
      '  "edges": []', // 12
      '}', // 13
    ].join('\n');
    const { uri } = await opened(text);
    const ranges = await session.connection.sendRequest<FoldingRange[]>('textDocument/foldingRange', {
      textDocument: { uri },
    });
    assert.deepEqual(
      ranges.map(({ startLine, endLine }) => [startLine, endLine]).sort((a, b) => a[0]! - b[0]!),
      [
        [0, 12],
        [2, 10],
        [3, 8],
        [5, 7],
      ],
    );
    await session.close(uri);
  });
});

describe('selection ranges over stdio', () => {
  const expansions = async (marked: string): Promise<string[]> => {
    const { text, position } = atCursor(marked);
    const { uri, document } = await opened(text);
    const [range] = await session.connection.sendRequest<SelectionRange[]>('textDocument/selectionRange', {
      textDocument: { uri },
      positions: [position],
    });
    await session.close(uri);
    const texts: string[] = [];
    for (let at: SelectionRange | undefined = range; at !== undefined; at = at.parent) {
      texts.push(textOf(document, at.range));
    }
    return texts;
  };
  const DAG = `{
  "dag_id": "dag_f",
  "tasks": [
    { "task_id": "task_a", "capability": "echo" },
    { "task_id": "task_b", "capability": "echo" }
  ],
  "edges": []
}`;
  const tasks = DAG.slice(DAG.indexOf('['), DAG.indexOf(']') + 1);

  test('from inside a task id: its text, the string, the property, the task, the list, the DAG', async () => {
    assert.deepEqual(await expansions(DAG.replace('task_b"', 'ta‸sk_b"')), [
      'task_b',
      '"task_b"',
      '"task_id": "task_b"',
      '{ "task_id": "task_b", "capability": "echo" }',
      tasks,
      `"tasks": ${tasks}`,
      DAG,
    ]);
  });

  test('from a property name, and from between the tasks', async () => {
    assert.deepEqual(await expansions(DAG.replace('"capability": "echo" },', '"capa‸bility": "echo" },')), [
      'capability',
      '"capability"',
      '"capability": "echo"',
      '{ "task_id": "task_a", "capability": "echo" }',
      tasks,
      `"tasks": ${tasks}`,
      DAG,
    ]);
    assert.deepEqual(await expansions(DAG.replace('},\n    {', '},\n ‸   {')), [tasks, `"tasks": ${tasks}`, DAG]);
  });
});
