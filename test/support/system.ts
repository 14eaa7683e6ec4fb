// What tests ask of the machine: a free port on 127.0.0.1, a process's resident memory (Linux /proc).
import { readFileSync } from 'node:fs';

export { freeLoopbackPort as freePort } from '../../server/src/run/durable/engineProcess';

/** The resident memory of process `pid`, in bytes. */
export function residentBytes(pid: number): number {
  const kilobytes = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kilobytes === undefined) throw new Error(`process ${pid} reports no VmRSS`);
  return Number(kilobytes) * 1024;
}
