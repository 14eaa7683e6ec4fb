// A durable run's task step (run/durable/taskStep.ts) with the built-in provider, and the output store of a real
// folder: a task id that is a path does not name the file its large output goes to; a store that cannot take an
// output, or give back an input, fails the task with a message as the step's outcome (journaled, never sent again),
// a task whose input cannot be made is not invoked, and a proof's input_hash is checked against the input sent.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';
import type { TaskOutput } from '../../server/src/protocol/report';
import { connectProvider } from '../../server/src/run/connect';
import {
  DEFAULT_JOURNAL_OUTPUT_BYTES,
  type OutputRef,
  isOutputRef,
  outputKey,
  prepareOutputStore,
} from '../../server/src/run/durable/outputStore';
import { type StepOutcome, type TaskStep, inputFromStore, runTaskStep } from '../../server/src/run/durable/taskStep';
import { ACMP_ERRORS } from '../../server/src/protocol/acmpMessages';
import { BUILTIN_PROVIDER } from '../../server/src/run/pricing';
import { ProviderPool } from '../../server/src/run/routing';
import { resultHash } from '../../server/src/run/proof';
import { ScriptedProvider, answer, scriptedConnector } from '../support/scriptedProviders';

const EVIL = 'task_/../../sub/evil';
const BIG = 'x'.repeat(DEFAULT_JOURNAL_OUTPUT_BYTES + 1);
const analysis = analyzeDag(
  JSON.stringify({
    dag_id: 'dag_store_paths',
    tasks: [
      { task_id: EVIL, capability: 'echo', input: { type: 'text', data: BIG } },
      { task_id: 'task_next', capability: 'echo', input: { source: { from_task: EVIL } } },
    ],
    edges: [{ from: EVIL, to: 'task_next' }],
  }),
  { keepValue: true },
);
const plainTasks = (analysis.value as { tasks: Record<string, unknown>[] }).tasks;
const pool = new ProviderPool([BUILTIN_PROVIDER], connectProvider);
const scratch = mkdtempSync(join(tmpdir(), 'acmp-durable-step-'));
after(async () => {
  await pool.closeAll();
  rmSync(scratch, { recursive: true, force: true });
});

/** The step of the DAG's task at `task` in the run `runId`, with `input`. */
function stepOf(runId: string, task: number, input: TaskStep['input']): TaskStep {
  const declaration = analysis.model.tasks[task]!;
  return {
    runId,
    task,
    wireTaskId: `${declaration.id!}-tag`,
    capability: declaration.capability!,
    plain: plainTasks[task]!,
    input,
    maxPriceCu: undefined,
    candidates: pool.candidates(declaration.capability!),
  };
}

const run = (step: TaskStep, storeDir: string): Promise<StepOutcome> =>
  runTaskStep(step, {
    pool,
    storeDir,
    journalLimitBytes: DEFAULT_JOURNAL_OUTPUT_BYTES,
    signal: new AbortController().signal,
  });

function storedOutput(outcome: StepOutcome): OutputRef {
  assert.ok(outcome.ok, JSON.stringify(outcome));
  assert.ok(isOutputRef(outcome.output));
  return outcome.output;
}

const literal = (data: string): TaskStep['input'] => ({ ok: true, input: { type: 'text', data } });

test('a task id and a run id that are paths: the large output goes to the run folder of the store, by task index', async () => {
  const parent = mkdtempSync(join(scratch, 'parent-'));
  const store = join(parent, 'store');
  prepareOutputStore(store);
  const runId = '../../run/../..';
  const first = storedOutput(await run(stepOf(runId, 0, literal(BIG)), store));
  assert.equal(first.ref.key, outputKey(runId, 0));
  // The downstream task's input is the stored output, read back in its own step.
  const input = inputFromStore(analysis.model.tasks[1]!, plainTasks[1]!.input, () => first, store);
  assert.deepEqual(input, { ok: true, input: { type: 'text', data: BIG } });
  const second = storedOutput(await run(stepOf(runId, 1, input), store));
  assert.equal(second.ref.key, outputKey(runId, 1));
  assert.deepEqual(readdirSync(parent), ['store']);
  assert.deepEqual(readdirSync(store, { recursive: true }).sort(), [
    outputKey(runId, 0).split('/')[0],
    outputKey(runId, 0),
    outputKey(runId, 1),
  ]);
});

