// Providers from ARD catalogs (Layer 5 discovery, docs/market.md): a catalog's MCP server cards become providers of
// the providers file (`transport: "http"`, the card's streamable-http remote), with the ACMP binding's terms. Each
// source's last good result is kept in the user's cache folder, so that a catalog out of reach still counts, with
// its age said, and so that the language server can read what is known without touching the network.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { type ProviderConfig, ProviderSchema, TermsSchema } from '../protocol/settings';
import { privateFolder, userCacheFolder } from './privateFolder';

export const CATALOG_TIMEOUT_MS = 5000;
/** A catalog or a server card is a few KiB; this is far above any real one and keeps a hostile one out of memory. */
export const MAX_CATALOG_BYTES = 4 * 1024 * 1024;
/** How deep nested catalogs are followed, and how many documents one source may make us fetch. */
const MAX_NESTING = 4;
const MAX_FETCHES_PER_SOURCE = 100;
/** Server cards fetched at once. */
const CARD_FETCHES_AT_ONCE = 8;

const SERVER_CARD_TYPE = 'application/mcp-server-card+json';
const CATALOG_TYPE = 'application/ai-catalog+json';
const WELL_KNOWN_PATHS = ['/.well-known/ai-catalog.json', '/.well-known/ard.json'];

export interface DiscoveryOptions {
  /** Each fetch's deadline (default 5 s). */
  readonly timeoutMs?: number;
  /** Each document's size bound (default 4 MiB). */
  readonly maxBytes?: number;
  /** Where the copies are kept (default `userCacheFolder()/catalogs`). */
  readonly cacheFolder?: string;
  readonly now?: () => number;
}

export interface Discovered {
  readonly providers: readonly ProviderConfig[];
  readonly warnings: readonly string[];
}

/** A source's last good result, as cached. */
export interface CatalogCopy {
  readonly fetchedAtMs: number;
  readonly providers: readonly ProviderConfig[];
}

/**
 * The providers of every source (catalog URL, host, or local file), fetched now; a source that cannot be read or
 * parsed gives its last good copy, with a warning. Never throws.
 */
export async function discoverProviders(
  sources: readonly string[],
  options: DiscoveryOptions = {},
): Promise<Discovered> {
  const results = await Promise.all(sources.map((source) => discoverSource(source, options)));
  return combineSources(results);
}

/** What the cached copies of these sources hold, without any network: for the language server, on every keystroke. */
export function cachedProviders(sources: readonly string[], options: DiscoveryOptions = {}): Discovered {
  return combineSources(
    sources.map((source) => {
      const copy = readCachedCatalog(source, options);
      return copy === undefined
        ? { providers: [], warnings: [`catalog ${shown(source)}: not fetched yet, its providers are unknown`] }
        : { providers: copy.providers, warnings: [] };
    }),
  );
}

/** One source, fetched now, its copy saved; when it cannot be read, its last good copy and a warning saying how old. */
export async function discoverSource(source: string, options: DiscoveryOptions = {}): Promise<Discovered> {
  const now = options.now ?? Date.now;
  const read = await readSource(source, options).catch((error: unknown): SourceRead => ({
    ok: false,
    why: `could not be read (${String(error)})`,
    warnings: [],
  }));
  if (read.ok) {
    const saved = saveCopy(source, { fetchedAtMs: now(), providers: read.providers }, options);
    return {
      providers: read.providers,
      warnings: saved === undefined ? read.warnings : [...read.warnings, `catalog ${shown(source)}: ${saved}`],
    };
  }
  const copy = readCachedCatalog(source, options);
  const fallback =
    copy === undefined
      ? 'no copy, its providers are unknown'
      : `using the copy from ${age(now() - copy.fetchedAtMs)} ago`;
  return {
    providers: copy?.providers ?? [],
    warnings: [...read.warnings, `catalog ${shown(source)}: ${read.why}; ${fallback}`],
  };
}

