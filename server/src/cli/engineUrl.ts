// The engine's URLs as the CLI takes them: --engine (the ingress) or ACMP_ENGINE_URL, and the admin API's URL, which
// only `worker` needs (to register itself).
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEFAULT_ENGINE_DIR } from './engine';
import { UsageError } from './usage';

/** The --engine URL (the ingress), or ACMP_ENGINE_URL; a usage error without either. */
export function engineOption(value: string | undefined): string {
  const url = value ?? process.env.ACMP_ENGINE_URL;
  if (url === undefined || url === '') {
    throw new UsageError(
      'this command needs --engine URL (the Restate ingress, e.g. http://127.0.0.1:8080) or ACMP_ENGINE_URL',
    );
  }
  try {
    return new URL(url).toString().replace(/\/$/, '');
  } catch {
    throw new UsageError(`--engine needs a URL, not "${url}"`);
  }
}

/** The admin URL of the engine `engine start` recorded with this ingress, else the engine's host on port 9070. */
export function adminUrlFor(ingress: string): string {
  const record = join(resolve(DEFAULT_ENGINE_DIR), 'engine.json');
  if (existsSync(record)) {
    try {
      const recorded = JSON.parse(readFileSync(record, 'utf8')) as { ingress?: string; admin?: string };
      if (recorded.ingress === ingress && typeof recorded.admin === 'string') return recorded.admin;
    } catch {
      // An unreadable record names no admin URL.
    }
  }
  const url = new URL(ingress);
  url.port = '9070';
  return url.toString().replace(/\/$/, '');
}
