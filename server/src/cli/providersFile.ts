// The providers file of design.md §6, for the CLI: `--providers FILE`, or ./acmp.providers.json when present; and the
// market a run sees: those providers and the ones ARD catalogs describe (`--catalog SOURCE`, Layer 5).
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

/**
 * The providers of the providers file (as `loadProviders`) and those the catalogs describe, fetched now (a catalog
 * out of reach gives its last good copy); a configured provider wins over a discovered one of the same id. The
 * warnings say what could not be read and which copies stand in. UsageError for a bad providers file only.
 */
export async function loadMarket({
  providersFile,
  catalogs,
}: {
  providersFile?: string;
  catalogs: readonly string[];
}): Promise<{ providers: readonly ProviderConfig[]; warnings: readonly string[] }> {
  const configured = await loadProviders(providersFile);
  if (catalogs.length === 0) return { providers: configured, warnings: [] };
  const { discoverProviders, mergeProviders } = await import('../run/catalog.js');
  const discovered = await discoverProviders(catalogs);
  return { providers: mergeProviders(configured, discovered.providers), warnings: discovered.warnings };
}
