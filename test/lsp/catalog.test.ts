// `acmp.catalogs` in the language server: the built server discovers providers in an ARD catalog on 127.0.0.1 and
// checks the DAG against them once they arrive; a catalog out of reach is one window/logMessage warning per fetch, never
// one per keystroke; a later session starts from the cached copy, without waiting for the network.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-types';
import { type LspSession, startLspSession } from '../support/lspHarness';
import { catalog, serverCard, serverCardEntry, startCatalogServer } from '../support/catalogServer';
import { freePort } from '../support/system';

const scratch = mkdtempSync(join(tmpdir(), 'acmp-lsp-catalog-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const env = { ACMP_DAG_CACHE_DIR: join(scratch, 'cache') };

const URI = 'file:///virtual/market.acmp-dag.json';
const dagText = (data: string): string =>
  JSON.stringify({
    dag_id: 'dag_market',
    tasks: [
      { task_id: 'task_split', capability: 'text-split', input: { type: 'text', data } },
      { task_id: 'task_translate', capability: 'translate', input: { type: 'text', data } },
    ],
    edges: [],
  });

/** The window/logMessage warnings the server sends, and a promise of the first `count` of them. */
function warningsOf(session: LspSession): { readonly said: string[]; first(count: number): Promise<string[]> } {
  const said: string[] = [];
  const waiters: { count: number; resolve: (warnings: string[]) => void }[] = [];
  session.connection.onNotification('window/logMessage', ({ type, message }: { type: number; message: string }) => {
    if (type !== 2) return;
    said.push(message);
    for (const waiter of waiters.filter((waiting) => said.length >= waiting.count)) waiter.resolve(said.slice());
  });
  return {
    said,
    first: (count) =>
      said.length >= count ? Promise.resolve(said.slice()) : new Promise((resolve) => waiters.push({ count, resolve })),
  };
}

const noProviderOn = (diagnostics: readonly Diagnostic[]): string[] =>
  diagnostics
    .filter((diagnostic) => diagnostic.code === 'no-provider')
    .map((diagnostic) => diagnostic.message as string);

describe('language server: providers from acmp.catalogs', () => {
  test(
    'checks against the discovered providers once fetched, and from the cached copy in a later session',
    { timeout: 30_000 },
    async () => {
      const host = await startCatalogServer();
      const market = `${host.origin}/market.json`;
      host.routes.set(market.slice(host.origin.length), {
        body: catalog([
          serverCardEntry(
            'urn:air:test:market:splitter',
            { card: serverCard('splitter', `${host.origin}/mcp`) },
            { capabilities: ['text-split'] },
          ),
        ]),
      });
      const closed = `http://127.0.0.1:${await freePort()}/catalog.json`;
      const settings = { catalogs: [market, closed] };

      const first = await startLspSession(settings, { env });
      try {
        const warnings = warningsOf(first);
        // Nothing known yet: no provider at all, so no capability is wrong.
        const opened = first.diagnostics(URI);
        await first.open(URI, dagText('a'));
        assert.deepEqual((await opened).diagnostics, []);
        const checked = await first.diagnostics(URI, (params) => noProviderOn(params.diagnostics).length > 0);
        const [message] = noProviderOn(checked.diagnostics);
        assert.match(message!, /"translate"/);
        assert.match(message!, /text-split/);
        // Edits are checked against the same providers, and say nothing more of the catalogs.
        for (const version of [2, 3, 4]) {
          const published = first.diagnostics(URI, (params) => params.version === version);
          await first.change(URI, version, dagText('a'.repeat(version)));
          assert.equal(noProviderOn((await published).diagnostics).length, 1);
        }
        assert.deepEqual(warnings.said, [
          `catalog ${closed}: cannot reach ${closed} (ECONNREFUSED); no copy, its providers are unknown`,
        ]);
        // A catalog taken out of the settings takes its providers along, and is not fetched again.
        const fetches = host.asked.length;
        const republished = first.diagnostics(URI, (params) => noProviderOn(params.diagnostics).length === 0);
        await first.configure({ catalogs: [] });
        await republished;
        assert.equal(host.asked.length, fetches);
      } finally {
        await first.stop();
      }

      await host.close();
      const second = await startLspSession(settings, { env });
      try {
        const warnings = warningsOf(second);
        const opened = second.diagnostics(URI);
        await second.open(URI, dagText('a'));
        // The first answer already knows the splitter: its copy, read without the network.
        assert.equal(noProviderOn((await opened).diagnostics).length, 1);
        const said = await warnings.first(2);
        assert.match(
          said.find((warning) => warning.startsWith(`catalog ${market}`)) ?? '',
          /using the copy from \d+ s ago$/,
        );
      } finally {
        await second.stop();
      }
    },
  );
});
