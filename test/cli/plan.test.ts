// `acmp-dag plan` as a user runs it: the built CLI as a process, on the built-in provider and, with --quote, against
// `acmp-dag serve` processes that quote at different prices; the text, the JSON plan, the exit codes, the budget,
// and the history a run leaves for the next plan.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import type { DagPlan } from '../../server/src/protocol/market';

const CLI = process.env.ACMP_CLI_BUNDLE ?? resolve(__dirname, '../../dist/cli.js');
const ROOT = resolve(__dirname, '../..');
const PIPELINE = 'examples/text-pipeline.acmp-dag.json';
const PIPELINE_IDS = ['task_split_01', 'task_sent_02a', 'task_sent_02b', 'task_agg_03'];

const scratch = mkdtempSync(join(tmpdir(), 'acmp-plan-cli-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The CLI with a cache folder of its own (`cache`: which), so no test reads another's price history. */
const cli = (cache: string, ...args: string[]) =>
  spawnSync(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ACMP_DAG_CACHE_DIR: join(scratch, cache) },
  });

function writeJson(name: string, value: unknown): string {
  const file = join(scratch, name);
  writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

/** `acmp-dag serve --stdio` at `factor` times the built-in catalog's prices, as a provider of the providers file. */
const served = (id: string, factor: number) => ({
  id,
  transport: 'stdio',
  command: process.execPath,
  args: [CLI, 'serve', '--stdio', '--price-factor', String(factor)],
});

describe('acmp-dag plan', () => {
  test('prints the plan of the example on the built-in provider: table, totals, critical path', () => {
    const result = cli('text', 'plan', PIPELINE);
    assert.equal(result.status, 0, result.stderr);
    const lines = result.stdout.split('\n');
    assert.equal(lines[0], 'Plan for dag_f4e2a1: 4 tasks, routing cheapest');
    assert.equal(lines[1], '≈ 0.006 CU · critical path unknown');
    assert.match(
      lines[4]!,
      /^task_split_01 +text-split +builtin +0\.001 CU \(advertised\) +unknown +the only provider/,
    );
    assert.match(lines[5]!, /^task_sent_02a +sentiment-analysis +builtin +0\.002 CU \(advertised\)/);
    assert.match(result.stdout, /Total:\n {2}0\.006 CU for the 4 tasks of known price\n/);
    assert.match(result.stdout, /Critical path:\n.*3 tasks: task_split_01 → task_sent_02a → task_agg_03\n/);
  });

  test('--json prints the DagPlan; --max-concurrency and --routing reach it', () => {
    const result = cli('json', 'plan', PIPELINE, '--json', '--max-concurrency', '2', '--routing', 'fastest');
    assert.equal(result.status, 0, result.stderr);
    const plan = JSON.parse(result.stdout) as DagPlan;
    assert.equal(plan.dag_id, 'dag_f4e2a1');
    assert.equal(plan.policy, 'fastest');
    assert.deepEqual(
      plan.tasks.map((task) => [task.task_id, task.provider_id, task.price.basis]),
      PIPELINE_IDS.map((id) => [id, 'builtin', 'advertised']),
    );
    assert.deepEqual(plan.total, { known_cu: 0.006, unpriced: 0 });
    assert.deepEqual(plan.critical_path.task_ids, ['task_split_01', 'task_sent_02a', 'task_agg_03']);
    assert.equal(plan.wall_time.concurrency, 2);
    assert.deepEqual(plan.no_provider, []);
  });

  test('a task no provider offers: exit 1, naming the task and what the providers offer', () => {
    const file = writeJson('translate.acmp-dag.json', {
      dag_id: 'dag_translate',
      tasks: [
        { task_id: 'task_split', capability: 'text-split', input: { type: 'text', data: 'Hello. World.' } },
        { task_id: 'task_translate', capability: 'translate', input: { source: { from_task: 'task_split' } } },
      ],
      edges: [{ from: 'task_split', to: 'task_translate' }],
    });
    const result = cli('translate', 'plan', file);
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stdout, /1 task cannot run/);
    assert.match(result.stdout, /No provider offers:\n {2}translate: task_translate\n/);
    assert.match(result.stdout, /The providers offer: text-split, sentiment-analysis, result-aggregation, echo/);
    const plan = JSON.parse(cli('translate', 'plan', file, '--json').stdout) as DagPlan;
    assert.deepEqual(plan.no_provider, [{ task_id: 'task_translate', capability: 'translate' }]);
  });

  test('a DAG with errors is not planned (exit 2, its errors on stderr); a bad option is a usage error', () => {
    const broken = writeJson('broken.acmp-dag.json', {
      dag_id: 'dag_broken',
      tasks: [{ task_id: 'task_a', capability: 'echo', input: { type: 'text', data: 'x' } }],
      edges: [{ from: 'task_a', to: 'task_nope' }],
    });
    const refused = cli('broken', 'plan', broken);
    assert.equal(refused.status, 2);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /dangling-edge/);
    assert.match(refused.stderr, /not planning .*broken\.acmp-dag\.json: fix its errors first/);
    const usage = cli('broken', 'plan', PIPELINE, '--routing', 'random');
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /unknown routing "random" \(cheapest, fastest, listed\)/);
    assert.equal(cli('broken', 'plan', PIPELINE, '--max-cost', 'lots').status, 2);
  });

  test('--max-cost says whether the plan fits, and a plan over it exits 1', () => {
    const within = cli('budget', 'plan', PIPELINE, '--max-cost', '0.01');
    assert.equal(within.status, 0, within.stderr);
    assert.match(within.stdout.split('\n')[1]!, /· within the 0\.01 CU budget$/);
    const over = cli('budget', 'plan', PIPELINE, '--max-cost', '0.005');
    assert.equal(over.status, 1);
    assert.match(over.stdout, /over the budget of 0\.005 CU by 0\.001 CU/);
  });

  test('a run leaves what the providers took for the next plan (history)', () => {
    assert.equal(cli('history', 'run', PIPELINE, '--json').status, 0);
    // --no-cache: the result store would complete every task, leaving no figure to read from the history.
    const plan = JSON.parse(cli('history', 'plan', PIPELINE, '--json', '--no-cache').stdout) as DagPlan;
    for (const task of plan.tasks) {
      assert.equal(task.latency.basis, 'history', task.task_id);
      // The advertised price still wins over what was charged.
      assert.equal(task.price.basis, 'advertised', task.task_id);
    }
    assert.equal(plan.critical_path.unknown, 0);
  });

  test('--quote with the built-in provider alone: its catalog prices stand, no offer is asked of it', () => {
    const result = cli('quote-builtin', 'plan', PIPELINE, '--quote', '--json');
    assert.equal(result.status, 0, result.stderr);
    const plan = JSON.parse(result.stdout) as DagPlan;
    assert.ok(plan.tasks.every((task) => task.provider_id === 'builtin' && task.price.basis === 'advertised'));
    assert.deepEqual(plan.total, { known_cu: 0.006, unpriced: 0 });
  });

  test('--quote asks acmp-dag serve processes for offers: the cheaper offer wins, each figure an offer', () => {
    const providers = writeJson('quoting.providers.json', { providers: [served('double', 2), served('plain', 1)] });
    const unquoted = JSON.parse(cli('quote', 'plan', PIPELINE, '--providers', providers, '--json').stdout) as DagPlan;
    // Without quotes, neither advertises a price: both unknown, the first listed taken.
    assert.ok(unquoted.tasks.every((task) => task.provider_id === 'double' && task.price.basis === 'unknown'));
    const result = cli('quote', 'plan', PIPELINE, '--providers', providers, '--quote', '--json');
    assert.equal(result.status, 0, result.stderr);
    const plan = JSON.parse(result.stdout) as DagPlan;
    assert.deepEqual(
      plan.tasks.map((task) => [task.task_id, task.provider_id, task.price.basis]),
      PIPELINE_IDS.map((id) => [id, 'plain', 'offer']),
    );
    const split = plan.tasks[0]!;
    assert.deepEqual(
      split.candidates.map((candidate) => [candidate.provider_id, candidate.price]),
      [
        ['plain', { value: 0.001, basis: 'offer' }],
        ['double', { value: 0.002, basis: 'offer' }],
      ],
    );
    assert.deepEqual(plan.total, { known_cu: 0.006, unpriced: 0 });
  });

  test('--quote: a provider that will not quote under max_price_cu is excluded with its answer, exit 1', () => {
    const providers = writeJson('refusing.providers.json', { providers: [served('double', 2)] });
    const file = writeJson('tight.acmp-dag.json', {
      dag_id: 'dag_tight',
      tasks: [{ task_id: 'task_tight', capability: 'echo', input: { type: 'text', data: 'x' }, max_price_cu: 0.0001 }],
      edges: [],
    });
    const result = cli('refusing', 'plan', file, '--providers', providers, '--quote');
    assert.equal(result.status, 1, result.stderr);
    assert.match(
      result.stdout,
      /task_tight +echo +— +unknown +unknown +every provider that offers the capability is excluded; double: /,
    );
  });
});
