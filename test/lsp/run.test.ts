// Running DAGs through LSP, without VS Code: the built server over stdio executes acmp.runDag, streams acmp/runEvent
// notifications (or acmp/runEvents batches, when asked), answers with the run report, cancels runs and tasks,
// refuses DAGs with errors.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { CompletionList } from 'vscode-languageserver-types';
import {
  RUN_COMMANDS,
  RUN_EVENTS_NOTIFICATION,
  RUN_EVENT_NOTIFICATION,
  type RunDagArguments,
  type RunEventParams,
  type RunEventsParams,
  type RunRefusedData,
} from '../../server/src/protocol/runMessages';
import type { RunEvent, RunReport, TaskState } from '../../server/src/protocol/report';
import { coalescedBatch } from '../../server/src/features/runDag';
import { atCursor } from '../support/cursor';
import { type LspSession, startLspSession } from '../support/lspHarness';

const ROOT = resolve(__dirname, '../..');
const PIPELINE = readFileSync(join(ROOT, 'examples/text-pipeline.acmp-dag.json'), 'utf8');
const NEVER_ANSWERS = join(ROOT, 'test/fixtures/providers/never-answers.ts');

/** Two tasks on the built-in provider around one on a provider that never answers. */
const SLOW_DAG = JSON.stringify({
  dag_id: 'dag_slow',
  tasks: [
    { task_id: 'task_first', capability: 'echo', input: { type: 'text', data: 'x' } },
    { task_id: 'task_slow', capability: 'slow-thing', input: { source: { from_task: 'task_first' } } },
    { task_id: 'task_after', capability: 'echo', input: { source: { from_task: 'task_slow' } } },
  ],
  edges: [
    { from: 'task_first', to: 'task_slow' },
    { from: 'task_slow', to: 'task_after' },
  ],
});

/** The built-in provider, and one that never answers for SLOW_DAG's slow-thing; a result store of these tests alone. */
const SLOW_PROVIDERS = {
  cache: { folder: mkdtempSync(join(tmpdir(), 'acmp-run-lsp-store-')) },
  providers: [
    { id: 'local', transport: 'builtin' },
    {
      id: 'stuck',
      transport: 'stdio',
      command: process.execPath,
      args: ['--import', 'tsx', NEVER_ANSWERS],
      capabilities: ['slow-thing'],
    },
  ],
};

after(() => rmSync(SLOW_PROVIDERS.cache.folder, { recursive: true, force: true }));

