// The result store as a user meets it through `acmp-dag`: runs of the built CLI against a provider process that counts
// the invokes it receives (test/support/countingProviderProcess.ts, over MCP Streamable HTTP), so that what a re-run
// after an edit sends is counted where it arrives; `run --task/--from/--upstream`, two runs at once into one store,
// the size bound, `cache stats|clear|prune`, and `plan` counting stored tasks at 0. Each test has its own store.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import type { DagPlan } from '../../server/src/protocol/market';
import type { RunReport } from '../../server/src/protocol/report';
import type { StoreStats } from '../../server/src/protocol/runMessages';
import type { Counts } from '../support/countingProviderProcess';
import { echoLayersDag } from '../support/echoDag';

const CLI = process.env.ACMP_CLI_BUNDLE ?? resolve(__dirname, '../../dist/cli.js');
const ROOT = resolve(__dirname, '../..');
const PIPELINE = 'examples/text-pipeline.acmp-dag.json';

const scratch = mkdtempSync(join(tmpdir(), 'acmp-cache-cli-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

let provider: ChildProcess;
let control: string;
let providersFile: string;

before(async () => {
  provider = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/support/countingProviderProcess.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: provider.stdout! }), 'line')) as [string];
  const urls = JSON.parse(line) as { mcp: string; control: string };
  control = urls.control;
  providersFile = writeJson('counting.providers.json', {
    providers: [{ id: 'counting', transport: 'http', url: urls.mcp }],
  });
});

after(async () => {
  const exited = once(provider, 'exit');
  provider.kill();
  await exited;
});

function writeJson(name: string, value: unknown): string {
  const file = join(scratch, name);
  writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

/** A store folder of its own. */
const newStore = (): string => mkdtempSync(join(scratch, 'store-'));

/**
 * The invokes the provider received so far, every send counted. Asked once more when the first ask fails: fetch can
 * reuse a kept-alive connection just as the provider's server closes it for idleness ("other side closed").
 */
async function invokesSoFar(): Promise<number> {
  const ask = (): Promise<Response> => fetch(`${control}/counts`);
  const counts = (await (await ask().catch(ask)).json()) as Counts;
  return Object.values(counts.invokes).reduce((sum, count) => sum + count, 0);
}

interface CliResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The invokes the provider received while the command ran. */
  readonly invokes: number;
}

/** `acmp-dag ARGS` to its end, counting the invokes it sent. */
async function cli(...args: string[]): Promise<CliResult> {
  const before = await invokesSoFar();
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return {
    status: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    invokes: (await invokesSoFar()) - before,
  };
}

/** `acmp-dag run FILE --json` on the counting provider, into `store`. */
const run = (store: string, file: string, ...args: string[]) =>
  cli('run', file, '--json', '--providers', providersFile, '--cache-dir', store, ...args);

function reportOf(result: CliResult): RunReport {
  assert.equal(result.status, 0, result.stderr + result.stdout);
  return JSON.parse(result.stdout) as RunReport;
}

const byId = (report: RunReport) => new Map(report.tasks.map((task) => [task.task_id, task]));

/** The ids of the report's tasks that came from the store, and of those that were sent, each sorted. */
function split(report: RunReport): { cached: string[]; sent: string[] } {
  const cached = report.tasks.filter((task) => task.cached !== undefined).map((task) => task.task_id);
  const sent = report.tasks.filter((task) => task.cached === undefined).map((task) => task.task_id);
  return { cached: cached.sort(), sent: sent.sort() };
}

interface Edits {
  /** `task_mid_a`'s field of the split's output. */
  readonly midField?: string;
  readonly leaf?: string;
}

/**
 * Six echo tasks (each answers its input): a split → two middle tasks → an aggregation → a final task, and a leaf
 * apart. The aggregation reads only `word` of each middle output, so a middle edit that keeps the word changes no
 * input downstream. Each task's metadata names it: echo's output is its input, and without it a task would share its
 * key with its upstream.
 */
