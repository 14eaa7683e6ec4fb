// Every limit holds against a provider or a buyer that pushes: the built CLI as a real process, real servers on
// 127.0.0.1. An HTTP provider's error answer of 200 MB, 5,000 sessions opened on `acmp-dag serve --http`, and a
// run stopped by SIGTERM or SIGHUP: each ends in a clear error or a clean stop, within bounded memory, leaving nothing
// behind.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { Agent, type IncomingMessage, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { garbageCollector } from '../../server/src/idleCollection';
import { DEFAULT_MAX_SESSIONS, serveHttp } from '../../server/src/run/builtin/mcpServer';
import type { RunReport } from '../../server/src/protocol/report';
import { INITIALIZE_RESULT } from '../fixtures/providers/jsonRpcLines';
import { scratchFolder } from '../support/durable';
import { peakMemoryBytes, peakMemoryFlags } from '../support/peakMemory';

const CLI = process.env.ACMP_CLI_BUNDLE ?? resolve(__dirname, '../../dist/cli.js');
const FIXTURES = resolve(__dirname, '../fixtures/providers');
const MB = 1024 * 1024;

const folder = scratchFolder('acmp-limits-');
after(() => folder.remove());
const scratch = folder.path;
const writeJson = (name: string, value: unknown): string => folder.file(name, value);

interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

interface CliOptions {
  /** Flags for the CLI's Node. */
  readonly nodeFlags?: readonly string[];
  /** Variables added to this process's environment. */
  readonly env?: NodeJS.ProcessEnv;
}

