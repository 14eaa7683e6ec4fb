// `acmp-dag run` as a user runs it: the built CLI as a process, on the built-in provider and against `acmp-dag serve`
// started as separate processes (MCP over stdio and Streamable HTTP): progress, the run report, exit codes.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import type { RunReport } from '../../server/src/protocol/report';
import { nestedOutputsDag } from '../support/nestedDag';
import { freePort } from '../support/system';

const CLI = process.env.ACMP_CLI_BUNDLE ?? resolve(__dirname, '../../dist/cli.js');
const ROOT = resolve(__dirname, '../..');
const PIPELINE = 'examples/text-pipeline.acmp-dag.json';

const scratch = mkdtempSync(join(tmpdir(), 'acmp-run-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The environment of a run that starts from an empty cache folder: no result of another run serves it. */
const freshCache = (): NodeJS.ProcessEnv => ({
  ...process.env,
  ACMP_DAG_CACHE_DIR: mkdtempSync(join(scratch, 'cache-')),
});

const cli = (...args: string[]) =>
  spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: freshCache() });

function writeJson(name: string, value: unknown): string {
  const file = join(scratch, name);
  writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

function reportOf(stdout: string): RunReport {
  return JSON.parse(stdout) as RunReport;
}

/** The spec's §6.2 pipeline, as the example runs it: every task completed, the aggregation as the DAG's result. */
function assertPipelineCompleted(report: RunReport): void {
  assert.equal(report.status, 'completed');
  assert.equal(report.dag_id, 'dag_f4e2a1');
  assert.deepEqual(
    report.tasks.map((task) => [task.task_id, task.state]),
    [
      ['task_split_01', 'completed'],
      ['task_sent_02a', 'completed'],
      ['task_sent_02b', 'completed'],
      ['task_agg_03', 'completed'],
    ],
  );
  assert.deepEqual(Object.keys(report.result), ['task_agg_03']);
  const aggregate = report.result.task_agg_03!.data as { count: number; label: string; results: unknown[] };
  assert.equal(aggregate.count, 2);
  assert.equal(aggregate.results.length, 2);
  // The first chunk is negative ("declined"), the second positive ("friendly", "fast"): in from_tasks order.
  const [first, second] = aggregate.results as { label: string }[];
  assert.equal(first!.label, 'negative');
  assert.equal(second!.label, 'positive');
  assert.ok(report.totals.cost_cu > 0 && report.totals.tokens_used > 0);
  assert.equal(
    report.totals.cost_cu,
    report.tasks.reduce((sum, task) => sum + (task.cost_cu ?? 0), 0),
  );
}

describe('acmp-dag run', () => {
  test('runs the example pipeline on the built-in provider, printing each state change and a summary', () => {
    const result = cli('run', PIPELINE);
    assert.equal(result.status, 0, result.stderr);
    const lines = result.stdout.split('\n');
    assert.match(lines[0]!, /^Running dag_f4e2a1: 4 task\(s\), policy fail-fast$/);
    for (const id of ['task_split_01', 'task_sent_02a', 'task_sent_02b', 'task_agg_03']) {
      assert.ok(
        lines.some((line) => line.includes(`▶  ${id}`) && line.includes('on builtin')),
        `${id} running`,
      );
      assert.ok(
        lines.some((line) => line.includes(`✓  ${id}`) && / \d+ ms {2}[\d.e-]+ CU/.test(line)),
        `${id} completed with its duration and cost:\n${result.stdout}`,
      );
    }
    // The split finishes before the sentiment tasks start; the aggregation starts after both.
    const index = (text: string) => lines.findIndex((line) => line.includes(text));
    assert.ok(index('✓  task_split_01') < index('▶  task_sent_02a'));
    assert.ok(index('✓  task_sent_02b') < index('▶  task_agg_03'));
    assert.match(result.stdout, /\ncompleted in \d+ ms: 4 completed, 0 failed, 0 cancelled; /);
    assert.match(result.stdout, /result:\n {2}task_agg_03: \{"type":"json","data":/);
  });

  test('--json prints the run report of design.md §7', () => {
    const result = cli('run', PIPELINE, '--json');
    assert.equal(result.status, 0, result.stderr);
    const report = reportOf(result.stdout);
    assertPipelineCompleted(report);
    assert.equal(report.policy, 'fail-fast');
    for (const task of report.tasks) {
      assert.equal(task.provider_id, 'builtin');
      assert.ok(Date.parse(task.started_at!) <= Date.parse(task.finished_at!));
      assert.ok(task.wire_task_id !== undefined && task.wire_task_id !== task.task_id, 'a fresh wire id');
    }
  });

  test('a failing task exits 1; fail-fast cancels the rest, best-effort lets independent branches finish', () => {
    const dag = writeJson('failing.acmp-dag.json', {
      dag_id: 'dag_failing',
      tasks: [
        // The built-in provider offers sentiment-analysis, but cannot read a number (-32602): the task fails when run.
        { task_id: 'task_bad', capability: 'sentiment-analysis', input: { type: 'json', data: 42 } },
        { task_id: 'task_after', capability: 'echo', input: { source: { from_task: 'task_bad' } } },
        { task_id: 'task_alone', capability: 'echo', input: { type: 'text', data: 'y' } },
      ],
      edges: [{ from: 'task_bad', to: 'task_after' }],
    });
    const bestEffort = cli('run', dag, '--json', '--policy', 'best-effort', '--max-concurrency', '1');
    assert.equal(bestEffort.status, 1);
    const report = reportOf(bestEffort.stdout);
    assert.equal(report.status, 'failed');
    const states = Object.fromEntries(report.tasks.map((task) => [task.task_id, task.state]));
    assert.deepEqual(states, { task_bad: 'failed', task_after: 'cancelled', task_alone: 'completed' });
    assert.equal(report.tasks[0]!.error!.code, -32602);

    const text = cli('run', dag);
    assert.equal(text.status, 1);
    assert.match(text.stdout, /✗ {2}task_bad +failed .*-32602/);
  });

  test('a stream_eligible edge streams on the built-in provider, falls back where the output cannot stream, same result', () => {
    const dag = (streaming: boolean) => ({
      dag_id: 'dag_streaming',
      tasks: [
        {
          task_id: 'task_text',
          capability: 'echo',
          input: { type: 'text', data: 'Support was friendly. The refund was a disaster.' },
        },
        { task_id: 'task_score', capability: 'sentiment-analysis', input: { source: { from_task: 'task_text' } } },
        { task_id: 'task_split', capability: 'text-split', input: { type: 'text', data: 'One. Two.' } },
        { task_id: 'task_copy', capability: 'echo', input: { source: { from_task: 'task_split' } } },
      ],
      edges: [
        { from: 'task_text', to: 'task_score', stream_eligible: streaming },
        { from: 'task_split', to: 'task_copy', stream_eligible: streaming },
      ],
    });
    const streamed = cli('run', writeJson('streaming.acmp-dag.json', dag(true)), '--json');
    const plain = cli('run', writeJson('plain.acmp-dag.json', dag(false)), '--json');
    assert.equal(streamed.status, 0, streamed.stderr + streamed.stdout);
    assert.equal(plain.status, 0, plain.stderr);
    const [withStreams, without] = [reportOf(streamed.stdout), reportOf(plain.stdout)];
    // text-split's output is an object, which does not stream: that edge waits for the result instead.
    assert.deepEqual(withStreams.streamed_edges, [{ from: 'task_text', to: 'task_score' }]);
    assert.deepEqual(without.streamed_edges, []);
    assert.deepEqual(withStreams.result, without.result);
    assert.deepEqual(withStreams.result.task_score!.data, without.result.task_score!.data);
  });

  test('a DAG with errors is refused with its errors listed (exit 2); usage errors exit 2', () => {
    const broken = writeJson('broken.acmp-dag.json', {
      dag_id: 'dag_broken',
      tasks: [{ task_id: 'task_a', capability: 'echo', input: { source: { from_task: 'task_nope' } } }],
      edges: [],
    });
    const refused = cli('run', broken);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /error unknown-task/);
    assert.match(refused.stderr, /not running/);
    assert.equal(refused.stdout, '');
    assert.equal(cli('run').status, 2);
    assert.equal(cli('run', PIPELINE, '--policy', 'yolo').status, 2);
    assert.equal(cli('run', PIPELINE, '--max-concurrency', '0').status, 2);
  });

  test('a task no provider offers keeps the run from starting: nothing is paid, the task and the offer are named', () => {
    const pipeline = JSON.parse(readFileSync(resolve(ROOT, PIPELINE), 'utf8')) as {
      tasks: { task_id: string; capability: string }[];
      edges: unknown[];
    };
    pipeline.tasks.push({
      task_id: 'task_translate_04',
      capability: 'translate',
      input: { type: 'text', data: 'hi' },
    } as never);
    const refused = cli('run', writeJson('translate.acmp-dag.json', pipeline), '--json');
    assert.equal(refused.status, 2);
    assert.equal(refused.stdout, '', 'no report: no task ran');
    assert.match(
      refused.stderr,
      /not running: no provider offers the capability of 1 task\(s\): task_translate_04 \(translate\)/,
    );
    assert.match(refused.stderr, /the providers offer text-split, sentiment-analysis, result-aggregation, echo/);
  });
  test('--json streams a report whose outputs went to disk: the same report, and the run leaves no files', () => {
    const file = join(scratch, 'nested.acmp-dag.json');
    writeFileSync(file, nestedOutputsDag(8, 2, 'some text'));
    const temporary = mkdtempSync(join(scratch, 'tmp-'));
    const run = (budget?: string) =>
      spawnSync(process.execPath, [CLI, 'run', '--json', file], {
        encoding: 'utf8',
        timeout: 60_000,
        env: {
          ...freshCache(),
          TMPDIR: temporary,
          ...(budget === undefined ? {} : { ACMP_RUN_MEMORY_BUDGET_BYTES: budget }),
        },
      });
    const inMemory = run();
    const onDisk = run('1000');
    assert.equal(onDisk.status, 0, onDisk.stderr);
    const comparable = (stdout: string) => stdout.replace(/"(run_id|wire_task_id|\w+_at)": "[^"]*"/g, '"$1": ""');
    assert.equal(comparable(onDisk.stdout), comparable(inMemory.stdout));
    const report = reportOf(onDisk.stdout);
    assert.equal(report.status, 'completed');
    assert.equal(JSON.stringify(report.result).split('some text').length - 1, 2 * 2 ** 7);
    assert.deepEqual(readdirSync(temporary), []);
    assert.equal(run('lots').status, 2);
  });
});

/** The pids of processes whose command line names `text` (to find providers a run left behind). */
function processesNaming(text: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

describe('acmp-dag run with a faulty provider process', () => {
  // Each: the task's clear error, its downstream cancelled, a report, exit 1, and no provider process left.
  const cases = [
    // Three attempts, each a fresh process, within a generous deadline.
    {
      fixture: 'crash-mid-task',
      timeout: 30_000,
      code: -33099,
      message: /unreachable after 3 attempt\(s\).*out of memory/,
    },
    { fixture: 'garbage', timeout: 30_000, code: -33099, message: /unreachable after 3 attempt\(s\)/ },
    { fixture: 'unknown-id', timeout: 30_000, code: -33099, message: /unreachable after 3 attempt\(s\)/ },
    { fixture: 'never-answers', timeout: 1_500, code: -33003, message: /timeout|deadline|within/i },
  ];
  for (const { fixture, timeout, code, message } of cases) {
    test(fixture, () => {
      const script = join(ROOT, 'test', 'fixtures', 'providers', `${fixture}.ts`);
      const providers = writeJson(`${fixture}.providers.json`, {
        providers: [{ id: fixture, transport: 'stdio', command: process.execPath, args: ['--import', 'tsx', script] }],
      });
      const dag = writeJson(`${fixture}.acmp-dag.json`, {
        dag_id: 'dag_faulty',
        tasks: [
          { task_id: 'task_first', capability: 'echo', input: { type: 'text', data: 'x' }, timeout_ms: timeout },
          { task_id: 'task_then', capability: 'echo', input: { source: { from_task: 'task_first' } } },
        ],
        edges: [{ from: 'task_first', to: 'task_then' }],
      });
      const result = cli('run', dag, '--json', '--providers', providers);
      assert.equal(result.status, 1, result.stderr);
      const report = reportOf(result.stdout);
      assert.equal(report.status, 'failed');
      const [first, then] = report.tasks;
      assert.equal(first!.state, 'failed');
      assert.equal(first!.error!.code, code);
      assert.match(first!.error!.message, message);
      assert.equal(then!.state, 'cancelled');
      assert.deepEqual(processesNaming(script), [], 'no provider process outlives the run');
    });
  }
});

/** Resolves once `child` has printed `pattern` on stderr or stdout. */
function printed(child: ChildProcess, pattern: RegExp): Promise<void> {
  return new Promise((resolveSeen, reject) => {
    let seen = '';
    const check = (data: Buffer): void => {
      seen += data.toString();
      if (pattern.test(seen)) resolveSeen();
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.once('exit', (code) => reject(new Error(`exited ${String(code)} before printing ${pattern}: ${seen}`)));
  });
}

describe('acmp-dag run against acmp-dag serve in another process', () => {
  test('over MCP stdio: the providers file names the serve command', () => {
    const providers = writeJson('stdio.providers.json', {
      providers: [{ id: 'served', transport: 'stdio', command: process.execPath, args: [CLI, 'serve', '--stdio'] }],
    });
    const result = cli('run', PIPELINE, '--json', '--providers', providers);
    assert.equal(result.status, 0, result.stderr);
    const report = reportOf(result.stdout);
    assertPipelineCompleted(report);
    assert.ok(report.tasks.every((task) => task.provider_id === 'served'));
  });

  test('over Streamable HTTP on 127.0.0.1', async () => {
    const port = await freePort();
    const server = spawn(process.execPath, [CLI, 'serve', '--http', String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      await printed(server, new RegExp(`127\\.0\\.0\\.1:${port}`));
      const providers = writeJson('http.providers.json', {
        providers: [{ id: 'remote', transport: 'http', url: `http://127.0.0.1:${port}/mcp` }],
      });
      const result = spawnSync(process.execPath, [CLI, 'run', PIPELINE, '--json', '--providers', providers], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
        env: freshCache(),
      });
      assert.equal(result.status, 0, result.stderr);
      const report = reportOf(result.stdout);
      assertPipelineCompleted(report);
      assert.ok(report.tasks.every((task) => task.provider_id === 'remote'));
    } finally {
      const exited = new Promise((done) => server.once('exit', done));
      server.kill();
      await exited;
    }
  });
});