function sixTasks(name: string, { midField = 'data.a', leaf = 'leaf v1' }: Edits = {}): string {
  const task = (id: string, input: unknown) => ({ task_id: id, capability: 'echo', input, metadata: { step: id } });
  return writeJson(name, {
    dag_id: 'dag_six',
    tasks: [
      task('task_split', {
        type: 'json',
        data: { a: { word: 'alpha', n: 1 }, a2: { word: 'alpha', n: 2 }, b: { word: 'beta' }, c: { word: 'gamma' } },
      }),
      task('task_mid_a', { source: { from_task: 'task_split', field: midField } }),
      task('task_mid_b', { source: { from_task: 'task_split', field: 'data.b' } }),
      task('task_agg', { source: { from_tasks: ['task_mid_a', 'task_mid_b'], field: 'data.word' } }),
      task('task_final', { source: { from_task: 'task_agg' } }),
      task('task_leaf', { type: 'text', data: leaf }),
    ],
    edges: [
      { from: 'task_split', to: 'task_mid_a' },
      { from: 'task_split', to: 'task_mid_b' },
      { from: 'task_mid_a', to: 'task_agg' },
      { from: 'task_mid_b', to: 'task_agg' },
      { from: 'task_agg', to: 'task_final' },
    ],
  });
}

const ALL_SIX = ['task_agg', 'task_final', 'task_leaf', 'task_mid_a', 'task_mid_b', 'task_split'];

