// Negotiated runs end to end: `acmp-dag run` (the built CLI) buying from `acmp-dag serve` providers at different price
// factors, over stdio and Streamable HTTP: each task goes to the cheapest offer and is charged its price; `--routing
// listed` keeps the list's order without quotes; `--max-cost` stops the run on its budget without overspending.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { DagPlan } from '../../server/src/protocol/market';
import type { RunReport } from '../../server/src/protocol/report';
import { BUILTIN_PRICES_CU } from '../../server/src/run/builtin/provider';
import { CLI_BUNDLE, type ServeProcess, startHttpServe } from '../support/serveProcess';

const SUITE_TIMEOUT_MS = 60_000;
const PRICE = BUILTIN_PRICES_CU['sentiment-analysis'];
const scratch = mkdtempSync(join(tmpdir(), 'acmp-negotiated-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function writeJson(name: string, value: unknown): string {
  const file = join(scratch, name);
  writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

/**
 * `acmp-dag ...args` (run or plan) as a process: its exit code and output (the HTTP provider serves meanwhile). Without
 * the result store: every task here is bought, and tasks of the same input would otherwise share one result.
 */
function cli(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI_BUNDLE, ...args, '--no-cache'], {
    env: { ...process.env, ACMP_DAG_CACHE_DIR: join(scratch, 'cache') },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

/** What a provider at `factor` advertises for the tasks here (a plan's estimate; its offers say the same). */
const advertising = (factor: number) => ({
  capabilityTerms: { 'sentiment-analysis': { 'acmp:price_cu': PRICE * factor } },
});

const serveStdio = (id: string, factor: number) => ({
  id,
  transport: 'stdio',
  command: process.execPath,
  args: [CLI_BUNDLE, 'serve', '--stdio', '--price-factor', String(factor)],
  ...advertising(factor),
});

/** `count` independent sentiment tasks. */
function sentimentDag(name: string, count: number): string {
  const tasks = Array.from({ length: count }, (_, k) => ({
    task_id: `task_${k}`,
    capability: 'sentiment-analysis',
    input: { type: 'text', data: k % 2 === 0 ? 'Friendly and fast.' : 'Slow and rude.' },
  }));
  return writeJson(name, { dag_id: 'dag_negotiated', tasks, edges: [] });
}

describe('acmp-dag run negotiates with acmp-dag serve', { timeout: SUITE_TIMEOUT_MS }, () => {
  let http: ServeProcess;
  let providersFile: string;
  before(async () => {
    assert.ok(existsSync(CLI_BUNDLE), `no CLI bundle at ${CLI_BUNDLE}: build it, or set ACMP_CLI_BUNDLE`);
    // Listed dearest first; the cheapest over HTTP.
    http = await startHttpServe(['--price-factor', '1']);
    providersFile = writeJson('providers.json', {
      providers: [
        serveStdio('five', 5),
        serveStdio('two', 2),
        { id: 'one', transport: 'http', url: http.url, ...advertising(1) },
      ],
    });
  });
  after(() => http?.stop());

  test('every task goes to the cheapest offer; the total is the sum of the cheapest prices', async () => {
    const file = sentimentDag('cheapest.acmp-dag.json', 6);
    const { status, stdout, stderr } = await cli('run', file, '--providers', providersFile, '--json');
    assert.equal(status, 0, stderr);
    const report = JSON.parse(stdout) as RunReport;
    assert.equal(report.status, 'completed');
    assert.equal(report.routing, 'cheapest');
    for (const task of report.tasks) {
      assert.equal(task.provider_id, 'one');
      assert.equal(task.cost_cu, PRICE);
      assert.deepEqual(
        task.offers?.map((offer) => [offer.provider_id, offer.price_cu]).sort(),
        [
          ['five', PRICE * 5],
          ['one', PRICE],
          ['two', PRICE * 2],
        ].sort(),
      );
      assert.deepEqual(
        [task.accepted?.pricing, task.accepted?.price_cu, task.accepted?.max_price_cu],
        ['offer', PRICE, PRICE],
      );
      assert.equal(task.violations, undefined);
    }
    assert.ok(Math.abs(report.totals.cost_cu - 6 * PRICE) < 1e-12, `${report.totals.cost_cu}`);
    // With fixed prices the plan knew it: from the advertised terms, and from real offers (--quote) alike.
    for (const quote of [[], ['--quote']]) {
      const planned = await cli('plan', file, '--providers', providersFile, '--json', ...quote);
      assert.equal(planned.status, 0, planned.stderr);
      const plan = JSON.parse(planned.stdout) as DagPlan;
      assert.deepEqual(plan.total, { known_cu: report.totals.cost_cu, unpriced: 0 }, `plan ${quote.join(' ')}`);
      assert.ok(plan.tasks.every((task) => task.provider_id === 'one'));
    }
  });

  test('a provider without any price comes after every priced one, and still takes what they refuse', async () => {
    const unpriced = {
      id: 'unpriced',
      transport: 'stdio',
      command: process.execPath,
      args: ['--import', 'tsx', join(__dirname, '../fixtures/providers/unpriced.ts')],
    };
    const file = writeJson('unpriced-first.json', { providers: [unpriced, serveStdio('five', 5)] });
    const priced = await cli('run', sentimentDag('unpriced.acmp-dag.json', 4), '--providers', file, '--json');
    assert.equal(priced.status, 0, priced.stderr);
    const report = JSON.parse(priced.stdout) as RunReport;
    assert.deepEqual(
      report.tasks.map((task) => task.provider_id),
      ['five', 'five', 'five', 'five'],
      'listed first, but unpriced: never as free',
    );
    // Tasks whose max_price_cu the priced provider will not meet (-33001 to its quote) go to the unpriced one.
    const capped = writeJson('capped.acmp-dag.json', {
      dag_id: 'dag_capped',
      tasks: [
        {
          task_id: 'task_0',
          capability: 'sentiment-analysis',
          max_price_cu: PRICE,
          input: { type: 'text', data: 'ok' },
        },
      ],
      edges: [],
    });
    const refused = await cli('run', capped, '--providers', file, '--json');
    assert.equal(refused.status, 0, refused.stderr);
    const task = (JSON.parse(refused.stdout) as RunReport).tasks[0]!;
    assert.equal(task.provider_id, 'unpriced');
    assert.deepEqual(task.accepted, {
      provider_id: 'unpriced',
      pricing: 'direct',
      basis: 'unknown',
      max_price_cu: PRICE,
    });
  });

  test('--routing listed keeps the providers file order, without quotes', async () => {
    const file = sentimentDag('listed.acmp-dag.json', 3);
    const { status, stdout, stderr } = await cli(
      'run',
      file,
      '--providers',
      providersFile,
      '--routing',
      'listed',
      '--json',
    );
    assert.equal(status, 0, stderr);
    const report = JSON.parse(stdout) as RunReport;
    for (const task of report.tasks) {
      assert.equal(task.provider_id, 'five');
      assert.equal(task.offers, undefined);
      assert.equal(task.accepted?.pricing, 'direct');
      assert.equal(task.cost_cu, PRICE * 5);
    }
  });

  test('a budget of half the plan, 8 in flight: never overspent, stopped on it, the rest cancelled', async () => {
    const file = sentimentDag('budget.acmp-dag.json', 16);
    const cap = (16 * PRICE) / 2;
    const args = ['run', file, '--providers', providersFile, '--max-cost', String(cap), '--policy', 'best-effort'];
    const json = await cli(...args, '--json');
    assert.equal(json.status, 1, json.stderr);
    const report = JSON.parse(json.stdout) as RunReport;
    assert.equal(report.status, 'cancelled');
    const charged = report.tasks.reduce((sum, task) => sum + (task.cost_cu ?? 0), 0);
    assert.ok(charged <= cap + 1e-12, `${charged} > ${cap}`);
    const cancelled = report.tasks.filter((task) => task.state === 'cancelled');
    assert.ok(cancelled.length >= 8, `${cancelled.length} cancelled`);
    for (const task of cancelled) assert.deepEqual(task.error?.data, { reason: 'budget' });
    assert.equal(report.budget?.stopped, true);
    assert.equal(report.totals.estimated?.unpriced, 0);
    assert.ok(
      Math.abs(report.totals.estimated.known_cu - 16 * PRICE) < 1e-12,
      `the plan: 16 tasks at the cheapest, not ${report.totals.estimated.known_cu}`,
    );
    // The spend log replayed: charges and reservations in flight never above the cap.
    const held = new Map<string, number>();
    let spent = 0;
    for (const entry of report.spend!) {
      if (entry.outcome === 'reserved') held.set(entry.task_id, entry.amount_cu);
      if (entry.outcome === 'released' || entry.outcome === 'charged') held.delete(entry.task_id);
      if (entry.outcome === 'charged') spent += entry.amount_cu;
      const inFlight = [...held.values()].reduce((sum, amount) => sum + amount, 0);
      assert.ok(spent + inFlight <= cap + 1e-12, `over the cap at ${JSON.stringify(entry)}`);
    }

    const text = await cli(...args);
    assert.equal(text.status, 1);
    assert.match(
      text.stdout,
      /The run stopped on its budget of [\d.e-]+ CU: spent [\d.e-]+ CU; \d+ task\(s\) the budget could not cover did not start \(task_\d+/,
    );
  });
});
