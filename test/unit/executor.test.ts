// The executor's rules (design.md §5-§7, Layer 2 §2-§5, Layer 1), each against scripted in-process providers.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';
import type { TaskOutput, RunEvent, RunReport, TaskReport } from '../../server/src/protocol/report';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import { assembleChunks } from '../../server/src/run/chunks';
import { startRun } from '../../server/src/run/executor';
import { NoProviderRefused } from '../../server/src/run/refused';
import { RunRefused } from '../../server/src/run/refused';
import { resultHash } from '../../server/src/run/proof';
import { ResultStore, storeStats } from '../../server/src/run/resultStore';
import {
  ACMP_ERRORS,
  AcmpError,
  type AcmpCapability,
  type InvokeResult,
  METHODS,
} from '../../server/src/protocol/acmpMessages';
import type { RunOptions } from '../../server/src/run/types';
import {
  type Behaviour,
  EventLog,
  FULL,
  PLAIN,
  ScriptedProvider,
  answer,
  deferred,
  echo,
  heartbeating,
  refuse,
  scriptedConnector,
  untilCancelled,
} from '../support/scriptedProviders';
import { mockClock } from '../support/mockClock';

type Json = Record<string, unknown>;

const text = (data: string): TaskOutput => ({ type: 'text', data });
const task = (id: string, capability: string, input: object, extra: Json = {}): Json => ({
  task_id: id,
  capability,
  input,
  ...extra,
});
const from = (id: string, field?: string): Json => ({
  source: { from_task: id, ...(field === undefined ? {} : { field }) },
});
const edge = (from: string, to: string, streamEligible = false): Json => ({
  from,
  to,
  ...(streamEligible ? { stream_eligible: true } : {}),
});
const dag = (tasks: Json[], edges: Json[] = []) =>
  analyzeDag(JSON.stringify({ dag_id: 'dag_test', tasks, edges }, null, 2));

/** A broken rule may leave a run waiting forever: it fails the test in time instead. */
const LIMIT = { timeout: 5_000 };