test('a store that cannot take the output fails the task with a message, as its outcome', async () => {
  const blocked = join(scratch, 'not-a-folder');
  writeFileSync(blocked, '');
  const outcome = await run(stepOf('run-blocked', 0, literal(BIG)), blocked);
  assert.equal(outcome.ok, false);
  assert.equal(outcome.providerId, BUILTIN_PROVIDER.id);
  assert.equal(outcome.error.code, ACMP_ERRORS.internal);
  assert.match(
    outcome.error.message,
    /^provider "builtin" answered, but the output \(\d+ bytes\) could not be written to the output store .*not-a-folder \(ENOTDIR\)$/,
  );
  // A small output needs no store: the same step completes.
  const small = await run(stepOf('run-blocked', 0, literal('small')), blocked);
  assert.ok(small.ok);
  assert.deepEqual(small.output, { type: 'text', data: 'small' } satisfies TaskOutput);
});

test("a proof's input_hash is checked against the input the step sent", async () => {
  const store = mkdtempSync(join(scratch, 'store-'));
  const proved = { ...plainTasks[0]!, proof_method: 'result-hash' };
  const honest = await run({ ...stepOf('run-proof', 0, literal('small')), plain: proved }, store);
  assert.ok(honest.ok);
  assert.deepEqual([honest.proof, honest.violations], ['verified', []]);

  const elsewhere: TaskOutput = { type: 'text', data: 'another input' };
  const liar = new ScriptedProvider('liar', {
    echo: (call) =>
      answer(call, call.params.input!, {
        proof: { method: 'result-hash', hash: resultHash(call.params.input!), input_hash: resultHash(elsewhere) },
      }),
  });
  const liars = new ProviderPool([{ id: 'liar', transport: 'stdio' }], scriptedConnector(liar));
  try {
    const step = { ...stepOf('run-proof', 0, literal('small')), plain: proved, candidates: liars.candidates('echo') };
    const lied = await runTaskStep(step, {
      pool: liars,
      storeDir: store,
      journalLimitBytes: DEFAULT_JOURNAL_OUTPUT_BYTES,
      signal: new AbortController().signal,
    });
    assert.ok(lied.ok);
    assert.deepEqual(
      [lied.proof, lied.violations],
      ['mismatch', ["the result-hash proof's input_hash does not match the input sent"]],
    );
  } finally {
    await liars.closeAll();
  }
});

test('an input the store cannot give back fails the task, which is not invoked', async () => {
  const store = mkdtempSync(join(scratch, 'store-'));
  const kept = storedOutput(await run(stepOf('run-gone', 0, literal(BIG)), store));
  const next = analysis.model.tasks[1]!;
  writeFileSync(join(store, kept.ref.key), JSON.stringify({ type: 'text', data: 'changed' }));
  const changed = inputFromStore(next, plainTasks[1]!.input, () => kept, store);
  assert.equal(changed.ok, false);
  assert.match(changed.error.message, /^its input cannot be made: the stored output \S+ does not match its reference$/);
  rmSync(join(store, kept.ref.key));
  const gone = inputFromStore(next, plainTasks[1]!.input, () => kept, store);
  assert.equal(gone.ok, false);
  assert.match(gone.error.message, /is not in the output store .* \(ENOENT\)/);
  const forged = inputFromStore(
    next,
    plainTasks[1]!.input,
    () => ({ ...kept, ref: { ...kept.ref, key: '../../etc/passwd' } }),
    store,
  );
  assert.equal(forged.ok, false);
  assert.match(forged.error.message, /"..\/..\/etc\/passwd" is not a key of the output store/);

  const outcome = await run(stepOf('run-gone', 1, gone), store);
  assert.deepEqual(outcome, { ok: false, at: outcome.at, error: gone.error });
});