/** Sources' providers in the order of the sources; an id a former source gave is kept, with a warning. */
export function combineSources(results: readonly Discovered[]): Discovered {
  const byId = new Map<string, ProviderConfig>();
  const warnings: string[] = [];
  for (const result of results) {
    warnings.push(...result.warnings);
    for (const provider of result.providers) {
      const first = byId.get(provider.id);
      if (first === undefined) byId.set(provider.id, provider);
      else if (first.catalog !== provider.catalog)
        warnings.push(
          `catalog ${provider.catalog ?? ''}: provider ${provider.id} is also in catalog ${first.catalog ?? ''}, which wins`,
        );
    }
  }
  return { providers: [...byId.values()], warnings };
}

/** The configured providers, then the discovered ones whose id none of them has: the configured entry wins. */
export function mergeProviders(
  configured: readonly ProviderConfig[],
  discovered: readonly ProviderConfig[],
): readonly ProviderConfig[] {
  if (discovered.length === 0) return configured;
  const ids = new Set(configured.map((provider) => provider.id));
  return [...configured, ...discovered.filter((provider) => !ids.has(provider.id))];
}

// ---- the cache ----

const cacheFolderOf = (options: DiscoveryOptions): string => options.cacheFolder ?? join(userCacheFolder(), 'catalogs');
const copyPathOf = (source: string, options: DiscoveryOptions): string =>
  join(cacheFolderOf(options), `${createHash('sha256').update(source).digest('hex')}.json`);

const CopySchema = z.object({
  source: z.string(),
  fetched_at_ms: z.number(),
  providers: z.array(ProviderSchema),
});

/** The source's last good result; undefined when there is none or it cannot be read. */
export function readCachedCatalog(source: string, options: DiscoveryOptions = {}): CatalogCopy | undefined {
  let text: string;
  try {
    text = readFileSync(copyPathOf(source, options), 'utf8');
  } catch {
    return undefined;
  }
  const parsed = CopySchema.safeParse(parseJson(text));
  if (!parsed.success || parsed.data.source !== source) return undefined;
  return { fetchedAtMs: parsed.data.fetched_at_ms, providers: parsed.data.providers };
}

/** Saves the copy (0600, in 0700 folders; written whole, then renamed); what went wrong, when it could not. */
function saveCopy(source: string, copy: CatalogCopy, options: DiscoveryOptions): string | undefined {
  const path = copyPathOf(source, options);
  const partial = `${path}.${randomBytes(6).toString('hex')}.partial`;
  try {
    if (options.cacheFolder === undefined) privateFolder(userCacheFolder());
    privateFolder(cacheFolderOf(options));
    const text = JSON.stringify({ source, fetched_at_ms: copy.fetchedAtMs, providers: copy.providers });
    writeFileSync(partial, text, { mode: 0o600, flag: 'wx' });
    renameSync(partial, path);
    return undefined;
  } catch (error) {
    rmSync(partial, { force: true });
    return `could not save its copy in ${cacheFolderOf(options)} (${(error as Error).message})`;
  }
}

/** "42 s", "5 min", "3 h", "2 d": how old a copy is, as a warning says it. */
export function age(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86400)} d`;
}

// ---- reading a source ----

/** The source as messages and providers show it: never a URL's user or password (which are not sent either). */
function shown(source: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(source)) return source;
  try {
    const url = new URL(source);
    url.username = '';
    url.password = '';
    return url.href;
  } catch {
    return source.replace(/\/\/[^/]*@/, '//');
  }
}

type SourceRead =
  | { readonly ok: true; readonly providers: ProviderConfig[]; readonly warnings: string[] }
  | { readonly ok: false; readonly why: string; readonly warnings: string[] };

type Fetched =
  { readonly ok: true; readonly text: string } | { readonly ok: false; readonly why: string; readonly status?: number };

/** Where a source is: a URL to fetch (a host: its well-known paths, in turn), a local file, or nowhere usable. */
type Location =
  | { readonly kind: 'urls'; readonly urls: readonly URL[] }
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'invalid'; readonly why: string };

const HOST = /^(localhost|\[[0-9a-f:]+\]|[a-z0-9-]+(\.[a-z0-9-]+)+)(:\d+)?$/i;

function locate(source: string): Location {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source)) {
    let url: URL;
    try {
      url = new URL(source);
    } catch {
      return { kind: 'invalid', why: 'is not a valid URL' };
    }
    if (url.protocol === 'file:') return { kind: 'file', path: fileURLToPath(url) };
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { kind: 'invalid', why: 'only http(s) URLs are fetched' };
    if (url.username !== '' || url.password !== '')
      return { kind: 'invalid', why: 'has a user or password in it, which is never sent' };
    const bare = (url.pathname === '/' || url.pathname === '') && url.search === '';
    return { kind: 'urls', urls: bare ? WELL_KNOWN_PATHS.map((path) => new URL(path, url)) : [url] };
  }
  if (!existsSync(resolve(source)) && HOST.test(source))
    return { kind: 'urls', urls: WELL_KNOWN_PATHS.map((path) => new URL(path, `https://${source}`)) };
  return { kind: 'file', path: resolve(source) };
}

