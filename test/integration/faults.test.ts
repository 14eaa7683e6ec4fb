// Provider faults at process level, through the executor: real faulty providers (test/fixtures/providers/) run as
// their own processes behind `task_a → task_b`. Each fault ends in the right states — the affected task's clear
// error, the downstream cancelled, a report — with no unhandled rejection and no child process left behind.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { type TestContext, afterEach, beforeEach, describe, test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';
import type { RunEvent, RunReport, TaskReport } from '../../server/src/protocol/report';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import { connectProvider } from '../../server/src/run/connect';
import { startRun } from '../../server/src/run/executor';
import { ACMP_ERRORS } from '../../server/src/protocol/acmpMessages';
import { WebSocketServer } from 'ws';
import { INITIALIZE_RESULT, echoResult } from '../fixtures/providers/jsonRpcLines';

const FIXTURES = resolve(__dirname, '../fixtures/providers');
/** A run a broken guarantee leaves waiting forever fails its test instead. */
const LIMIT = { timeout: 30_000 };

const unhandledRejections: unknown[] = [];
process.on('unhandledRejection', (reason) => unhandledRejections.push(reason));

/** This process's children that run a provider fixture (Linux /proc; tsx's esbuild service is no concern here). */
function providerPids(): number[] {
  const threads = join('/proc', String(process.pid), 'task');
  return readdirSync(threads)
    .flatMap((thread) =>
      readFileSync(join(threads, thread, 'children'), 'utf8')
        .split(' ')
        .filter(Boolean),
    )
    .filter((pid) => {
      try {
        return readFileSync(join('/proc', pid, 'cmdline'), 'utf8').includes(FIXTURES);
      } catch {
        return false; // gone while we looked
      }
    })
    .map(Number);
}

let childrenBefore: Set<number>;
let rejectionsBefore: number;
beforeEach(() => {
  childrenBefore = new Set(providerPids());
  rejectionsBefore = unhandledRejections.length;
});
afterEach(() => {
  const left = providerPids().filter((pid) => !childrenBefore.has(pid));
  // Stopped before failing, so that a broken guarantee fails this file instead of keeping it alive.
  for (const pid of left) process.kill(pid);
  assert.deepEqual(left, [], 'a provider process outlived its run');
  assert.deepEqual(unhandledRejections.slice(rejectionsBefore), [], 'unhandled rejections');
});

/** A hand-scripted provider run as its own process, offering only `capabilities`. */
const fixture = (name: string, capabilities: string[], ...args: string[]): ProviderConfig => ({
  id: name,
  transport: 'stdio',
  command: process.execPath,
  args: ['--import', 'tsx', join(FIXTURES, `${name}.ts`), ...args],
  capabilities,
});
/** Everything else goes to the built-in provider in this process. */
const BUILTIN: ProviderConfig = { id: 'local', transport: 'builtin' };

type Json = Record<string, unknown>;

/**
 * `task_a` (capability `produce`, on the faulty provider) → `task_b` (built-in echo of task_a's output), and an
 * independent `task_c`; `extra` goes into each task by id.
 */
function pipeline(options: { streamEligible?: boolean; extra?: Record<string, Json>; c?: string } = {}) {
  const { streamEligible = false, extra = {}, c = 'echo' } = options;
  const tasks = [
    { task_id: 'task_a', capability: 'produce', input: { type: 'text', data: 'Hello world' }, ...extra.task_a },
    { task_id: 'task_b', capability: 'echo', input: { source: { from_task: 'task_a' } }, ...extra.task_b },
    { task_id: 'task_c', capability: c, input: { type: 'text', data: 'independent' }, ...extra.task_c },
  ];
  const edges = [{ from: 'task_a', to: 'task_b', ...(streamEligible ? { stream_eligible: true } : {}) }];
  return analyzeDag(JSON.stringify({ dag_id: 'dag_faults', tasks, edges }, null, 2));
}

/** Runs the DAG best-effort; a test that times out (a guarantee broke) cancels it, so no provider outlives it. */
async function run(
  context: TestContext,
  analysis: ReturnType<typeof pipeline>,
  ...faulty: ProviderConfig[]
): Promise<{ report: RunReport; events: RunEvent[] }> {
  const events: RunEvent[] = [];
  const dagRun = startRun(analysis, {
    providers: [...faulty, BUILTIN],
    connect: connectProvider,
    policy: 'best-effort',
    backoffMs: 1,
    onEvent: (event) => events.push(event),
  });
  context.signal.addEventListener('abort', () => dagRun.cancel('the test timed out'));
  return { report: await dagRun.done, events };
}

