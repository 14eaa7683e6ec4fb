// Who can reach a durable-run engine, all with real processes: `acmp-dag engine start` listens on unix sockets in a
// folder only its owner can enter (another user is refused, nothing listens on TCP, so no web page can reach it), its
// files are 0600 in 0700 folders, `engine stop --purge` leaves nothing; the worker takes only the calls the engine
// signed; a remote engine gets the bearer token of ACMP_ENGINE_TOKEN, over https or loopback only; a follower stops on
// an engine whose event pages do not move forward or whose answers are too large.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync, sign } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { identityKeyOf } from '../../server/src/run/durable/requestIdentity';
import { CLI, ROOT, cli, kill, scratchFolder, workerPort } from '../support/durable';

const SUITE_TIMEOUT_MS = 120_000;
const PIPELINE = 'examples/text-pipeline.acmp-dag.json';
const isRoot = process.getuid?.() === 0;

/** Every path under `dir`, `dir` included. */
function walk(dir: string): string[] {
  return [
    dir,
    ...readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? walk(path) : [path];
    }),
  ];
}

/** The inodes of the TCP sockets listening on this machine (state 0A in /proc/net/tcp and tcp6). */
function listeningTcpInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A') inodes.add(fields[9]!);
    }
  }
  return inodes;
}

/** The socket inodes process `pid` holds. */
function socketInodes(pid: number): string[] {
  return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      return /^socket:\[(\d+)\]$/.exec(target)?.slice(1, 2) ?? [];
    } catch {
      return [];
    }
  });
}

/** Connects to a unix socket as user `nobody`; resolves with the error code, or 'connected'. */
function connectAsNobody(socketPath: string): Promise<string> {
  const script = `require('net').connect(${JSON.stringify(socketPath)})
    .on('connect', () => { console.log('connected'); process.exit(0); })
    .on('error', (error) => { console.log(error.code); process.exit(0); });`;
  const child = spawn(process.execPath, ['-e', script], { uid: 65534, gid: 65534, cwd: '/' });
  let output = '';
  child.stdout.on('data', (data: Buffer) => (output += data.toString()));
  return new Promise((done) => child.once('close', () => done(output.trim())));
}

/** A request to the worker over HTTP/2 (as the engine speaks to it), with `headers`; resolves with the status. */
function workerStatus(url: string, path: string, headers: Record<string, string> = {}): Promise<number> {
  const session = connect(url);
  return new Promise((done, fail) => {
    session.once('error', fail);
    const request = session.request({
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/json',
      ...headers,
    });
    request.once('response', (answer) => {
      done(Number(answer[':status']));
      request.close();
      session.close();
    });
    request.once('error', fail);
    request.end('{}');
  });
}

/** A request-identity JWT for `path` that names the engine's key but is signed with another one. */
function forgedIdentity(engineKey: string, path: string): Record<string, string> {
  const { privateKey } = generateKeyPairSync('ed25519');
  const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const signed = `${base64url({ alg: 'EdDSA', typ: 'JWT', kid: engineKey })}.${base64url({ aud: path, iat: now, nbf: now - 60, exp: now + 60 })}`;
  const signature = sign(null, Buffer.from(signed), privateKey).toString('base64url');
  return { 'x-restate-signature-scheme': 'v1', 'x-restate-jwt-v1': `${signed}.${signature}` };
}

