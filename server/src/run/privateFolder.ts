// Folders that hold what can spend or reveal (an engine's state, stored outputs) belong to their user alone.
import { chmodSync, mkdirSync } from 'node:fs';

/** Makes `dir` (and its parents) with mode 0700, and narrows it to 0700 when it was there already. */
export function privateFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}