/** What one source's walk shares: its fetch budget, the catalogs already seen, its warnings. */
interface Walk {
  readonly source: string;
  readonly options: DiscoveryOptions;
  fetches: number;
  readonly seen: Set<string>;
  readonly warnings: string[];
}

async function readSource(source: string, options: DiscoveryOptions): Promise<SourceRead> {
  const location = locate(source);
  if (location.kind === 'invalid') return { ok: false, why: location.why, warnings: [] };
  const walk: Walk = { source: shown(source), options, fetches: 0, seen: new Set(), warnings: [] };
  let text: string;
  let base: URL | undefined;
  let where = shown(source);
  if (location.kind === 'file') {
    const read = readLocalFile(location.path, options.maxBytes ?? MAX_CATALOG_BYTES);
    if (!read.ok) return { ok: false, why: read.why, warnings: [] };
    text = read.text;
  } else {
    let fetched: Fetched = { ok: false, why: 'no URL' };
    for (const url of location.urls) {
      walk.fetches++;
      walk.seen.add(url.href);
      fetched = await fetchText(url, options);
      base = url;
      where = url.href;
      // A host without the current path may still serve the older one.
      if (fetched.ok || fetched.status !== 404) break;
    }
    if (!fetched.ok) return { ok: false, why: fetched.why, warnings: [] };
    text = fetched.text;
  }
  const catalog = catalogOf(parseJson(text));
  if (catalog === undefined)
    return { ok: false, why: `${where} is not an ARD catalog (JSON with an "entries" list)`, warnings: [] };
  const providers = await providersOf(walk, catalog, base);
  return { ok: true, providers, warnings: walk.warnings };
}

const CatalogSchema = z.object({ entries: z.array(z.unknown()) });

const EntrySchema = z
  .object({
    identifier: z.string().optional().catch(undefined),
    displayName: z.string().optional().catch(undefined),
    type: z.string().optional().catch(undefined),
    url: z.string().optional().catch(undefined),
    data: z.unknown().optional(),
    capabilities: z.array(z.string()).optional().catch(undefined),
    'ard:capabilities': z.array(z.string()).optional().catch(undefined),
    metadata: z.record(z.string(), z.unknown()).optional().catch(undefined),
  })
  .loose();
type Entry = z.infer<typeof EntrySchema>;

const CardSchema = z
  .object({
    remotes: z.array(z.unknown()).catch([]),
  })
  .loose();

const catalogOf = (value: unknown): readonly unknown[] | undefined => {
  const parsed = CatalogSchema.safeParse(value);
  return parsed.success ? parsed.data.entries : undefined;
};

/** A server card entry waiting for its card: inline, or at a URL. */
interface CardEntry {
  readonly entry: Entry;
  readonly name: string;
  readonly base: URL | undefined;
}

/** The catalog's providers, nested catalogs followed breadth first, in document order. */
async function providersOf(walk: Walk, top: readonly unknown[], topBase: URL | undefined): Promise<ProviderConfig[]> {
  const cards: CardEntry[] = [];
  let level: { entries: readonly unknown[]; base: URL | undefined }[] = [{ entries: top, base: topBase }];
  for (let depth = 0; level.length > 0; depth++) {
    const next: typeof level = [];
    for (const { entries, base } of level) {
      for (const [index, raw] of entries.entries()) {
        const parsed = EntrySchema.safeParse(raw);
        if (!parsed.success) {
          walk.warnings.push(`catalog ${walk.source}: entry ${index + 1} is not an object; skipped`);
          continue;
        }
        const entry = parsed.data;
        const name = entry.identifier ?? entry.displayName ?? `entry ${index + 1}`;
        const type = entry.type?.split(';')[0]?.trim().toLowerCase();
        if (type === SERVER_CARD_TYPE) cards.push({ entry, name, base });
        else if (type === CATALOG_TYPE) {
          if (depth + 1 > MAX_NESTING) skip(walk, name, `nested deeper than ${MAX_NESTING} catalogs`);
          else {
            const nested = await nestedCatalog(walk, entry, name, base);
            if (nested !== undefined) next.push(nested);
          }
        }
      }
    }
    level = next;
  }
  const found = await inBatches(cards, CARD_FETCHES_AT_ONCE, (card) => providerOf(walk, card));
  const byId = new Map<string, ProviderConfig>();
  for (const provider of found) {
    if (provider === undefined) continue;
    if (byId.has(provider.id)) skip(walk, provider.id, 'its identifier is listed before');
    else byId.set(provider.id, provider);
  }
  return [...byId.values()];
}

