// The transports across real process boundaries: `acmp-dag serve --stdio` and `serve --http` as separate processes,
// a WebSocket provider started here, and hand-scripted faulty providers (test/fixtures/providers/). Every failure
// must come back as the right error, promptly, with no unhandled rejection and no child process left behind.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { analyzeDag } from '../../server/src/dag/analyze';
import type { TaskOutput } from '../../server/src/protocol/report';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import { BUILTIN_ACMP, BuiltinProvider } from '../../server/src/run/builtin/provider';
import { createAcmpServer } from '../../server/src/run/builtin/mcpServer';
import { assembleChunks } from '../../server/src/run/chunks';
import { connectProvider, createConnector } from '../../server/src/run/connect';
import { startRun } from '../../server/src/run/executor';
import { checkProof } from '../../server/src/run/proof';
import {
  ACMP_ERRORS,
  AcmpError,
  type ChunkParams,
  type InvokeParams,
  TransportError,
} from '../../server/src/protocol/acmpMessages';
import type { Connector, InvokeHandlers, ProviderConnection } from '../../server/src/run/types';
import { WebSocketTransport } from '../../server/src/run/websocketTransport';
import { freePort } from '../support/system';
import { startHttpServe } from '../support/serveProcess';

/** The bundle `npm run build` makes; ACMP_CLI_BUNDLE points elsewhere (a separate build while developing). */
const CLI_BUNDLE = process.env.ACMP_CLI_BUNDLE ?? resolve(__dirname, '../../dist/cli.js');
const FIXTURES = resolve(__dirname, '../fixtures/providers');
/** A transport that hangs fails its suite instead of the whole run. */
const SUITE_TIMEOUT_MS = 60_000;
const TOKEN = 'acmp_tok_integration_7f8a9b3c';
const TOKEN_ENV = 'ACMP_INTEGRATION_TOKEN';
const WRONG_TOKEN_ENV = 'ACMP_INTEGRATION_WRONG_TOKEN';
process.env[TOKEN_ENV] = TOKEN;
process.env[WRONG_TOKEN_ENV] = 'acmp_tok_wrong_0000';

const unhandledRejections: unknown[] = [];
process.on('unhandledRejection', (reason) => unhandledRejections.push(reason));

const REVIEW: TaskOutput = {
  type: 'text',
  data: 'The product quality has declined significantly. Support was friendly and fast, and the refund arrived.',
};

let nextId = 0;
const freshId = () => `task_integration_${++nextId}`;

function recorder(): InvokeHandlers & { readonly chunks: ChunkParams[] } {
  const chunks: ChunkParams[] = [];
  return { chunks, onChunk: (chunk) => chunks.push(chunk), onHeartbeat: () => undefined };
}

/** Resolves with what `promise` rejects with. */
const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => assert.fail('expected a rejection'),
    (reason: unknown) => reason,
  );

/** The processes whose parent is this test process (Linux /proc). */
function childPids(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return parent === process.pid ? [Number(pid)] : [];
      } catch {
        return []; // gone while we looked
      }
    });
}

/** The children this process had before any test (tsx's esbuild service). */
const baseline = new Set(childPids());

/** Runs `use` on a fresh connection, closes it, and checks that it left no process of its own behind. */
async function withConnection(
  config: ProviderConfig,
  use: (connection: ProviderConnection) => Promise<void>,
  connector: Connector = connectProvider,
): Promise<void> {
  const before = new Set(childPids());
  const connection = await connector(config);
  try {
    await use(connection);
  } finally {
    await connection.close();
  }
  assert.deepEqual(
    childPids().filter((pid) => !before.has(pid)),
    [],
    'a child process outlived its connection',
  );
}

/** A hand-scripted provider of test/fixtures/providers, run as its own process. */
const fixture = (name: string, ...args: string[]): ProviderConfig => ({
  id: name,
  transport: 'stdio',
  command: process.execPath,
  args: ['--import', 'tsx', join(FIXTURES, `${name}.ts`), ...args],
});