describe('a local engine lets in only its owner', { timeout: SUITE_TIMEOUT_MS }, () => {
  const scratch = scratchFolder('acmp-access-');
  const dir = join(scratch.path, 'engine');
  let printed: { ingress: string; admin: string; identityKey: string };
  let worker: ChildProcess | undefined;
  let workerUrl: string;
  let workerErrors = '';

  before(async () => {
    const started = await cli(['engine', 'start', '--dir', dir]);
    assert.equal(started.code, 0, started.stderr);
    printed = {
      ingress: /^ingress (\S+)$/m.exec(started.stdout)![1]!,
      admin: /^admin +(\S+)$/m.exec(started.stdout)![1]!,
      identityKey: /^identity key (\S+)$/m.exec(started.stdout)![1]!,
    };
    // As the README says to start it: the worker finds the engine's identity key in the engine's folder.
    const port = await workerPort();
    worker = spawn(
      process.execPath,
      [CLI, 'worker', '--engine', printed.ingress, '--port', String(port), '--store', join(scratch.path, 'out')],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    await new Promise<void>((ready, fail) => {
      worker!.stdout!.on('data', (data: Buffer) => {
        output += data.toString();
        if (output.includes('serving durable runs')) ready();
      });
      worker!.stderr!.on('data', (data: Buffer) => (workerErrors += data.toString()));
      worker!.once('exit', (code) => fail(new Error(`the worker exited (${code}): ${output}${workerErrors}`)));
    });
    workerUrl = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    if (worker !== undefined) await kill(worker);
    await cli(['engine', 'stop', '--dir', dir, '--purge']);
    scratch.remove();
  });

  test('the engine listens on unix sockets in its folder and on no TCP port', () => {
    assert.match(printed.ingress, /^unix:\/.*\/ingress\.sock$/);
    assert.match(printed.admin, /^unix:\/.*\/admin\.sock$/);
    const { pid } = JSON.parse(readFileSync(join(dir, 'engine.json'), 'utf8')) as { pid: number };
    const listening = listeningTcpInodes();
    const sockets = socketInodes(pid);
    assert.ok(sockets.length > 0, 'the engine holds sockets');
    assert.deepEqual(
      sockets.filter((inode) => listening.has(inode)),
      [],
      'the engine listens on a TCP port',
    );
  });

  test("the engine's folders are 0700 and its files 0600", () => {
    const paths = walk(dir);
    assert.ok(paths.some((path) => path.endsWith('.log')) && paths.some((path) => path.endsWith('identity.pem')));
    for (const path of paths) {
      // The engine's database replaces some of its files as it goes: one listed a moment ago may be gone.
      const stat = lstatSync(path, { throwIfNoEntry: false });
      if (stat === undefined) continue;
      const mode = stat.mode & 0o777;
      if (stat.isDirectory()) assert.equal(mode, 0o700, `${path} is ${mode.toString(8)}`);
      else if (stat.isFile()) assert.equal(mode, 0o600, `${path} is ${mode.toString(8)}`);
      else assert.equal(mode & 0o077, 0, `${path} is ${mode.toString(8)}`);
    }
  });

  test(
    'another user cannot connect to any address `engine start` printed',
    { skip: !isRoot && 'needs root to act as another user' },
    async () => {
      for (const address of [printed.ingress, printed.admin]) {
        assert.equal(await connectAsNobody(address.slice('unix:'.length)), 'EACCES', address);
      }
    },
  );

  test('the worker refuses calls the engine did not sign, and answers no web page', async () => {
    const invoke = '/invoke/AcmpRun/run';
    assert.equal(await workerStatus(workerUrl, '/discover'), 401);
    assert.equal(await workerStatus(workerUrl, invoke), 401);
    assert.equal(await workerStatus(workerUrl, invoke, forgedIdentity(printed.identityKey, invoke)), 401);
    // A browser's preflight (HTTP/1.1) gets no answer that could let a page read anything.
    const preflight = await fetch(`${workerUrl}${invoke}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    }).then(
      (answer) => answer.headers.get('access-control-allow-origin'),
      () => null,
    );
    assert.equal(preflight, null);
  });

  test('the owner still runs, lists and reads runs: the worker takes the calls the engine signed', async () => {
    const run = await cli(['run', PIPELINE, '--engine', printed.ingress]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /completed in \d+ ms: 4 completed/);
    const runs = await cli(['runs', '--engine', printed.ingress]);
    assert.match(runs.stdout, /dag_f4e2a1 {2}completed/);
    assert.doesNotMatch(workerErrors, /without validating request signatures/);
    assert.equal(identityKeyOf(readFileSync(join(dir, 'identity.pem'), 'utf8')), printed.identityKey);
  });
});

describe('acmp-dag engine stop --purge', { timeout: SUITE_TIMEOUT_MS }, () => {
  const scratch = scratchFolder('acmp-purge-');
  after(() => scratch.remove());

  test('stops the engine and removes its folder; a folder that is not an engine is left alone', async () => {
    const dir = join(scratch.path, 'engine');
    assert.equal((await cli(['engine', 'start', '--dir', dir])).code, 0);
    const record = JSON.parse(readFileSync(join(dir, 'engine.json'), 'utf8')) as { pid: number };
    const purged = await cli(['engine', 'stop', '--dir', dir, '--purge']);
    assert.equal(purged.code, 0, purged.stderr);
    assert.equal(existsSync(dir), false);
    assert.throws(() => process.kill(record.pid, 0));
    const notAnEngine = scratch.file('mine.txt', 'keep me');
    const refused = await cli(['engine', 'stop', '--dir', scratch.path, '--purge']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /is not an engine's folder/);
    assert.equal(readFileSync(notAnEngine, 'utf8'), 'keep me');
  });
});

/** A stand-in engine on loopback: `answer` answers each request; the requests' headers are kept. */
async function fakeEngine(answer: (request: IncomingMessage, response: ServerResponse) => void) {
  const seen: IncomingMessage['headers'][] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers);
    request.resume();
    request.once('end', () => answer(request, response));
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((closed) => server.close(() => closed())),
  };
}

const json = (response: ServerResponse, value: unknown) =>
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));

describe('a remote engine and a misbehaving one', () => {
  const token = `engine-token-${process.pid}-${Date.now()}`;
  const withToken = { ...process.env, ACMP_ENGINE_TOKEN: token };

  /** The CLI with `env`. */
  function cliWith(args: string[], env: NodeJS.ProcessEnv) {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) =>
      child.once('close', (code) => done({ code, stdout, stderr })),
    );
  }

  test('ACMP_ENGINE_TOKEN goes as a bearer token, and never into what the CLI prints', async () => {
    const engine = await fakeEngine((_request, response) => response.writeHead(401).end('no'));
    try {
      const refused = await cliWith(['runs', '--engine', engine.url], withToken);
      assert.equal(refused.code, 3);
      assert.match(refused.stderr, /refused the request \(401\): check ACMP_ENGINE_TOKEN/);
      assert.equal(engine.seen[0]!.authorization, `Bearer ${token}`);
      assert.ok(!refused.stderr.includes(token) && !refused.stdout.includes(token));
    } finally {
      await engine.close();
    }
  });

  test('the token is not sent over plain HTTP beyond loopback, nor put in the address', async () => {
    const plain = await cliWith(['runs', '--engine', 'http://engine.example.invalid:8080'], withToken);
    assert.equal(plain.code, 2);
    assert.match(plain.stderr, /ACMP_ENGINE_TOKEN is sent only over https/);
    const inUrl = await cliWith(['runs', '--engine', 'https://user:secret@engine.example.invalid'], process.env);
    assert.equal(inUrl.code, 2);
    assert.match(inUrl.stderr, /holds no credentials: set ACMP_ENGINE_TOKEN/);
    assert.ok(!inUrl.stderr.includes('secret'));
  });

  test('following stops on event pages that do not move forward', async () => {
    let pages = 0;
    const event = { type: 'task-state', task_id: 'task_a', state: 'running', at: new Date().toISOString() };
    const engine = await fakeEngine((request, response) => {
      if (request.url!.endsWith('/get')) return json(response, { run_id: 'run-x', dag_id: 'dag_x', submitted_at: '' });
      pages++;
      json(response, {
        events: [event],
        next: 0,
        progress: { status: 'running', done: 0, total: 1, cost_cu: 0, batches: 1 },
      });
    });
    try {
      const attached = await cli(['attach', 'run-x', '--engine', engine.url]);
      assert.equal(attached.code, 3);
      assert.match(attached.stderr, /sent an event page of run "run-x" that does not move forward/);
      assert.equal(pages, 1);
    } finally {
      await engine.close();
    }
  });

  test('an answer past the bound is refused without reading it whole', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const engine = await fakeEngine((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      let sent = 0;
      const more = (): void => {
        // 64 MiB at most, and only while the reader takes it.
        while (sent < 64 && response.write(chunk)) sent++;
        if (sent < 64) response.once('drain', more);
        else response.end();
      };
      response.once('close', () => response.removeAllListeners('drain'));
      more();
    });
    try {
      const listed = await cli(['runs', '--engine', engine.url]);
      assert.notEqual(listed.code, 0);
      assert.match(listed.stderr, /answered more than 40 MiB/);
    } finally {
      await engine.close();
    }
  });
});
