// `acmp-dag engine start|stop [--dir DIR] [--purge]`: a local single-node Restate server for durable runs, from the
// installed npm package. It listens on unix sockets in DIR (0700), so only its owner's processes reach it
// (engineProcess.ts). `start` leaves it running in the background and records it in DIR/engine.json, which `stop`
// reads; `stop --purge` also removes DIR, the engine's whole state (run journals, DAG texts, outputs up to 64 KiB).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { EngineMissing, IDENTITY_KEY_FILE, engineHealthy, startEngineProcess } from '../run/durable/engineProcess';
import { UsageError } from './usage';

/** Where `engine start` keeps the server's data, log, key and record by default. */
export const DEFAULT_ENGINE_DIR = '.acmp-engine';

const RECORD_FILE = 'engine.json';

export interface EngineRecord {
  readonly pid: number;
  readonly ingress: string;
  readonly admin: string;
  /** The public key workers check the engine's calls with. */
  readonly identity_key: string;
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The record of the engine started from `dir`, when it still runs. */
export function readEngineRecord(dir: string): EngineRecord | undefined {
  const file = join(dir, RECORD_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as EngineRecord;
    return Number.isInteger(record.pid) && isAlive(record.pid) ? record : undefined;
  } catch {
    return undefined;
  }
}

const describe = (record: EngineRecord): string =>
  `ingress ${record.ingress}\nadmin   ${record.admin}\nidentity key ${record.identity_key}\n`;

async function start(dir: string): Promise<number> {
  const running = readEngineRecord(dir);
  if (running !== undefined && (await engineHealthy(running.ingress, running.admin))) {
    process.stdout.write(`The engine already runs (pid ${running.pid}).\n${describe(running)}`);
    return 0;
  }
  let engine;
  try {
    engine = await startEngineProcess({ dir, detached: true });
  } catch (error) {
    process.stderr.write(`acmp-dag: ${(error as Error).message}\n`);
    return error instanceof EngineMissing ? 3 : 1;
  }
  engine.child.unref();
  const record: EngineRecord = {
    pid: engine.child.pid!,
    ingress: engine.ingress,
    admin: engine.admin,
    identity_key: engine.identityKey,
  };
  writeFileSync(join(dir, RECORD_FILE), JSON.stringify(record, null, 2) + '\n', { mode: 0o600 });
  process.stdout.write(
    `Restate engine started (pid ${record.pid}, data in ${dir}, log ${engine.logFile}).\n` +
      `Only your user can reach it: it listens on unix sockets in ${dir}, which is private to you.\n` +
      describe(record) +
      `Next: acmp-dag worker --engine ${record.ingress}   then   acmp-dag run FILE --engine ${record.ingress}\n`,
  );
  return 0;
}

async function stop(dir: string, purge: boolean): Promise<number> {
  const record = readEngineRecord(dir);
  if (record === undefined && !purge) {
    process.stderr.write(`acmp-dag: no engine started from ${dir} is running\n`);
    return 1;
  }
  if (record !== undefined) {
    process.kill(record.pid, 'SIGTERM');
    // The server has no exit notification for a process that is not our child: its pid is polled.
    const deadline = Date.now() + 20_000;
    while (isAlive(record.pid) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
    if (isAlive(record.pid)) process.kill(record.pid, 'SIGKILL');
    rmSync(join(dir, RECORD_FILE), { force: true });
    process.stdout.write(`Restate engine stopped (pid ${record.pid}).\n`);
  }
  if (purge) return purgeFolder(dir);
  return 0;
}

/** Removes an engine's folder, but only one that `engine start` made: never a folder of the user's named by mistake. */
function purgeFolder(dir: string): number {
  if (!existsSync(dir)) {
    process.stdout.write(`Nothing to remove: ${dir} does not exist.\n`);
    return 0;
  }
  if (!existsSync(join(dir, IDENTITY_KEY_FILE))) {
    process.stderr.write(
      `acmp-dag: ${dir} is not an engine's folder (it has no ${IDENTITY_KEY_FILE}): nothing removed\n`,
    );
    return 1;
  }
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`Removed the engine's data: ${dir}\n`);
  return 0;
}

export async function engineCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { dir: { type: 'string' }, purge: { type: 'boolean', default: false } },
  });
  const dir = resolve(values.dir ?? DEFAULT_ENGINE_DIR);
  const [action, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`engine takes no argument after "${action}"`);
  if (action === 'start') {
    if (values.purge) throw new UsageError('--purge goes with "engine stop"');
    return start(dir);
  }
  if (action === 'stop') return stop(dir, values.purge);
  throw new UsageError('engine needs "start" or "stop"');
}
