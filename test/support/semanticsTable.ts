// The execution semantics (design.md §5-§6, Layer 2 §2-§4) as one table of cases, run against any driver of the run
// machine: the in-memory driver (test/unit/semantics.test.ts) and the durable one run the same rows. A case is a DAG,
// scripted providers, what the test does while it runs, and the task states and report facts a user would see.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type DagAnalysis, analyzeDag } from '../../server/src/dag/analyze';
import type { TaskOutput, RunReport, RunStatus, TaskState } from '../../server/src/protocol/report';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import { REUSED } from '../../server/src/run/machine';
import { ACMP_ERRORS, METHODS } from '../../server/src/protocol/acmpMessages';
import type { DagRun, RunOptions } from '../../server/src/run/types';
import { type Behaviour, ScriptedProvider, echo, refuse, scriptedConnector, untilCancelled } from './scriptedProviders';

/** What runs a DAG: `startRun` itself, or a driver that runs the same machine elsewhere. */
export interface RunDriver {
  readonly name: string;
  start(analysis: DagAnalysis, options: RunOptions): DagRun | Promise<DagRun>;
}

type Json = Record<string, unknown>;

export interface SemanticsCase {
  readonly name: string;
  readonly tasks: readonly Json[];
  readonly edges?: readonly Json[];
  /** The providers, made fresh for each run; the providers file lists them in this order. */
  providers(): ScriptedProvider[];
  readonly options?: Pick<RunOptions, 'policy' | 'maxConcurrency' | 'reuse'>;
  /** What the user does while the run goes (cancel a task once it was invoked, ...). */
  act?(run: DagRun, providers: readonly ScriptedProvider[]): Promise<void>;
  readonly expect: {
    readonly status: RunStatus;
    readonly states: Readonly<Record<string, TaskState>>;
    readonly outputs?: Readonly<Record<string, TaskOutput>>;
    readonly providers?: Readonly<Record<string, string>>;
    readonly errorCodes?: Readonly<Record<string, number>>;
    /** Error messages, by task, contain these. */
    readonly errorsMention?: Readonly<Record<string, string>>;
    /** The tasks in the order their invokes reached the providers (all of them, each once). */
    readonly invokeOrder?: readonly string[];
    /** The most invokes the providers ran at once. */
    readonly peakActive?: number;
    /** Tasks that got `acmp/cancel`. */
    readonly cancelSent?: readonly string[];
    /** How many times the providers executed a task, by task (an invoke sent again must not run it twice). */
    readonly executions?: Readonly<Record<string, number>>;
  };
}

const text = (data: string): TaskOutput => ({ type: 'text', data });
const task = (id: string, capability: string, input: object): Json => ({ task_id: id, capability, input });
const from = (id: string): Json => ({ source: { from_task: id } });
const edge = (source: string, target: string): Json => ({ from: source, to: target });
const wireOf = (wireId: string): string => wireId.slice(0, wireId.indexOf('-'));

/** Answers with its input after a few turns of the event loop, so that invokes overlap when they may. */
const slowEcho: Behaviour = async (call) => {
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
  return echo(call);
};
const failing = refuse(ACMP_ERRORS.internal, 'it broke');
const provider = (behaviours: Record<string, Behaviour>, id = 'p') => new ScriptedProvider(id, behaviours);
const invoked = (providers: readonly ScriptedProvider[], id: string) =>
  Promise.race(
    providers.map((candidate) => candidate.whenReceived(METHODS.invoke, (params) => wireOf(params.task_id) === id)),
  );

