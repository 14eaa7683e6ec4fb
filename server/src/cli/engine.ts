// `acmp-dag engine start|stop [--dir DIR]`: a local single-node Restate server for durable runs, from the installed
// npm package, on 127.0.0.1. `start` leaves it running in the background and records it in DIR/engine.json, which
// `stop` reads.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { EngineMissing, type EnginePorts, engineHealthy, startEngineProcess } from '../run/durable/engineProcess';
import { UsageError } from './usage';

/** Where `engine start` keeps the server's data, log and record by default. */
export const DEFAULT_ENGINE_DIR = '.acmp-engine';

interface EngineRecord {
  readonly pid: number;
  readonly ingress: string;
  readonly admin: string;
}

function parsePort(value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,5}$/.test(value) || Number(value) < 1 || Number(value) > 65535) {
    throw new UsageError(`${option} needs a port number, not "${value}"`);
  }
  return Number(value);
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function readRecord(dir: string): EngineRecord | undefined {
  const file = join(dir, 'engine.json');
  if (!existsSync(file)) return undefined;
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as EngineRecord;
    return Number.isInteger(record.pid) && isAlive(record.pid) ? record : undefined;
  } catch {
    return undefined;
  }
}

async function start(dir: string, ports: Partial<EnginePorts>): Promise<number> {
  const running = readRecord(dir);
  if (running !== undefined && (await engineHealthy(running.ingress, running.admin))) {
    process.stdout.write(
      `The engine already runs (pid ${running.pid}).\ningress ${running.ingress}\nadmin   ${running.admin}\n`,
    );
    return 0;
  }
  let engine;
  try {
    engine = await startEngineProcess({ dir, ports, detached: true });
  } catch (error) {
    process.stderr.write(`acmp-dag: ${(error as Error).message}\n`);
    return error instanceof EngineMissing ? 3 : 1;
  }
  engine.child.unref();
  const record: EngineRecord = { pid: engine.child.pid!, ingress: engine.ingressUrl, admin: engine.adminUrl };
  writeFileSync(join(dir, 'engine.json'), JSON.stringify(record, null, 2) + '\n');
  process.stdout.write(
    `Restate engine started (pid ${record.pid}, data in ${dir}, log ${engine.logFile}).\n` +
      `ingress ${record.ingress}\nadmin   ${record.admin}\n` +
      `Next: acmp-dag worker --engine ${record.ingress} --admin ${record.admin}   then   acmp-dag run FILE --engine ${record.ingress}\n`,
  );
  return 0;
}

async function stop(dir: string): Promise<number> {
  const record = readRecord(dir);
  if (record === undefined) {
    process.stderr.write(`acmp-dag: no engine started from ${dir} is running\n`);
    return 1;
  }
  process.kill(record.pid, 'SIGTERM');
  // The server has no exit notification for a process that is not our child: its pid is polled.
  const deadline = Date.now() + 20_000;
  while (isAlive(record.pid) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
  if (isAlive(record.pid)) process.kill(record.pid, 'SIGKILL');
  rmSync(join(dir, 'engine.json'), { force: true });
  process.stdout.write(`Restate engine stopped (pid ${record.pid}).\n`);
  return 0;
}

export async function engineCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      dir: { type: 'string' },
      'ingress-port': { type: 'string' },
      'admin-port': { type: 'string' },
      'node-port': { type: 'string' },
    },
  });
  const dir = resolve(values.dir ?? DEFAULT_ENGINE_DIR);
  const [action, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`engine takes no argument after "${action}"`);
  if (action === 'start') {
    const ingress = parsePort(values['ingress-port'], '--ingress-port');
    const admin = parsePort(values['admin-port'], '--admin-port');
    const node = parsePort(values['node-port'], '--node-port');
    return start(dir, {
      ...(ingress === undefined ? {} : { ingress }),
      ...(admin === undefined ? {} : { admin }),
      ...(node === undefined ? {} : { node }),
    });
  }
  if (action === 'stop') return stop(dir);
  throw new UsageError('engine needs "start" or "stop"');
}