describe('acmp-dag run with the result store', () => {
  test('a DAG of 1,000 tasks: editing one leaf and running again sends exactly one invoke', async () => {
    const store = newStore();
    const dag = JSON.parse(echoLayersDag(1_000, 'dag_thousand', { distinctResults: true })) as {
      tasks: { task_id: string; input: unknown }[];
    };
    const file = writeJson('thousand.acmp-dag.json', dag);
    const first = await run(store, file, '--max-concurrency', '50');
    assert.equal(first.invokes, 1_000);
    // A leaf: a task of the last layer, which no task reads.
    const leaf = dag.tasks[dag.tasks.length - 1]!;
    leaf.input = { type: 'text', data: 'edited' };
    writeJson('thousand.acmp-dag.json', dag);
    const again = await run(store, file, '--max-concurrency', '50');
    assert.equal(again.invokes, 1);
    assert.deepEqual(split(reportOf(again)).sent, [leaf.task_id]);
    assert.equal(reportOf(again).totals.cached?.tasks, 999);
  });

  test('editing a leaf sends exactly one invoke: the other five come from the store at 0 CU, naming the first run', async () => {
    const store = newStore();
    const first = await run(store, sixTasks('leaf-1.acmp-dag.json'));
    assert.equal(first.invokes, 6);
    const firstReport = reportOf(first);
    assert.deepEqual(split(firstReport), { cached: [], sent: ALL_SIX });

    const edited = await run(store, sixTasks('leaf-2.acmp-dag.json', { leaf: 'leaf v2' }));
    assert.equal(edited.invokes, 1);
    const report = reportOf(edited);
    assert.deepEqual(split(report), { cached: ALL_SIX.filter((id) => id !== 'task_leaf'), sent: ['task_leaf'] });
    const firstTasks = byId(firstReport);
    for (const task of report.tasks) {
      assert.equal(task.state, 'completed');
      if (task.cached === undefined) continue;
      assert.equal(task.cost_cu, 0, task.task_id);
      assert.equal(task.cached.run_id, firstReport.run_id);
      assert.equal(task.cached.cost_cu, firstTasks.get(task.task_id)!.cost_cu);
      assert.equal(task.provider_id, 'counting');
    }
    assert.deepEqual(report.result.task_leaf, { type: 'text', data: 'leaf v2' });
    assert.equal(report.totals.cached?.tasks, 5);
    assert.ok(Math.abs(report.totals.cached.saved_cu - 0.005) < 1e-12, 'what the five cost then');
    assert.equal(report.totals.cost_cu, 0.001);
  });

  test('editing a middle task re-sends it, and downstream only the tasks whose input changed', async () => {
    const store = newStore();
    assert.equal((await run(store, sixTasks('mid-1.acmp-dag.json'))).invokes, 6);
    // The middle output changes but keeps its word: the aggregation's input is the same, and nothing after it runs.
    const sameWord = await run(store, sixTasks('mid-2.acmp-dag.json', { midField: 'data.a2' }));
    assert.equal(sameWord.invokes, 1);
    assert.deepEqual(split(reportOf(sameWord)).sent, ['task_mid_a']);
    // Another word: the aggregation's input changes, and so does its output, which the final task reads.
    const newWord = await run(store, sixTasks('mid-3.acmp-dag.json', { midField: 'data.c' }));
    assert.equal(newWord.invokes, 3);
    const report = reportOf(newWord);
    assert.deepEqual(split(report).sent, ['task_agg', 'task_final', 'task_mid_a']);
    assert.deepEqual(report.result.task_final!.data, ['gamma', 'beta']);
  });

  test('the text output marks cached tasks and counts what the store saved', async () => {
    const store = newStore();
    const file = sixTasks('text.acmp-dag.json');
    const first = await cli('run', file, '--providers', providersFile, '--cache-dir', store);
    assert.equal(first.status, 0, first.stderr);
    assert.doesNotMatch(first.stdout, /cached/);
    const again = await cli('run', file, '--providers', providersFile, '--cache-dir', store);
    assert.equal(again.status, 0, again.stderr);
    assert.equal(again.invokes, 0);
    assert.match(
      again.stdout,
      /✓ {2}task_leaf +cached +run [0-9a-f]{8}…, \d{4}-\d\d-\d\d \d\d:\d\d, 0\.001 CU saved\n/,
    );
    assert.match(
      again.stdout,
      /\ncompleted in \d+ ms: 6 completed, .*; 0 CU, 0 tokens; 6 from the result store, 0\.006 CU saved\n/,
    );
  });

  test('--no-cache sends every task; --refresh sends the tasks it names again', async () => {
    const store = newStore();
    const file = sixTasks('flags.acmp-dag.json');
    assert.equal((await run(store, file)).invokes, 6);
    const uncached = await run(store, file, '--no-cache');
    assert.equal(uncached.invokes, 6);
    assert.deepEqual(split(reportOf(uncached)).cached, []);
    const refreshed = await run(store, file, '--refresh', 'task_mid_a', '--refresh', 'task_leaf,task_split');
    assert.equal(refreshed.invokes, 3);
    assert.deepEqual(split(reportOf(refreshed)).sent, ['task_leaf', 'task_mid_a', 'task_split']);
    const unknown = await run(store, file, '--refresh', 'task_nope');
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /has no task task_nope/);
    assert.equal(unknown.invokes, 0);
  });

  test('--task runs one task on its upstream outputs from the store; a missing one refuses the run, --upstream runs it', async () => {
    const store = newStore();
    const file = sixTasks('task.acmp-dag.json');
    const refused = await run(store, file, '--task', 'task_agg');
    assert.equal(refused.status, 2);
    assert.equal(refused.invokes, 0);
    assert.equal(refused.stdout, '');
    assert.match(
      refused.stderr,
      /not running: task_agg needs the output of task_split, task_mid_a, task_mid_b, which the result store does not hold; run them first or add --upstream to run them too/,
    );

    const withUpstream = await run(store, file, '--task', 'task_mid_a', '--upstream');
    assert.equal(withUpstream.invokes, 2);
    assert.deepEqual(
      reportOf(withUpstream).tasks.map((task) => task.task_id),
      ['task_split', 'task_mid_a'],
      'the report lists the part of the DAG that ran',
    );
    const oneMissing = await run(store, file, '--task', 'task_agg');
    assert.equal(oneMissing.status, 2);
    assert.match(oneMissing.stderr, /task_agg needs the output of task_mid_b, which/);
    const rest = await run(store, file, '--task', 'task_agg', '--upstream');
    assert.equal(rest.invokes, 2);
    assert.deepEqual(split(reportOf(rest)), { cached: ['task_mid_a', 'task_split'], sent: ['task_agg', 'task_mid_b'] });

    // All upstream stored: the task named runs, and only it, though the store holds its result too.
    const one = await run(store, file, '--task', 'task_agg');
    assert.equal(one.invokes, 1);
    assert.deepEqual(split(reportOf(one)).sent, ['task_agg']);
    // --from: the task and everything downstream of it (task_final never ran: nothing stored reads task_agg's output).
    const from = await run(store, file, '--from', 'task_agg', '--upstream');
    assert.equal(from.invokes, 2);
    assert.deepEqual(split(reportOf(from)).sent, ['task_agg', 'task_final']);
    // Again: the named task runs; downstream, task_final reads an output that did not change, and comes from the store.
    const again = await run(store, file, '--from', 'task_agg');
    assert.equal(again.invokes, 1);
    assert.deepEqual(split(reportOf(again)), {
      cached: ['task_final', 'task_mid_a', 'task_mid_b', 'task_split'],
      sent: ['task_agg'],
    });

    const unknown = await run(store, file, '--task', 'task_nope', '--from', 'task_gone');
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /has no task task_nope, task_gone/);
  });

  test('two runs of one DAG at once into one store: both complete, each result is stored once, a third run sends nothing', async () => {
    const store = newStore();
    const file = sixTasks('concurrent.acmp-dag.json');
    const args = [CLI, 'run', file, '--json', '--providers', providersFile, '--cache-dir', store];
    const runs = [0, 1].map(() => {
      const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
      return once(child, 'exit').then(([code]) => ({ code: code as number, stdout }));
    });
    for (const { code, stdout } of await Promise.all(runs)) {
      assert.equal(code, 0);
      assert.equal((JSON.parse(stdout) as RunReport).status, 'completed');
    }
    const stats = await cli('cache', 'stats', '--json', '--cache-dir', store);
    assert.equal(stats.status, 0, stats.stderr);
    assert.equal((JSON.parse(stats.stdout) as { stats: StoreStats }).stats.results, 6);
    const third = await run(store, file);
    assert.equal(third.invokes, 0);
    assert.deepEqual(split(reportOf(third)).cached, ALL_SIX);
  });

  test('past --cache-max-mb, the results used least recently are evicted', async () => {
    const store = newStore();
    // Two results of about 3.3 KB each per DAG: one DAG fits the bound of about 10 KB, two do not.
    const dag = (name: string, letter: string) =>
      writeJson(name, {
        dag_id: `dag_${letter}`,
        tasks: [1, 2].map((n) => ({
          task_id: `task_${n}`,
          capability: 'echo',
          input: { type: 'text', data: `${letter}${n}`.repeat(1500) },
        })),
        edges: [],
      });
    const [a, b] = [dag('bound-a.acmp-dag.json', 'a'), dag('bound-b.acmp-dag.json', 'b')];
    assert.equal((await run(store, a, '--cache-max-mb', '0.01')).invokes, 2);
    assert.equal((await run(store, b, '--cache-max-mb', '0.01')).invokes, 2);
    assert.equal((await run(store, b, '--cache-max-mb', '0.01')).invokes, 0, "B's results stay");
    assert.equal((await run(store, a, '--cache-max-mb', '0.01')).invokes, 2, "A's results were evicted");
    assert.equal((await run(store, a, '--cache-max-mb', 'lots')).status, 2);
  });
});

