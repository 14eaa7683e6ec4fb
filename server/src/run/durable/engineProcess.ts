// A local Restate server (notes/restate.md) started from the installed npm package: the static binary of the platform
// package, spawned directly (the package's own `bin` is a Node wrapper that would outlive a SIGKILL as an orphan), on
// 127.0.0.1, with its data in a folder of ours. `acmp-dag engine start` and the crash tests both start it here.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';

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
  /** The data folder: the node's data lands in DIR/<nodeName>, its log in DIR/<nodeName>.log. */
  readonly dir: string;
  readonly nodeName?: string;
  /** Free ports when not given. */
  readonly ports?: Partial<EnginePorts>;
  /** A TOML file of further settings (a cluster's). */
  readonly configFile?: string;
  /** The server outlives this process (`engine start`): its own process group, nothing piped to us. */
  readonly detached?: boolean;
}

export interface EngineProcess {
  readonly child: ChildProcess;
  readonly ports: EnginePorts;
  readonly ingressUrl: string;
  readonly adminUrl: string;
  readonly logFile: string;
}

export const ingressUrlOf = (port: number): string => `http://127.0.0.1:${port}`;

/** Spawns a server node; resolves once it is healthy (ingress and admin), rejects if it exits first. */
export async function startEngineProcess(options: EngineOptions): Promise<EngineProcess> {
  const binary = serverBinary();
  const nodeName = options.nodeName ?? 'n1';
  const ports: EnginePorts = {
    node: options.ports?.node ?? (await freeLoopbackPort()),
    ingress: options.ports?.ingress ?? (await freeLoopbackPort()),
    admin: options.ports?.admin ?? (await freeLoopbackPort()),
  };
  mkdirSync(options.dir, { recursive: true });
  const logFile = join(options.dir, `${nodeName}.log`);
  const log = openSync(logFile, 'a');
  const child = spawn(
    binary,
    ['--no-logo', ...(options.configFile === undefined ? [] : ['--config-file', options.configFile])],
    {
      env: {
        ...process.env,
        RESTATE_NODE_NAME: nodeName,
        RESTATE_BASE_DIR: options.dir,
        RESTATE_BIND_IP: '127.0.0.1',
        RESTATE_LISTEN_MODE: 'tcp',
        RESTATE_BIND_PORT: String(ports.node),
        RESTATE_INGRESS__BIND_PORT: String(ports.ingress),
        RESTATE_ADMIN__BIND_PORT: String(ports.admin),
        RESTATE_DISABLE_TELEMETRY: 'true',
      },
      stdio: ['ignore', log, log],
      detached: options.detached === true,
    },
  );
  const engine: EngineProcess = {
    child,
    ports,
    ingressUrl: ingressUrlOf(ports.ingress),
    adminUrl: `http://127.0.0.1:${ports.admin}`,
    logFile,
  };
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
export async function engineHealthy(ingressUrl: string, adminUrl?: string): Promise<boolean> {
  const ok = async (url: string): Promise<boolean> => {
    try {
      return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok;
    } catch {
      return false;
    }
  };
  return (await ok(`${ingressUrl}/restate/health`)) && (adminUrl === undefined || (await ok(`${adminUrl}/health`)));
}

/** Polls the health endpoints (the server has no readiness signal of its own) for up to a minute. */
async function waitHealthy(engine: EngineProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await engineHealthy(engine.ingressUrl, engine.adminUrl))) {
    if (engine.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`the Restate server did not become healthy; see ${engine.logFile}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
