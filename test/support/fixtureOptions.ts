// A diagnostics fixture's options file (test/fixtures/diagnostics/NAME.options.json), read alike by the core, language
// server and CLI tests: limits, and the providers a user would configure, as one provider's capabilities
// (`knownCapabilities`) or as whole provider entries with their terms (`providers`).
import { existsSync, readFileSync } from 'node:fs';
import type { AnalysisOptions } from '../../server/src/dag/analyze';
import type { AnalysisLimits } from '../../server/src/protocol/limits';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import { providerOffers } from '../../server/src/providerOffers';

export interface FixtureOptions {
  readonly limits?: Partial<AnalysisLimits>;
  readonly knownCapabilities?: string[];
  readonly providers?: ProviderConfig[];
}

/** The options in `file`; none when it does not exist. */
export const readFixtureOptions = (file: string): FixtureOptions =>
  existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as FixtureOptions) : {};

/** The providers the options configure: none, one offering `knownCapabilities`, or `providers`. */
export const fixtureProviders = (options: FixtureOptions): ProviderConfig[] =>
  options.providers ??
  (options.knownCapabilities === undefined
    ? []
    : [{ id: 'p', transport: 'stdio', command: 'x', capabilities: options.knownCapabilities }]);

/** The analysis options the language server would use for them. */
export const analysisOptionsOf = (options: FixtureOptions): AnalysisOptions => ({
  ...(options.limits === undefined ? {} : { limits: options.limits }),
  offers: providerOffers(fixtureProviders(options)),
});
