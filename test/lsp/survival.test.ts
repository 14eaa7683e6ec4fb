// The language server survives: thousands of documents opened, edited and closed in one stdio session, valid DAGs,
// broken JSON and random text alike, with every request answered, memory settling, and a throwing feature answering
// its one request with an error while the others go on.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ErrorCodes, ResponseError } from 'vscode-jsonrpc/node';
import type { Position } from 'vscode-languageserver-types';
import { atCursor } from '../support/cursor';
import { DIAMOND, diamondWith } from '../support/diamond';
import { type LspSession, startLspSession } from '../support/lspHarness';
import { residentBytes } from '../support/system';

const PIPELINE = readFileSync(resolve(__dirname, '../../examples/text-pipeline.acmp-dag.json'), 'utf8');
const DOCUMENTS = 2_000;
const EDITS_PER_DOCUMENT = 3;
/** Documents in flight at once, as an editor with several files busy. */
const CONCURRENCY = 16;
/** The first documents warm the server up (code loaded, caches and heaps grown) before memory is sampled. */
const WARM_UP_DOCUMENTS = 200;
/** What resident memory may grow by over the run once every document is closed: far below a leak of 2,000 of them. */
const SETTLED_MARGIN_BYTES = 150 * 1024 * 1024;
/** What the heap in use after a full collection may grow by: a document kept per close (about 5 KB each) exceeds it. */
const SETTLED_HEAP_BYTES = 4 * 1024 * 1024;

/** A seeded generator (mulberry32): the same documents and positions on every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = seeded(7);
const below = (n: number) => Math.floor(random() * n);
const pick = <T>(items: readonly T[]): T => items[below(items.length)]!;

const NASTY = ['\uFEFF', '\u0000', '\uD800', '"\\u12', '\\x', '1e999999', '{', '}', '[', ']', ',', ':', '"', '\n'];

/** A valid DAG, a valid one cut or spliced into broken JSON, or random text: what an editor sends mid-edit. */
function documentText(): string {
  const valid = pick([PIPELINE, DIAMOND]);
  switch (below(4)) {
    case 0:
      return valid;
    case 1:
      return valid.slice(0, below(valid.length));
    case 2: {
      const at = below(valid.length);
      return valid.slice(0, at) + pick(NASTY) + valid.slice(at + below(20));
    }
    default:
      return Array.from({ length: below(400) }, () =>
        below(5) === 0 ? pick(NASTY) : String.fromCharCode(32 + below(95)),
      ).join('');
  }
}

