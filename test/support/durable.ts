// Real processes for the durable-run tests: the Restate server from node_modules on free loopback ports with a
// temporary data folder, `acmp-dag worker` processes, the counting provider (countingProviderProcess.ts), and the
// CLI. Each can be SIGKILLed and started again at the same address.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type EngineProcess, startEngineProcess } from '../../server/src/run/durable/engineProcess';
import type { Counts } from './countingProviderProcess';
import { freePort } from './system';

export const ROOT = resolve(__dirname, '../..');
export const CLI = process.env.ACMP_CLI_BUNDLE ?? join(ROOT, 'dist/cli.js');

/** A folder for one test file's engines, stores and DAG files, removed with `remove`. */
export function scratchFolder(prefix: string): {
  readonly path: string;
  file(name: string, value: unknown): string;
  remove(): void;
} {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return {
    path,
    file(name, value) {
      const file = join(path, name);
      writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
      return file;
    },
    remove: () => rmSync(path, { recursive: true, force: true }),
  };
}

const exitOf = (child: ChildProcess): Promise<number | null> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolveExit) => child.once('exit', (code) => resolveExit(code)));

/** SIGKILLs a process and waits for its end. */
export async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = exitOf(child);
  child.kill('SIGKILL');
  await exited;
}

/** A Restate server that can be killed and started again with the same ports and data. */
export class TestEngine {
  private constructor(
    private readonly dir: string,
    public process: EngineProcess,
  ) {}

  static async start(dir: string): Promise<TestEngine> {
    return new TestEngine(dir, await startEngineProcess({ dir }));
  }

  get ingress(): string {
    return this.process.ingressUrl;
  }

  get admin(): string {
    return this.process.adminUrl;
  }

  async restart(): Promise<void> {
    await kill(this.process.child);
    this.process = await startEngineProcess({ dir: this.dir, ports: this.process.ports });
  }

  stop(): Promise<void> {
    return kill(this.process.child);
  }
}

/** `acmp-dag worker` as its own process; resolves once it registered. */
export async function startWorker(
  engine: TestEngine,
  options: { port: number; providers?: string; store: string; advertise?: string },
): Promise<ChildProcess> {
  const args = [CLI, 'worker', '--engine', engine.ingress, '--admin', engine.admin, '--port', String(options.port)];
  args.push('--store', options.store);
  if (options.advertise !== undefined) args.push('--advertise', options.advertise);
  if (options.providers !== undefined) args.push('--providers', options.providers);
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((ready, fail) => {
    const onData = (data: Buffer) => {
      output += data.toString();
      if (output.includes('serving durable runs')) ready();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (data: Buffer) => (output += data.toString()));
    child.once('exit', (code) => fail(new Error(`the worker exited (${code}) before it registered: ${output}`)));
  });
  return child;
}

export const workerPort = freePort;

/** The counting provider as its own process. */
export class CountingProvider {
  private constructor(
    readonly child: ChildProcess,
    readonly mcpUrl: string,
    private readonly control: string,
  ) {}

  static async start(): Promise<CountingProvider> {
    const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'countingProviderProcess.ts')], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((ready, fail) => {
      let text = '';
      child.stdout.on('data', (data: Buffer) => {
        text += data.toString();
        if (text.includes('\n')) ready(text.split('\n')[0]!);
      });
      child.once('exit', (code) => fail(new Error(`the counting provider exited (${code})`)));
    });
    const { mcp, control } = JSON.parse(line) as { mcp: string; control: string };
    return new CountingProvider(child, mcp, control);
  }

  /** A providers file naming it (transport http) for its capabilities, and the built-in provider for the others. */
  providersFile(folder: { file(name: string, value: unknown): string }): string {
    return folder.file('providers.json', {
      providers: [
        { id: 'counting', transport: 'http', url: this.mcpUrl, capabilities: ['echo', 'hold'] },
        { id: 'builtin', transport: 'builtin' },
      ],
    });
  }

  async counts(): Promise<Counts> {
    return (await fetch(`${this.control}/counts`)).json() as Promise<Counts>;
  }

  /** Resolves once `table` counts `count` distinct task ids. */
  async waitFor(table: keyof Counts, count: number): Promise<void> {
    await (await fetch(`${this.control}/wait?table=${table}&count=${count}`)).json();
  }

  /** Held tasks answer now, and later ones at once. */
  async release(): Promise<void> {
    await (await fetch(`${this.control}/release`, { method: 'POST' })).json();
  }

  stop(): Promise<void> {
    return kill(this.child);
  }
}

/** Counts by DAG task id: a wire task id is the task id, a dash and the run's tag. */
export function byTask(table: Record<string, number>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [wireId, count] of Object.entries(table)) {
    const taskId = wireId.slice(0, wireId.length - 37);
    counts[taskId] = (counts[taskId] ?? 0) + count;
  }
  return counts;
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The CLI as a process; `started` is called with it (to SIGINT it, say). */
export function cli(args: readonly string[], started?: (child: ChildProcess) => void): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  started?.(child);
  return new Promise((done) => child.once('close', (code) => done({ code, stdout, stderr })));
}