/** Runs the built CLI as its own process (this one keeps serving meanwhile). */
function runCli(args: string[], { nodeFlags = [], env = {} }: CliOptions = {}) {
  const child = spawn(process.execPath, [...nodeFlags, CLI, ...args], { env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const finished = new Promise<Finished>((resolveFinished) =>
    child.once('close', (code, signal) => resolveFinished({ code, signal, stdout, stderr })),
  );
  /** Resolves once its stdout or stderr, so far, matches `pattern`. */
  const printed = (stream: 'stdout' | 'stderr', pattern: RegExp): Promise<void> =>
    new Promise((resolvePrinted, reject) => {
      const check = (): void => {
        if (!pattern.test(stream === 'stdout' ? stdout : stderr)) return;
        child[stream].off('data', check);
        resolvePrinted();
      };
      child[stream].on('data', check);
      check();
      void finished.then(() => reject(new Error(`exited before printing ${pattern}: ${stdout}${stderr}`)));
    });
  return { child, finished, printed };
}

/** Sends `bytes` bytes of `x` as the response's body, as fast as the reader takes them, until it hangs up. */
function streamBody(response: ServerResponse, bytes: number): void {
  const piece = Buffer.alloc(64 * 1024, 'x');
  function* pieces() {
    for (let sent = 0; sent < bytes; sent += piece.length) yield piece;
  }
  pipeline(Readable.from(pieces()), response).catch(() => undefined);
}

/** The JSON-RPC message a request carries. */
async function messageOf(request: IncomingMessage): Promise<{ id?: number; method?: string }> {
  let text = '';
  for await (const piece of request.setEncoding('utf8')) text += piece as string;
  return JSON.parse(text) as { id?: number; method?: string };
}

describe('an HTTP provider answering an invoke with an error of 200 MB', () => {
  test('the task fails naming the limit, and the CLI stays under 150 MB', async (t) => {
    const server = createServer((request, response) => {
      if (request.method !== 'POST') return void response.writeHead(405).end();
      void messageOf(request).then((message) => {
        if (message.id === undefined) return void response.writeHead(202).end();
        if (message.method === 'initialize') {
          const body = JSON.stringify({ jsonrpc: '2.0', id: message.id, result: INITIALIZE_RESULT });
          return void response.writeHead(200, { 'content-type': 'application/json' }).end(body);
        }
        response.writeHead(500, { 'content-type': 'text/plain' });
        streamBody(response, 200 * MB);
      });
    });
    await new Promise<void>((resolveListening) => server.listen(0, '127.0.0.1', resolveListening));
    t.after(() => {
      server.closeAllConnections();
      server.close();
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const providers = writeJson('error-body.providers.json', {
      providers: [{ id: 'huge-error', transport: 'http', url, capabilities: ['produce'] }],
    });
    const dag = writeJson('error-body.acmp-dag.json', {
      dag_id: 'dag_error_body',
      tasks: [{ task_id: 'task_a', capability: 'produce', input: { type: 'text', data: 'x' } }],
      edges: [],
    });
    const peakFile = join(scratch, 'error-body.peak');
    const { finished } = runCli(['run', dag, '--json', '--providers', providers], {
      nodeFlags: peakMemoryFlags(peakFile),
    });
    const { code, stdout, stderr } = await finished;
    const peak = peakMemoryBytes(peakFile);
    t.diagnostic(`the CLI's peak resident memory: ${(peak / MB).toFixed(0)} MB`);
    assert.ok(peak < 150 * MB, `the CLI's peak resident memory was ${(peak / MB).toFixed(0)} MB`);
    assert.equal(code, 1, stderr);
    const [task] = (JSON.parse(stdout) as RunReport).tasks;
    assert.equal(task!.state, 'failed');
    assert.equal(
      task!.error!.message,
      'provider "huge-error" (http): sent a message over the 10 MiB limit; the invoke is not sent again',
    );
  });
});

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'limits-test', version: '0.0.0' } },
};

interface Answer {
  readonly status: number;
  readonly sessionId: string | undefined;
  /** The body, once it has come whole. */
  readonly text: Promise<string>;
}

/**
 * A buyer speaking raw Streamable HTTP to `url`, with the bearer token when given, on kept-alive connections (5,000
 * requests by fetch take seconds longer).
 */
function rawBuyer(url: string, token?: string) {
  const agent = new Agent({ keepAlive: true });
  /** Sends one JSON-RPC message, in the session `sessionId` when given; resolves once the answer's head came. */
  const post = (message: object, sessionId?: string): Promise<Answer> =>
    new Promise((resolveAnswer, reject) => {
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
      };
      request(url, { method: 'POST', agent, headers }, (response) => {
        const text = (async () => {
          let body = '';
          for await (const piece of response.setEncoding('utf8')) body += piece as string;
          return body;
        })();
        const session = response.headers['mcp-session-id'];
        resolveAnswer({ status: response.statusCode ?? 0, sessionId: session as string | undefined, text });
      })
        .on('error', reject)
        .end(JSON.stringify(message));
    });
  /** `count` initialize requests, `parallel` at a time: the sessions they opened, and the refusals. */
  const initializeMany = async (count: number, parallel: number) => {
    const sessions: string[] = [];
    const refusals: { status: number; text: string }[] = [];
    let sent = 0;
    const sender = async (): Promise<void> => {
      while (sent < count) {
        sent++;
        const { status, sessionId, text } = await post(INITIALIZE);
        if (status === 200 && sessionId !== undefined) {
          sessions.push(sessionId);
          await text;
        } else refusals.push({ status, text: await text });
      }
    };
    await Promise.all(Array.from({ length: parallel }, sender));
    return { sessions, refusals };
  };
  return { post, initializeMany, close: () => agent.destroy() };
}

/** The status of a request made with exactly these headers (fetch would set Host and Accept itself). */
function statusOf(url: string, headers: Record<string, string>): Promise<number | undefined> {
  return new Promise((resolveStatus, reject) =>
    request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (response) => {
      response.resume();
      resolveStatus(response.statusCode);
    })
      .on('error', reject)
      .end(JSON.stringify(INITIALIZE)),
  );
}