/** A position in `text`, now and then past its end (clients send those after quick edits). */
function positionIn(text: string): Position {
  const lines = text.split('\n');
  const line = below(lines.length + 1);
  return { line, character: below((lines[line]?.length ?? 0) + 2) };
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

describe('the language server survives', () => {
  let session: LspSession;
  const logged: string[] = [];
  before(async () => {
    session = await startLspSession({}, { heapProbe: true });
    session.connection.onNotification('window/logMessage', ({ message }: { message: string }) => logged.push(message));
  });
  after(() => session.stop());

  /** Opens a document, edits it, asks completion, hover and symbols at random positions, closes it. */
  async function exercise(uri: string): Promise<void> {
    let text = documentText();
    await session.open(uri, text);
    for (let version = 2; version <= EDITS_PER_DOCUMENT + 1; version++) {
      text = documentText();
      await session.change(uri, version, text);
      const textDocument = { uri };
      const [completion, hover, symbols] = await Promise.all([
        session.connection.sendRequest('textDocument/completion', { textDocument, position: positionIn(text) }),
        session.connection.sendRequest('textDocument/hover', { textDocument, position: positionIn(text) }),
        session.connection.sendRequest('textDocument/documentSymbol', { textDocument }),
      ]);
      assert.ok(completion === null || typeof completion === 'object', `completion answers in ${uri}`);
      assert.ok(hover === null || typeof hover === 'object', `hover answers in ${uri}`);
      assert.ok(Array.isArray(symbols), `documentSymbol answers in ${uri}`);
    }
    // Closing clears the document's diagnostics: the one publication without a version.
    const cleared = session.diagnostics(uri, (params) => params.version === undefined);
    await session.close(uri);
    assert.deepEqual((await cleared).diagnostics, []);
  }

  async function exerciseAll(first: number, last: number): Promise<void> {
    let next = first;
    const worker = async () => {
      while (next < last) await exercise(`file:///survival/doc-${next++}.acmp-dag.json`);
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  }

  test(`${DOCUMENTS} documents opened, edited ${EDITS_PER_DOCUMENT} times and closed: every request answered, memory settles`, async () => {
    const pid = session.process.pid!;
    await exerciseAll(0, WARM_UP_DOCUMENTS);
    const warm = residentBytes(pid);
    const warmHeap = await session.heapUsed();
    await exerciseAll(WARM_UP_DOCUMENTS, DOCUMENTS);
    const end = residentBytes(pid);
    const endHeap = await session.heapUsed();
    console.log(
      `server resident memory: ${megabytes(warm)} after ${WARM_UP_DOCUMENTS} documents, ` +
        `${megabytes(end)} after ${DOCUMENTS} (all closed), growth ${megabytes(end - warm)}; ` +
        `heap after a full collection ${megabytes(warmHeap)}, then ${megabytes(endHeap)}`,
    );
    assert.equal(session.process.exitCode, null, 'the server is still running');
    assert.ok(end < warm + SETTLED_MARGIN_BYTES, `memory settles: ${megabytes(end)} < ${megabytes(warm)} + 150 MB`);
    assert.ok(
      endHeap < warmHeap + SETTLED_HEAP_BYTES,
      `the heap settles: ${megabytes(endHeap)} < ${megabytes(warmHeap)} + 4 MB`,
    );
    assert.deepEqual(
      logged.filter((message) => message.includes('failed')),
      [],
      'no feature failed on any of the documents',
    );
  });

  test('a feature that throws answers its request with an error; completion, hover and diagnostics go on', async () => {
    // A client that leaves out `textDocument` makes the hover feature throw (it reads `textDocument.uri`).
    const failure = await session.connection
      .sendRequest('textDocument/hover', { position: { line: 0, character: 0 } })
      .then(
        () => assert.fail('a hover without a document answers with an error'),
        (error: unknown) => error,
      );
    assert.ok(failure instanceof ResponseError);
    assert.equal(failure.code, ErrorCodes.InternalError);
    assert.match(failure.message, /^Hover failed: /);
    assert.ok(
      logged.some((message) => message.startsWith('Hover failed: TypeError') && message.includes('\n    at ')),
      'the error and its stack are logged',
    );

    const uri = 'file:///survival/after-the-throw.acmp-dag.json';
    // The cursor where a task id is completed, and an edge to a task that does not exist (an error diagnostic).
    const { text, position, document } = atCursor(
      diamondWith('"from_task": "task_split"', '"from_task": "‸task_split"').replace(
        '{ "from": "task_right", "to": "task_join" }',
        '{ "from": "task_right", "to": "task_nowhere" }',
      ),
    );
    const published = session.diagnostics(uri, (params) => params.version === 1);
    await session.open(uri, text);
    assert.ok(
      (await published).diagnostics.some(
        ({ message }) => typeof message === 'string' && message.includes('task_nowhere'),
      ),
      'diagnostics still published',
    );
    const textDocument = { uri };
    const completion = await session.connection.sendRequest<{ items: { label: string }[] }>('textDocument/completion', {
      textDocument,
      position,
    });
    assert.ok(
      completion.items.some((item) => item.label === 'task_split'),
      'completion still answers',
    );
    const hover = await session.connection.sendRequest<{ contents: unknown } | null>('textDocument/hover', {
      textDocument,
      position: document.positionAt(text.indexOf('sentiment-analysis') + 1),
    });
    assert.ok(hover !== null, 'hover still answers');
  });
});