const taskIn = (report: RunReport, id: string): TaskReport => report.tasks.find((entry) => entry.task_id === id)!;

/** task_b never ran: cancelled because task_a failed. */
function assertDownstreamCancelled(report: RunReport): void {
  assert.equal(taskIn(report, 'task_b').state, 'cancelled');
  assert.deepEqual(taskIn(report, 'task_b').error, {
    code: ACMP_ERRORS.cancelled,
    message: 'upstream task "task_a" failed',
  });
}

/** task_a failed with this code and message, and so did the run. */
function assertFailed(report: RunReport, code: number, message: RegExp): void {
  const entry = taskIn(report, 'task_a');
  assert.equal(entry.state, 'failed');
  assert.equal(entry.error?.code, code);
  assert.match(entry.error.message, message);
  assert.equal(report.status, 'failed');
}

const HELLO = { type: 'text', data: 'Hello world' };

/** The error of a task whose provider sent a message over the 10 MiB limit (and was not asked again). */
const tooLarge = (provider: string, transport: string): RegExp =>
  new RegExp(
    `^provider "${provider}" \\(${transport}\\): sent a message over the 10 MiB limit; the invoke is not sent again$`,
  );

describe('provider faults through the executor', { concurrency: false }, () => {
  test('an answer after the deadline: -33003 at the deadline, the late answer ignored', LIMIT, async (t) => {
    const { report, events } = await run(
      t,
      pipeline({ c: 'after-late', extra: { task_a: { capability: 'slow', timeout_ms: 200 } } }),
      fixture('late-answer', ['slow', 'after-late']),
    );
    assertFailed(report, ACMP_ERRORS.timeout, /^no result within timeout_ms \(200 ms\)$/);
    assert.equal(taskIn(report, 'task_a').output, undefined, 'the late answer is not the output');
    assertDownstreamCancelled(report);
    // The provider answered task_c only after the late answer, on the same connection: it was read and ignored.
    assert.equal(taskIn(report, 'task_c').state, 'completed');
    const states = events.flatMap((event) =>
      event.type === 'task-state' && event.task_id === 'task_a' ? [event.state] : [],
    );
    assert.deepEqual(states, ['running', 'failed']);
  });

  test('timeout_ms counts from the invoke, not from a provider that is slow to start', LIMIT, async (t) => {
    const { report } = await run(
      t,
      pipeline({ extra: { task_a: { timeout_ms: 300 } } }),
      fixture('slow-start', ['produce'], '600'),
    );
    assert.equal(report.status, 'completed');
    assert.deepEqual(taskIn(report, 'task_a').output, HELLO);
  });

  test('duplicate and out-of-order chunks over a streaming edge: both results are right', LIMIT, async (t) => {
    const { report, events } = await run(
      t,
      pipeline({ streamEligible: true }),
      fixture('disordered-stream', ['produce']),
    );
    assert.equal(report.status, 'completed');
    assert.deepEqual(taskIn(report, 'task_a').output, HELLO);
    assert.deepEqual(taskIn(report, 'task_b').output, HELLO);
    assert.deepEqual(report.streamed_edges, [{ from: 'task_a', to: 'task_b' }]);
    assert.deepEqual(
      events.flatMap((event) => (event.type === 'chunk' && event.task_id === 'task_a' ? [event.seq] : [])),
      [0, 1, 2, 3],
      'each chunk once, in order',
    );
  });

  test(
    'a result before the final chunk: the task fails, the downstream it streamed into is cancelled',
    LIMIT,
    async (t) => {
      const { report } = await run(
        t,
        pipeline({ streamEligible: true }),
        fixture('disordered-stream', ['produce'], 'result-first'),
      );
      assertFailed(
        report,
        ACMP_ERRORS.internal,
        /^provider "disordered-stream": the output stream ended without its final chunk \(2 chunk\(s\) in order\)$/,
      );
      assertDownstreamCancelled(report);
      assert.equal(taskIn(report, 'task_c').state, 'completed');
    },
  );

  test(
    'a provider that disappears during a streaming edge: upstream failed, downstream cancelled',
    LIMIT,
    async (t) => {
      const { report } = await run(t, pipeline({ streamEligible: true }), fixture('crash-mid-task', ['produce']));
      assertFailed(
        report,
        ACMP_ERRORS.internal,
        /^provider "crash-mid-task" unreachable after 3 attempt\(s\): .*the process exited; its stderr ends with: fixture: out of memory/,
      );
      assert.deepEqual(report.streamed_edges, [{ from: 'task_a', to: 'task_b' }], 'task_b was streaming');
      assertDownstreamCancelled(report);
      assert.equal(taskIn(report, 'task_c').state, 'completed');
    },
  );

  test(
    'a streaming edge whose downstream provider cannot start: that task fails, the stream is kept',
    LIMIT,
    async (t) => {
      const absent: ProviderConfig = {
        id: 'absent',
        transport: 'stdio',
        command: join(FIXTURES, 'no-such-provider'),
        capabilities: ['consume'],
      };
      const { report } = await run(
        t,
        pipeline({ streamEligible: true, extra: { task_b: { capability: 'consume' } } }),
        fixture('disordered-stream', ['produce']),
        absent,
      );
      assert.deepEqual(taskIn(report, 'task_a').output, HELLO);
      const entry = taskIn(report, 'task_b');
      assert.equal(entry.state, 'failed');
      assert.match(entry.error?.message ?? '', /^provider "absent" unreachable after 3 attempt\(s\): .*ENOENT/);
      assert.equal(report.status, 'failed');
    },
  );

  test('an oversized message (a 20 MB line): a clear error, the invoke not sent again', LIMIT, async (t) => {
    const record = mkdtempSync(join(tmpdir(), 'acmp-oversized-'));
    try {
      const executions = join(record, 'executions.log');
      const { report } = await run(t, pipeline(), fixture('oversized', ['produce'], executions));
      assertFailed(report, ACMP_ERRORS.internal, tooLarge('oversized', 'stdio'));
      assertDownstreamCancelled(report);
      assert.equal(taskIn(report, 'task_c').state, 'completed');
      const executed = readFileSync(executions, 'utf8').split('\n').filter(Boolean);
      assert.deepEqual(executed, [taskIn(report, 'task_a').wire_task_id], 'executed once');
    } finally {
      rmSync(record, { recursive: true, force: true });
    }
  });

  test('cost_cu above max_price_cu and a mismatched proof: reported violations', LIMIT, async (t) => {
    const { report, events } = await run(
      t,
      pipeline({ extra: { task_a: { max_price_cu: 1, proof_method: 'result-hash' } } }),
      fixture('dishonest', ['produce']),
    );
    const entry = taskIn(report, 'task_a');
    assert.equal(entry.state, 'completed');
    assert.equal(entry.proof, 'mismatch');
    assert.deepEqual(entry.violations, [
      'cost_cu 5 is above max_price_cu 1',
      'the result-hash proof does not match the output',
    ]);
    const cost = events.find((event) => event.type === 'cost' && event.task_id === 'task_a');
    assert.deepEqual(cost?.type === 'cost' ? [cost.cost_cu, cost.max_price_cu, cost.violation] : undefined, [
      5,
      1,
      true,
    ]);
    assert.equal(
      report.totals.cost_cu,
      5 + (taskIn(report, 'task_b').cost_cu ?? 0) + (taskIn(report, 'task_c').cost_cu ?? 0),
    );
    assert.equal(report.status, 'completed');
  });

  test('a retried invoke never executes twice on a provider that honours idempotency', LIMIT, async (t) => {
    const record = mkdtempSync(join(tmpdir(), 'acmp-idempotent-'));
    try {
      const { report } = await run(t, pipeline(), fixture('idempotent', ['produce'], record));
      assert.equal(report.status, 'completed');
      assert.deepEqual(taskIn(report, 'task_a').output, HELLO);
      assert.deepEqual(taskIn(report, 'task_b').output, HELLO);
      const executions = readFileSync(join(record, 'executions.log'), 'utf8').split('\n').filter(Boolean);
      assert.deepEqual(executions, [taskIn(report, 'task_a').wire_task_id], 'one execution, under its wire id');
    } finally {
      rmSync(record, { recursive: true, force: true });
    }
  });
});