/** Waits for the next turn of the event loop: lets everything queued run, with no timer involved. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function start(
  analysis: ReturnType<typeof dag>,
  providers: ScriptedProvider[],
  options: Partial<RunOptions> & { configs?: ProviderConfig[] } = {},
) {
  const log = new EventLog();
  const connect = scriptedConnector(...providers);
  const { configs, ...rest } = options;
  const run = startRun(analysis, {
    providers: configs ?? providers.map((provider) => ({ id: provider.id, transport: 'stdio' })),
    connect,
    onEvent: log.onEvent,
    backoffMs: 1,
    ...rest,
  });
  return { run, log, connect };
}

const taskIn = (report: RunReport, id: string): TaskReport => report.tasks.find((entry) => entry.task_id === id)!;
const invokeOf = (provider: ScriptedProvider, id: string) =>
  provider.invokes().find((params) => params.task_id.startsWith(`${id}-`));
const whenInvoked = (provider: ScriptedProvider, id: string) =>
  provider.whenReceived(METHODS.invoke, (params) => params.task_id.startsWith(`${id}-`));

test('a task starts only when every task with an edge into it completed, referenced or not', LIMIT, async () => {
  const gate = deferred();
  const p = new ScriptedProvider('p', {
    gated: async (call) => {
      await gate.promise;
      return echo(call);
    },
    echo,
  });
  const { run, log } = start(
    dag(
      [
        task('task_a', 'gated', text('A')),
        task('task_b', 'echo', text('B')),
        task('task_c', 'echo', from('task_a')),
        task('task_free', 'echo', text('F')),
      ],
      [edge('task_a', 'task_b'), edge('task_a', 'task_c')],
    ),
    [p],
  );
  // Independent tasks start together: by the time the last root is invoked, an unordered b would have been too.
  await whenInvoked(p, 'task_free');
  assert.equal(invokeOf(p, 'task_b'), undefined, 'b waits for its edge from a although it does not reference a');
  assert.equal(invokeOf(p, 'task_c'), undefined);
  gate.resolve();
  const report = await run.done;
  assert.equal(report.status, 'completed');
  const running = log.order('running');
  const completed = log.events.findIndex(
    (e) => e.type === 'task-state' && e.state === 'completed' && e.task_id === 'task_a',
  );
  for (const id of ['task_b', 'task_c']) {
    const started = log.events.findIndex((e) => e.type === 'task-state' && e.state === 'running' && e.task_id === id);
    assert.ok(started > completed, `${id} started after task_a completed`);
  }
  assert.deepEqual(running.slice(0, 2), ['task_a', 'task_free']);
  assert.deepEqual(taskIn(report, 'task_c').output, text('A'));
});

test('independent tasks run concurrently up to maxConcurrency, 8 by default', LIMIT, async () => {
  const quick: Behaviour = async (call) => {
    await turn();
    return echo(call);
  };
  const tasks = (count: number) => Array.from({ length: count }, (_, k) => task(`task_${k}`, 'quick', text(`${k}`)));
  const limited = new ScriptedProvider('p', { quick });
  assert.equal((await start(dag(tasks(6)), [limited], { maxConcurrency: 2 }).run.done).status, 'completed');
  assert.equal(limited.peakActive, 2);
  const byDefault = new ScriptedProvider('p', { quick });
  assert.equal((await start(dag(tasks(12)), [byDefault]).run.done).status, 'completed');
  assert.equal(byDefault.peakActive, 8);
});

test('from_tasks passes the outputs in the listed order, whole or at the path of each', LIMIT, async () => {
  const p = new ScriptedProvider('p', {
    echo,
    // Answers after the other roots, so completion order differs from the listed one.
    late: async (call) => {
      for (let k = 0; k < 5; k++) await turn();
      return echo(call);
    },
  });
  const { run } = start(
    dag(
      [
        task('task_x', 'echo', text('X')),
        task('task_y', 'late', text('Y')),
        task('task_z', 'echo', { type: 'json', data: 'Z' }),
        task('task_all', 'echo', { source: { from_tasks: ['task_y', 'task_z', 'task_x'] } }),
        task('task_data', 'echo', { source: { from_tasks: ['task_y', 'task_x'], field: 'data' } }),
      ],
      [
        edge('task_x', 'task_all'),
        edge('task_y', 'task_all'),
        edge('task_z', 'task_all'),
        edge('task_x', 'task_data'),
        edge('task_y', 'task_data'),
      ],
    ),
    [p],
  );
  const report = await run.done;
  assert.deepEqual(invokeOf(p, 'task_all')!.input, {
    type: 'json',
    data: [text('Y'), { type: 'json', data: 'Z' }, text('X')],
  });
  assert.deepEqual(invokeOf(p, 'task_data')!.input, { type: 'json', data: ['Y', 'X'] });
  assert.equal(report.status, 'completed');
});

test(
  'field paths: text for a string, json otherwise, "data" keeps the type; unresolved paths fail the task',
  LIMIT,
  async () => {
    const made: TaskOutput = { type: 'custom/x', data: { s: 'hi', n: { a: 1 }, list: [1, 2] } };
    const p = new ScriptedProvider('p', { make: (call) => answer(call, made), echo });
    const downstream: [string, string | undefined][] = [
      ['task_text', 'data.s'],
      ['task_json', 'data.n'],
      ['task_number', 'data.list[1]'],
      ['task_payload', 'data'],
      ['task_whole', undefined],
      ['task_missing', 'data.n.b'],
      ['task_index', 'data.list[2]'],
      ['task_proto', 'data.__proto__'],
      ['task_ctor', 'data.constructor'],
      ['task_length', 'data.s.length'],
    ];
    const { run } = start(
      dag(
        [
          task('task_u', 'make', text('go')),
          ...downstream.map(([id, field]) => task(id, 'echo', from('task_u', field))),
        ],
        downstream.map(([id]) => edge('task_u', id)),
      ),
      [p],
      { policy: 'best-effort' },
    );
    const report = await run.done;
    const outputOf = (id: string) => taskIn(report, id).output;
    assert.deepEqual(outputOf('task_text'), text('hi'));
    assert.deepEqual(outputOf('task_json'), { type: 'json', data: { a: 1 } });
    assert.deepEqual(outputOf('task_number'), { type: 'json', data: 2 });
    assert.deepEqual(outputOf('task_payload'), made);
    assert.deepEqual(outputOf('task_whole'), made);
    for (const [id, field] of downstream.slice(5)) {
      const entry = taskIn(report, id);
      assert.equal(entry.state, 'failed', id);
      assert.equal(entry.error!.code, -32602);
      assert.equal(
        entry.error!.message,
        `field "${field}" does not resolve in the output of task "task_u": nothing at ${field}`,
      );
      assert.equal(invokeOf(p, id), undefined, `${id} was never invoked`);
    }
  },
);

test(
  'cancelling a task cancels its downstream breadth first, sends acmp/cancel in flight, keeps upstream results',
  LIMIT,
  async () => {
    const gate = deferred();
    const p = new ScriptedProvider('p', {
      echo,
      hang: untilCancelled,
      gated: async (call) => {
        await gate.promise;
        return echo(call);
      },
    });
    const { run, log } = start(
      dag(
        [
          task('task_a', 'echo', text('A')),
          task('task_b', 'hang', from('task_a')),
          task('task_c', 'echo', from('task_b')),
          task('task_d', 'echo', from('task_c')),
          task('task_e', 'gated', from('task_a')),
        ],
        [edge('task_a', 'task_b'), edge('task_b', 'task_c'), edge('task_c', 'task_d'), edge('task_a', 'task_e')],
      ),
      [p],
    );
    await whenInvoked(p, 'task_b');
    run.cancelTask('task_b', 'not needed');
    assert.deepEqual(log.order('cancelled'), ['task_b', 'task_c', 'task_d']);
    gate.resolve();
    const report = await run.done;
    const wire = taskIn(report, 'task_b').wire_task_id;
    assert.deepEqual(p.messages(METHODS.cancel), [{ task_id: wire, reason: 'not needed' }]);
    assert.equal(taskIn(report, 'task_a').state, 'completed');
    assert.deepEqual(taskIn(report, 'task_a').output, text('A'));
    assert.equal(taskIn(report, 'task_e').state, 'completed', 'a sibling branch goes on');
    assert.deepEqual(taskIn(report, 'task_b').error, { code: ACMP_ERRORS.cancelled, message: 'not needed' });
    assert.match(taskIn(report, 'task_d').error!.message, /task_b/);
    assert.equal(invokeOf(p, 'task_c'), undefined);
    assert.equal(report.status, 'cancelled', 'nothing failed, and the user cancelled a task');
  },
);

test(
  'cancelling the run cancels every task not terminal; only providers that accept acmp/cancel get it',
  LIMIT,
  async () => {
    const p = new ScriptedProvider('p', { echo, hang: untilCancelled });
    const mute = new ScriptedProvider(
      'mute',
      { silent: () => new Promise<InvokeResult>(() => undefined) },
      { acmp: PLAIN },
    );
    const { run } = start(
      dag(
        [
          task('task_a', 'echo', text('A')),
          task('task_b', 'hang', from('task_a')),
          task('task_c', 'echo', from('task_b')),
          task('task_m', 'silent', text('M')),
        ],
        [edge('task_a', 'task_b'), edge('task_b', 'task_c')],
      ),
      [p, mute],
      {
        configs: [
          { id: 'p', transport: 'stdio', capabilities: ['echo', 'hang'] },
          { id: 'mute', transport: 'stdio' },
        ],
      },
    );
    await Promise.all([whenInvoked(p, 'task_b'), whenInvoked(mute, 'task_m')]);
    run.cancel('stop');
    const report = await run.done;
    assert.equal(report.status, 'cancelled');
    assert.deepEqual(
      report.tasks.map((entry) => entry.state),
      ['completed', 'cancelled', 'cancelled', 'cancelled'],
    );
    assert.deepEqual(p.messages(METHODS.cancel), [{ task_id: taskIn(report, 'task_b').wire_task_id, reason: 'stop' }]);
    assert.equal(mute.received.length, 1, 'the never-answering provider got its invoke and nothing else');
    for (const provider of [p, mute]) assert.equal(provider.connectionsClosed, provider.connectionsOpened);
  },
);

test(
  'fail-fast cancels the whole DAG on the first failure; best-effort lets independent branches finish',
  LIMIT,
  async () => {
    const dagText = dag(
      [
        task('task_bad', 'fail', text('x')),
        task('task_after', 'echo', from('task_bad')),
        task('task_other', 'other', text('y')),
      ],
      [edge('task_bad', 'task_after')],
    );
    const failure = refuse(ACMP_ERRORS.internal, 'broken');

    const fast = new ScriptedProvider('p', { fail: failure, echo, other: untilCancelled });
    const failFast = start(dagText, [fast]);
    const fastReport = await failFast.run.done;
    assert.equal(fastReport.policy, 'fail-fast');
    assert.equal(fastReport.status, 'failed');
    assert.deepEqual(
      fastReport.tasks.map((entry) => entry.state),
      ['failed', 'cancelled', 'cancelled'],
    );
    assert.deepEqual(taskIn(fastReport, 'task_bad').error, {
      code: ACMP_ERRORS.internal,
      message: 'broken',
      data: { detail: 'broken' },
    });
    assert.equal(fast.messages(METHODS.cancel).length, 1, 'the in-flight sibling got acmp/cancel');

    const patient = new ScriptedProvider('p', {
      fail: failure,
      echo,
      other: async (call) => {
        await best.log.whenState('task_bad', 'failed');
        return echo(call);
      },
    });
    const best = start(dagText, [patient], { policy: 'best-effort' });
    const bestReport = await best.run.done;
    assert.equal(bestReport.status, 'failed');
    assert.deepEqual(
      bestReport.tasks.map((entry) => entry.state),
      ['failed', 'cancelled', 'completed'],
    );
    assert.deepEqual(bestReport.result, { task_other: text('y') });
  },
);

test(
  'timeout_ms is a hard deadline: -33003 and acmp/cancel, never sent to a provider that did not accept it',
  LIMIT,
  async (t) => {
    const clock = mockClock(t);
    const p = new ScriptedProvider('p', { hang: untilCancelled });
    const plain = new ScriptedProvider('plain', { stuck: untilCancelled }, { acmp: PLAIN });
    const { run, log } = start(
      dag([
        task('task_slow', 'hang', text('x'), { timeout_ms: 40 }),
        task('task_stuck', 'stuck', text('y'), { timeout_ms: 40 }),
      ]),
      [p, plain],
      {
        policy: 'best-effort',
        configs: [
          { id: 'p', transport: 'stdio', capabilities: ['hang'] },
          { id: 'plain', transport: 'stdio', capabilities: ['stuck'] },
        ],
      },
    );
    await Promise.all([whenInvoked(p, 'task_slow'), whenInvoked(plain, 'task_stuck')]);
    await clock.advanceTo(39);
    assert.deepEqual(log.order('failed'), [], 'nothing fails before its deadline');
    await clock.advanceTo(40);
    assert.deepEqual(log.order('failed').sort(), ['task_slow', 'task_stuck'], 'both fail at their deadline');
    const report = await run.done;
    for (const id of ['task_slow', 'task_stuck']) {
      assert.equal(taskIn(report, id).state, 'failed');
      assert.equal(taskIn(report, id).error!.code, ACMP_ERRORS.timeout);
      assert.match(taskIn(report, id).error!.message, /40 ms/);
    }
    assert.equal(invokeOf(p, 'task_slow')!.timeout_ms, 40, 'the invoke carries the deadline');
    assert.deepEqual(
      p.messages(METHODS.cancel).map((params) => params.task_id),
      [taskIn(report, 'task_slow').wire_task_id],
    );
    assert.deepEqual(
      plain.received.map((message) => message.method),
      [METHODS.invoke],
    );
  },
);

test(
  'each task fails at its own timeout_ms, whatever the order they started in; a completed task never times out',
  LIMIT,
  async (t) => {
    const clock = mockClock(t);
    const p = new ScriptedProvider('p', { hang: untilCancelled, echo });
    const { run, log } = start(
      dag([
        task('task_slow', 'hang', text('s'), { timeout_ms: 120 }),
        task('task_done', 'echo', text('d'), { timeout_ms: 20 }),
        task('task_fast', 'hang', text('f'), { timeout_ms: 20 }),
        task('task_middle', 'hang', text('m'), { timeout_ms: 60 }),
      ]),
      [p],
      { policy: 'best-effort' },
    );
    await Promise.all(['task_slow', 'task_fast', 'task_middle'].map((id) => whenInvoked(p, id)));
    await clock.advanceTo(120);
    assert.deepEqual(log.order('failed'), ['task_fast', 'task_middle', 'task_slow']);
    const report = await run.done;
    assert.equal(taskIn(report, 'task_done').state, 'completed');
    for (const [id, ms] of [
      ['task_fast', 20],
      ['task_middle', 60],
      ['task_slow', 120],
    ] as const) {
      const entry = taskIn(report, id);
      assert.equal(entry.error!.code, ACMP_ERRORS.timeout);
      assert.match(entry.error!.message, new RegExp(`\\(${ms} ms\\)`));
      // On the mock clock, which stood still until every invoke was sent: the task lasted exactly its timeout_ms.
      assert.equal(Date.parse(entry.finished_at!) - Date.parse(entry.started_at!), ms, id);
    }
  },
);

test(
  'advertised heartbeats: three missed intervals fail a silent task, at once and well before timeout_ms',
  LIMIT,
  async (t) => {
    const clock = mockClock(t);
    const p = new ScriptedProvider(
      'p',
      {
        silent: async (call) => {
          call.heartbeat(0.1);
          return untilCancelled(call);
        },
      },
      { acmp: heartbeating(20) },
    );
    const { run, log } = start(dag([task('task_silent', 'silent', text('x'), { timeout_ms: 10_000 })]), [p]);
    await whenInvoked(p, 'task_silent');
    await clock.advanceTo(59);
    assert.deepEqual(log.order('failed'), [], 'alive until three intervals passed');
    await clock.advanceTo(60);
    assert.deepEqual(log.order('failed'), ['task_silent']);
    const report = await run.done;
    const silent = taskIn(report, 'task_silent');
    assert.equal(silent.error!.code, ACMP_ERRORS.timeout);
    assert.match(silent.error!.message, /no heartbeat for 60 ms/);
    assert.equal(Date.parse(silent.finished_at!) - Date.parse(silent.started_at!), 60);
    assert.equal(p.messages(METHODS.cancel).length, 1);
    assert.deepEqual(
      log.events.flatMap((event) => (event.type === 'heartbeat' ? [event.progress] : [])),
      [0.1],
    );
  },
);

test(
  "each heartbeat extends a task's liveness: a task that beats outlives a silent one started after it",
  LIMIT,
  async () => {
    // Real time, judged by the order of events: the beating task is invoked first, so without its beats its three
    // intervals would run out no later than the silent task's. It beats until the silent task failed, then answers.
    const sent: number[] = [];
    const p = new ScriptedProvider(
      'p',
      {
        silent: untilCancelled,
        beating: async (call) => {
          const silentFailed = log.whenState('task_silent', 'failed');
          let failed = false;
          void silentFailed.then(() => (failed = true));
          while (!failed) {
            sent.push(1 - 1 / (sent.length + 2));
            call.heartbeat(sent.at(-1));
            // A beat every 10 ms, a tenth of the interval: only a stall of nearly 300 ms could starve it.
            await Promise.race([silentFailed, new Promise((resolve) => setTimeout(resolve, 10))]);
          }
          return echo(call);
        },
      },
      { acmp: heartbeating(100) },
    );
    const { run, log } = start(
      dag([
        task('task_beating', 'beating', text('y'), { timeout_ms: 10_000 }),
        task('task_silent', 'silent', text('x'), { timeout_ms: 10_000 }),
      ]),
      [p],
      { policy: 'best-effort' },
    );
    const report = await run.done;
    assert.deepEqual(
      p.invokes().map((params) => params.task_id.split('-')[0]),
      ['task_beating', 'task_silent'],
    );
    assert.match(taskIn(report, 'task_silent').error!.message, /no heartbeat for 300 ms/);
    assert.equal(taskIn(report, 'task_beating').state, 'completed');
    assert.deepEqual(
      log.events.flatMap((event) => (event.type === 'heartbeat' ? [event.progress] : [])),
      sent,
    );
  },
);

test('a transport failure resends the same invoke on a new connection: nothing executes twice', LIMIT, async () => {
  const p = new ScriptedProvider('p', { echo });
  p.dropAnswers = 2;
  const { run } = start(dag([task('task_a', 'echo', text('A'))]), [p], { attempts: 3 });
  const report = await run.done;
  assert.equal(report.status, 'completed');
  const ids = p.invokes().map((params) => params.task_id);
  assert.equal(ids.length, 3);
  assert.equal(new Set(ids).size, 1, 'the same wire id each time');
  assert.deepEqual([...p.executions.values()], [1]);
  assert.deepEqual(
    p.received.map((message) => message.connection),
    [1, 2, 3],
  );
  assert.equal(p.connectionsClosed, 3, 'each broken connection closed, the last at the end of the run');

  const refused = new ScriptedProvider('p', { echo });
  refused.failConnects = 1;
  assert.equal((await start(dag([task('task_a', 'echo', text('A'))]), [refused]).run.done).status, 'completed');

  const gone = new ScriptedProvider('p', { echo });
  gone.dropAnswers = 5;
  const failed = await start(dag([task('task_a', 'echo', text('A'))]), [gone], { attempts: 3 }).run.done;
  assert.equal(gone.invokes().length, 3, 'bounded by attempts');
  assert.equal(taskIn(failed, 'task_a').error!.code, ACMP_ERRORS.internal);
  assert.match(taskIn(failed, 'task_a').error!.message, /"p" unreachable after 3 attempt\(s\): p: connection lost/);
});

test('each run sends fresh wire task ids, even when run ids share a prefix', LIMIT, async () => {
  const p = new ScriptedProvider('p', { echo });
  // The provider replays an answer for a wire id it has seen: a collision would hand run 2 the output of run 1.
  const first = await start(dag([task('task_a', 'echo', text('one'))]), [p], { runId: 'session-run-1' }).run.done;
  const second = await start(dag([task('task_a', 'echo', text('two'))]), [p], { runId: 'session-run-2' }).run.done;
  assert.deepEqual(
    [first, second].map((report) => taskIn(report, 'task_a').output),
    [text('one'), text('two')],
  );
  const ids = p.invokes().map((params) => params.task_id);
  assert.equal(ids.length, 2);
  assert.notEqual(ids[0], ids[1]);
  assert.ok(ids.every((id) => id.startsWith('task_a-')));
  assert.deepEqual(
    [first, second].map((report) => taskIn(report, 'task_a').wire_task_id),
    ids,
  );
  assert.deepEqual([...p.executions.values()], [1, 1], 'the second run executed rather than replayed');
});

test(
  'routing: the first provider offering the capability; -33002 and -33001 move on, other errors do not',
  LIMIT,
  async () => {
    const elsewhere = new ScriptedProvider('elsewhere', { cap: echo });
    const lacking = new ScriptedProvider('lacking', { cap: refuse(ACMP_ERRORS.capability_not_found, 'no such') });
    const pricey = new ScriptedProvider('pricey', { cap: refuse(ACMP_ERRORS.budget_exceeded, 'too cheap') });
    const good = new ScriptedProvider('good', { cap: echo });
    const configs: ProviderConfig[] = [
      { id: 'elsewhere', transport: 'stdio', capabilities: ['other'] },
      { id: 'lacking', transport: 'stdio', capabilities: ['cap'] },
      { id: 'pricey', transport: 'stdio' },
      { id: 'good', transport: 'stdio' },
    ];
    const { run, connect, log } = start(dag([task('task_a', 'cap', text('A'))]), [elsewhere, lacking, pricey, good], {
      configs,
    });
    const report = await run.done;
    assert.equal(taskIn(report, 'task_a').state, 'completed');
    assert.equal(taskIn(report, 'task_a').provider_id, 'good');
    assert.deepEqual(
      log.events.flatMap((event) =>
        event.type === 'task-state'
          ? [`${event.state}${event.provider_id === undefined ? '' : `@${event.provider_id}`}`]
          : [],
      ),
      ['running@lacking', 'running@pricey', 'running@good', 'completed@good'],
      'each provider tried is named as it is tried, the last running one is the one that ran it',
    );
    assert.deepEqual(connect.asked, ['lacking', 'pricey', 'good'], 'connections open lazily, one per provider');
    assert.equal(elsewhere.received.length, 0);

    const refusing = await start(dag([task('task_a', 'cap', text('A'))]), [lacking, pricey], {
      configs: configs.slice(1, 3),
    }).run.done;
    const error = taskIn(refusing, 'task_a').error!;
    assert.equal(error.code, ACMP_ERRORS.budget_exceeded);
    assert.match(error.message, /"lacking": no such.*"pricey": too cheap/);

    const broken = new ScriptedProvider('broken', { cap: refuse(ACMP_ERRORS.internal, 'crashed') });
    const spare = new ScriptedProvider('spare', { cap: echo });
    const stopped = await start(dag([task('task_a', 'cap', text('A'))]), [broken, spare]).run.done;
    assert.equal(taskIn(stopped, 'task_a').error!.code, ACMP_ERRORS.internal);
    assert.equal(spare.received.length, 0);

    // A capability no provider lists keeps the run from starting: nothing is sent, not even to the others.
    assert.throws(
      () => start(dag([task('task_a', 'nobody', text('A'))]), [elsewhere], { configs: [configs[0]!] }),
      (error: Error) => error instanceof NoProviderRefused && /task_a \(nobody\).*offer other/.test(error.message),
    );
    assert.equal(elsewhere.received.length, 0);

    const builtin = new ScriptedProvider('builtin', { echo });
    const defaults = start(dag([task('task_a', 'echo', text('A'))]), [builtin], { configs: [] });
    assert.equal((await defaults.run.done).status, 'completed');
    assert.deepEqual(defaults.connect.asked, ['builtin'], 'no providers: the built-in one');
  },
);

test('never sends a feature the provider did not advertise', LIMIT, async () => {
  for (const acmp of [undefined, PLAIN]) {
    const p = new ScriptedProvider('p', { produce: echo, consume: echo, hang: untilCancelled }, { acmp });
    const { run } = start(
      dag(
        [
          task('task_u', 'produce', text('U'), { stream: true }),
          task('task_d', 'consume', from('task_u')),
          task('task_h', 'hang', text('H'), { timeout_ms: 30 }),
          task('task_c', 'hang', text('C')),
        ],
        [edge('task_u', 'task_d', true)],
      ),
      [p],
      { policy: 'best-effort' },
    );
    await whenInvoked(p, 'task_c');
    run.cancelTask('task_c');
    const report = await run.done;
    assert.equal(taskIn(report, 'task_d').state, 'completed');
    assert.equal(taskIn(report, 'task_h').error!.code, ACMP_ERRORS.timeout);
    assert.deepEqual(new Set(p.received.map((message) => message.method)), new Set([METHODS.invoke]));
    for (const params of p.invokes()) {
      assert.equal('stream' in params, false);
      assert.equal('input_stream' in params, false);
    }
    assert.deepEqual(report.streamed_edges, []);
  }
});

/** Streams ["Hel", "lo ", "wor", "ld"] out of order with a duplicate when asked to stream, else answers at once. */
const PIECES = ['Hel', 'lo ', 'wor', 'ld'];
const WHOLE: TaskOutput = { type: 'json', data: PIECES };
const produce =
  (beforeTheEnd: () => Promise<unknown> = () => Promise.resolve()): Behaviour =>
  async (call) => {
    if (call.params.stream !== true)
      return answer(call, WHOLE, { proof: { method: 'result-hash', hash: resultHash(WHOLE) } });
    const piece = (seq: number, final = false) => call.chunk(seq, { type: 'json', data: [PIECES[seq]] }, final);
    piece(1);
    piece(0);
    piece(1);
    await beforeTheEnd();
    piece(3, true);
    piece(2);
    piece(2);
    return {
      task_id: call.params.task_id,
      output_streamed: true,
      tokens_used: 4,
      cost_cu: 0.002,
      proof: { method: 'result-hash', hash: resultHash(WHOLE) },
    };
  };
