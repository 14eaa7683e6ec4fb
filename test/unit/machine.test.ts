// The pure run machine (server/src/run/machine.ts): events in, commands out, no providers, no time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';
import {
  type CompletionFacts,
  type MachineCommand,
  type MachineEvent,
  type MachineOptions,
  REUSED,
  RunMachine,
  recordCommands,
} from '../../server/src/run/machine';
import { ACMP_ERRORS } from '../../server/src/protocol/acmpMessages';

type Json = Record<string, unknown>;

const FACTS: CompletionFacts = { costCu: 0.5, tokensUsed: 3, proof: 'verified', violations: [] };
const BROKEN = { code: ACMP_ERRORS.internal, message: 'it broke' };

/** A machine over tasks `ids` (literal inputs) and `edges` ([from, to]); `commands` collects what it asks. */
function machineOf(ids: readonly string[], edges: readonly [string, string][], options: MachineOptions = {}) {
  const tasks: Json[] = ids.map((id) => ({ task_id: id, capability: 'echo', input: { type: 'text', data: id } }));
  const text = JSON.stringify({ dag_id: 'dag_m', tasks, edges: edges.map(([from, to]) => ({ from, to })) });
  const analysis = analyzeDag(text);
  assert.deepEqual(
    analysis.diagnostics.filter((diagnostic) => diagnostic.severity === 'error'),
    [],
  );
  const commands: MachineCommand[] = [];
  const machine = new RunMachine(analysis.model, options, recordCommands(commands));
  /** The commands since the last call, as short text: `launch a`, `cancelled b (running)`, `finished`. */
  const taken = (): string[] =>
    commands.splice(0).map((command) => {
      if (command.type === 'launch') return `launch ${machine.idOf(command.task)}`;
      if (command.type === 'finished') return 'finished';
      return `${command.state} ${machine.idOf(command.task)}${command.wasRunning ? ' (running)' : ''}`;
    });
  const t = (id: string): number => machine.taskOf(id)!;
  return { machine, taken, t, commands };
}

test('start launches the tasks without upstream, in declaration order, up to the concurrency cap', () => {
  const { machine, taken, t } = machineOf(['a', 'b', 'c', 'd'], [['a', 'd']], { maxConcurrency: 2 });
  machine.start('T0');
  assert.deepEqual(taken(), ['launch a', 'launch b']);
  machine.completed(t('b'), 'T1', FACTS);
  assert.deepEqual(taken(), ['completed b (running)', 'launch c']);
  machine.completed(t('a'), 'T2', FACTS);
  assert.deepEqual(taken(), ['completed a (running)', 'launch d']);
  machine.completed(t('c'), 'T3', FACTS);
  machine.completed(t('d'), 'T4', FACTS);
  assert.deepEqual(taken(), ['completed c (running)', 'completed d (running)', 'finished']);
  assert.equal(machine.isFinished, true);
});

test('fail-fast: the failed task, then its downstream breadth first, then every other task, each once', () => {
  const { machine, taken, t } = machineOf(
    ['a', 'b', 'c', 'd', 'e'],
    [
      ['a', 'b'],
      ['b', 'c'],
      ['a', 'd'],
    ],
  );
  machine.start('T0');
  assert.deepEqual(taken(), ['launch a', 'launch e']);
  assert.equal(machine.failed(t('a'), BROKEN, 'T1'), true);
  assert.deepEqual(taken(), [
    'failed a (running)',
    'cancelled b',
    'cancelled d',
    'cancelled c',
    'cancelled e (running)',
    'finished',
  ]);
  // States go one way: a late outcome of a task already terminal changes nothing.
  assert.equal(machine.completed(t('e'), 'T2', FACTS), false);
  assert.equal(machine.failed(t('e'), BROKEN, 'T2'), false);
  assert.deepEqual(taken(), []);
  const report = machine.report({
    runId: 'r',
    finishedAt: 'T3',
    outputOf: () => undefined,
    wireTaskId: (task) => `${machine.idOf(task)}-w`,
    streamedEdges: [],
  });
  assert.equal(report.status, 'failed');
  assert.match(report.tasks[machine.taskOf('b')!]!.error!.message, /upstream task "a" failed/);
  assert.match(report.tasks[machine.taskOf('e')!]!.error!.message, /fail-fast/);
});

test('best-effort: a failure ends its downstream only, and the run goes on', () => {
  const { machine, taken, t } = machineOf(['a', 'b', 'c'], [['a', 'b']], { policy: 'best-effort' });
  machine.start('T0');
  taken();
  machine.failed(t('a'), BROKEN, 'T1');
  assert.deepEqual(taken(), ['failed a (running)', 'cancelled b']);
  machine.completed(t('c'), 'T2', FACTS);
  assert.deepEqual(taken(), ['completed c (running)', 'finished']);
});

test('cancelTask cancels the task and its downstream; cancelRun the rest; the report says cancelled', () => {
  const { machine, taken, t } = machineOf(['a', 'b', 'c'], [['a', 'b']]);
  machine.start('T0');
  taken();
  machine.cancelTask(t('a'), 'not wanted', 'T1');
  assert.deepEqual(taken(), ['cancelled a (running)', 'cancelled b']);
  machine.cancelRun('stop', 'T2');
  assert.deepEqual(taken(), ['cancelled c (running)', 'finished']);
  const report = machine.report({
    runId: 'r',
    finishedAt: 'T3',
    outputOf: () => undefined,
    wireTaskId: () => 'w',
    streamedEdges: [],
  });
  assert.equal(report.status, 'cancelled');
  assert.deepEqual(
    report.tasks.map((entry) => [entry.task_id, entry.state, entry.finished_at]),
    [
      ['a', 'cancelled', 'T1'],
      ['b', 'cancelled', 'T1'],
      ['c', 'cancelled', 'T2'],
    ],
  );
});

