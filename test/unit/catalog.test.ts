// Providers from ARD catalogs (Layer 5): server cards by URL and inline, the ACMP terms wherever the binding may put
// them, the well-known paths of a host, nested catalogs, and every way a catalog can fail: a warning, its last good
// copy (with its age) when there is one, never a throw.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { cachedProviders, discoverProviders, mergeProviders } from '../../server/src/run/catalog';
import { freePort } from '../support/system';
import { type CatalogServer, catalog, serverCard, serverCardEntry, startCatalogServer } from '../support/catalogServer';

const scratch = mkdtempSync(join(tmpdir(), 'acmp-catalog-'));
process.env.ACMP_DAG_CACHE_DIR = join(scratch, 'cache');
after(() => rmSync(scratch, { recursive: true, force: true }));

let host: CatalogServer;
before(async () => {
  host = await startCatalogServer();
});
after(() => host.close());
beforeEach(() => {
  host.routes.clear();
  rmSync(process.env.ACMP_DAG_CACHE_DIR!, { recursive: true, force: true });
});

const HOUR_MS = 3600 * 1000;

/** A market of two providers: one card at a URL (terms in metadata), one inline (terms at the top and in its card). */
function putMarket(path = '/market.json'): string {
  host.routes.set('/cards/fast.json', { body: serverCard('fast', `${host.origin}/fast/mcp`) });
  host.routes.set(path, {
    body: catalog([
      serverCardEntry(
        'urn:air:acme:market:fast',
        { url: '/cards/fast.json' },
        {
          capabilities: ['summarization', 'translation'],
          metadata: {
            'acmp:tier': 'A',
            'acmp:price_cu_per_1k_tokens': 0.004,
            'acmp:latency_p99_ms': 800,
            'acmp:availability': 0.997,
            'acmp:proof_methods': 'result-hash, tee-attestation',
          },
        },
      ),
      serverCardEntry(
        'urn:air:acme:market:cheap',
        { card: serverCard('cheap', 'http://cheap.example/mcp', { 'acmp:tier': 'B', 'acmp:latency_p99_ms': 5000 }) },
        { capabilities: ['summarization'], 'acmp:price_cu': 0.001, metadata: { 'acmp:latency_p99_ms': '1500' } },
      ),
      { identifier: 'urn:air:acme:agents:helper', type: 'application/a2a-agent-card+json', url: '/agents/helper.json' },
    ]),
  });
  return `${host.origin}${path}`;
}

