// A local Restate server (notes/restate.md) started from the installed npm package: the static binary of the platform
// package, spawned directly (the package's own `bin` is a Node wrapper that would outlive a SIGKILL as an orphan),
// with its data in a folder of ours. `acmp-dag engine start` and the crash tests both start it here.
//
// Restate has no authentication of its own, and its ingress answers any web origin. So a local engine listens on unix
// sockets only, in its data folder, which is 0700 with every file 0600 (the server inherits a umask of 077): only its
// owner's processes can connect, and no browser can. It signs its requests to workers with a key of its folder
// (requestIdentity.ts). A cluster's nodes (`listen: 'tcp'`) talk to each other over loopback TCP: the tests' stand-in
// for a remote engine, which its operator puts behind something that authenticates.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { privateFolder } from '../privateFolder';
import { type EngineAddress, engineRequest, parseEngineAddress } from './engineHttp';
import { ensureIdentityKey } from './requestIdentity';

/** The server's package, pinned in package.json's devDependencies: what a user installs to get `engine start`. */
export const SERVER_PACKAGE = '@restatedev/restate-server@1.7.12';

/** Said wherever the server is missing: how to install it, or how to use one that runs elsewhere. */
export const INSTALL_HINT =
  `the Restate server is not installed here: run \`npm install\` in acmp-dag's folder (or \`npm i -D ${SERVER_PACKAGE}\`),` +
  ' or start no engine and pass --engine URL of an existing Restate cluster';

export class EngineMissing extends Error {}

/** The path of the `restate-server` binary of the installed platform package; throws EngineMissing without one. */
export function serverBinary(): string {
  // The CLI's ES module chunks get a `require` made from their own URL (esbuild.mjs): it resolves from dist/.
  try {
    const manifest = require.resolve(`@restatedev/restate-server-${process.platform}-${process.arch}/package.json`);
    return join(dirname(manifest), 'bin', 'restate-server');
  } catch {
    throw new EngineMissing(INSTALL_HINT);
  }
}

/** A port on 127.0.0.1 where nothing listens now (something did a moment ago). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolvePort(address.port)
          : reject(new Error('no free port on 127.0.0.1')),
      );
    });
  });
}

export interface EnginePorts {
  readonly node: number;
  readonly ingress: number;
  readonly admin: number;
}

export interface EngineOptions {
  /** The data folder: the node's data lands in DIR/<nodeName>, its log in DIR/<nodeName>.log, its key in DIR. */
  readonly dir: string;
  readonly nodeName?: string;
  /** Unix sockets in DIR/<nodeName> (the default), or loopback TCP ports (a cluster's nodes). */
  readonly listen?: 'unix' | 'tcp';
  /** TCP only: free ports when not given. */
  readonly ports?: Partial<EnginePorts>;
  /** The request-identity key (PEM); DIR/identity.pem, made when missing, when not given. */
  readonly identityKeyFile?: string;
  /** A TOML file of further settings (a cluster's). */
  readonly configFile?: string;
  /** The server outlives this process (`engine start`): its own process group, nothing piped to us. */
  readonly detached?: boolean;
}

export interface EngineProcess {
  readonly child: ChildProcess;
  /** TCP only. */
  readonly ports: EnginePorts | undefined;
  /** The ingress's and the admin API's addresses, as engineHttp.ts takes them. */
  readonly ingress: string;
  readonly admin: string;
  /** The public identity workers must be given (`acmp-dag worker --identity-key`). */
  readonly identityKey: string;
  readonly logFile: string;
}

/** The file of a local engine's folder that names its public identity, for workers that are given only its address. */
export const IDENTITY_PUBLIC_FILE = 'identity.pub';

/** The identity key file of an engine folder by default. */
export const IDENTITY_KEY_FILE = 'identity.pem';

/** Runs `spawnIt` with a umask of 077, so that everything the child makes is its owner's alone. */
function withPrivateUmask<T>(spawnIt: () => T): T {
  const previous = process.umask(0o077);
  try {
    return spawnIt();
  } finally {
    process.umask(previous);
  }
}

