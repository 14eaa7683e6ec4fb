// The result store through LSP: the built server over stdio runs DAGs on a provider process that counts its invokes,
// reuses what earlier runs made (after an edit, only what changed is sent), runs one task or from a task with its
// upstream from the store (or says which upstream outputs are missing), answers acmp.resultStore, and shows a task's
// cached result on hover.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Hover } from 'vscode-languageserver-types';
import {
  type NeedsUpstreamData,
  PLAN_REQUEST,
  type PlanResult,
  RUN_COMMANDS,
  RUN_EVENT_NOTIFICATION,
  RUN_NEEDS_UPSTREAM,
  type ResultStoreAnswer,
  type ResultStoreArguments,
  type RunDagArguments,
  type RunEventParams,
} from '../../server/src/protocol/runMessages';
import type { RunReport } from '../../server/src/protocol/report';
import { atCursor } from '../support/cursor';
import { CountingProvider, byTask } from '../support/durable';
import { type LspSession, startLspSession } from '../support/lspHarness';

/**
 * Four echo tasks: task_root → task_mid → task_leaf_a (each reading the one before), and task_leaf_b after task_mid
 * by an edge alone, with a literal input of its own. `tag` makes each test's results its own.
 */
function dagText(tag: string, leafB = 'leaf b'): string {
  // Each its own metadata: two echoes of the same input are the same work, and would share one stored result.
  const echo = (id: string, input: unknown) => ({ task_id: id, capability: 'echo', input, metadata: { step: id } });
  return JSON.stringify(
    {
      dag_id: `dag_${tag}`,
      tasks: [
        echo('task_root', { type: 'text', data: `root of ${tag}` }),
        echo('task_mid', { source: { from_task: 'task_root' } }),
        echo('task_leaf_a', { source: { from_task: 'task_mid' } }),
        echo('task_leaf_b', { type: 'text', data: `${leafB} of ${tag}` }),
      ],
      edges: [
        { from: 'task_root', to: 'task_mid' },
        { from: 'task_mid', to: 'task_leaf_a' },
        { from: 'task_mid', to: 'task_leaf_b' },
      ],
    },
    null,
    2,
  );
}

const EVERY_TASK = ['task_leaf_a', 'task_leaf_b', 'task_mid', 'task_root'];