describe('discoverProviders', () => {
  test('a catalog’s server cards, by URL and inline, become http providers with their terms', async () => {
    const source = putMarket();
    const { providers, warnings } = await discoverProviders([source]);
    assert.deepEqual(warnings, []);
    assert.deepEqual(providers, [
      {
        id: 'urn:air:acme:market:fast',
        transport: 'http',
        url: `${host.origin}/fast/mcp`,
        capabilities: ['summarization', 'translation'],
        'acmp:tier': 'A',
        'acmp:price_cu_per_1k_tokens': 0.004,
        'acmp:latency_p99_ms': 800,
        'acmp:availability': 0.997,
        'acmp:proof_methods': ['result-hash', 'tee-attestation'],
        catalog: source,
      },
      {
        // The metadata's latency over the card's; the card's tier, the entry's own fixed price.
        id: 'urn:air:acme:market:cheap',
        transport: 'http',
        url: 'http://cheap.example/mcp',
        capabilities: ['summarization'],
        'acmp:tier': 'B',
        'acmp:latency_p99_ms': 1500,
        'acmp:price_cu': 0.001,
        catalog: source,
      },
    ]);
    // The agent card is not an MCP server: not fetched.
    assert.ok(!host.asked.includes('/agents/helper.json'));
  });

  test('a host finds its /.well-known/ai-catalog.json, and an older host its /.well-known/ard.json', async () => {
    putMarket('/.well-known/ai-catalog.json');
    const found = await discoverProviders([host.origin]);
    assert.deepEqual(found.warnings, []);
    assert.equal(found.providers.length, 2);

    host.routes.clear();
    putMarket('/.well-known/ard.json');
    const older = await discoverProviders([`${host.origin}/`]);
    assert.deepEqual(older.warnings, []);
    assert.deepEqual(
      older.providers.map((provider) => provider.catalog),
      [`${host.origin}/`, `${host.origin}/`],
    );
  });

  test('a local file is a catalog too', async () => {
    const file = join(scratch, 'local-catalog.json');
    writeFileSync(
      file,
      JSON.stringify(
        catalog([serverCardEntry('urn:air:me:local:one', { card: serverCard('one', 'https://one.example/mcp') })]),
      ),
    );
    const { providers, warnings } = await discoverProviders([file]);
    assert.deepEqual(warnings, []);
    assert.deepEqual(
      providers.map((provider) => [provider.id, provider.url]),
      [['urn:air:me:local:one', 'https://one.example/mcp']],
    );
  });

  test('entries without a usable endpoint are skipped, each named in a warning; the others stand', async () => {
    host.routes.set('/cards/ws-only.json', { body: { name: 'ws', remotes: [{ type: 'sse', url: 'http://x/sse' }] } });
    host.routes.set('/market.json', {
      body: catalog([
        serverCardEntry('urn:air:acme:market:ws-only', { url: '/cards/ws-only.json' }),
        serverCardEntry('urn:air:acme:market:gone', { url: '/cards/gone.json' }),
        { identifier: 'urn:air:acme:market:empty', type: 'application/mcp-server-card+json' },
        serverCardEntry(
          'urn:air:acme:market:ok',
          { card: serverCard('ok', `${host.origin}/ok/mcp`) },
          {
            metadata: { 'acmp:availability': 7 },
          },
        ),
        'not an entry',
      ]),
    });
    const source = `${host.origin}/market.json`;
    const { providers, warnings } = await discoverProviders([source]);
    assert.deepEqual(
      providers.map((provider) => provider.id),
      ['urn:air:acme:market:ok'],
    );
    assert.equal(providers[0]!['acmp:availability'], undefined);
    const said = warnings.join('\n');
    assert.match(said, /"urn:air:acme:market:ws-only" has a server card without a streamable-http remote/);
    assert.match(said, /"urn:air:acme:market:gone" .*cards\/gone\.json answered 404/);
    assert.match(said, /"urn:air:acme:market:empty" has neither data nor url; skipped/);
    assert.match(said, /"urn:air:acme:market:ok": acmp:availability 7 is not valid; ignored/);
    assert.match(said, /entry 5 is not an object; skipped/);
    assert.ok(warnings.every((warning) => warning.startsWith(`catalog ${source}: `)));
  });

  test('nested catalogs are followed, a cycle among them once', async () => {
    host.routes.set('/a.json', {
      body: catalog([
        { identifier: 'urn:air:acme:catalogs:b', type: 'application/ai-catalog+json', url: '/b.json' },
        serverCardEntry('urn:air:acme:market:in-a', { card: serverCard('a', `${host.origin}/a/mcp`) }),
      ]),
    });
    host.routes.set('/b.json', {
      body: catalog([
        { identifier: 'urn:air:acme:catalogs:a', type: 'application/ai-catalog+json', url: '/a.json' },
        serverCardEntry('urn:air:acme:market:in-b', { card: serverCard('b', `${host.origin}/b/mcp`) }),
      ]),
    });
    const { providers, warnings } = await discoverProviders([`${host.origin}/a.json`]);
    assert.deepEqual(
      providers.map((provider) => provider.id),
      ['urn:air:acme:market:in-a', 'urn:air:acme:market:in-b'],
    );
    assert.equal(host.asked.filter((path) => path === '/a.json').length, 1);
    assert.match(warnings.join('\n'), /"urn:air:acme:catalogs:a" points at .*\/a\.json again/);
  });

  test('an unreachable catalog is a warning, never a throw: with no copy, its providers are unknown', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/catalog.json`;
    const { providers, warnings } = await discoverProviders([
      closed,
      'ftp://example.com/catalog.json',
      `${host.origin.replace('//', '//buyer:hunter2@')}/market.json`,
    ]);
    assert.deepEqual(providers, []);
    assert.equal(warnings.length, 3);
    assert.match(
      warnings[0]!,
      new RegExp(`^catalog ${closed}: cannot reach ${closed} \\(ECONNREFUSED\\); no copy, its providers are unknown$`),
    );
    assert.match(
      warnings[1]!,
      /^catalog ftp:\/\/example\.com\/catalog\.json: only http\(s\) URLs are fetched; no copy/,
    );
    // A password in a catalog's address is never sent, nor shown.
    assert.equal(
      warnings[2],
      `catalog ${host.origin}/market.json: has a user or password in it, which is never sent; no copy, its providers are unknown`,
    );
  });

  test('after a good fetch, a catalog out of reach gives its cached copy and says how old it is', async () => {
    const source = putMarket();
    const fetchedAt = Date.now();
    const good = await discoverProviders([source], { now: () => fetchedAt });
    assert.equal(good.providers.length, 2);

    host.routes.set('/market.json', { status: 503, body: 'down for maintenance' });
    const later = await discoverProviders([source], { now: () => fetchedAt + 3 * HOUR_MS + 60_000 });
    assert.deepEqual(later.providers, good.providers);
    assert.deepEqual(later.warnings, [
      `catalog ${source}: ${source} answered 503 Service Unavailable; using the copy from 3 h ago`,
    ]);
    // The language server's view, with no network at all.
    assert.deepEqual(cachedProviders([source]), { providers: good.providers, warnings: [] });
  });

  test('the copy is the user’s alone: 0600 in a 0700 folder', async () => {
    await discoverProviders([putMarket()]);
    const folder = join(process.env.ACMP_DAG_CACHE_DIR!, 'catalogs');
    assert.equal(statSync(folder).mode & 0o777, 0o700);
    const [copy] = readdirSync(folder);
    assert.match(copy!, /^[0-9a-f]{64}\.json$/);
    assert.equal(statSync(join(folder, copy!)).mode & 0o777, 0o600);
  });

  test('a malformed catalog is a warning, and the last good copy stands in', async () => {
    const source = putMarket();
    const good = await discoverProviders([source]);
    for (const body of ['{"entries": [', '{"specVersion": "1.0", "entries": "none"}', 'null']) {
      host.routes.set('/market.json', { body });
      const { providers, warnings } = await discoverProviders([source]);
      assert.deepEqual(providers, good.providers, body);
      assert.equal(warnings.length, 1, body);
      assert.match(
        warnings[0]!,
        /is not an ARD catalog \(JSON with an "entries" list\); using the copy from \d+ s ago$/,
      );
    }
  });

  test('a catalog too large or too slow is given up', async () => {
    host.routes.set('/huge.json', { body: catalog([{ description: 'x'.repeat(4096) }]) });
    host.routes.set('/slow.json', 'hang');
    const { providers, warnings } = await discoverProviders([`${host.origin}/huge.json`, `${host.origin}/slow.json`], {
      maxBytes: 1024,
      timeoutMs: 200,
    });
    assert.deepEqual(providers, []);
    assert.match(warnings[0]!, /huge\.json is larger than 1 KiB; no copy, its providers are unknown$/);
    assert.match(warnings[1]!, /slow\.json did not answer within 0\.2 s; no copy, its providers are unknown$/);
  });

  test('configured providers and discovered ones merge: the configured entry wins by id', async () => {
    const discovered = (await discoverProviders([putMarket()])).providers;
    const configured = [{ id: 'urn:air:acme:market:cheap', transport: 'stdio' as const, command: 'cheap-local' }];
    assert.deepEqual(
      mergeProviders(configured, discovered).map((provider) => [provider.id, provider.transport]),
      [
        ['urn:air:acme:market:cheap', 'stdio'],
        ['urn:air:acme:market:fast', 'http'],
      ],
    );
  });
});