describe('running DAGs over LSP', () => {
  let session: LspSession;
  const events: RunEventParams[] = [];
  const waiters: { accept: (event: RunEvent) => boolean; resolve: () => void }[] = [];
  let counter = 0;

  before(async () => {
    session = await startLspSession(SLOW_PROVIDERS);
    session.connection.onNotification(RUN_EVENTS_NOTIFICATION, (params: RunEventsParams) => batches.push(params));
    session.connection.onNotification(RUN_EVENT_NOTIFICATION, (params: RunEventParams) => {
      events.push(params);
      for (const waiter of [...waiters]) {
        if (waiter.accept(params.event)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    });
  });
  after(() => session.stop());
  const batches: RunEventsParams[] = [];

  const eventSeen = (accept: (event: RunEvent) => boolean): Promise<void> =>
    new Promise((resolveSeen) => waiters.push({ accept, resolve: resolveSeen }));

  async function open(text: string): Promise<string> {
    const uri = `file:///run-${++counter}.acmp-dag.json`;
    await session.open(uri, text);
    return uri;
  }

  /** Starts SLOW_DAG as `runId`; resolves once task_slow is running, with the run's answer to come. */
  async function slowRunStarted(runId: string): Promise<{ done: Promise<RunReport> }> {
    const uri = await open(SLOW_DAG);
    const slowRunning = eventSeen(
      (event) =>
        event.run_id === runId &&
        event.type === 'task-state' &&
        event.task_id === 'task_slow' &&
        event.state === 'running',
    );
    const done = runDag({ uri, runId });
    await slowRunning;
    return { done };
  }

  const runDag = (argument: RunDagArguments) =>
    session.connection.sendRequest<RunReport>('workspace/executeCommand', {
      command: RUN_COMMANDS.runDag,
      arguments: [argument],
    });

  test('the server announces its commands', async () => {
    const other = await startLspSession();
    try {
      // The harness does not keep the initialize answer: ask a fresh server for it.
      const answer = await other.connection.sendRequest<{
        capabilities: { executeCommandProvider: { commands: string[] } };
      }>('initialize', { processId: null, rootUri: null, capabilities: {} });
      assert.deepEqual(answer.capabilities.executeCommandProvider.commands.sort(), Object.values(RUN_COMMANDS).sort());
    } finally {
      await other.stop();
    }
  });

  test('acmp.runDag runs the pipeline, streams its events in order and answers with the report', async () => {
    const uri = await open(PIPELINE);
    const runId = 'run-pipeline-1';
    const report = await runDag({ uri, runId });
    assert.equal(report.status, 'completed');
    assert.equal(report.run_id, runId);
    assert.deepEqual(Object.keys(report.result), ['task_agg_03']);
    const mine = events.filter((params) => params.uri === uri).map((params) => params.event);
    assert.equal(mine[0]!.type, 'run-started');
    assert.equal(mine.at(-1)!.type, 'run-finished');
    assert.ok(mine.every((event) => event.run_id === runId && !Number.isNaN(Date.parse(event.at))));
    const states = (taskId: string) =>
      mine.flatMap((event) => (event.type === 'task-state' && event.task_id === taskId ? [event.state] : []));
    for (const task of report.tasks) assert.deepEqual(states(task.task_id), ['running', 'completed'], task.task_id);
    assert.equal(mine.filter((event) => event.type === 'cost').length, 4);
  });

  test("eventBatches: the events in order in acmp/runEvents batches, a task's start folded into its end, the report only in the answer", async () => {
    const uri = await open(PIPELINE);
    const runId = 'run-batched-1';
    // Every task invoked, not completed from the store at once: the batches show each task's start and end.
    const report = await runDag({ uri, runId, eventBatches: true, noCache: true });
    assert.equal(report.status, 'completed');
    assert.ok(!events.some((params) => params.event.run_id === runId), 'no single acmp/runEvent');
    const mine = batches.filter((params) => params.uri === uri);
    const batched = mine.flatMap((params) => params.events);
    assert.ok(mine.length < batched.length, `${batched.length} events came in ${mine.length} notifications`);
    assert.equal(batched[0]!.type, 'run-started');
    assert.ok(!batched.some((event) => event.type === 'run-finished'), 'the report comes once, in the answer');
    for (const task of report.tasks) {
      const inBatch = (params: RunEventsParams) =>
        params.events.filter((event) => event.type === 'task-state' && event.task_id === task.task_id);
      const sent = mine.map(inBatch).filter((found) => found.length > 0);
      // Each batch has the task's end, or its start and nothing after it: a running followed by the end is left out.
      for (const found of sent) assert.equal(found.length, 1, JSON.stringify(found));
      const states = sent.flat() as Extract<RunEvent, { type: 'task-state' }>[];
      assert.equal(states.at(-1)!.state, 'completed');
      const started = states.length === 2 ? states[0]!.at : states[0]!.started_at;
      assert.equal(started, task.started_at, `${task.task_id}: when it started, as the events say`);
    }
  });

  test('coalescedBatch leaves out only a running its end follows, and keeps when the first attempt started', () => {
    const at = (n: number) => `2026-01-01T00:00:0${n}.000Z`;
    const state = (taskId: string, state: TaskState, n: number, provider?: string): RunEvent => ({
      type: 'task-state',
      run_id: 'r',
      task_id: taskId,
      state,
      at: at(n),
      ...(provider !== undefined && { provider_id: provider }),
    });
    const cost: RunEvent = {
      type: 'cost',
      run_id: 'r',
      task_id: 'a',
      cost_cu: 1,
      tokens_used: 1,
      violation: false,
      at: at(3),
    };
    const batch = [
      state('a', 'running', 1, 'local'),
      state('b', 'running', 1),
      state('a', 'running', 2, 'slow'),
      cost,
      state('a', 'completed', 4, 'slow'),
      state('c', 'failed', 5),
    ];
    assert.deepEqual(coalescedBatch(batch), [
      state('b', 'running', 1),
      cost,
      { ...state('a', 'completed', 4, 'slow'), started_at: at(1) },
      state('c', 'failed', 5),
    ]);
  });

  test('after a run, field-path completion offers the paths of the real outputs', async () => {
    const uri = await open(PIPELINE);
    await runDag({ uri });
    const marked = PIPELINE.replace('"field": "data.chunks[0]"', '"field": "data.‸"');
    const cursor = atCursor(marked, uri);
    await session.change(uri, 2, cursor.text);
    const list = await session.connection.sendRequest<CompletionList>('textDocument/completion', {
      textDocument: { uri },
      position: cursor.position,
    });
    const chunks = list.items.find((item) => item.label === 'data.chunks[1]');
    assert.ok(chunks, list.items.map((item) => item.label).join());
    assert.match((chunks.documentation as { value: string }).value, /the last run's output of `task_split_01`/);
    assert.match((chunks.documentation as { value: string }).value, /Support was friendly/);
  });

  test('acmp.cancelTask cancels the task and its downstream; the completed upstream stays completed', async () => {
    const runId = 'run-slow-1';
    const { done } = await slowRunStarted(runId);
    const answer = await session.connection.sendRequest('workspace/executeCommand', {
      command: RUN_COMMANDS.cancelTask,
      arguments: [{ runId, taskId: 'task_slow' }],
    });
    assert.deepEqual(answer, { cancelled: true });
    const report = await done;
    assert.equal(report.status, 'cancelled');
    assert.deepEqual(
      report.tasks.map((task) => [task.task_id, task.state]),
      [
        ['task_first', 'completed'],
        ['task_slow', 'cancelled'],
        ['task_after', 'cancelled'],
      ],
    );
  });

  test('acmp.cancelRun cancels the whole run', async () => {
    const runId = 'run-slow-2';
    const { done } = await slowRunStarted(runId);
    await session.connection.sendRequest('workspace/executeCommand', {
      command: RUN_COMMANDS.cancelRun,
      arguments: [{ runId }],
    });
    const report = await done;
    assert.equal(report.status, 'cancelled');
    assert.deepEqual(
      report.tasks.map((task) => task.state),
      ['completed', 'cancelled', 'cancelled'],
    );
  });

  test('a DAG with errors is refused: RequestFailed with every error listed', async () => {
    const uri = await open(PIPELINE.replace('{ "from": "task_split_01", "to": "task_sent_02a" },', ''));
    await assert.rejects(runDag({ uri }), (error: { code: number; message: string; data: RunRefusedData }) => {
      assert.equal(error.code, -32803);
      assert.match(error.message, /The DAG has 1 error\(s\)/);
      assert.deepEqual(
        error.data.errors.map((e) => [e.code, e.line]),
        [['missing-edge', 16]],
      );
      return true;
    });
  });

  test('reuse: tasks with outputs from an earlier run complete at once and are not invoked', async () => {
    const uri = await open(PIPELINE);
    const first = await runDag({ uri });
    const split = first.tasks.find((task) => task.task_id === 'task_split_01')!;
    const report = await runDag({ uri, reuse: { task_split_01: split.output! } });
    assert.equal(report.status, 'completed');
    const reused = report.tasks.find((task) => task.task_id === 'task_split_01')!;
    assert.deepEqual(reused.output, split.output);
    assert.equal(reused.cost_cu ?? 0, 0);
    assert.deepEqual(report.result, first.result);
  });

  test('a DAG file that is not open runs from disk', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'acmp-run-lsp-'));
    try {
      const file = join(folder, 'disk.acmp-dag.json');
      writeFileSync(file, PIPELINE);
      const report = await runDag({ uri: pathToFileURL(file).href });
      assert.equal(report.status, 'completed');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  test('unknown commands and malformed arguments are invalid params', async () => {
    for (const [command, args] of [
      ['acmp.nothing', [{}]],
      [RUN_COMMANDS.runDag, []],
      [RUN_COMMANDS.cancelTask, [{ runId: 'x' }]],
    ] as const) {
      await assert.rejects(
        session.connection.sendRequest('workspace/executeCommand', { command, arguments: args }),
        (error: { code: number }) => error.code === -32602,
      );
    }
  });
});

describe('a language server stopped by a signal', () => {
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
    test(`${signal} in a run: the run's outputs on disk are removed as the server ends`, async () => {
      const temporary = mkdtempSync(join(tmpdir(), 'acmp-lsp-signal-'));
      try {
        // No memory for outputs: task_first's goes to a folder under TMPDIR at once.
        const session = await startLspSession(SLOW_PROVIDERS, {
          env: { TMPDIR: temporary, ACMP_RUN_MEMORY_BUDGET_BYTES: '0' },
        });
        const slowRunning = new Promise<void>((seen) =>
          session.connection.onNotification(RUN_EVENT_NOTIFICATION, ({ event }: RunEventParams) => {
            if (event.type === 'task-state' && event.task_id === 'task_slow' && event.state === 'running') seen();
          }),
        );
        const uri = 'file:///signalled.acmp-dag.json';
        await session.open(uri, SLOW_DAG);
        void session.connection
          .sendRequest('workspace/executeCommand', { command: RUN_COMMANDS.runDag, arguments: [{ uri }] })
          .catch(() => undefined);
        await slowRunning;
        const outputFolders = () => readdirSync(temporary).filter((name) => name.startsWith('acmp-run-outputs-'));
        assert.equal(outputFolders().length, 1, 'the run keeps its output on disk');
        const exited = new Promise<NodeJS.Signals | null>((done) =>
          session.process.once('exit', (_code, by) => done(by)),
        );
        session.process.kill(signal);
        assert.equal(await exited, null, 'the server ended by itself');
        session.connection.dispose();
        assert.deepEqual(outputFolders(), [], 'the outputs on disk are gone');
      } finally {
        rmSync(temporary, { recursive: true, force: true });
      }
    });
  }
});
