// What tests ask of the machine: a free port on 127.0.0.1, a process's resident memory (Linux /proc).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A port on 127.0.0.1 where nothing listens now (something did a moment ago): free to listen on, or to find closed. */
export function freePort(): Promise<number> {
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

/** The resident memory of process `pid`, in bytes. */
export function residentBytes(pid: number): number {
  const kilobytes = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kilobytes === undefined) throw new Error(`process ${pid} reports no VmRSS`);
  return Number(kilobytes) * 1024;
}
