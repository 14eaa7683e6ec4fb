// The providers the language server's catalogs (`acmp.catalogs`) describe. What every feature and run sees never waits
// for the network: a catalog met for the first time (or again after the settings changed) counts with its cached copy
// at once, and is fetched in the background; when that changes its providers, the documents are analysed again.
import type { ProviderConfig, Settings } from './protocol/settings';
import {
  type DiscoveryOptions,
  combineSources,
  discoverSource,
  mergeProviders,
  readCachedCatalog,
} from './run/catalog';

interface SourceState {
  providers: readonly ProviderConfig[];
}

/** Told only when a fetch ends, never while a call is under way: the server may wire them to what it makes later. */
export interface DiscoveryEvents {
  /** Some catalog's providers changed: what depends on the providers is out of date. */
  changed(): void;
  /** Said once per fetch of a catalog: what could not be read, which copy stands in. */
  warn(message: string): void;
}

export class DiscoveredProviders {
  private readonly sources = new Map<string, SourceState>();
  /** Counts the changes of what is known, so that settings made before one are made again. */
  private generation = 0;
  /** The same settings give the same object until something changes: what is made of their providers is kept. */
  private readonly made = new WeakMap<Settings, { generation: number; settings: Settings }>();

  constructor(
    private readonly events: DiscoveryEvents,
    private readonly options: DiscoveryOptions = {},
  ) {}

  /**
   * The settings with their effective providers (`effectiveProviders`); never waits. Without `fetch`, for settings
   * that may be out of date (a guess at a document's), a catalog not met yet counts with its copy and is not fetched.
   */
  withProviders(settings: Settings, options?: { fetch: boolean }): Settings;
  withProviders(settings: Settings | undefined, options?: { fetch: boolean }): Settings | undefined;
  withProviders(settings: Settings | undefined, { fetch } = { fetch: true }): Settings | undefined {
    if (settings === undefined || settings.catalogs.length === 0) return settings;
    const known = this.made.get(settings);
    if (known?.generation === this.generation) return known.settings;
    const allMet = settings.catalogs.every((source) => this.sources.has(source));
    const made = { ...settings, providers: [...this.effectiveProviders(settings, { fetch })] };
    // A guess from copies alone is not kept: the same settings, asked for, must start their fetches.
    if (fetch || allMet) this.made.set(settings, { generation: this.generation, settings: made });
    return made;
  }

  /**
   * The configured providers, then those of the settings' catalogs (a configured provider wins by id, an earlier
   * catalog over a later one). Never waits: a catalog met for the first time counts with its copy, fetched meanwhile
   * (unless `fetch` is false).
   */
  effectiveProviders(settings: Settings, { fetch } = { fetch: true }): readonly ProviderConfig[] {
    if (settings.catalogs.length === 0) return settings.providers;
    // What a catalog's fetch had to say was said then, once: never on a keystroke.
    const discovered = combineSources(
      settings.catalogs.map((source) => ({ providers: this.providersOf(source, fetch), warnings: [] })),
    );
    return mergeProviders(settings.providers, discovered.providers);
  }

  /** The settings changed: each catalog is read from its copy, and fetched, again when next used. */
  settingsChanged(): void {
    this.sources.clear();
    this.generation++;
  }

  private providersOf(source: string, fetch: boolean): readonly ProviderConfig[] {
    const known = this.sources.get(source);
    if (known !== undefined) return known.providers;
    const copied = readCachedCatalog(source, this.options)?.providers ?? [];
    if (!fetch) return copied;
    const state: SourceState = { providers: copied };
    this.sources.set(source, state);
    this.refresh(source, state).catch((error: unknown) => this.events.warn(`catalog ${source}: ${String(error)}`));
    return state.providers;
  }

  private async refresh(source: string, state: SourceState): Promise<void> {
    const fresh = await discoverSource(source, this.options);
    // A settings change overtook the fetch: its own fetch of this source, if still wanted, is under way.
    if (this.sources.get(source) !== state) return;
    for (const warning of fresh.warnings) this.events.warn(warning);
    if (JSON.stringify(fresh.providers) === JSON.stringify(state.providers)) return;
    state.providers = fresh.providers;
    this.generation++;
    this.events.changed();
  }
}