/** Unix socket paths are limited to 107 bytes (sun_path). */
const MAX_SOCKET_PATH_BYTES = 107;

/** Spawns a server node; resolves once it is healthy (ingress and admin), rejects if it exits first. */
export async function startEngineProcess(options: EngineOptions): Promise<EngineProcess> {
  const binary = serverBinary();
  const nodeName = options.nodeName ?? 'n1';
  privateFolder(options.dir);
  const keyFile = options.identityKeyFile ?? join(options.dir, IDENTITY_KEY_FILE);
  const identityKey = ensureIdentityKey(keyFile);
  writeFileSync(join(options.dir, IDENTITY_PUBLIC_FILE), `${identityKey}\n`, { mode: 0o600 });
  let listening: Record<string, string>;
  let ports: EnginePorts | undefined;
  let ingress: string;
  let admin: string;
  if (options.listen === 'tcp') {
    ports = {
      node: options.ports?.node ?? (await freeLoopbackPort()),
      ingress: options.ports?.ingress ?? (await freeLoopbackPort()),
      admin: options.ports?.admin ?? (await freeLoopbackPort()),
    };
    listening = {
      RESTATE_LISTEN_MODE: 'tcp',
      RESTATE_BIND_IP: '127.0.0.1',
      RESTATE_BIND_PORT: String(ports.node),
      RESTATE_INGRESS__BIND_PORT: String(ports.ingress),
      RESTATE_ADMIN__BIND_PORT: String(ports.admin),
    };
    ingress = `http://127.0.0.1:${ports.ingress}`;
    admin = `http://127.0.0.1:${ports.admin}`;
  } else {
    const sockets = join(options.dir, nodeName);
    ingress = `unix:${join(sockets, 'ingress.sock')}`;
    admin = `unix:${join(sockets, 'admin.sock')}`;
    if (Buffer.byteLength(join(sockets, 'ingress.sock')) > MAX_SOCKET_PATH_BYTES) {
      throw new Error(
        `the engine's folder ${options.dir} is too deep for its unix sockets (${MAX_SOCKET_PATH_BYTES} bytes at most): choose a shorter --dir`,
      );
    }
    listening = { RESTATE_LISTEN_MODE: 'unix' };
  }
  const logFile = join(options.dir, `${nodeName}.log`);
  const log = openSync(logFile, 'a', 0o600);
  const child = withPrivateUmask(() =>
    spawn(binary, ['--no-logo', ...(options.configFile === undefined ? [] : ['--config-file', options.configFile])], {
      env: {
        ...process.env,
        RESTATE_NODE_NAME: nodeName,
        RESTATE_BASE_DIR: options.dir,
        ...listening,
        RESTATE_WORKER__INVOKER__REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE: keyFile,
        RESTATE_DISABLE_TELEMETRY: 'true',
      },
      stdio: ['ignore', log, log],
      detached: options.detached === true,
    }),
  );
  closeSync(log);
  const engine: EngineProcess = { child, ports, ingress, admin, identityKey, logFile };
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(new Error(`the Restate server exited (${signal ?? code}) before it was ready; see ${logFile}`)),
    ),
  );
  exited.catch(() => undefined);
  await Promise.race([waitHealthy(engine), exited]);
  return engine;
}

/** The engine answers on both its ingress and admin health endpoints. */
export async function engineHealthy(ingress: string, admin?: string): Promise<boolean> {
  const ok = async (address: EngineAddress, path: string): Promise<boolean> => {
    try {
      const answer = await engineRequest(address, path, { timeoutMs: 2_000 });
      return answer.status >= 200 && answer.status < 300;
    } catch {
      return false;
    }
  };
  return (
    (await ok(parseEngineAddress(ingress), 'restate/health')) &&
    (admin === undefined || (await ok(parseEngineAddress(admin), 'health')))
  );
}

/** Polls the health endpoints (the server has no readiness signal of its own) for up to a minute. */
async function waitHealthy(engine: EngineProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await engineHealthy(engine.ingress, engine.admin))) {
    if (engine.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`the Restate server did not become healthy; see ${engine.logFile}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
