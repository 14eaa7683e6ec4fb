// Settings shared by the client (package.json declares them) and the server (reads them through
// workspace/configuration). Declared once here; a test checks package.json against these defaults.
import { z } from 'zod';
import { DEFAULT_LIMITS } from './limits';
import { BUILTIN_CAPABILITIES } from './builtinCatalog';

export const ProviderSchema = z.object({
  id: z.string(),
  transport: z.enum(['builtin', 'stdio', 'http', 'websocket']),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  url: z.string().optional(),
  tokenEnv: z.string().optional(),
  capabilities: z.array(z.string()).optional(),
});
export type ProviderConfig = z.infer<typeof ProviderSchema>;

/** `acmp.run.*`: how the editor runs a DAG when the run command says nothing else (design.md §3, §5). */
export const DEFAULT_RUN_SETTINGS = { failurePolicy: 'fail-fast', maxConcurrency: 8 } as const;

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
  run: z
    .object({
      failurePolicy: z.enum(['fail-fast', 'best-effort']).catch(DEFAULT_RUN_SETTINGS.failurePolicy),
      maxConcurrency: z.int().positive().catch(DEFAULT_RUN_SETTINGS.maxConcurrency),
    })
    .catch(DEFAULT_RUN_SETTINGS),
  engine: z.object({ url: z.string().trim().catch(DEFAULT_ENGINE_SETTINGS.url) }).catch(DEFAULT_ENGINE_SETTINGS),
});
export type Settings = z.infer<typeof SettingsSchema>;

/** Settings from whatever a client sent: every missing or malformed value falls back to its default. */
export function normalizeSettings(raw: unknown): Settings {
  const object = raw !== null && typeof raw === 'object' ? raw : {};
  return SettingsSchema.parse({ limits: {}, run: {}, engine: {}, ...object });
}

/**
 * The capabilities the configured providers offer, against which `unknown-capability` warns; undefined, and the
 * warning silent, when no provider is configured (a file of market capabilities is not wrong for lack of settings) or
 * when one of them takes any capability (no list).
 */
export function knownCapabilities(providers: readonly ProviderConfig[]): readonly string[] | undefined {
  if (providers.length === 0) return undefined;
  const known = new Set<string>();
  for (const provider of providers) {
    const offered =
      provider.transport === 'builtin' ? (provider.capabilities ?? BUILTIN_CAPABILITIES) : provider.capabilities;
    if (offered === undefined) return undefined;
    for (const capability of offered) known.add(capability);
  }
  return [...known];
}