type JsonRpcRequest = { id?: number; method: string; params?: { task_id?: string } };

/** An answer to `invoke` as a provider sends it: the JSON-RPC result message. */
const invokeAnswer = (invoke: JsonRpcRequest, output: Json) =>
  JSON.stringify({ jsonrpc: '2.0', id: invoke.id, result: { ...echoResult(invoke), output } });

const chunkMessage = (invoke: JsonRpcRequest, seq: number, data: string, final: boolean) =>
  JSON.stringify({
    jsonrpc: '2.0',
    method: 'acmp/streamChunk',
    params: { task_id: invoke.params?.task_id, seq, chunk: { type: 'text', data }, final },
  });

const sse = (...messages: string[]) => messages.map((message) => `event: message\ndata: ${message}\n\n`).join('');

/**
 * A Streamable HTTP provider on 127.0.0.1 (no session) that answers `initialize` as the fixtures do and each
 * `acmp/invoke` with the body `answer` gives; `invokes` lists the task_id of each invoke it received.
 */
async function httpProvider(answer: (invoke: JsonRpcRequest) => { type: 'json' | 'sse'; body: string }) {
  const invokes: string[] = [];
  const server = createServer((request, response) => {
    if (request.method !== 'POST') return void response.writeHead(405).end();
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (piece: string) => (text += piece));
    request.on('end', () => {
      const message = JSON.parse(text) as JsonRpcRequest;
      if (message.id === undefined) return void response.writeHead(202).end();
      if (message.method === 'initialize') {
        const body = JSON.stringify({ jsonrpc: '2.0', id: message.id, result: INITIALIZE_RESULT });
        return void response.writeHead(200, { 'content-type': 'application/json' }).end(body);
      }
      if (message.method !== 'acmp/invoke') {
        // As an MCP server answers a method it does not have (`acmp/offerRequest`: it does not negotiate).
        const body = JSON.stringify({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32601, message: 'Method not found' },
        });
        return void response.writeHead(200, { 'content-type': 'application/json' }).end(body);
      }
      invokes.push(message.params?.task_id ?? '');
      const { type, body } = answer(message);
      response.writeHead(200, { 'content-type': type === 'json' ? 'application/json' : 'text/event-stream' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const config: ProviderConfig = { id: 'http-provider', transport: 'http', url, capabilities: ['produce'] };
  return { config, invokes, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** A WebSocket provider on 127.0.0.1 that answers each `acmp/invoke` with `output`. */
async function websocketProvider(output: Json) {
  const invokes: string[] = [];
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  server.on('connection', (socket) =>
    socket.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString('utf8')) as JsonRpcRequest;
      if (message.method === 'initialize') {
        socket.send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: INITIALIZE_RESULT }));
      } else if (message.method === 'acmp/invoke') {
        invokes.push(message.params?.task_id ?? '');
        socket.send(invokeAnswer(message, output));
      }
    }),
  );
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const config: ProviderConfig = { id: 'ws-provider', transport: 'websocket', url, capabilities: ['produce'] };
  return { config, invokes, close: () => new Promise((resolve) => server.close(resolve)) };
}