/** Answers with its input, whether it came whole or in chunks. */
const consume: Behaviour = async (call) =>
  answer(
    call,
    call.params.input_stream === true ? assembleChunks((await call.input).map((c) => c.chunk)) : call.params.input!,
  );

test(
  'a streaming edge forwards the upstream chunks in seq order as input chunks; the result is the same',
  LIMIT,
  async () => {
    const s: ScriptedProvider = new ScriptedProvider('s', {
      produce: produce(() => whenInvoked(s, 'task_d')),
      consume,
    });
    const { run, log } = start(
      dag(
        [task('task_u', 'produce', text('go')), task('task_d', 'consume', from('task_u', 'data'))],
        [edge('task_u', 'task_d', true)],
      ),
      [s],
    );
    const report = await run.done;
    assert.equal(report.status, 'completed');
    assert.equal(invokeOf(s, 'task_u')!.stream, true);
    const downstream = invokeOf(s, 'task_d')!;
    assert.equal(downstream.input_stream, true);
    assert.equal('input' in downstream, false);
    const chunks = s.messages(METHODS.inputChunk);
    assert.deepEqual(
      chunks.map((chunk) => [chunk.task_id, chunk.seq, chunk.final, chunk.chunk]),
      PIECES.map((piece, seq) => [downstream.task_id, seq, seq === 3, { type: 'json', data: [piece] }]),
    );
    assert.deepEqual(
      log.events.flatMap((event) => (event.type === 'chunk' ? [event.seq] : [])),
      [0, 1, 2, 3],
      'chunk events in order, the duplicate dropped',
    );
    assert.deepEqual(taskIn(report, 'task_u').output, WHOLE);
    assert.equal(taskIn(report, 'task_u').proof, 'verified', 'the proof is checked against the assembled output');
    assert.deepEqual(taskIn(report, 'task_d').output, WHOLE);
    assert.deepEqual(report.streamed_edges, [{ from: 'task_u', to: 'task_d' }]);
  },
);