export const SEMANTICS: readonly SemanticsCase[] = [
  {
    name: 'ready tasks start in declaration order, at most maxConcurrency at once',
    tasks: ['t1', 't2', 't3', 't4', 't5'].map((id) => task(id, 'slow', text(id))),
    providers: () => [provider({ slow: slowEcho })],
    options: { maxConcurrency: 2 },
    expect: {
      status: 'completed',
      states: { t1: 'completed', t2: 'completed', t3: 'completed', t4: 'completed', t5: 'completed' },
      invokeOrder: ['t1', 't2', 't3', 't4', 't5'],
      peakActive: 2,
    },
  },
  {
    name: 'an ordering-only edge holds its target until the source completed; its input stays literal',
    tasks: [task('second', 'echo', text('literal')), task('first', 'slow', text('first'))],
    edges: [edge('first', 'second')],
    providers: () => [provider({ echo, slow: slowEcho })],
    expect: {
      status: 'completed',
      states: { first: 'completed', second: 'completed' },
      outputs: { second: text('literal') },
      invokeOrder: ['first', 'second'],
    },
  },
  {
    name: 'from_tasks gives the outputs in the listed order, not the edges’ order',
    tasks: [
      task('a', 'echo', text('A')),
      task('b', 'echo', text('B')),
      task('c', 'echo', text('C')),
      task('joined', 'echo', { source: { from_tasks: ['c', 'a', 'b'] } }),
    ],
    edges: [edge('a', 'joined'), edge('b', 'joined'), edge('c', 'joined')],
    providers: () => [provider({ echo })],
    expect: {
      status: 'completed',
      states: { a: 'completed', b: 'completed', c: 'completed', joined: 'completed' },
      outputs: { joined: { type: 'json', data: [text('C'), text('A'), text('B')] } },
    },
  },
  {
    name: 'fail-fast: a failure cancels the whole run, running tasks get acmp/cancel',
    tasks: [task('broken', 'fail', text('x')), task('after', 'echo', from('broken')), task('other', 'wait', text('o'))],
    edges: [edge('broken', 'after')],
    // `broken` fails once `other` reached its provider, so `other` is running then: a driver may start its tasks in
    // any order (a durable one's steps start when the engine runs them), and a task never invoked gets no cancel.
    providers: () => {
      const held: ScriptedProvider[] = [];
      const failsOnceOtherRuns: Behaviour = async (call) => {
        await invoked(held, 'other');
        return failing(call);
      };
      held.push(provider({ fail: failsOnceOtherRuns, echo, wait: untilCancelled }));
      return held;
    },
    expect: {
      status: 'failed',
      states: { broken: 'failed', after: 'cancelled', other: 'cancelled' },
      errorCodes: { broken: ACMP_ERRORS.internal, after: ACMP_ERRORS.cancelled, other: ACMP_ERRORS.cancelled },
      errorsMention: { after: 'upstream task "broken" failed', other: 'fail-fast' },
      cancelSent: ['other'],
    },
  },
  {
    name: 'best-effort: a failure cancels what depends on it, breadth first; independent branches go on',
    tasks: [
      task('broken', 'fail', text('x')),
      task('child', 'echo', from('broken')),
      task('grandchild', 'echo', from('child')),
      task('ordered', 'echo', text('o')),
      task('free', 'slow', text('free')),
    ],
    edges: [edge('broken', 'child'), edge('child', 'grandchild'), edge('child', 'ordered')],
    providers: () => [provider({ fail: failing, echo, slow: slowEcho })],
    options: { policy: 'best-effort' },
    expect: {
      status: 'failed',
      states: {
        broken: 'failed',
        child: 'cancelled',
        grandchild: 'cancelled',
        ordered: 'cancelled',
        free: 'completed',
      },
      errorsMention: { grandchild: 'upstream task "broken" failed', ordered: 'upstream task "broken" failed' },
      outputs: { free: text('free') },
      invokeOrder: ['broken', 'free'],
    },
  },
  {
    name: 'cancelling a task cancels it and everything downstream; the rest completes',
    tasks: [
      task('done', 'echo', text('d')),
      task('held', 'wait', from('done')),
      task('below', 'echo', from('held')),
      task('beside', 'echo', from('done')),
    ],
    edges: [edge('done', 'held'), edge('held', 'below'), edge('done', 'beside')],
    providers: () => [provider({ echo, wait: untilCancelled })],
    act: async (run, providers) => {
      await invoked(providers, 'held');
      run.cancelTask('held', 'not wanted');
    },
    expect: {
      status: 'cancelled',
      states: { done: 'completed', held: 'cancelled', below: 'cancelled', beside: 'completed' },
      errorsMention: { held: 'not wanted', below: 'cancelled with upstream task "held"' },
      outputs: { done: text('d'), beside: text('d') },
      cancelSent: ['held'],
    },
  },
  {
    name: 'cancelling the run cancels every task not terminal yet',
    tasks: [task('one', 'wait', text('1')), task('two', 'wait', text('2')), task('later', 'echo', from('one'))],
    edges: [edge('one', 'later')],
    providers: () => [provider({ echo, wait: untilCancelled })],
    act: async (run, providers) => {
      await Promise.all([invoked(providers, 'one'), invoked(providers, 'two')]);
      run.cancel('stop');
    },
    expect: {
      status: 'cancelled',
      states: { one: 'cancelled', two: 'cancelled', later: 'cancelled' },
      errorsMention: { one: 'stop', two: 'stop', later: 'stop' },
      cancelSent: ['one', 'two'],
    },
  },
  {
    name: 'reused outputs complete their tasks at once, uninvoked, and feed what depends on them',
    tasks: [task('early', 'fail', text('x')), task('next', 'echo', from('early'))],
    edges: [edge('early', 'next')],
    providers: () => [provider({ fail: failing, echo })],
    options: { reuse: { early: text('kept') } },
    expect: {
      status: 'completed',
      states: { early: 'completed', next: 'completed' },
      outputs: { early: text('kept'), next: text('kept') },
      providers: { early: REUSED, next: 'p' },
      invokeOrder: ['next'],
    },
  },
  {
    name: 'a provider that lacks the capability (-33002) or the budget (-33001) passes the task to the next',
    tasks: [task('missing', 'echo', text('m')), task('costly', 'pricey', text('c'))],
    providers: () => [
      provider({ pricey: refuse(ACMP_ERRORS.budget_exceeded, 'too dear') }, 'first'),
      provider({ echo, pricey: echo }, 'second'),
    ],
    expect: {
      status: 'completed',
      states: { missing: 'completed', costly: 'completed' },
      providers: { missing: 'second', costly: 'second' },
      outputs: { missing: text('m'), costly: text('c') },
    },
  },
  {
    name: 'a refusal on an open connection passes the task on too',
    tasks: [task('opener', 'echo', text('o')), task('later', 'pricey', text('l'))],
    edges: [edge('opener', 'later')],
    providers: () => [
      provider({ echo, pricey: refuse(ACMP_ERRORS.budget_exceeded, 'too dear') }, 'first'),
      provider({ pricey: echo }, 'second'),
    ],
    expect: {
      status: 'completed',
      states: { opener: 'completed', later: 'completed' },
      providers: { opener: 'first', later: 'second' },
      outputs: { later: text('l') },
    },
  },
  {
    name: 'an answer lost with the connection is asked again with the same task id, on a new connection',
    tasks: [task('opener', 'losing', text('o')), task('later', 'echo', text('l'))],
    edges: [edge('opener', 'later')],
    providers: () => {
      const made: ScriptedProvider[] = [];
      // Once the first task's answer is on its way, the next invoke's answer is lost.
      const losing: Behaviour = async (call) => {
        await new Promise((resolve) => setImmediate(resolve));
        made[0]!.dropAnswers = 1;
        return echo(call);
      };
      made.push(provider({ losing, echo }));
      return made;
    },
    expect: {
      status: 'completed',
      states: { opener: 'completed', later: 'completed' },
      outputs: { later: text('l') },
      invokeOrder: ['opener', 'later', 'later'],
      executions: { later: 1 },
    },
  },
  {
    name: 'any other error of a provider fails the task without trying the next',
    tasks: [task('broken', 'fail', text('x'))],
    providers: () => [provider({ fail: failing }, 'first'), provider({ fail: echo }, 'second')],
    expect: {
      status: 'failed',
      states: { broken: 'failed' },
      providers: { broken: 'first' },
      errorCodes: { broken: ACMP_ERRORS.internal },
    },
  },
];

