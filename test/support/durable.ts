// Real processes for the durable-run tests: the Restate server from node_modules on free loopback ports with a
// temporary data folder, `acmp-dag worker` processes, the counting provider (countingProviderProcess.ts), and the
// CLI. Each can be SIGKILLed and started again at the same address.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { join, resolve } from 'node:path';
import { type EngineProcess, type EnginePorts, startEngineProcess } from '../../server/src/run/durable/engineProcess';
import { ensureIdentityKey } from '../../server/src/run/durable/requestIdentity';
import type { RunReport } from '../../server/src/protocol/report';
import { BUILTIN_CAPABILITIES } from '../../server/src/protocol/builtinCatalog';
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
    return this.process.ingress;
  }

  get admin(): string {
    return this.process.admin;
  }

  get identityKey(): string {
    return this.process.identityKey;
  }

  /** The same folder again: the same sockets, data and identity key. */
  async restart(): Promise<void> {
    await kill(this.process.child);
    this.process = await startEngineProcess({ dir: this.dir });
  }

  stop(): Promise<void> {
    return kill(this.process.child);
  }
}

/**
 * A cluster of `size` nodes on 127.0.0.1 (notes/restate.md): one cluster name, the first node provisions it, the log
 * replicated on 2 nodes, one partition (so the node leading it leads every run). A port found free can be taken before
 * its node binds it (a CI run's third node found its port used, most likely by another node's outgoing connection,
 * which takes its port from the same range): then the nodes started are stopped and the cluster starts again, with
 * other ports and fresh folders, up to CLUSTER_ATTEMPTS times. A node that fails to start leaves none running.
 */
export async function startCluster(dir: string, size: number): Promise<EngineProcess[]> {
  for (let attempt = 1; ; attempt++) {
    const attemptDir = join(dir, `attempt-${attempt}`);
    const started = await Promise.allSettled(await clusterNodes(attemptDir, size));
    const nodes = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failed = started.find((result) => result.status === 'rejected');
    if (failed === undefined) return nodes;
    await Promise.all(nodes.map((node) => kill(node.child)));
    const logs = [...Array(size).keys()].map((k) => readIfThere(join(attemptDir, `n${k + 1}.log`))).join('\n');
    if (attempt === CLUSTER_ATTEMPTS || !/Address in use/.test(logs)) throw failed.reason;
  }
}

const CLUSTER_ATTEMPTS = 3;