/** Every capability, both streams, cancel and refusals, against the same provider in-process. */
async function exerciseBuiltin(connection: ProviderConnection): Promise<void> {
  assert.deepEqual(connection.acmp, BUILTIN_ACMP);
  const local = new BuiltinProvider();
  const send = (params: Omit<InvokeParams, 'task_id'>) =>
    connection.invoke({ task_id: freshId(), ...params }, recorder());
  const expected = async (params: Omit<InvokeParams, 'task_id'>) =>
    (await local.invoke({ task_id: freshId(), ...params }, recorder())).output;

  // The §6.2 pipeline: split, one sentiment per chunk, aggregation of the whole outputs.
  const split = await send({ capability: 'text-split', input: REVIEW, proof_method: 'result-hash' });
  assert.deepEqual(split.output, await expected({ capability: 'text-split', input: REVIEW }));
  assert.ok(split.output !== undefined);
  assert.equal(checkProof(split.proof, split.output), 'verified');
  const sentences = (split.output.data as { chunks: string[] }).chunks;
  const sentiments = await Promise.all(
    sentences.map((data) => send({ capability: 'sentiment-analysis', input: { type: 'text', data } })),
  );
  const aggregationInput = { type: 'json', data: sentiments.map((result) => result.output) };
  const aggregation = await send({ capability: 'result-aggregation', input: aggregationInput });
  assert.deepEqual(aggregation.output, await expected({ capability: 'result-aggregation', input: aggregationInput }));
  assert.equal(aggregation.tokens_used > 0 && aggregation.cost_cu > 0, true);

  // Output streaming: the chunks, in seq order, assemble to the output.
  const streamedHandlers = recorder();
  const streamed = await connection.invoke(
    { task_id: freshId(), capability: 'echo', input: REVIEW, stream: true, proof_method: 'result-hash' },
    streamedHandlers,
  );
  assert.equal(streamed.output_streamed, true);
  assert.deepEqual(
    streamedHandlers.chunks.map(({ seq, final }) => [seq, final]),
    [
      [0, false],
      [1, true],
    ],
  );
  const assembled = assembleChunks(streamedHandlers.chunks.map((chunk) => chunk.chunk));
  assert.deepEqual(assembled, REVIEW);
  assert.equal(checkProof(streamed.proof, assembled), 'verified');

  // Input streaming, chunks sent out of order.
  const [first, second] = sentences as [string, string];
  const sentimentId = freshId();
  const sentiment = connection.invoke(
    { task_id: sentimentId, capability: 'sentiment-analysis', input_stream: true },
    recorder(),
  );
  await connection.inputChunk({ task_id: sentimentId, seq: 1, chunk: { type: 'text', data: second }, final: true });
  await connection.inputChunk({
    task_id: sentimentId,
    seq: 0,
    chunk: { type: 'text', data: `${first} ` },
    final: false,
  });
  assert.deepEqual(
    (await sentiment).output,
    await expected({ capability: 'sentiment-analysis', input: { type: 'text', data: `${first} ${second}` } }),
  );

  // Both ways: echo passes the input chunks on.
  const echoId = freshId();
  const echoHandlers = recorder();
  const echo = connection.invoke(
    { task_id: echoId, capability: 'echo', input_stream: true, stream: true },
    echoHandlers,
  );
  await connection.inputChunk({ task_id: echoId, seq: 0, chunk: { type: 'text', data: 'a' }, final: false });
  await connection.inputChunk({ task_id: echoId, seq: 1, chunk: { type: 'text', data: 'b' }, final: true });
  assert.equal((await echo).output_streamed, true);
  assert.deepEqual(assembleChunks(echoHandlers.chunks.map((chunk) => chunk.chunk)), { type: 'text', data: 'ab' });

  // Cancel, and the provider's refusals, as AcmpErrors with their code, message and data.
  const cancelId = freshId();
  // Over HTTP the cancel may overtake its invoke: the rejection is awaited from the start.
  const cancelled = rejection(
    connection.invoke({ task_id: cancelId, capability: 'echo', input_stream: true }, recorder()),
  );
  await connection.cancel({ task_id: cancelId, reason: 'no longer needed' });
  const cancelError = await cancelled;
  assert.ok(cancelError instanceof AcmpError);
  assert.equal(cancelError.code, ACMP_ERRORS.cancelled);
  assert.equal(cancelError.message, 'Task cancelled: no longer needed');
  const unknown = await rejection(send({ capability: 'translation', input: REVIEW }));
  assert.ok(unknown instanceof AcmpError);
  assert.equal(unknown.code, ACMP_ERRORS.capability_not_found);
  assert.equal((unknown.data as { capability: string }).capability, 'translation');
  const budget = await rejection(send({ capability: 'sentiment-analysis', input: REVIEW, max_price_cu: 0 }));
  assert.ok(budget instanceof AcmpError);
  assert.equal(budget.code, ACMP_ERRORS.budget_exceeded);
  assert.equal(budget.message, 'Budget exceeded');
}

