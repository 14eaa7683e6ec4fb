// Property tests of the analysis on files mid-edit and random DAGs: it never throws and keeps its ranges inside the
// text; a DAG made valid gets no diagnostics. How fast it answers on the same texts is `npm run bench`'s to measure
// (its mid-edit target), not a test's: a time depends on the machine.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { type DagAnalysis, analyzeDag } from '../../server/src/dag/analyze';
import { INDENT, LARGE_SEED, RANDOM_DAG_TEXT, SEEDS, editedText } from '../support/editedDags';

function assertRangesInside(analysis: DagAnalysis, text: string): void {
  for (const diagnostic of analysis.diagnostics) {
    for (const span of [diagnostic, ...(diagnostic.related ?? [])]) {
      assert.ok(
        span.start >= 0 && span.start <= span.end && span.end <= text.length,
        `${diagnostic.code} at ${span.start}..${span.end} in a text of ${text.length}`,
      );
    }
  }
}

/** Analyses the text as the server does after an edit (its diagnostics, then its index), checking the properties. */
function analyseChecked(text: string): DagAnalysis {
  const analysis = analyzeDag(text);
  void analysis.document.root;
  assertRangesInside(analysis, text);
  return analysis;
}

describe('the analysis of valid files mid-edit', () => {
  test('never throws and keeps its ranges inside the text', () => {
    assert.ok(SEEDS.length >= 15, `${SEEDS.length} seed files`);
    fc.assert(
      fc.property(editedText(SEEDS), (text) => {
        analyseChecked(text);
      }),
      { seed: 7001, numRuns: 2000 },
    );
  });

  test('on a 300-task file too', () => {
    fc.assert(
      fc.property(editedText([LARGE_SEED]), (text) => {
        analyseChecked(text);
      }),
      { seed: 7002, numRuns: 60 },
    );
  });
});

// --- Random DAG structures ------------------------------------------------------------------------------------------

/** Paths of the grammar of Layer 2 §3: `data`, then `.member` and `[index]` parts. */
const VALID_PATH = fc
  .array(
    fc.oneof(
      fc.stringMatching(/^\.[A-Za-z_][A-Za-z0-9_]{0,4}$/),
      fc.nat(30).map((i) => `[${i}]`),
    ),
    { maxLength: 3 },
  )
  .map((parts) => `data${parts.join('')}`);

interface TaskPlan {
  readonly literal: boolean;
  /** Upstream picks, taken modulo the task's position: only earlier tasks, so the graph stays acyclic. */
  readonly upstream: readonly number[];
  readonly many: boolean;
  readonly field: string | undefined;
}

interface ValidDag {
  readonly tasks: object[];
  readonly edges: object[];
}

/** A DAG valid by construction: references only to earlier tasks, an edge for each, extra edges forward only. */
function validDag(plans: readonly TaskPlan[], extraEdges: readonly (readonly [number, number, boolean])[]): ValidDag {
  const n = plans.length;
  const name = (i: number): string => `task_${i}`;
  const edges = new Map<string, { from: string; to: string; stream_eligible?: boolean }>();
  const fielded = new Set<string>();
  const tasks = plans.map((plan, j) => {
    const upstream = j === 0 || plan.literal ? [] : [...new Set(plan.upstream.map((u) => u % j))];
    let input: object = { type: 'text', data: `input of ${j}` };
    for (const u of upstream) edges.set(`${u}>${j}`, { from: name(u), to: name(j) });
    if (upstream.length === 1 && !plan.many) {
      if (plan.field !== undefined && plan.field !== 'data') fielded.add(`${upstream[0]}>${j}`);
      input = { source: { from_task: name(upstream[0]!), ...(plan.field === undefined ? {} : { field: plan.field }) } };
    } else if (upstream.length > 0) {
      input = { source: { from_tasks: upstream.map(name) } };
    }
    return { task_id: name(j), capability: 'echo', input, metadata: { dag_id: 'dag_valid' } };
  });
  for (const [a, b, streamEligible] of extraEdges) {
    const [from, to] = [a % n, b % n].sort((x, y) => x - y) as [number, number];
    if (from === to) continue;
    const key = `${from}>${to}`;
    const edge = edges.get(key) ?? { from: name(from), to: name(to) };
    // A stream_eligible edge whose reference selects a sub-field is a warning (stream-field): not made here.
    if (streamEligible && !fielded.has(key)) edge.stream_eligible = true;
    edges.set(key, edge);
  }
  return { tasks, edges: [...edges.values()] };
}

/** Valid DAGs, their tasks and edges in any order. */
const VALID_DAG = fc
  .tuple(
    fc.array(
      fc.record({
        literal: fc.boolean(),
        upstream: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
        many: fc.boolean(),
        field: fc.option(VALID_PATH, { nil: undefined }),
      }),
      { minLength: 1, maxLength: 12 },
    ),
    fc.array(fc.tuple(fc.nat(), fc.nat(), fc.boolean()), { maxLength: 20 }),
  )
  .chain(([plans, extraEdges]) => {
    const { tasks, edges } = validDag(plans, extraEdges);
    return fc.record({
      dag_id: fc.constant('dag_valid'),
      tasks: fc.shuffledSubarray(tasks, { minLength: tasks.length }),
      edges: fc.shuffledSubarray(edges, { minLength: edges.length }),
    });
  });

describe('the analysis of random DAG structures', () => {
  test('never throws and keeps its ranges inside the text', () => {
    fc.assert(
      fc.property(RANDOM_DAG_TEXT, (text) => {
        analyseChecked(text);
      }),
      { seed: 7003, numRuns: 1500 },
    );
  });

  test('a DAG made valid gets no diagnostics at all', () => {
    const seen = { from_task: 0, from_tasks: 0, field: 0, stream_eligible: 0 };
    fc.assert(
      fc.property(VALID_DAG, INDENT, (dag, indent) => {
        const text = JSON.stringify(dag, null, indent);
        for (const key of Object.keys(seen) as (keyof typeof seen)[]) if (text.includes(`"${key}"`)) seen[key]++;
        assert.deepEqual(analyseChecked(text).diagnostics, []);
      }),
      { seed: 7004, numRuns: 800 },
    );
    // The valid DAGs must use each form a reference and an edge can take.
    for (const [key, count] of Object.entries(seen)) assert.ok(count > 200, `${count} of 800 DAGs use ${key}`);
  });
});