const OVER_LIMIT = 'x'.repeat(11 * 1024 * 1024);
const UNDER_LIMIT = 'x'.repeat(6 * 1024 * 1024);

/** Providers whose answer to task_a is one message over the limit, each on its transport. */
const OVERSIZED_ANSWERS = [
  {
    name: 'HTTP, a JSON answer over 10 MiB',
    transport: 'http',
    start: () =>
      httpProvider((invoke) => ({ type: 'json', body: invokeAnswer(invoke, { type: 'text', data: OVER_LIMIT }) })),
  },
  {
    name: 'HTTP, an SSE event over 10 MiB',
    transport: 'http',
    start: () =>
      httpProvider((invoke) => ({ type: 'sse', body: sse(invokeAnswer(invoke, { type: 'text', data: OVER_LIMIT })) })),
  },
  {
    name: 'WebSocket, a frame over 10 MiB',
    transport: 'websocket',
    start: () => websocketProvider({ type: 'text', data: OVER_LIMIT }),
  },
];

describe('a message over the size limit, on every transport', { concurrency: false }, () => {
  for (const { name, transport, start } of OVERSIZED_ANSWERS) {
    test(`${name}: a clear error, the downstream cancelled, the invoke not sent again`, LIMIT, async (t) => {
      const provider = await start();
      t.after(provider.close);
      const { report } = await run(t, pipeline(), provider.config);
      assertFailed(report, ACMP_ERRORS.internal, tooLarge(provider.config.id, transport));
      assertDownstreamCancelled(report);
      assert.deepEqual(provider.invokes, [taskIn(report, 'task_a').wire_task_id]);
    });
  }

  test('HTTP, an SSE stream over 10 MiB in events under it: the output streams whole', LIMIT, async (t) => {
    const provider = await httpProvider((invoke) => ({
      type: 'sse',
      body: sse(
        chunkMessage(invoke, 0, UNDER_LIMIT, false),
        chunkMessage(invoke, 1, UNDER_LIMIT, true),
        JSON.stringify({
          jsonrpc: '2.0',
          id: invoke.id,
          result: { task_id: invoke.params?.task_id, output_streamed: true, tokens_used: 2, cost_cu: 0 },
        }),
      ),
    }));
    t.after(provider.close);
    const { report } = await run(t, pipeline({ streamEligible: true }), provider.config);
    assert.equal(report.status, 'completed');
    assert.deepEqual(taskIn(report, 'task_b').output, { type: 'text', data: UNDER_LIMIT + UNDER_LIMIT });
  });
});