before(() => assert.ok(existsSync(CLI_BUNDLE), `no CLI bundle at ${CLI_BUNDLE}: build it, or set ACMP_CLI_BUNDLE`));

after(() => {
  const left = childPids()
    .filter((pid) => !baseline.has(pid))
    .map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' '));
  assert.deepEqual(left, [], 'child processes left behind');
  assert.deepEqual(unhandledRejections, [], 'unhandled rejections');
});

describe('acmp-dag serve --stdio', { timeout: SUITE_TIMEOUT_MS }, () => {
  const config: ProviderConfig = {
    id: 'serve-stdio',
    transport: 'stdio',
    command: process.execPath,
    args: [CLI_BUNDLE, 'serve', '--stdio'],
  };

  test('serves every capability, both streams and cancel, advertising its acmp capability', async () => {
    await withConnection(config, async (connection) => {
      assert.ok(
        childPids().some((pid) => !baseline.has(pid)),
        'the provider runs as a child process',
      );
      await exerciseBuiltin(connection);
    });
  });

  test('a run against it checks every proof, input_hash included (a field reference, a stream_eligible edge)', async () => {
    const proved = { proof_method: 'result-hash' };
    const analysis = analyzeDag(
      JSON.stringify({
        dag_id: 'dag_proofs',
        tasks: [
          { task_id: 'task_split', capability: 'text-split', input: REVIEW, ...proved },
          {
            task_id: 'task_first',
            capability: 'sentiment-analysis',
            input: { source: { from_task: 'task_split', field: 'data.chunks[0]' } },
            ...proved,
          },
          { task_id: 'task_source', capability: 'echo', input: REVIEW, ...proved },
          { task_id: 'task_streamed', capability: 'echo', input: { source: { from_task: 'task_source' } }, ...proved },
        ],
        edges: [
          { from: 'task_split', to: 'task_first' },
          { from: 'task_source', to: 'task_streamed', stream_eligible: true },
        ],
      }),
    );
    const report = await startRun(analysis, { providers: [config], connect: createConnector() }).done;
    assert.deepEqual(
      report.tasks.map((task) => [task.task_id, task.state, task.proof, task.violations]),
      ['task_split', 'task_first', 'task_source', 'task_streamed'].map((id) => [
        id,
        'completed',
        'verified',
        undefined,
      ]),
    );
  });

  test('a message over 10 MiB ends the session, and stderr says why', async () => {
    const child = spawn(config.command!, config.args!, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    // The process stops reading mid-line: the rest of the write fails, as it would for any buyer.
    child.stdin.on('error', () => undefined);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const input = { type: 'text', data: 'x'.repeat(11 * 1024 * 1024) };
    const invoke = { task_id: freshId(), capability: 'echo', input };
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'acmp/invoke', params: invoke }) + '\n');
    await exited;
    assert.equal(stderr, 'acmp-dag serve: the buyer sent a message over the 10 MiB limit; the session ends\n');
  });

  test('closing the connection ends the invoke in flight with a TransportError and the process', async () => {
    let pending: Promise<unknown> | undefined;
    await withConnection(config, (connection) => {
      pending = rejection(
        connection.invoke({ task_id: freshId(), capability: 'echo', input_stream: true }, recorder()),
      );
      return Promise.resolve();
    });
    const error = await pending;
    assert.ok(error instanceof TransportError);
    assert.match(error.message, /provider "serve-stdio" \(stdio\): the connection was closed/);
  });
});

