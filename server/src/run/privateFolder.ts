// Folders that hold what can spend or reveal (an engine's state, stored outputs) belong to their user alone.
import { chmodSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Makes `dir` (and its parents) with mode 0700, and narrows it to 0700 when it was there already. */
export function privateFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/**
 * Where acmp-dag keeps what it learns across runs (catalog copies, price history): `ACMP_DAG_CACHE_DIR`, else the
 * platform's user cache folder. Not made here: the first writer makes it with `privateFolder`.
 */
export function userCacheFolder(): string {
  const chosen = process.env.ACMP_DAG_CACHE_DIR;
  if (chosen !== undefined && chosen !== '') return resolve(chosen);
  if (process.platform === 'win32')
    return join(process.env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'acmp-dag');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'acmp-dag');
  const xdg = process.env.XDG_CACHE_HOME;
  return join(xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache'), 'acmp-dag');
}