function skip(walk: Walk, name: string, why: string): void {
  walk.warnings.push(`catalog ${walk.source}: entry ${JSON.stringify(name)} ${why}; skipped`);
}

/** The artifact of an entry: its inline `data`, or the JSON at its `url` (http(s), within the source's budget). */
async function artifactOf(
  walk: Walk,
  entry: Entry,
  name: string,
  base: URL | undefined,
): Promise<{ value: unknown; base: URL | undefined } | undefined> {
  if (entry.data !== undefined) return { value: entry.data, base };
  if (entry.url === undefined) return void skip(walk, name, 'has neither data nor url');
  let url: URL;
  try {
    url = new URL(entry.url, base);
  } catch {
    return void skip(walk, name, `has a url that is not a URL (${JSON.stringify(entry.url)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return void skip(walk, name, `has a url that is not http(s) (${url.protocol})`);
  if (walk.seen.has(url.href)) return void skip(walk, name, `points at ${url.href} again`);
  if (walk.fetches >= MAX_FETCHES_PER_SOURCE)
    return void skip(walk, name, `is beyond the ${MAX_FETCHES_PER_SOURCE} documents one catalog may make us fetch`);
  walk.fetches++;
  walk.seen.add(url.href);
  const fetched = await fetchText(url, walk.options);
  if (!fetched.ok) return void skip(walk, name, fetched.why);
  const value = parseJson(fetched.text);
  if (value === undefined) return void skip(walk, name, `${url.href} is not JSON`);
  return { value, base: url };
}

async function nestedCatalog(
  walk: Walk,
  entry: Entry,
  name: string,
  base: URL | undefined,
): Promise<{ entries: readonly unknown[]; base: URL | undefined } | undefined> {
  const artifact = await artifactOf(walk, entry, name, base);
  if (artifact === undefined) return undefined;
  const entries = catalogOf(artifact.value);
  if (entries === undefined) return void skip(walk, name, 'is not an ARD catalog (no "entries" list)');
  return { entries, base: artifact.base };
}

async function providerOf(walk: Walk, { entry, name, base }: CardEntry): Promise<ProviderConfig | undefined> {
  if (entry.identifier === undefined) return void skip(walk, name, 'has no identifier');
  const artifact = await artifactOf(walk, entry, name, base);
  if (artifact === undefined) return undefined;
  const card = CardSchema.safeParse(artifact.value);
  if (!card.success) return void skip(walk, name, 'has a server card that is not an object');
  const url = card.data.remotes
    .map((remote) => streamableHttpUrl(remote, artifact.base))
    .find((found) => found !== undefined);
  if (url === undefined)
    return void skip(walk, name, 'has a server card without a streamable-http remote (http or https)');
  const capabilities = entry.capabilities ?? entry['ard:capabilities'];
  // The binding's terms: in the card, at the entry's top level, then in its metadata (where ARD puts extensions), each
  // over the one before.
  const terms = {
    ...termsIn(walk, name, card.data),
    ...termsIn(walk, name, entry),
    ...termsIn(walk, name, entry.metadata ?? {}),
  };
  return {
    ...terms,
    id: entry.identifier,
    transport: 'http',
    url,
    ...(capabilities === undefined ? {} : { capabilities }),
    catalog: walk.source,
  };
}

function streamableHttpUrl(remote: unknown, base: URL | undefined): string | undefined {
  if (remote === null || typeof remote !== 'object') return undefined;
  const { type, url } = remote as { type?: unknown; url?: unknown };
  if (typeof type !== 'string' || type.toLowerCase() !== 'streamable-http' || typeof url !== 'string') return undefined;
  try {
    const resolved = new URL(url, base);
    return resolved.protocol === 'http:' || resolved.protocol === 'https:' ? resolved.href : undefined;
  } catch {
    return undefined;
  }
}

type Terms = z.infer<typeof TermsSchema>;
const TERM_NAMES = Object.keys(TermsSchema.shape) as (keyof Terms)[];

/** The ACMP terms a record holds; a term of the wrong type is left out, with a warning. */
function termsIn(walk: Walk, name: string, record: Record<string, unknown>): Terms {
  const terms: Record<string, unknown> = {};
  for (const term of TERM_NAMES) {
    const raw = record[term];
    if (raw === undefined || raw === null) continue;
    const schema = TermsSchema.shape[term];
    // ARD's metadata holds only scalars: a list there is a comma-separated string, a number may be one written out.
    const candidates =
      typeof raw !== 'string'
        ? [raw]
        : term === 'acmp:proof_methods'
          ? [
              raw
                .split(',')
                .map((method) => method.trim())
                .filter((method) => method !== ''),
            ]
          : [raw, raw.trim() === '' ? raw : Number(raw)];
    const parsed = candidates.map((candidate) => schema.safeParse(candidate)).find((result) => result.success);
    if (parsed === undefined)
      walk.warnings.push(
        `catalog ${walk.source}: entry ${JSON.stringify(name)}: ${term} ${JSON.stringify(raw)} is not valid; ignored`,
      );
    else terms[term] = parsed.data;
  }
  return terms;
}

// ---- fetching ----

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function readLocalFile(path: string, maxBytes: number): Fetched {
  try {
    const size = statSync(path).size;
    if (size > maxBytes) return { ok: false, why: `${path} is larger than ${sizeOf(maxBytes)}` };
    return { ok: true, text: readFileSync(path, 'utf8') };
  } catch (error) {
    return {
      ok: false,
      why: `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    };
  }
}