describe('acmp-dag serve --http', { timeout: SUITE_TIMEOUT_MS }, () => {
  let server: Awaited<ReturnType<typeof startHttpServe>>;
  const config = (): ProviderConfig => ({ id: 'serve-http', transport: 'http', url: server.url, tokenEnv: TOKEN_ENV });
  before(async () => {
    server = await startHttpServe([], { ACMP_TOKEN: TOKEN });
  });
  after(async () => assert.equal(await server.stop(), 0));

  test('listens on 127.0.0.1 and serves every capability, both streams and cancel', async () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    await withConnection(config(), exerciseBuiltin);
  });

  test('the bearer token from tokenEnv reaches the server, and never an error message', async () => {
    const wrong = await rejection(connectProvider({ ...config(), tokenEnv: WRONG_TOKEN_ENV }));
    assert.ok(wrong instanceof TransportError);
    assert.match(wrong.message, /Unauthorized/);
    const none = await rejection(connectProvider({ ...config(), tokenEnv: undefined }));
    assert.ok(none instanceof TransportError);
    const unset = await rejection(connectProvider({ ...config(), tokenEnv: 'ACMP_INTEGRATION_UNSET' }));
    assert.ok(unset instanceof TransportError);
    assert.match(unset.message, /ACMP_INTEGRATION_UNSET \(tokenEnv\) is not set/);
    for (const error of [wrong, none, unset]) {
      assert.ok(!error.message.includes(TOKEN) && !error.message.includes(process.env[WRONG_TOKEN_ENV] ?? ''));
    }
  });

  test('the server answers only its own Host (no DNS rebinding) and only the bearer token', async () => {
    const status = (headers: Record<string, string>) =>
      new Promise<number | undefined>((resolve, reject) => {
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
        request(
          server.url,
          { method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
          (response) => {
            response.resume();
            resolve(response.statusCode);
          },
        )
          .on('error', reject)
          .end(body);
      });
    const authorization = `Bearer ${TOKEN}`;
    assert.equal(await status({ host: 'attacker.example', authorization }), 403);
    assert.equal(await status({}), 401);
    assert.equal(await status({ authorization: 'Bearer acmp_tok_guess' }), 401);
    assert.notEqual(await status({ authorization }), 401);
  });

  test('two runs whose ids share a prefix each get their own output: fresh wire ids per run', async () => {
    // serve --http replays the answer of a wire id it has seen (Layer 1 §3.1.1), so a reused id shows as a stale output.
    const outputs: unknown[] = [];
    for (const [runId, data] of [
      ['session-run-1', 'one'],
      ['session-run-2', 'two'],
    ] as const) {
      const analysis = analyzeDag(
        JSON.stringify({
          dag_id: 'dag_wire',
          tasks: [{ task_id: 'task_a', capability: 'echo', input: { type: 'text', data } }],
          edges: [],
        }),
      );
      const report = await startRun(analysis, { providers: [config()], connect: createConnector(), runId }).done;
      outputs.push(report.tasks[0]!.output);
    }
    assert.deepEqual(outputs, [
      { type: 'text', data: 'one' },
      { type: 'text', data: 'two' },
    ]);
  });

  test('a provider that goes away mid-task fails the invoke with a TransportError at once', async () => {
    const doomed = await startHttpServe([], { ACMP_TOKEN: TOKEN });
    const connection = await connectProvider({ ...config(), url: doomed.url });
    const pending = rejection(
      connection.invoke({ task_id: freshId(), capability: 'echo', input_stream: true }, recorder()),
    );
    await doomed.stop();
    const error = await pending;
    assert.ok(error instanceof TransportError, String(error));
    assert.match(error.message, /^provider "serve-http" \(http\): /);
    await connection.close();
  });

  test('an endpoint where nothing listens is a TransportError', async () => {
    const port = await freePort();
    const error = await rejection(
      connectProvider({ id: 'nowhere', transport: 'http', url: `http://127.0.0.1:${port}/mcp` }),
    );
    assert.ok(error instanceof TransportError);
    assert.match(error.message, /ECONNREFUSED/);
  });
});

describe('websocket', { timeout: SUITE_TIMEOUT_MS }, () => {
  let wss: WebSocketServer;
  let url: string;
  const authorizations: (string | undefined)[] = [];
  const frames: string[] = [];
  before(async () => {
    const provider = new BuiltinProvider();
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    wss.on('connection', (socket, request: IncomingMessage) => {
      authorizations.push(request.headers.authorization);
      socket.on('message', (data: Buffer) => frames.push(data.toString('utf8')));
      void createAcmpServer(provider).connect(new WebSocketTransport(socket));
    });
    await new Promise((resolve) => wss.once('listening', resolve));
    url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`;
  });
  after(() => new Promise((resolve) => wss.close(resolve)));

  test('one JSON-RPC message per text frame, the same handshake, every capability and the bearer token', async () => {
    await withConnection({ id: 'ws', transport: 'websocket', url, tokenEnv: TOKEN_ENV }, exerciseBuiltin);
    assert.deepEqual(authorizations, [`Bearer ${TOKEN}`]);
    const messages = frames.map((frame) => JSON.parse(frame) as { jsonrpc?: string; method?: string });
    assert.ok(messages.every((message) => !Array.isArray(message) && message.jsonrpc === '2.0'));
    assert.deepEqual(
      messages.slice(0, 2).map((message) => message.method),
      ['initialize', 'notifications/initialized'],
    );
  });

  test('a socket where nothing listens is a TransportError', async () => {
    const port = await freePort();
    const error = await rejection(
      connectProvider({ id: 'ws-nowhere', transport: 'websocket', url: `ws://127.0.0.1:${port}/` }),
    );
    assert.ok(error instanceof TransportError);
    assert.match(error.message, /^provider "ws-nowhere" \(websocket\): .*ECONNREFUSED/);
  });
});

