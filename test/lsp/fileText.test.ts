// The language server on texts a run cannot take or an editor may keep: nesting deeper than a run's recursion (a
// limit error, a refused run, a server that goes on) and a leading byte order mark (no error, a fix to drop it).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { CodeAction, SymbolInformation } from 'vscode-languageserver-types';
import { RUN_COMMANDS } from '../../server/src/protocol/runMessages';
import { type LspSession, startLspSession } from '../support/lspHarness';

let session: LspSession;
before(async () => {
  session = await startLspSession({});
});
after(() => session.stop());

const PIPELINE =
  '{"dag_id":"dag_x","tasks":[{"task_id":"task_a","capability":"echo","input":{"type":"text","data":"x"}}],"edges":[]}';

test('nesting deeper than a run can take: a limit error, a refused run, and the server goes on', async () => {
  const uri = 'file:///lsp/deep.acmp-dag.json';
  const nest = '['.repeat(20_000) + ']'.repeat(20_000);
  const published = session.diagnostics(uri);
  await session.open(uri, PIPELINE.replace('"x"', nest));
  const { diagnostics } = await published;
  assert.deepEqual(
    diagnostics.map((d) => [d.code, d.severity, d.range.start.line]),
    [['limit', 1, 0]],
  );
  await assert.rejects(
    session.connection.sendRequest('workspace/executeCommand', { command: RUN_COMMANDS.runDag, arguments: [{ uri }] }),
    /The DAG has 1 error\(s\).*nests 20004 levels deep/,
  );
  // Every feature that walks the document answers (with a result or an error of its own), and the server lives on.
  const textDocument = { uri };
  const middle = { line: 0, character: PIPELINE.indexOf('"x"') + 10_000 };
  for (const [method, params] of [
    ['textDocument/documentSymbol', { textDocument }],
    ['textDocument/foldingRange', { textDocument }],
    ['textDocument/hover', { textDocument, position: middle }],
    ['textDocument/formatting', { textDocument, options: { tabSize: 2, insertSpaces: true } }],
  ] as const) {
    await session.connection.sendRequest(method, params).catch(() => undefined);
  }
  const other = 'file:///lsp/after.acmp-dag.json';
  const next = session.diagnostics(other);
  await session.open(other, PIPELINE);
  assert.deepEqual((await next).diagnostics, []);
  assert.equal(session.process.exitCode, null);
});

test('a byte order mark: no diagnostic, and a fix on the first line that drops it', async () => {
  const uri = 'file:///lsp/bom.acmp-dag.json';
  const published = session.diagnostics(uri);
  await session.open(uri, '\uFEFF' + PIPELINE);
  assert.deepEqual((await published).diagnostics, []);
  const actionsAt = (line: number) =>
    session.connection.sendRequest<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri },
      range: { start: { line, character: 0 }, end: { line, character: 0 } },
      context: { diagnostics: [] },
    });
  const [drop] = (await actionsAt(0)).filter((action) => action.title === 'Remove the byte order mark');
  assert.deepEqual(drop?.edit?.changes?.[uri], [
    { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, newText: '' },
  ]);
  const withoutMark = 'file:///lsp/plain.acmp-dag.json';
  await session.open(withoutMark, PIPELINE);
  const plain = await session.connection.sendRequest<CodeAction[]>('textDocument/codeAction', {
    textDocument: { uri: withoutMark },
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    context: { diagnostics: [] },
  });
  assert.deepEqual(
    plain.filter((action) => action.title === 'Remove the byte order mark'),
    [],
  );
});

test('files on disk: one with a byte order mark is read as the editor shows it, one not UTF-8 is left out', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'acmp-lsp-bytes-'));
  const dag = (id: string) =>
    `{"dag_id":"dag_x","tasks":[{"task_id":"${id}","capability":"echo","input":{"type":"text","data":"x"}}],"edges":[]}`;
  writeFileSync(join(folder, 'bom.acmp-dag.json'), '\uFEFF' + dag('task_bom'));
  writeFileSync(join(folder, 'latin1.acmp-dag.json'), Buffer.from(dag('task_caf\xe9'), 'latin1'));
  const onDisk = await startLspSession({}, { workspaceFolder: folder });
  try {
    const found = await onDisk.connection.sendRequest<SymbolInformation[]>('workspace/symbol', { query: '' });
    assert.deepEqual(
      found.map(({ name, location }) => [name, location.range.start]),
      [['task_bom', { line: 0, character: dag('task_bom').indexOf('"task_bom"') }]],
    );
  } finally {
    await onDisk.stop();
    rmSync(folder, { recursive: true, force: true });
  }
});