/** A size bound in words: "4 MiB", "512 KiB". */
const sizeOf = (bytes: number): string =>
  bytes >= 1024 * 1024 ? `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB` : `${Math.round(bytes / 1024)} KiB`;

/** The body of a GET, within the deadline and the size bound; redirects followed (fetch follows http(s) only). */
async function fetchText(url: URL, options: DiscoveryOptions): Promise<Fetched> {
  const timeoutMs = options.timeoutMs ?? CATALOG_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? MAX_CATALOG_BYTES;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await fetch(url, { signal: controller.signal, headers: { accept: 'application/json' } });
    if (!response.ok) {
      // The body is not wanted.
      controller.abort();
      return {
        ok: false,
        status: response.status,
        why: `${url.href} answered ${response.status} ${response.statusText}`.trim(),
      };
    }
    const declared = Number(response.headers.get('content-length') ?? 0);
    const tooLarge = `${url.href} is larger than ${sizeOf(maxBytes)}`;
    if (declared > maxBytes) {
      // The body is not wanted.
      controller.abort();
      return { ok: false, why: tooLarge };
    }
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    const reader = (response.body as ReadableStream<Uint8Array> | null)?.getReader();
    for (let read = await reader?.read(); read !== undefined && !read.done; read = await reader?.read()) {
      bytes += read.value.length;
      if (bytes > maxBytes) {
        // Not awaited: a sender that stalls would keep us here.
        reader?.cancel().catch(() => undefined);
        return { ok: false, why: tooLarge };
      }
      chunks.push(read.value);
    }
    return { ok: true, text: Buffer.concat(chunks).toString('utf8') };
  } catch (error) {
    if (controller.signal.aborted) return { ok: false, why: `${url.href} did not answer within ${timeoutMs / 1000} s` };
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return {
      ok: false,
      why: `cannot reach ${url.href} (${cause?.code ?? cause?.message ?? (error as Error).message})`,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** `work` on every item, at most `width` at once, the results in the items' order. */
async function inBatches<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += width)
    results.push(...(await Promise.all(items.slice(start, start + width).map(work))));
  return results;
}