describe('acmp-dag serve --http under a flood of sessions', () => {
  test('5,000 initialize requests: 100 sessions live, the rest refused with 503, memory bounded', async (t) => {
    const token = 'acmp_tok_limits';
    const collect = garbageCollector();
    const heapAfterCollection = (): number => {
      collect();
      return process.memoryUsage().heapUsed;
    };
    // What the first requests load and keep (the SDK's lazy parts, the buyer's connections) is no session's.
    const warmUp = await serveHttp(0, '127.0.0.1', { token });
    const warmUpBuyer = rawBuyer(warmUp.url, token);
    await warmUpBuyer.initializeMany(200, 50);
    warmUpBuyer.close();
    await warmUp.close();
    const server = await serveHttp(0, '127.0.0.1', { token });
    const buyer = rawBuyer(server.url, token);
    t.after(async () => {
      buyer.close();
      await server.close();
    });
    const before = heapAfterCollection();

    const { sessions, refusals } = await buyer.initializeMany(5_000, 50);
    const after = heapAfterCollection();
    t.diagnostic(`heap after a collection: ${(before / MB).toFixed(1)} MB before, ${(after / MB).toFixed(1)} MB after`);
    assert.equal(sessions.length, DEFAULT_MAX_SESSIONS);
    assert.equal(refusals.length, 5_000 - DEFAULT_MAX_SESSIONS);
    assert.deepEqual(new Set(refusals.map((refusal) => refusal.status)), new Set([503]));
    assert.match(refusals[0]!.text, /100 sessions are open, the most this server keeps; retry when one has ended/);
    assert.ok(after - before < 30 * MB, `the server's heap grew by ${((after - before) / MB).toFixed(1)} MB`);

    // The sessions kept all work; Host, token and Accept are checked as before, the bound reached or not.
    for (const sessionId of sessions) {
      const ping = await buyer.post({ jsonrpc: '2.0', id: 2, method: 'ping' }, sessionId);
      assert.equal(ping.status, 200);
      assert.match(await ping.text, /"result":\{\}/);
    }
    const authorization = `Bearer ${token}`;
    assert.equal(await statusOf(server.url, { authorization, host: 'attacker.example' }), 403);
    assert.equal(await statusOf(server.url, {}), 401);
    assert.equal(await statusOf(server.url, { authorization: 'Bearer acmp_tok_guess' }), 401);
    assert.equal(
      await statusOf(server.url, { authorization, accept: 'text/html', 'mcp-session-id': sessions[0]! }),
      406,
    );
  });

  test('an idle session ends and frees its place; one with a request open stays however long it takes', async (t) => {
    const sessionIdleMs = 50;
    const server = await serveHttp(0, '127.0.0.1', { maxSessions: 2, sessionIdleMs });
    const buyer = rawBuyer(server.url);
    t.after(async () => {
      buyer.close();
      await server.close();
    });
    const {
      sessions: [busy, idle],
    } = await buyer.initializeMany(2, 1);
    // An invoke that waits for its input chunks: its answer stays open until they come.
    const taskId = 'task_long-limits';
    const invoke = await buyer.post(
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'acmp/invoke',
        params: { task_id: taskId, capability: 'echo', input_stream: true, timeout_ms: 60_000 },
      },
      busy,
    );
    assert.equal(invoke.status, 200);
    assert.equal((await buyer.post(INITIALIZE)).status, 503, 'two sessions are the bound');
    // Nothing tells a buyer that its session ended but its next request: ask for a new one until the idle one's place
    // is free.
    let opened: Answer;
    while ((opened = await buyer.post(INITIALIZE)).status === 503) {
      await new Promise((resolveLater) => setTimeout(resolveLater, sessionIdleMs));
    }
    assert.equal(opened.status, 200);
    assert.notEqual(opened.sessionId, undefined);
    const ping = await buyer.post({ jsonrpc: '2.0', id: 4, method: 'ping' }, idle);
    assert.equal(ping.status, 404, 'the idle session ended');
    assert.match(await ping.text, /Session not found/);

    const chunk = { task_id: taskId, seq: 0, chunk: { type: 'text', data: 'still here' }, final: true };
    const sent = await buyer.post({ jsonrpc: '2.0', method: 'acmp/inputChunk', params: chunk }, busy);
    assert.equal(sent.status, 202, 'the busy session lives on');
    assert.match(await invoke.text, /"output":\{"type":"text","data":"still here"\}/);
  });
});