describe('faulty providers', { timeout: SUITE_TIMEOUT_MS }, () => {
  /**
   * The invoke's rejection. No deadline is involved (the connection sets the SDK's request timeout out of the way), so
   * only the fault can end the invoke: a fault that went unnoticed leaves it waiting, and the suite's timeout fails it.
   */
  function invokeRejection(connection: ProviderConnection, handlers = recorder()): Promise<unknown> {
    return rejection(
      connection.invoke({ task_id: freshId(), capability: 'echo', input: { type: 'text', data: 'x' } }, handlers),
    );
  }

  test('a provider that crashes mid-task: a TransportError quoting its stderr; later calls fail at once', async () => {
    await withConnection(fixture('crash-mid-task'), async (connection) => {
      assert.equal(connection.acmp?.features.output_streaming, true);
      const handlers = recorder();
      const error = await invokeRejection(connection, handlers);
      assert.ok(error instanceof TransportError);
      assert.match(error.message, /the process exited; its stderr ends with: fixture: out of memory/);
      assert.equal(handlers.chunks.length, 1, 'the chunk sent before the crash arrived');
      assert.equal(await rejection(connection.invoke({ task_id: freshId(), capability: 'echo' }, recorder())), error);
      await assert.rejects(
        connection.inputChunk({ task_id: 't', seq: 0, chunk: { type: 'text', data: '' }, final: true }),
        TransportError,
      );
      await connection.cancel({ task_id: 't' });
    });
  });

  test('a provider that never answers an invoke: closing ends it with a TransportError', async () => {
    let pending: Promise<unknown> | undefined;
    await withConnection(fixture('never-answers'), (connection) => {
      pending = rejection(connection.invoke({ task_id: freshId(), capability: 'echo', input: REVIEW }, recorder()));
      return Promise.resolve();
    });
    const error = await pending;
    assert.ok(error instanceof TransportError);
    assert.match(error.message, /^provider "never-answers" \(stdio\): the connection was closed$/);
  });

  test('a provider that never answers initialize: a TransportError after the initialize timeout', async () => {
    const connector = createConnector({ initializeTimeoutMs: 300 });
    const before = new Set(childPids());
    const error = await rejection(connector(fixture('never-answers', 'initialize')));
    assert.ok(error instanceof TransportError);
    assert.match(error.message, /no answer to initialize within 300 ms/);
    assert.deepEqual(
      childPids().filter((pid) => !before.has(pid)),
      [],
    );
  });

  test('a provider that writes garbage on stdout: a TransportError', async () => {
    await withConnection(fixture('garbage'), async (connection) => {
      const error = await invokeRejection(connection);
      assert.ok(error instanceof TransportError);
      assert.match(error.message, /^provider "garbage" \(stdio\): sent something that is not JSON-RPC: /);
    });
  });

  test('a provider that answers an unknown request id: a TransportError', async () => {
    await withConnection(fixture('unknown-id'), async (connection) => {
      const error = await invokeRejection(connection);
      assert.ok(error instanceof TransportError);
      assert.match(error.message, /unknown message ID/);
    });
  });

  test('a provider without MCP initialize is used without optional features; ACMP_TOKEN reaches it', async () => {
    await withConnection({ ...fixture('not-mcp'), tokenEnv: TOKEN_ENV }, async (connection) => {
      assert.equal(connection.acmp, undefined);
      const result = await connection.invoke({ task_id: freshId(), capability: 'echo', input: REVIEW }, recorder());
      assert.deepEqual(result.output, REVIEW);
      assert.equal(result.provider_id, createHash('sha256').update(TOKEN).digest('hex'));
    });
  });

  test('a command that cannot start, or a provider entry without command or url: a TransportError', async () => {
    for (const config of [
      { id: 'missing', transport: 'stdio', command: join(FIXTURES, 'no-such-provider') },
      { id: 'no-command', transport: 'stdio' },
      { id: 'no-url', transport: 'http' },
    ] as const) {
      const error = await rejection(connectProvider(config));
      assert.ok(error instanceof TransportError, config.id);
      assert.match(error.message, new RegExp(`^provider "${config.id}"`));
    }
  });
});