test(
  'a streaming edge falls back to the whole result: a field path, an upstream or a downstream without the feature',
  LIMIT,
  async () => {
    const noInputStreaming: AcmpCapability = {
      ...FULL,
      accepts: [METHODS.invoke, METHODS.cancel],
      features: { output_streaming: true },
    };
    const cases: {
      name: string;
      field?: string;
      up: AcmpCapability;
      down: AcmpCapability;
      input: TaskOutput;
      upStreams: boolean;
    }[] = [
      { name: 'field path', field: 'data[1]', up: FULL, down: FULL, input: text('lo '), upStreams: false },
      { name: 'upstream not streaming', up: PLAIN, down: FULL, input: WHOLE, upStreams: false },
      { name: 'downstream not input-streaming', up: FULL, down: noInputStreaming, input: WHOLE, upStreams: true },
    ];
    for (const { name, field, up, down, input, upStreams } of cases) {
      const upstream = new ScriptedProvider('up', { produce: produce() }, { acmp: up });
      const downstream = new ScriptedProvider('down', { consume }, { acmp: down });
      const analysis = dag(
        [task('task_u', 'produce', text('go')), task('task_d', 'consume', from('task_u', field))],
        [edge('task_u', 'task_d', true)],
      );
      const { run } = start(analysis, [upstream, downstream], {
        configs: [
          { id: 'up', transport: 'stdio', capabilities: ['produce'] },
          { id: 'down', transport: 'stdio', capabilities: ['consume'] },
        ],
      });
      const report = await run.done;
      assert.equal(report.status, 'completed', name);
      assert.equal(invokeOf(upstream, 'task_u')!.stream === true, upStreams, name);
      assert.deepEqual(invokeOf(downstream, 'task_d')!.input, input, name);
      assert.equal('input_stream' in invokeOf(downstream, 'task_d')!, false, name);
      assert.deepEqual(downstream.messages(METHODS.inputChunk), [], name);
      assert.deepEqual(taskIn(report, 'task_d').output, input, name);
      assert.deepEqual(report.streamed_edges, [], name);
    }
  },
);

