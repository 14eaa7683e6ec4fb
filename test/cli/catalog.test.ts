// `acmp-dag run --catalog`: the built CLI discovers a provider in an ARD catalog served on 127.0.0.1 and runs the DAG
// on it (`acmp-dag serve --http` in its own process); a catalog out of reach is a warning, and the run goes on.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunReport } from '../../server/src/protocol/report';
import { freePort } from '../support/system';
import { type CatalogServer, catalog, serverCard, serverCardEntry, startCatalogServer } from '../support/catalogServer';

const CLI = process.env.ACMP_CLI_BUNDLE ?? resolve(__dirname, '../../dist/cli.js');
const PIPELINE = resolve(__dirname, '../../examples/text-pipeline.acmp-dag.json');
const PROVIDER_ID = 'urn:air:test:market:served';

const scratch = mkdtempSync(join(tmpdir(), 'acmp-cli-catalog-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * `acmp-dag run` as a process, awaited without blocking this one (the catalog is served from here). The runs share a
 * cache folder (a catalog's last good copy serves the next), but not the result store: each run sends its tasks.
 */
function cli(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args, '--no-cache'], {
    cwd: scratch,
    env: { ...process.env, ACMP_DAG_CACHE_DIR: join(scratch, 'cache') },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((done) => child.once('close', (status) => done({ status, stdout, stderr })));
}

/** `acmp-dag serve --http 0` as its own process; resolves with its URL once it printed it. */
async function startHttpServe(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--http', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise<string>((done, fail) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const match = /at (http:\/\/\S+)/.exec(stderr);
      if (match?.[1] !== undefined) done(match[1]);
    });
    child.once('exit', (code) => fail(new Error(`serve --http exited with ${String(code)}: ${stderr}`)));
  });
  return { url, child };
}

describe('acmp-dag run --catalog', () => {
  let host: CatalogServer;
  let served: { url: string; child: ChildProcess };
  before(async () => {
    [host, served] = await Promise.all([startCatalogServer(), startHttpServe()]);
    host.routes.set('/cards/served.json', { body: serverCard('served', served.url) });
    host.routes.set('/.well-known/ai-catalog.json', {
      body: catalog([
        serverCardEntry(
          PROVIDER_ID,
          { url: '/cards/served.json' },
          {
            capabilities: ['text-split', 'sentiment-analysis', 'result-aggregation'],
            metadata: { 'acmp:price_cu': 0.001, 'acmp:proof_methods': 'result-hash' },
          },
        ),
      ]),
    });
  });
  after(async () => {
    const exited = new Promise((done) => served.child.once('exit', done));
    served.child.kill();
    await Promise.all([exited, host.close()]);
  });

  test('runs the DAG on the provider a catalog describes', async () => {
    const result = await cli('run', PIPELINE, '--json', '--catalog', `${host.origin}/.well-known/ai-catalog.json`);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr, '');
    const report = JSON.parse(result.stdout) as RunReport;
    assert.equal(report.status, 'completed');
    assert.deepEqual(
      report.tasks.map((task) => [task.task_id, task.provider_id]),
      [
        ['task_split_01', PROVIDER_ID],
        ['task_sent_02a', PROVIDER_ID],
        ['task_sent_02b', PROVIDER_ID],
        ['task_agg_03', PROVIDER_ID],
      ],
    );
  });

  test('a provider of the providers file wins over a discovered one of the same id', async () => {
    // The file's entry of that id points where nothing listens: the run goes there, not to the catalog's server.
    const nowhere = `127.0.0.1:${await freePort()}`;
    const providersFile = join(scratch, 'acmp.providers.json');
    writeFileSync(
      providersFile,
      JSON.stringify({ providers: [{ id: PROVIDER_ID, transport: 'http', url: `http://${nowhere}/mcp` }] }),
    );
    try {
      const result = await cli('run', PIPELINE, '--json', '--catalog', host.origin);
      assert.equal(result.status, 1, result.stderr);
      const report = JSON.parse(result.stdout) as RunReport;
      const split = report.tasks.find((task) => task.task_id === 'task_split_01');
      assert.equal(split?.state, 'failed');
      assert.match(split.error?.message ?? '', new RegExp(`ECONNREFUSED ${nowhere}$`));
    } finally {
      rmSync(providersFile);
    }
  });

  test('a catalog out of reach is a warning on stderr, and the run goes on without it', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/catalog.json`;
    const result = await cli('run', PIPELINE, '--json', '--catalog', closed);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(
      result.stderr,
      `acmp-dag: warning: catalog ${closed}: cannot reach ${closed} (ECONNREFUSED); no copy, its providers are unknown\n`,
    );
    const report = JSON.parse(result.stdout) as RunReport;
    assert.ok(report.tasks.every((task) => task.provider_id === 'builtin'));
  });
});