describe('the result store over LSP', () => {
  let provider: CountingProvider;
  let session: LspSession;
  const folders: string[] = [];
  const events: RunEventParams[] = [];
  const logged: { type: number; message: string }[] = [];
  let documents = 0;

  /** The session's settings from now on: the counting provider for echo, and a store of its own in a new folder. */
  async function freshStore(cache: Record<string, unknown> = {}): Promise<string> {
    const folder = mkdtempSync(join(tmpdir(), 'acmp-lsp-store-'));
    folders.push(folder);
    await session.configure({
      providers: [{ id: 'counting', transport: 'http', url: provider.mcpUrl, capabilities: ['echo'] }],
      cache: { folder, ...cache },
    });
    return folder;
  }

  before(async () => {
    provider = await CountingProvider.start();
    session = await startLspSession();
    session.connection.onNotification(RUN_EVENT_NOTIFICATION, (params: RunEventParams) => events.push(params));
    session.connection.onNotification('window/logMessage', (params: { type: number; message: string }) =>
      logged.push(params),
    );
  });
  after(async () => {
    await session.stop();
    await provider.stop();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });

  async function open(text: string): Promise<string> {
    const uri = `file:///store-${++documents}.acmp-dag.json`;
    await session.open(uri, text);
    return uri;
  }

  const execute = <T>(command: string, argument: unknown) =>
    session.connection.sendRequest<T>('workspace/executeCommand', { command, arguments: [argument] });

  /** Runs the DAG; with the task ids the provider received an invoke for meanwhile, sorted. */
  async function run(argument: RunDagArguments): Promise<{ report: RunReport; invoked: string[] }> {
    const before = (await provider.counts()).invokes;
    const report = await execute<RunReport>(RUN_COMMANDS.runDag, argument);
    const after = (await provider.counts()).invokes;
    const fresh = Object.fromEntries(Object.entries(after).filter(([wireId]) => before[wireId] === undefined));
    return { report, invoked: Object.keys(byTask(fresh)).sort() };
  }

  const cachedTasks = (report: RunReport): string[] =>
    report.tasks.flatMap((task) => (task.cached === undefined ? [] : [task.task_id])).sort();

  test('after an edit of one leaf, a run sends that leaf alone: the others complete from the store, marked cached', async () => {
    await freshStore();
    const uri = await open(dagText('leaf-edit'));
    const first = await run({ uri, runId: 'run-leaf-edit-1' });
    assert.equal(first.report.status, 'completed');
    assert.deepEqual(first.invoked, EVERY_TASK);
    assert.deepEqual(cachedTasks(first.report), []);

    await session.change(uri, 2, dagText('leaf-edit', 'leaf b, edited'));
    const second = await run({ uri, runId: 'run-leaf-edit-2' });
    assert.equal(second.report.status, 'completed');
    assert.deepEqual(second.invoked, ['task_leaf_b']);
    assert.deepEqual(cachedTasks(second.report), ['task_leaf_a', 'task_mid', 'task_root']);
    for (const task of second.report.tasks.filter((each) => each.cached !== undefined)) {
      assert.equal(task.cached!.run_id, 'run-leaf-edit-1', task.task_id);
      assert.equal(task.cost_cu ?? 0, 0, task.task_id);
      assert.equal(task.provider_id, 'counting', 'the provider that made it');
    }
    assert.deepEqual(second.report.totals.cached, { tasks: 3, saved_cu: 0.003 });
    const leaf = second.report.tasks.find((task) => task.task_id === 'task_leaf_b')!;
    assert.deepEqual(leaf.output, { type: 'text', data: 'leaf b, edited of leaf-edit' });
    const markedInEvents = events.flatMap(({ event }) =>
      event.run_id === 'run-leaf-edit-2' && event.type === 'task-state' && event.cached !== undefined
        ? [event.task_id]
        : [],
    );
    assert.deepEqual(markedInEvents.sort(), ['task_leaf_a', 'task_mid', 'task_root']);
  });

  test('noCache sends every task; refresh sends the tasks it names, and what reads them only where their output changed', async () => {
    await freshStore();
    const uri = await open(dagText('no-cache'));
    await run({ uri });
    assert.deepEqual((await run({ uri, noCache: true })).invoked, EVERY_TASK);
    const refreshed = await run({ uri, refresh: ['task_root'] });
    assert.deepEqual(refreshed.invoked, ['task_root'], 'the same output: what reads it comes from the store');
    assert.deepEqual(cachedTasks(refreshed.report), ['task_leaf_a', 'task_leaf_b', 'task_mid']);
  });

  test('with acmp.cache.enabled false nothing is reused nor kept', async () => {
    const folder = await freshStore({ enabled: false });
    const uri = await open(dagText('disabled'));
    await run({ uri });
    assert.deepEqual((await run({ uri })).invoked, EVERY_TASK);
    const { stats } = await execute<ResultStoreAnswer>(RUN_COMMANDS.resultStore, { action: 'stats' });
    assert.equal(stats.folder, folder);
    assert.equal(stats.results, 0);
  });

  test('tasks: runs the task named alone, its upstream from the store; the events and the report list that part', async () => {
    await freshStore();
    const uri = await open(dagText('one-task'));
    await run({ uri });
    const { report, invoked } = await run({ uri, runId: 'run-one-task', tasks: ['task_leaf_a'] });
    assert.equal(report.status, 'completed');
    assert.deepEqual(invoked, ['task_leaf_a']);
    assert.deepEqual(
      report.tasks.map((task) => task.task_id),
      ['task_root', 'task_mid', 'task_leaf_a'],
    );
    assert.deepEqual(cachedTasks(report), ['task_mid', 'task_root']);
    assert.deepEqual(Object.keys(report.result), ['task_leaf_a']);
    await assert.rejects(
      execute(RUN_COMMANDS.runDag, { uri, tasks: ['task_leaf_a'], noCache: true }),
      (error: { code: number; data: NeedsUpstreamData }) =>
        error.code === RUN_NEEDS_UPSTREAM && error.data.missing.join() === 'task_root,task_mid',
      'without the store no upstream output is known',
    );
    const started = events.find(({ event }) => event.run_id === 'run-one-task' && event.type === 'run-started');
    assert.deepEqual(started?.event.type === 'run-started' && started.event.tasks, [
      'task_root',
      'task_mid',
      'task_leaf_a',
    ]);
  });

  test('from: runs the task named and its downstream, which use the store where its output did not change', async () => {
    await freshStore();
    const uri = await open(dagText('from-task'));
    await run({ uri });
    const { report, invoked } = await run({ uri, from: ['task_mid'] });
    assert.equal(report.status, 'completed');
    assert.deepEqual(invoked, ['task_mid']);
    assert.deepEqual(report.tasks.map((task) => task.task_id).sort(), EVERY_TASK);
    assert.deepEqual(cachedTasks(report), ['task_leaf_a', 'task_leaf_b', 'task_root']);
  });

  test('an upstream output the store lacks: RUN_NEEDS_UPSTREAM names it, nothing is sent; withUpstream runs it too', async () => {
    await freshStore();
    const uri = await open(dagText('needs-upstream'));
    const before = (await provider.counts()).invokes;
    await assert.rejects(
      execute(RUN_COMMANDS.runDag, { uri, tasks: ['task_leaf_a'] }),
      (error: { code: number; message: string; data: NeedsUpstreamData }) => {
        assert.equal(error.code, RUN_NEEDS_UPSTREAM);
        assert.deepEqual(error.data.missing, ['task_root', 'task_mid']);
        assert.match(error.message, /task_root, task_mid/);
        return true;
      },
    );
    assert.deepEqual((await provider.counts()).invokes, before, 'nothing was sent');
    const { report, invoked } = await run({ uri, tasks: ['task_leaf_a'], withUpstream: true });
    assert.equal(report.status, 'completed');
    assert.deepEqual(invoked, ['task_leaf_a', 'task_mid', 'task_root']);
    assert.deepEqual(
      report.tasks.map((task) => task.task_id),
      ['task_root', 'task_mid', 'task_leaf_a'],
    );
  });

  test('task ids that name no task are invalid params; a durable run refuses a part of the DAG', async () => {
    await freshStore();
    const uri = await open(dagText('unknown-ids'));
    for (const argument of [
      { uri, tasks: ['task_nowhere'] },
      { uri, from: ['task_mid', 'task_gone'] },
      { uri, refresh: ['task_nowhere'] },
      { uri, tasks: 'task_mid' },
    ]) {
      await assert.rejects(execute(RUN_COMMANDS.runDag, argument), (error: { code: number; message: string }) => {
        assert.equal(error.code, -32602, JSON.stringify(argument));
        return true;
      });
    }
    await session.configure({ engine: { url: 'http://127.0.0.1:9' } });
    await assert.rejects(
      execute(RUN_COMMANDS.runDag, { uri, tasks: ['task_mid'] }),
      (error: { code: number; message: string }) => {
        assert.equal(error.code, -32803);
        assert.match(error.message, /not available for durable runs/);
        return true;
      },
    );
  });

  test('acmp.resultStore: stats of what the runs kept, clear of one capability or all, prune within the bound', async () => {
    const folder = await freshStore();
    const uri = await open(dagText('store-command'));
    await run({ uri });
    const store = (argument: ResultStoreArguments) => execute<ResultStoreAnswer>(RUN_COMMANDS.resultStore, argument);
    const { stats } = await store({ action: 'stats' });
    assert.equal(stats.folder, folder);
    assert.equal(stats.results, 4);
    assert.deepEqual(
      stats.byCapability.map((row) => [row.capability, row.results]),
      [['echo', 4]],
    );
    assert.ok(stats.bytes > 0 && stats.diskBytes >= stats.bytes, JSON.stringify(stats));
    assert.equal((await store({ action: 'prune' })).removed, 0, 'within the bound');
    assert.equal((await store({ action: 'clear', capability: 'uppercase' })).removed, 0);
    const cleared = await store({ action: 'clear' });
    assert.equal(cleared.removed, 4);
    assert.equal(cleared.stats.results, 0);
    assert.deepEqual((await run({ uri })).invoked, EVERY_TASK, 'nothing left to reuse');
    for (const argument of [{ action: 'drop' }, { action: 'stats', capability: 'echo' }, {}]) {
      await assert.rejects(execute(RUN_COMMANDS.resultStore, argument), (error: { code: number }) => {
        assert.equal(error.code, -32602, JSON.stringify(argument));
        return true;
      });
    }
  });

  test('hover on a task says when, by which provider and in which run its cached result was made, once there is one', async () => {
    await freshStore();
    const cursor = atCursor(dagText('hover').replace('"task_leaf_a",', '"task_le‸af_a",'));
    const uri = await open(cursor.text);
    const hover = async () => {
      const answer = await session.connection.sendRequest<Hover | null>('textDocument/hover', {
        textDocument: { uri },
        position: cursor.position,
      });
      return (answer?.contents as { value: string } | undefined)?.value ?? '';
    };
    assert.match(await hover(), /task_leaf_a/);
    assert.doesNotMatch(await hover(), /Cached result/);
    await run({ uri, runId: 'run-of-the-hover-test' });
    const shown = await hover();
    assert.match(shown, /Cached result:\*\* made by provider `counting` in run run-of-t…, \d{4}-\d\d-\d\d \d\d:\d\d /);
    assert.match(shown, /cost 0\.001 CU then; a run reuses it at no cost/);
    await freshStore({ enabled: false, folder: folders.at(-1) });
    assert.doesNotMatch(await hover(), /Cached result/, 'the cache is off');
  });

  test('the plan counts the tasks the store holds at 0 CU, and what an edit leaves to buy', async () => {
    await freshStore();
    const uri = await open(dagText('plan'));
    const plan = () => session.connection.sendRequest<PlanResult>(PLAN_REQUEST, { uri });
    assert.equal((await plan()).plan.total.cached, undefined);
    await run({ uri, runId: 'run-of-the-plan-test' });
    const cached = await plan();
    assert.equal(cached.plan.total.cached, 4);
    assert.equal(cached.plan.total.known_cu, 0);
    assert.match(cached.summary, /all 4 tasks are cached/);
    await session.change(uri, 2, dagText('plan', 'leaf b, edited'));
    const edited = await plan();
    assert.equal(edited.plan.total.cached, 3);
    assert.deepEqual(
      edited.plan.tasks.flatMap((task) => (task.cached === undefined ? [task.task_id] : [])),
      ['task_leaf_b'],
    );
  });

  test('a store that cannot be written fails no run: the runs complete, and the log warns once', async () => {
    const folder = await freshStore();
    const notAFolder = join(folder, 'a-file');
    writeFileSync(notAFolder, 'not a folder');
    await freshStore({ folder: notAFolder });
    const uri = await open(dagText('unwritable'));
    for (const runId of ['run-unwritable-1', 'run-unwritable-2']) {
      const { report, invoked } = await run({ uri, runId });
      assert.equal(report.status, 'completed', runId);
      assert.deepEqual(invoked, EVERY_TASK, `${runId}: nothing could be kept, nothing reused`);
    }
    const warnings = logged.filter((entry) => entry.message.startsWith('Result store:'));
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.equal(warnings[0]!.type, 2, 'a warning');
    assert.match(warnings[0]!.message, /a-file/);
  });
});
