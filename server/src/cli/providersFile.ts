// The providers file of design.md §6, for the CLI: `--providers FILE`, or ./acmp.providers.json when present.
import { existsSync, readFileSync } from 'node:fs';
import type { ProviderConfig } from '../protocol/settings';
import { UsageError } from './usage';

export { UsageError };

export const DEFAULT_PROVIDERS_FILE = 'acmp.providers.json';

/**
 * The providers of `path` (or of the default file when present); none means the built-in provider alone. zod and the
 * settings' schemas load only to check a file: a run without one starts about 30 ms sooner.
 */
export async function loadProviders(path: string | undefined): Promise<readonly ProviderConfig[]> {
  const file = path ?? (existsSync(DEFAULT_PROVIDERS_FILE) ? DEFAULT_PROVIDERS_FILE : undefined);
  if (file === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`cannot read providers file ${file}: ${(error as Error).message}`);
  }
  const [{ z }, { ProviderSchema }] = await Promise.all([import('zod'), import('../protocol/settings.js')]);
  const result = z.object({ providers: z.array(ProviderSchema) }).safeParse(parsed);
  if (!result.success) throw new UsageError(`invalid providers file ${file}: ${result.error.issues[0]?.message ?? ''}`);
  return result.data.providers;
}