function readIfThere(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** The cluster's nodes, starting, each on ports of its own. */
async function clusterNodes(dir: string, size: number): Promise<Promise<EngineProcess>[]> {
  const ports: EnginePorts[] = [];
  for (let k = 0; k < size; k++)
    ports.push({ node: await freePort(), ingress: await freePort(), admin: await freePort() });
  const addresses = ports.map((port) => `"http://127.0.0.1:${port.node}"`).join(', ');
  mkdirSync(dir, { recursive: true });
  // One identity for the whole cluster: whichever node calls the worker, it signs with the same key.
  const identityKeyFile = join(dir, 'identity.pem');
  ensureIdentityKey(identityKeyFile);
  return ports.map((port, k) => {
    const configFile = join(dir, `n${k + 1}.toml`);
    writeFileSync(
      configFile,
      [
        'cluster-name = "acmp-test"',
        `auto-provision = ${k === 0}`,
        'default-replication = 2',
        'default-num-partitions = 1',
        `advertised-address = "http://127.0.0.1:${port.node}"`,
        '[bifrost]',
        'default-provider = "replicated"',
        '[metadata-client]',
        `addresses = [${addresses}]`,
        '',
      ].join('\n'),
    );
    return startEngineProcess({ dir, nodeName: `n${k + 1}`, listen: 'tcp', ports: port, configFile, identityKeyFile });
  });
}

/** The partitions node `engine` leads now, from its metrics. */
async function partitionsLed(engine: EngineProcess): Promise<number> {
  const metrics = await (await fetch(`http://127.0.0.1:${engine.ports!.node}/metrics`)).text();
  return Number(/^restate_num_active_partition_leaders\{[^}]*\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
}

/**
 * The index of the node leading the one partition. The nodes' metrics are sampled, not pushed: a partition led for
 * a moment may not show yet, so they are read again (every 100 ms, for up to 15 s) until one node shows it.
 */
export async function partitionLeader(nodes: readonly EngineProcess[]): Promise<number> {
  let led: number[] = [];
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; await delay(100)) {
    led = await Promise.all(nodes.map(partitionsLed));
    if (led.includes(1)) return led.indexOf(1);
  }
  throw new Error(`no node leads the partition: ${led.join(', ')}`);
}

/**
 * `acmp-dag worker` as its own process; resolves once it registered. Its runs reuse and keep results in the result
 * store `cache` names, and in none without it: the tests that run a DAG again expect it sent again.
 */
export async function startWorker(
  engine: { readonly ingress: string; readonly admin: string; readonly identityKey: string },
  options: { port: number; providers?: string; store: string; advertise?: string; cache?: string },
): Promise<ChildProcess> {
  const args = [CLI, 'worker', '--engine', engine.ingress, '--admin', engine.admin, '--port', String(options.port)];
  args.push('--identity-key', engine.identityKey);
  args.push('--store', options.store);
  args.push(...(options.cache === undefined ? ['--no-cache'] : ['--cache-dir', options.cache]));
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

  /**
   * A providers file naming it (transport http) for its capabilities, and the built-in provider for the others (not
   * for `echo`: its echo is cheaper, and the runs of these tests must reach the counting provider).
   */
  providersFile(folder: { file(name: string, value: unknown): string }): string {
    return folder.file('providers.json', {
      providers: [
        { id: 'counting', transport: 'http', url: this.mcpUrl, capabilities: ['echo', 'hold', 'deal'] },
        {
          id: 'builtin',
          transport: 'builtin',
          capabilities: BUILTIN_CAPABILITIES.filter((capability) => capability !== 'echo'),
        },
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

// DAGs of the counting provider's capabilities.
const echo = (id: string, from?: string | string[]) => ({
  task_id: id,
  capability: 'echo',
  input:
    from === undefined
      ? { type: 'text', data: id }
      : { source: Array.isArray(from) ? { from_tasks: from } : { from_task: from } },
});
const hold = (id: string, from?: string) => ({ ...echo(id, from), capability: 'hold' });
const deal = (id: string, from?: string) => ({ ...echo(id, from), capability: 'deal' });
const edges = (...pairs: [string, string][]) => pairs.map(([from, to]) => ({ from, to }));

/** a → b, a → c (b and c held by the provider until released), b → d, c → d. */
export const DIAMOND = {
  dag_id: 'dag_durable_diamond',
  tasks: [echo('task_a'), hold('task_b', 'task_a'), hold('task_c', 'task_a'), echo('task_d', ['task_b', 'task_c'])],
  edges: edges(['task_a', 'task_b'], ['task_a', 'task_c'], ['task_b', 'task_d'], ['task_c', 'task_d']),
};

/** DIAMOND with `deal` tasks for b and c: the provider holds the answers to the accepts of their offers. */
export const DEAL_DIAMOND = {
  dag_id: 'dag_durable_deal',
  tasks: [echo('task_a'), deal('task_b', 'task_a'), deal('task_c', 'task_a'), echo('task_d', ['task_b', 'task_c'])],
  edges: DIAMOND.edges,
};

/** a → b → c, and x apart; b and x held. */
export const CHAIN_AND_APART = {
  dag_id: 'dag_durable_cancel',
  tasks: [echo('task_a'), hold('task_b', 'task_a'), echo('task_c', 'task_b'), hold('task_x')],
  edges: edges(['task_a', 'task_b'], ['task_b', 'task_c']),
};

/** The provider's counts of the run's wire task ids, by DAG task id. */
export async function countsOfRun(
  provider: CountingProvider,
  report: RunReport,
): Promise<Pick<Counts, 'invokes' | 'executions' | 'cancels'>> {
  const tag = report.tasks[0]!.wire_task_id!.slice(report.tasks[0]!.task_id.length);
  const counts = await provider.counts();
  const ofRun = (table: Record<string, number>) =>
    byTask(Object.fromEntries(Object.entries(table).filter(([wireId]) => wireId.endsWith(tag))));
  return { invokes: ofRun(counts.invokes), executions: ofRun(counts.executions), cancels: ofRun(counts.cancels) };
}

/** DIAMOND completed, each task executed once, and the completed task_a and task_d invoked once. */
export async function assertDiamondOnce(provider: CountingProvider, report: RunReport): Promise<void> {
  assert.equal(report.status, 'completed');
  assert.deepEqual(report.result.task_d?.data, [
    { type: 'text', data: 'task_a' },
    { type: 'text', data: 'task_a' },
  ]);
  const counts = await countsOfRun(provider, report);
  assert.deepEqual(counts.executions, { task_a: 1, task_b: 1, task_c: 1, task_d: 1 });
  assert.equal(counts.invokes.task_a, 1);
  assert.equal(counts.invokes.task_d, 1);
}