test('an upstream failing mid-stream cancels the downstream it was streaming into', LIMIT, async () => {
  const s: ScriptedProvider = new ScriptedProvider('s', {
    produce: async (call) => {
      call.chunk(0, { type: 'json', data: ['a'] });
      await whenInvoked(s, 'task_d');
      throw new AcmpError(ACMP_ERRORS.internal, 'lost the thread');
    },
    consume: untilCancelled,
  });
  const { run } = start(
    dag(
      [task('task_u', 'produce', text('go')), task('task_d', 'consume', from('task_u'))],
      [edge('task_u', 'task_d', true)],
    ),
    [s],
  );
  const report = await run.done;
  assert.equal(taskIn(report, 'task_u').state, 'failed');
  assert.equal(taskIn(report, 'task_d').state, 'cancelled');
  assert.deepEqual(
    s.messages(METHODS.cancel).map((params) => params.task_id),
    [taskIn(report, 'task_d').wire_task_id],
  );
});

/** A 1 MiB stream chunk of `data` (its JSON text a little over 1 MiB). */
const mebibyteChunk = (data: string): TaskOutput => ({ type: 'text', data: data.repeat(1024 * 1024) });

test(
  'a provider that streams on past a missing chunk: the task fails at 10 MiB held, naming the seq, and is cancelled',
  LIMIT,
  async () => {
    const p = new ScriptedProvider('p', {
      withholding: async (call) => {
        // Never seq 0: each later chunk waits for it.
        for (let seq = 1; seq <= 20; seq++) call.chunk(seq, mebibyteChunk('x'), seq === 20);
        return untilCancelled(call);
      },
      'in-order': echo,
    });
    const { run, log } = start(
      dag([
        task('task_held', 'withholding', text('go'), { stream: true }),
        task('task_fine', 'in-order', text('fine')),
      ]),
      [p],
      { policy: 'best-effort' },
    );
    const report = await run.done;
    const held = taskIn(report, 'task_held');
    assert.equal(held.state, 'failed');
    assert.deepEqual(held.error, {
      code: ACMP_ERRORS.internal,
      message: 'provider "p": sent more than 10 MiB of stream chunks ahead of the missing chunk seq 0',
    });
    assert.deepEqual(
      p.messages(METHODS.cancel).map((params) => params.task_id),
      [held.wire_task_id],
    );
    assert.equal(
      log.events.some((event) => event.type === 'chunk'),
      false,
      'no chunk came in order',
    );
    assert.equal(taskIn(report, 'task_fine').state, 'completed');
  },
);

