// The durable-run figure of `npm run bench`: the 10,000 echo tasks of echoDag.ts as a durable run on one local
// Restate node (the server from node_modules on loopback, a temporary data folder), one `acmp-dag worker` on the
// built-in provider, and `acmp-dag run --engine --json --max-concurrency 100` as a process: its wall time from start to
// report, tasks per second, and the peak memory (VmHWM) of the worker and the server.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startEngineProcess } from '../../server/src/run/durable/engineProcess';
import { echoLayersDag } from '../support/echoDag';
import { CLI, kill } from '../support/durable';
import { freePort } from '../support/system';

export interface DurableFigure {
  readonly tasks: number;
  readonly seconds: number;
  readonly tasksPerSecond: number;
  readonly workerMib: number;
  readonly serverMib: number;
  readonly status: string;
}

const peakMib = (pid: number): number =>
  Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

export async function measureDurable(size: number): Promise<DurableFigure> {
  const folder = mkdtempSync(join(tmpdir(), 'acmp-bench-durable-'));
  const engine = await startEngineProcess({ dir: join(folder, 'engine') });
  const port = await freePort();
  const worker = spawn(
    process.execPath,
    [
      CLI,
      'worker',
      '--engine',
      engine.ingress,
      '--admin',
      engine.admin,
      '--identity-key',
      engine.identityKey,
      '--port',
      String(port),
      '--store',
      join(folder, 'outputs'),
      '--cache-dir',
      join(folder, 'results'),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    await new Promise<void>((ready, fail) => {
      worker.stdout.on('data', (data: Buffer) => data.toString().includes('serving durable runs') && ready());
      worker.once('exit', (code) => fail(new Error(`the worker exited with ${code}`)));
    });
    const file = join(folder, 'echo-layers.acmp-dag.json');
    // Every task's result distinct, so that each is looked up, missed and invoked: what a first run costs.
    writeFileSync(file, echoLayersDag(size, undefined, { distinctResults: true }));
    const start = performance.now();
    const run = spawn(
      process.execPath,
      [CLI, 'run', file, '--engine', engine.ingress, '--json', '--max-concurrency', '100'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let stdout = '';
    run.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
    await new Promise((done) => run.once('close', done));
    const seconds = (performance.now() - start) / 1000;
    const report = JSON.parse(stdout) as { status: string; tasks: { state: string }[] };
    return {
      tasks: report.tasks.length,
      seconds,
      tasksPerSecond: report.tasks.length / seconds,
      workerMib: peakMib(worker.pid!),
      serverMib: peakMib(engine.child.pid!),
      status: `${report.status}, ${report.tasks.filter((task) => task.state === 'completed').length} completed`,
    };
  } finally {
    await kill(worker);
    await kill(engine.child);
    rmSync(folder, { recursive: true, force: true });
  }
}