describe('acmp-dag cache and plan', () => {
  test('stats, clear --capability, plan at 0 for what is stored, prune, clear', () => {
    const store = newStore();
    const cache = (...args: string[]) =>
      spawnSync(process.execPath, [CLI, 'cache', ...args, '--cache-dir', store], { cwd: ROOT, encoding: 'utf8' });
    const plan = (...args: string[]) =>
      spawnSync(process.execPath, [CLI, 'plan', PIPELINE, '--cache-dir', store, ...args], {
        cwd: ROOT,
        encoding: 'utf8',
      });
    const empty = cache('stats');
    assert.equal(empty.status, 0, empty.stderr);
    assert.match(empty.stdout, /^Result store: .*\n {2}empty/);

    // The example pipeline on the built-in provider: a split, two sentiment analyses, an aggregation.
    const ran = spawnSync(process.execPath, [CLI, 'run', PIPELINE, '--cache-dir', store], { cwd: ROOT });
    assert.equal(ran.status, 0);
    const stats = cache('stats');
    assert.equal(stats.status, 0, stats.stderr);
    assert.match(stats.stdout, /results: +4, \d+(\.\d)? (B|KiB) \(\d+(\.\d)? (B|KiB) on disk\)/);
    assert.match(stats.stdout, /oldest made: +\d{4}-\d\d-\d\d \d\d:\d\d\n {2}last used: +\d{4}-/);
    assert.match(stats.stdout, /by capability:\n {4}sentiment-analysis +2 +\d/);
    const json = JSON.parse(cache('stats', '--json').stdout) as { stats: StoreStats };
    assert.equal(json.stats.results, 4);
    assert.deepEqual(
      json.stats.byCapability.map((row) => [row.capability, row.results]),
      [
        ['sentiment-analysis', 2],
        ['result-aggregation', 1],
        ['text-split', 1],
      ],
    );

    const allCached = plan();
    assert.equal(allCached.status, 0, allCached.stderr);
    assert.equal(allCached.stdout.split('\n')[1], '0 CU: all 4 tasks are cached · 0 ms critical path');
    assert.match(
      allCached.stdout,
      /task_split_01 +text-split +builtin +0 CU \(cached\) +0 ms \(cached\) +its result is in the result store/,
    );
    assert.match(plan('--no-cache').stdout.split('\n')[1]!, /^≈ 0\.006 CU/);

    const cleared = cache('clear', '--capability', 'sentiment-analysis');
    assert.equal(cleared.status, 0, cleared.stderr);
    assert.match(cleared.stdout, /^Removed 2 results of sentiment-analysis from /);
    // The split is still stored; the aggregation's input is not known without the sentiment outputs.
    const partly = JSON.parse(plan('--json').stdout) as DagPlan;
    assert.deepEqual(partly.total, { known_cu: 0.005, unpriced: 0, cached: 1 });
    assert.deepEqual(
      partly.tasks.map((task) => [task.task_id, task.price.basis]),
      [
        ['task_split_01', 'cached'],
        ['task_sent_02a', 'advertised'],
        ['task_sent_02b', 'advertised'],
        ['task_agg_03', 'advertised'],
      ],
    );
    assert.equal(partly.tasks[0]!.cached!.task_id, 'task_split_01');
    assert.match(plan().stdout.split('\n')[1]!, /^≈ 0\.005 CU for 3 tasks \(1 cached\)/);

    const kept = cache('prune');
    assert.equal(kept.status, 0, kept.stderr);
    assert.match(kept.stdout, /^Pruned .* to 512 MiB: evicted 0 results, kept 2 /);
    const pruned = cache('prune', '--cache-max-mb', '0.0001');
    assert.match(pruned.stdout, /evicted 2 results, kept 0 /);
    assert.equal((JSON.parse(cache('stats', '--json').stdout) as { stats: StoreStats }).stats.results, 0);

    assert.equal(spawnSync(process.execPath, [CLI, 'run', PIPELINE, '--cache-dir', store]).status, 0);
    assert.match(cache('clear').stdout, /^Removed 4 results from /);
    assert.equal((JSON.parse(cache('stats', '--json').stdout) as { stats: StoreStats }).stats.results, 0);

    assert.equal(cache('tidy').status, 2);
    assert.equal(cache('stats', '--capability', 'echo').status, 2);
  });
});