test('a stream of 20 MiB whose chunks each come before the one they follow: it completes whole', LIMIT, async () => {
  const letters = 'abcdefghijklmnopqrst';
  const p = new ScriptedProvider('p', {
    swapped: (call) => {
      // 1, 0, 3, 2, ...: never more than one chunk held, 20 MiB in all.
      for (let pair = 0; pair < letters.length; pair += 2) {
        call.chunk(pair + 1, mebibyteChunk(letters[pair + 1]!), pair + 1 === letters.length - 1);
        call.chunk(pair, mebibyteChunk(letters[pair]!));
      }
      return { task_id: call.params.task_id, output_streamed: true, tokens_used: 1, cost_cu: 0 };
    },
  });
  const { run } = start(dag([task('task_swapped', 'swapped', text('go'), { stream: true })]), [p]);
  const report = await run.done;
  assert.equal(report.status, 'completed');
  const whole = taskIn(report, 'task_swapped').output as TaskOutput;
  assert.equal(whole.data, [...letters].map((letter) => letter.repeat(1024 * 1024)).join(''));
});

test('cost above max_price_cu is a reported violation; the task still completes and totals add up', LIMIT, async () => {
  const p = new ScriptedProvider('p', {
    dear: (call) => answer(call, text('x'), { cost_cu: 0.5, tokens_used: 3 }),
    fair: (call) => answer(call, text('y'), { cost_cu: 0.25, tokens_used: 4 }),
  });
  const { run, log } = start(
    dag([
      task('task_dear', 'dear', text('x'), { max_price_cu: 0.125 }),
      task('task_fair', 'fair', text('y'), { max_price_cu: 0.25 }),
    ]),
    [p],
  );
  const report = await run.done;
  assert.equal(report.status, 'completed');
  const costs = log.events.filter((event) => event.type === 'cost');
  assert.deepEqual(
    costs.map((event) =>
      event.type === 'cost' ? [event.task_id, event.cost_cu, event.max_price_cu, event.violation] : [],
    ),
    [
      ['task_dear', 0.5, 0.125, true],
      ['task_fair', 0.25, 0.25, false],
    ],
  );
  assert.deepEqual(taskIn(report, 'task_dear').violations, ['cost_cu 0.5 is above max_price_cu 0.125']);
  assert.equal(taskIn(report, 'task_fair').violations, undefined);
  assert.deepEqual(report.totals, { cost_cu: 0.75, tokens_used: 7 });
  assert.equal(invokeOf(p, 'task_dear')!.max_price_cu, 0.125);
});