describe('a stop signal ends a run as Ctrl-C does', () => {
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
    test(`${signal}: the run cancelled, acmp/cancel sent, its outputs on disk removed, exit 1`, async () => {
      const temporary = mkdtempSync(join(scratch, `tmp-${signal}-`));
      const cancels = join(temporary, 'cancels.log');
      const providers = writeJson(`${signal}.providers.json`, {
        providers: [
          {
            id: 'waits',
            transport: 'stdio',
            command: process.execPath,
            args: ['--import', 'tsx', join(FIXTURES, 'waits-for-cancel.ts'), cancels],
            capabilities: ['wait'],
          },
          { id: 'local', transport: 'builtin' },
        ],
      });
      const dag = writeJson(`${signal}.acmp-dag.json`, {
        dag_id: 'dag_stopped',
        tasks: [
          { task_id: 'task_quick', capability: 'echo', input: { type: 'text', data: 'kept on disk' } },
          { task_id: 'task_long', capability: 'wait', input: { type: 'text', data: 'x' }, timeout_ms: 60_000 },
        ],
        edges: [],
      });
      // No memory for outputs: task_quick's goes to a folder under TMPDIR at once.
      // --no-cache: each signal's run sends task_quick, which an earlier one's stored result would complete.
      const { child, finished, printed } = runCli(['run', dag, '--providers', providers, '--no-cache'], {
        env: { TMPDIR: temporary, ACMP_RUN_MEMORY_BUDGET_BYTES: '0' },
      });
      await Promise.all([
        printed('stdout', /task_quick\s+completed/),
        printed('stdout', /task_long\s+alive 0% waiting for acmp\/cancel/),
      ]);
      const outputFolders = () => readdirSync(temporary).filter((name) => name.startsWith('acmp-run-outputs-'));
      assert.equal(outputFolders().length, 1, 'the run keeps its output on disk');
      child.kill(signal);
      const { code, signal: killedBy, stdout, stderr } = await finished;
      assert.equal(killedBy, null, 'the process ended by itself');
      assert.equal(code, 1, stderr);
      assert.match(stderr, new RegExp(`cancelling the run \\(${signal} again to quit at once\\)`));
      assert.match(stdout, /task_long\s+cancelled/);
      assert.match(stdout, /^cancelled in \d+ ms/m);
      assert.deepEqual(outputFolders(), [], 'the outputs on disk are gone');
      assert.match(readFileSync(cancels, 'utf8'), /^task_long-\S+\n$/, 'the provider got acmp/cancel');
    });
  }
});

describe('acmp-dag serve stops cleanly on a stop signal', () => {
  for (const [mode, signal] of [
    ['--http', 'SIGHUP'],
    ['--stdio', 'SIGTERM'],
    ['--stdio', 'SIGHUP'],
  ] as const) {
    test(`serve ${mode}, ${signal}: exit 0`, async () => {
      const { child, finished, printed } = runCli(['serve', mode, ...(mode === '--http' ? ['0'] : [])]);
      if (mode === '--http') await printed('stderr', /serving the built-in provider at http:/);
      else {
        // An answer to ping: the session is up, and its stdin stays open.
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })}\n`);
        await printed('stdout', /"id":1/);
      }
      child.kill(signal);
      const { code, signal: killedBy, stderr } = await finished;
      assert.deepEqual([code, killedBy], [0, null], stderr);
    });
  }
});
