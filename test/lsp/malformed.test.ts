// The built language server on malformed and oversized files, over stdio: diagnostics for each, and it stays alive.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Position } from 'vscode-languageserver-types';
import { BASE_DAG, malformedCorpus } from '../support/malformedCorpus';
import { type LspSession, startLspSession } from '../support/lspHarness';

/** A server that stops answering fails the test rather than hangs it. */
const TIMEOUT = { timeout: 60_000 };

/** A position that lies inside the document: mapping it to an offset and back gives it again. */
const inside = (document: TextDocument, position: Position): boolean =>
  JSON.stringify(document.positionAt(document.offsetAt(position))) === JSON.stringify(position);

describe('language server over stdio: the malformed corpus', () => {
  let session: LspSession;
  before(async () => {
    session = await startLspSession();
  });
  after(async () => session.stop());

  test('publishes diagnostics inside each text and stays alive', TIMEOUT, async () => {
    // All open at once, as after a checkout: each waits out the server's debounce, so one by one would take minutes.
    const corpus = malformedCorpus().map((entry, i) => ({
      ...entry,
      uri: `file:///virtual/malformed/${i}.acmp-dag.json`,
    }));
    const published = corpus.map(({ uri }) => session.diagnostics(uri));
    for (const { uri, text } of corpus) await session.open(uri, text);
    for (const [i, { diagnostics }] of (await Promise.all(published)).entries()) {
      const { name, uri, text } = corpus[i]!;
      assert.ok(diagnostics.length > 0, `${name}: no diagnostics`);
      const document = TextDocument.create(uri, 'acmp-dag', 1, text);
      for (const { range, code } of diagnostics) {
        assert.ok(inside(document, range.start) && inside(document, range.end), `${name}: ${code} outside the text`);
      }
    }
    const cleared = corpus.map(({ uri }) => session.diagnostics(uri));
    for (const { uri } of corpus) await session.close(uri);
    await Promise.all(cleared);
    assert.equal(session.process.exitCode, null);
    const uri = 'file:///virtual/malformed/after.acmp-dag.json';
    await session.open(uri, BASE_DAG);
    const symbols = await session.connection.sendRequest<{ name: string }[]>('textDocument/documentSymbol', {
      textDocument: { uri },
    });
    assert.ok(symbols.length > 0, 'the server still answers requests');
  });
});

describe('language server over stdio: acmp.limits.maxFileBytes', () => {
  const maxFileBytes = 2000;
  let session: LspSession;
  before(async () => {
    session = await startLspSession({ limits: { maxFileBytes } });
  });
  after(async () => session.stop());

  test('a file over the configured limit gets one diagnostic; under it, the analysis', TIMEOUT, async () => {
    const uri = 'file:///virtual/large.acmp-dag.json';
    const oversized = BASE_DAG.replace('"tasks":', '"tasks" [,') + ' '.repeat(maxFileBytes);
    const published = session.diagnostics(uri);
    await session.open(uri, oversized);
    const { diagnostics } = await published;
    assert.deepEqual(
      diagnostics.map((d) => [d.code, d.range.start, d.range.end]),
      [['limit', { line: 0, character: 0 }, { line: 0, character: 1 }]],
    );
    assert.match(diagnostics[0]!.message as string, /too large to analyse.*raise acmp\.limits\.maxFileBytes/);

    const underLimit = session.diagnostics(uri, (p) => p.version === 2);
    await session.change(uri, 2, BASE_DAG);
    assert.deepEqual((await underLimit).diagnostics, []);
  });

  test('over the limit, editor features answer nothing and a run is refused', TIMEOUT, async () => {
    const uri = 'file:///virtual/large-features.acmp-dag.json';
    const published = session.diagnostics(uri);
    await session.open(uri, BASE_DAG + ' '.repeat(maxFileBytes));
    await published;
    const at = { textDocument: { uri }, position: { line: 0, character: 3 } };
    const completion = await session.connection.sendRequest<{ items: unknown[] } | null>('textDocument/completion', at);
    assert.equal(completion, null);
    assert.equal(await session.connection.sendRequest('textDocument/hover', at), null);
    const formatting = await session.connection.sendRequest<unknown[] | null>('textDocument/formatting', {
      textDocument: { uri },
      options: { tabSize: 2, insertSpaces: true },
    });
    assert.ok(formatting === null || formatting.length === 0);
    await assert.rejects(
      session.connection.sendRequest('workspace/executeCommand', { command: 'acmp.runDag', arguments: [{ uri }] }),
      (error: { code: number; message: string }) => error.code === -32803 && /too large to analyse/.test(error.message),
    );
  });
});