test('result-hash proofs are verified, mismatched (a violation) or absent', LIMIT, async () => {
  const output = { type: 'json', data: { b: 1, a: [1, 'x'] } };
  const p = new ScriptedProvider('p', {
    right: (call) => answer(call, output, { proof: { method: 'result-hash', hash: resultHash(output) } }),
    wrong: (call) => answer(call, output, { proof: { method: 'result-hash', hash: 'sha256:00' } }),
    none: (call) => answer(call, output),
  });
  const { run } = start(
    dag([
      task('task_right', 'right', text('x'), { proof_method: 'result-hash' }),
      task('task_wrong', 'wrong', text('x')),
      task('task_none', 'none', text('x')),
    ]),
    [p],
  );
  const report = await run.done;
  assert.deepEqual(
    report.tasks.map((entry) => [entry.state, entry.proof, entry.violations]),
    [
      ['completed', 'verified', undefined],
      ['completed', 'mismatch', ['the result-hash proof does not match the output']],
      ['completed', 'absent', undefined],
    ],
  );
  assert.equal(invokeOf(p, 'task_right')!.proof_method, 'result-hash');
});

/** Answers `output` with a result-hash proof whose input_hash commits to `committed` (the input it was sent if absent). */
const proving =
  (output: TaskOutput, { committed, hash }: { committed?: TaskOutput; hash?: string } = {}): Behaviour =>
  async (call) => {
    const input =
      call.params.input_stream === true ? assembleChunks((await call.input).map((c) => c.chunk)) : call.params.input!;
    const proof = {
      method: 'result-hash',
      hash: hash ?? resultHash(output),
      input_hash: resultHash(committed ?? input),
    };
    return answer(call, output, { proof });
  };
const OUTPUT_FAILED = 'the result-hash proof does not match the output';
const INPUT_FAILED = "the result-hash proof's input_hash does not match the input sent";

test("a proof's input_hash is checked against the input sent, a resolved reference's included", LIMIT, async () => {
  const upstream: TaskOutput = { type: 'json', data: { b: 1, a: [1, 'x'] } };
  const p = new ScriptedProvider('p', {
    up: proving(upstream),
    honest: proving(text('done')),
    lying: proving(text('done'), { committed: text('another input') }),
    both: proving(text('done'), { committed: text('another input'), hash: 'sha256:00' }),
    // Commits to the whole upstream output, not to the value at the field path it was sent.
    unresolved: proving(text('done'), { committed: upstream }),
    hashOnly: (call) =>
      answer(call, text('done'), { proof: { method: 'result-hash', hash: resultHash(text('done')) } }),
  });
  const { run } = start(
    dag(
      [
        task('task_up', 'up', text('x')),
        task('task_honest', 'honest', from('task_up', 'data.a')),
        task('task_lying', 'lying', text('x')),
        task('task_both', 'both', text('x')),
        task('task_unresolved', 'unresolved', from('task_up', 'data.a')),
        task('task_hash_only', 'hashOnly', text('x')),
      ],
      [edge('task_up', 'task_honest'), edge('task_up', 'task_unresolved')],
    ),
    [p],
  );
  const report = await run.done;
  assert.deepEqual(invokeOf(p, 'task_honest')!.input, { type: 'json', data: [1, 'x'] });
  assert.deepEqual(
    report.tasks.map((entry) => [entry.task_id, entry.state, entry.proof, entry.violations]),
    [
      ['task_up', 'completed', 'verified', undefined],
      ['task_honest', 'completed', 'verified', undefined],
      ['task_lying', 'completed', 'mismatch', [INPUT_FAILED]],
      ['task_both', 'completed', 'mismatch', [OUTPUT_FAILED, INPUT_FAILED]],
      ['task_unresolved', 'completed', 'mismatch', [INPUT_FAILED]],
      ['task_hash_only', 'completed', 'verified', undefined],
    ],
  );
});

test(
  "an input that streamed in: the proof's input_hash is checked against the source's whole output",
  LIMIT,
  async () => {
    for (const [committed, proof, violations] of [
      [undefined, 'verified', undefined],
      [text('Hello world'), 'mismatch', [INPUT_FAILED]],
    ] as const) {
      const s: ScriptedProvider = new ScriptedProvider('s', {
        produce: produce(() => whenInvoked(s, 'task_d')),
        consume: proving(text('done'), committed === undefined ? {} : { committed }),
      });
      const { run } = start(
        dag(
          [task('task_u', 'produce', text('go')), task('task_d', 'consume', from('task_u'))],
          [edge('task_u', 'task_d', true)],
        ),
        [s],
      );
      const report = await run.done;
      assert.equal(invokeOf(s, 'task_d')!.input_stream, true, 'the input streamed in');
      assert.deepEqual(report.streamed_edges, [{ from: 'task_u', to: 'task_d' }]);
      const downstream = taskIn(report, 'task_d');
      assert.deepEqual([downstream.state, downstream.proof, downstream.violations], ['completed', proof, violations]);
    }
  },
);