test('reused tasks complete at start without a launch; the report takes facts and times from the events', () => {
  const { machine, taken, t } = machineOf(['a', 'b'], [['a', 'b']]);
  machine.start('T0', [t('a')]);
  assert.deepEqual(taken(), ['completed a', 'launch b']);
  machine.providerChosen(t('b'), 'p');
  machine.completed(t('b'), 'T1', { ...FACTS, violations: ['too dear'] });
  assert.deepEqual(taken(), ['completed b (running)', 'finished']);
  const outputs = [
    { type: 'text', data: 'A' },
    { type: 'text', data: 'B' },
  ];
  const report = machine.report({
    runId: 'r',
    finishedAt: 'T2',
    outputOf: (task) => outputs[task],
    wireTaskId: (task) => `${machine.idOf(task)}-w`,
    streamedEdges: [],
  });
  assert.equal(report.status, 'completed');
  assert.deepEqual(report.tasks[0], {
    task_id: 'a',
    state: 'completed',
    provider_id: REUSED,
    output: outputs[0],
    proof: 'absent',
    finished_at: 'T0',
  });
  assert.deepEqual(report.tasks[1], {
    task_id: 'b',
    state: 'completed',
    provider_id: 'p',
    output: outputs[1],
    cost_cu: 0.5,
    tokens_used: 3,
    proof: 'verified',
    started_at: 'T0',
    wire_task_id: 'b-w',
    finished_at: 'T1',
    violations: ['too dear'],
  });
  assert.deepEqual(report.result, { b: outputs[1] });
  assert.deepEqual(report.totals, { cost_cu: 0.5, tokens_used: 3 });
});

test('replaying the same events, as calls or as data, makes the same commands and the same report', () => {
  const made = () =>
    machineOf(
      ['a', 'b', 'c', 'd'],
      [
        ['a', 'c'],
        ['b', 'c'],
        ['c', 'd'],
      ],
      { maxConcurrency: 1, policy: 'best-effort' },
    );
  const direct = made();
  const { machine, t } = direct;
  machine.start('T0');
  machine.providerChosen(t('a'), 'p');
  machine.completed(t('a'), 'T1', FACTS);
  machine.cancelTask(t('d'), 'no', 'T2');
  machine.completed(t('b'), 'T3', FACTS);
  machine.failed(t('c'), BROKEN, 'T4');
  const events: MachineEvent[] = [
    { type: 'start', at: 'T0', reused: [] },
    { type: 'provider-chosen', task: t('a'), providerId: 'p' },
    { type: 'completed', task: t('a'), at: 'T1', facts: FACTS },
    { type: 'cancel-task', task: t('d'), reason: 'no', at: 'T2' },
    { type: 'completed', task: t('b'), at: 'T3', facts: FACTS },
    { type: 'failed', task: t('c'), error: BROKEN, at: 'T4' },
  ];
  const report = (run: ReturnType<typeof made>) =>
    run.machine.report({
      runId: 'r',
      finishedAt: 'T5',
      outputOf: () => undefined,
      wireTaskId: () => 'w',
      streamedEdges: [],
    });
  for (const replayed of [made(), made()]) {
    for (const event of events) replayed.machine.apply(event);
    assert.deepEqual(replayed.commands, direct.commands);
    assert.deepEqual(report(replayed), report(direct));
  }
  assert.equal(direct.commands[direct.commands.length - 1]!.type, 'finished');
  assert.equal(report(direct).status, 'failed');
});

test('a task the budget cannot cover ends cancelled, not started; its downstream goes as the failure policy says', () => {
  const denied = { code: ACMP_ERRORS.cancelled, message: 'not started: budget', data: { reason: 'budget' } };
  const lenient = machineOf(['a', 'b', 'c'], [['a', 'b']], { policy: 'best-effort' });
  lenient.machine.start('T0');
  assert.deepEqual(lenient.taken(), ['launch a', 'launch c']);
  assert.equal(lenient.machine.notCovered(lenient.t('a'), denied, 'T1'), true);
  assert.deepEqual(lenient.taken(), ['cancelled a (running)', 'cancelled b']);
  lenient.machine.completed(lenient.t('c'), 'T2', FACTS);
  assert.deepEqual(lenient.taken(), ['completed c (running)', 'finished']);
  const report = lenient.machine.report({
    runId: 'r',
    finishedAt: 'T3',
    outputOf: () => ({ type: 'text', data: 'c' }),
    wireTaskId: (task) => `w${task}`,
    streamedEdges: [],
  });
  assert.equal(report.status, 'cancelled', 'a run stopped on its budget is cancelled, not failed');
  const a = report.tasks[0]!;
  assert.deepEqual([a.state, a.error, a.started_at, a.wire_task_id], ['cancelled', denied, undefined, undefined]);

  // Under fail-fast every other task stops too; replayed as data, the same commands come.
  const strict = machineOf(['a', 'b', 'c'], [['a', 'b']]);
  const events: MachineEvent[] = [
    { type: 'start', at: 'T0', reused: [] },
    { type: 'not-covered', task: strict.t('a'), error: denied, at: 'T1' },
  ];
  for (const event of events) strict.machine.apply(event);
  assert.deepEqual(strict.taken(), [
    'launch a',
    'launch c',
    'cancelled a (running)',
    'cancelled b',
    'cancelled c (running)',
    'finished',
  ]);
});
