// The providers file of design.md §6, for the CLI: `--providers FILE`, or ./acmp.providers.json when present.
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { type ProviderConfig, ProviderSchema } from '../protocol/settings';
import { UsageError } from './usage';

export { UsageError };

export const DEFAULT_PROVIDERS_FILE = 'acmp.providers.json';

/** The providers of `path` (or of the default file when present); none means the built-in provider alone. */
export function loadProviders(path: string | undefined): readonly ProviderConfig[] {
  const file = path ?? (existsSync(DEFAULT_PROVIDERS_FILE) ? DEFAULT_PROVIDERS_FILE : undefined);
  if (file === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`cannot read providers file ${file}: ${(error as Error).message}`);
  }
  const result = z.object({ providers: z.array(ProviderSchema) }).safeParse(parsed);
  if (!result.success) throw new UsageError(`invalid providers file ${file}: ${result.error.issues[0]?.message ?? ''}`);
  return result.data.providers;
}