/** Runs one case with `driver`; resolves with the report once the checks passed. */
export async function runCase(driver: RunDriver, row: SemanticsCase): Promise<RunReport> {
  const providers = row.providers();
  const configs: ProviderConfig[] = providers.map((scripted) => ({ id: scripted.id, transport: 'stdio' }));
  const analysis = analyzeDag(JSON.stringify({ dag_id: 'dag_semantics', tasks: row.tasks, edges: row.edges ?? [] }));
  const run = await driver.start(analysis, {
    providers: configs,
    connect: scriptedConnector(...providers),
    backoffMs: 1,
    ...row.options,
  });
  await row.act?.(run, providers);
  const report = await run.done;
  const { expect } = row;
  const byId = new Map(report.tasks.map((entry) => [entry.task_id, entry]));
  assert.equal(report.status, expect.status, 'the run status');
  assert.deepEqual(Object.fromEntries(report.tasks.map((entry) => [entry.task_id, entry.state])), expect.states);
  for (const [id, output] of Object.entries(expect.outputs ?? {})) assert.deepEqual(byId.get(id)?.output, output, id);
  for (const [id, providerId] of Object.entries(expect.providers ?? {})) {
    assert.equal(byId.get(id)?.provider_id, providerId, `${id}'s provider`);
  }
  for (const [id, code] of Object.entries(expect.errorCodes ?? {})) assert.equal(byId.get(id)?.error?.code, code, id);
  for (const [id, words] of Object.entries(expect.errorsMention ?? {})) {
    assert.ok(byId.get(id)?.error?.message.includes(words), `${id}'s error says "${words}"`);
  }
  const received = (method: string) =>
    providers.flatMap((scripted) => scripted.messages(method).map((params) => wireOf(params.task_id)));
  if (expect.invokeOrder !== undefined) assert.deepEqual(received(METHODS.invoke), expect.invokeOrder);
  if (expect.peakActive !== undefined) {
    assert.equal(Math.max(...providers.map((scripted) => scripted.peakActive)), expect.peakActive);
  }
  for (const [id, count] of Object.entries(expect.executions ?? {})) {
    const executed = providers.flatMap((scripted) =>
      [...scripted.executions].filter(([wireId]) => wireOf(wireId) === id),
    );
    assert.equal(
      executed.reduce((sum, [, times]) => sum + times, 0),
      count,
      `${id}'s executions`,
    );
  }
  if (expect.cancelSent !== undefined) assert.deepEqual(received(METHODS.cancel).sort(), [...expect.cancelSent].sort());
  return report;
}

/** Registers a test per case for `driver`. */
export function testSemantics(driver: RunDriver): void {
  for (const row of SEMANTICS) {
    test(`${driver.name}: ${row.name}`, { timeout: 10_000 }, async () => void (await runCase(driver, row)));
  }
}
