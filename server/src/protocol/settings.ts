// Settings shared by the client (package.json declares them) and the server (reads them through
// workspace/configuration). Declared once here; a test checks package.json against these defaults.
import { z } from 'zod';
import { DEFAULT_LIMITS } from './limits';

/** A provider's advertised terms with Layer 5's names (protocol/market.ts `AdvertisedTerms`). */
export const TermsSchema = z.object({
  'acmp:price_cu': z.number().nonnegative().optional(),
  'acmp:price_cu_per_1k_tokens': z.number().nonnegative().optional(),
  'acmp:latency_p99_ms': z.number().nonnegative().optional(),
  'acmp:tier': z.string().optional(),
  'acmp:proof_methods': z.array(z.string()).optional(),
  'acmp:availability': z.number().min(0).max(1).optional(),
});

export const ProviderSchema = z.object({
  ...TermsSchema.shape,
  id: z.string(),
  transport: z.enum(['builtin', 'stdio', 'http', 'websocket']),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  url: z.string().optional(),
  tokenEnv: z.string().optional(),
  capabilities: z.array(z.string()).optional(),
  /** Terms for one capability, over the provider's own. */
  capabilityTerms: z.record(z.string(), TermsSchema).optional(),
  /** Set on a provider a catalog described: the catalog's address (configured providers have none). */
  catalog: z.string().optional(),
});
export type ProviderConfig = z.infer<typeof ProviderSchema>;

/** `acmp.run.*`: how the editor runs a DAG when the run command says nothing else (design.md §3, §5). */
export const DEFAULT_RUN_SETTINGS = {
  failurePolicy: 'fail-fast',
  maxConcurrency: 8,
  routing: 'cheapest',
  /** Layer 7's `total_cap_cu` of a run; 0: no cap. */
  maxCostCu: 0,
  /** Layer 7's `per_task_max_cu`; 0: no cap. */
  perTaskMaxCu: 0,
} as const;

/** `acmp.cache.*`: the result store runs reuse completed tasks' outputs from (run/resultStore.ts). */
export const DEFAULT_CACHE_SETTINGS = {
  enabled: true,
  /** The store's folder; empty: `results` in the user's cache folder. */
  folder: '',
  /** The store's bound in MiB: past it, the results used least recently go. */
  maxSizeMb: 512,
  /** Capabilities whose results are never stored nor reused (their providers' outputs are not deterministic). */
  exclude: [] as string[],
  /** A stored result serves only tasks sent to the provider that made it. */
  perProvider: false,
};

/** `acmp.engine.url`: the Restate ingress of durable runs (README, Durable runs); empty: runs in the language server. */
export const DEFAULT_ENGINE_SETTINGS = { url: '' } as const;

export const SettingsSchema = z.object({
  limits: z
    .object({
      maxTasks: z.int().positive().catch(DEFAULT_LIMITS.maxTasks),
      maxDepth: z.int().positive().catch(DEFAULT_LIMITS.maxDepth),
      maxFanOut: z.int().positive().catch(DEFAULT_LIMITS.maxFanOut),
      maxFileBytes: z.int().positive().catch(DEFAULT_LIMITS.maxFileBytes),
    })
    .catch(DEFAULT_LIMITS),
  providers: z.array(ProviderSchema).catch([]),
  /** ARD catalogs to discover providers in: URLs, hosts (their `/.well-known/ai-catalog.json`) or local files. */
  catalogs: z.array(z.string()).catch([]),
  run: z
    .object({
      failurePolicy: z.enum(['fail-fast', 'best-effort']).catch(DEFAULT_RUN_SETTINGS.failurePolicy),
      maxConcurrency: z.int().positive().catch(DEFAULT_RUN_SETTINGS.maxConcurrency),
      routing: z.enum(['cheapest', 'fastest', 'listed']).catch(DEFAULT_RUN_SETTINGS.routing),
      maxCostCu: z.number().nonnegative().catch(DEFAULT_RUN_SETTINGS.maxCostCu),
      perTaskMaxCu: z.number().nonnegative().catch(DEFAULT_RUN_SETTINGS.perTaskMaxCu),
    })
    .catch(DEFAULT_RUN_SETTINGS),
  cache: z
    .object({
      enabled: z.boolean().catch(DEFAULT_CACHE_SETTINGS.enabled),
      folder: z.string().trim().catch(DEFAULT_CACHE_SETTINGS.folder),
      maxSizeMb: z.number().positive().catch(DEFAULT_CACHE_SETTINGS.maxSizeMb),
      exclude: z.array(z.string()).catch(DEFAULT_CACHE_SETTINGS.exclude),
      perProvider: z.boolean().catch(DEFAULT_CACHE_SETTINGS.perProvider),
    })
    .catch(DEFAULT_CACHE_SETTINGS),
  engine: z.object({ url: z.string().trim().catch(DEFAULT_ENGINE_SETTINGS.url) }).catch(DEFAULT_ENGINE_SETTINGS),
});
export type Settings = z.infer<typeof SettingsSchema>;

/** Settings from whatever a client sent: every missing or malformed value falls back to its default. */
export function normalizeSettings(raw: unknown): Settings {
  const object = raw !== null && typeof raw === 'object' ? raw : {};
  return SettingsSchema.parse({ limits: {}, run: {}, cache: {}, engine: {}, ...object });
}