test(
  'a result whose hash or input_hash fails is not stored and is sent again next run; a good one is reused',
  LIMIT,
  async () => {
    const folder = mkdtempSync(join(tmpdir(), 'acmp-dag-proof-store-'));
    try {
      const p = new ScriptedProvider('p', {
        good: proving(text('good')),
        badHash: proving(text('bad hash'), { hash: 'sha256:00' }),
        badInput: proving(text('bad input'), { committed: text('another input') }),
      });
      const analysis = dag([
        task('task_good', 'good', text('x')),
        task('task_bad_hash', 'badHash', text('x')),
        task('task_bad_input', 'badInput', text('x')),
      ]);
      const reports: RunReport[] = [];
      for (let round = 0; round < 2; round++) {
        const store = await ResultStore.open({ folder });
        reports.push(await start(analysis, [p], { results: { store } }).run.done);
        await store.close();
        assert.equal(store.problem, undefined);
      }
      const invokes = (capability: string) => p.invokes().filter((params) => params.capability === capability).length;
      assert.deepEqual([invokes('good'), invokes('badHash'), invokes('badInput')], [1, 2, 2]);
      const [first, second] = reports as [RunReport, RunReport];
      assert.equal(taskIn(second, 'task_good').cached?.run_id, first.run_id);
      assert.deepEqual(taskIn(second, 'task_good').output, text('good'));
      for (const report of reports) {
        assert.equal(taskIn(report, 'task_bad_hash').proof, 'mismatch');
        assert.equal(taskIn(report, 'task_bad_input').proof, 'mismatch');
        assert.equal(taskIn(report, 'task_bad_input').cached, undefined);
      }
      const stats = storeStats(folder);
      assert.deepEqual(
        stats.byCapability.map((row) => [row.capability, row.results]),
        [['good', 1]],
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  },
);

test('a DAG with errors is refused at once, listing them', () => {
  const connect = scriptedConnector();
  const analysis = dag(
    [task('task_a', 'echo', from('task_b')), task('task_b', 'echo', from('task_a'))],
    [edge('task_a', 'task_b'), edge('task_b', 'task_a')],
  );
  assert.throws(
    () => startRun(analysis, { providers: [], connect }),
    (error: unknown) => {
      assert.ok(error instanceof RunRefused);
      assert.ok(error.diagnostics.length > 0);
      assert.ok(error.diagnostics.every((diagnostic) => diagnostic.severity === 'error'));
      assert.ok(error.diagnostics.some((diagnostic) => diagnostic.code === 'cycle'));
      assert.match(error.message, /cycle: .*task_(a|b) → task_(a|b) → task_(a|b)/);
      return true;
    },
  );
  assert.deepEqual(connect.asked, []);
});

test('a provider misbehaving fails its task with a clear error; done still resolves', LIMIT, async () => {
  const p = new ScriptedProvider('p', {
    bare: (call) => ({ task_id: call.params.task_id, tokens_used: 0, cost_cu: 0 }),
    unfinished: (call) => {
      call.chunk(0, text('a'));
      return { task_id: call.params.task_id, output_streamed: true, tokens_used: 0, cost_cu: 0 };
    },
    odd: () => Promise.reject(new Error('socket hang up')),
  });
  const throwing = () => {
    throw new Error('cannot spawn');
  };
  const { run } = start(
    dag([
      task('task_bare', 'bare', text('x')),
      task('task_unfinished', 'unfinished', text('x'), { stream: true }),
      task('task_odd', 'odd', text('x')),
      task('task_spawn', 'spawn', text('x')),
    ]),
    [p],
    {
      policy: 'best-effort',
      configs: [
        { id: 'p', transport: 'stdio', capabilities: ['bare', 'unfinished', 'odd'] },
        { id: 'q', transport: 'stdio', command: 'nowhere' },
      ],
      connect: (config) => (config.id === 'p' ? p.connect() : throwing()),
    },
  );
  const report = await run.done;
  const errors = report.tasks.map((entry) => `${entry.state}: ${entry.error?.message}`);
  assert.deepEqual(errors, [
    'failed: provider "p": the result has no output {type, data}',
    'failed: provider "p": the output stream ended without its final chunk (1 chunk(s) in order)',
    'failed: provider "p": socket hang up',
    'failed: provider "q" unreachable after 3 attempt(s): cannot spawn',
  ]);
});

test(
  'events: run-started first, a timestamped event per change, run-finished last with the report',
  LIMIT,
  async () => {
    const p = new ScriptedProvider('p', { echo });
    const log = new EventLog();
    const { run } = start(
      dag(
        [task('task_b', 'echo', from('task_a')), task('task_a', 'echo', text('A'), { max_price_cu: 1 })],
        [edge('task_a', 'task_b')],
      ),
      [p],
      {
        onEvent: (event) => {
          log.onEvent(event);
          throw new Error('a listener bug must not stop the run');
        },
      },
    );
    const report = await run.done;
    const kinds = log.events.map((event) =>
      event.type === 'task-state'
        ? `${event.task_id}:${event.state}`
        : event.type === 'cost'
          ? `${event.task_id}:cost`
          : event.type,
    );
    assert.deepEqual(kinds, [
      'run-started',
      'task_a:running',
      'task_a:cost',
      'task_a:completed',
      'task_b:running',
      'task_b:cost',
      'task_b:completed',
      'run-finished',
    ]);
    const times = log.events.map((event) => event.at);
    for (const at of times) assert.equal(new Date(at).toISOString(), at);
    assert.deepEqual([...times].sort(), times, 'in time order');
    assert.ok(log.events.every((event) => event.run_id === run.runId));
    const first = log.events[0] as Extract<RunEvent, { type: 'run-started' }>;
    assert.deepEqual(
      { dag_id: first.dag_id, policy: first.policy, tasks: first.tasks },
      { dag_id: 'dag_test', policy: 'fail-fast', tasks: ['task_b', 'task_a'] },
    );
    const last = log.events[log.events.length - 1] as Extract<RunEvent, { type: 'run-finished' }>;
    assert.equal(last.report, report);

    const at = (id: string, state: string) =>
      log.events.find((event) => event.type === 'task-state' && event.task_id === id && event.state === state)!.at;
    // One random tag per run, after the task id, whatever the run id is.
    const runTag = report.tasks[0]!.wire_task_id!.slice('task_b-'.length);
    assert.match(runTag, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const entry = (id: string): TaskReport => ({
      task_id: id,
      state: 'completed',
      provider_id: 'p',
      output: text('A'),
      cost_cu: 0.001,
      tokens_used: 1,
      proof: 'absent',
      started_at: at(id, 'running'),
      wire_task_id: `${id}-${runTag}`,
      finished_at: at(id, 'completed'),
      // A provider alone is not quoted: it goes direct, at no known price (its entry advertises none).
      accepted: {
        provider_id: 'p',
        pricing: 'direct',
        basis: 'unknown',
        ...(id === 'task_a' ? { max_price_cu: 1 } : {}),
      },
    });
    assert.deepEqual(report, {
      dag_id: 'dag_test',
      run_id: run.runId,
      status: 'completed',
      policy: 'fail-fast',
      started_at: first.at,
      finished_at: report.finished_at,
      tasks: [entry('task_b'), entry('task_a')],
      result: { task_b: text('A') },
      totals: { cost_cu: 0.002, tokens_used: 2 },
      streamed_edges: [],
      routing: 'cheapest',
    });
    assert.ok(report.finished_at >= at('task_b', 'completed') && report.finished_at <= last.at);
  },
);
