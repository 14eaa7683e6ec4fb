// Property tests of the analysis on files mid-edit and random DAGs: it never throws, keeps its ranges inside the
// text and answers within a time proportional to the text; a DAG made valid gets no diagnostics.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { type DagAnalysis, analyzeDag } from '../../server/src/dag/analyze';

/**
 * The time an analysis may take: generous enough for a loaded two-core machine (about six times the slowest rate
 * measured, on text the recovering parser works hardest on), tight enough to catch work that grows faster than the
 * text.
 */
const BASE_BUDGET_MS = 20;
const BUDGET_MS_PER_CHAR = 0.002;
/** A slow answer counts only when the re-runs are slow too: a garbage collection or a busy machine is not a bug. */
const RERUNS = 2;

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
  const budget = BASE_BUDGET_MS + text.length * BUDGET_MS_PER_CHAR;
  let fastest = Infinity;
  let analysis: DagAnalysis | undefined;
  for (let run = 0; run <= RERUNS && fastest > budget; run++) {
    const started = performance.now();
    analysis = analyzeDag(text);
    void analysis.document.root;
    fastest = Math.min(fastest, performance.now() - started);
  }
  assert.ok(fastest <= budget, `${fastest.toFixed(1)} ms for ${text.length} characters (budget ${budget} ms)`);
  assertRangesInside(analysis!, text);
  return analysis!;
}

// --- Mutations of valid files ---------------------------------------------------------------------------------------

const ROOT = join(__dirname, '../..');
const filesIn = (folder: string): string[] =>
  readdirSync(join(ROOT, folder))
    .filter((name) => name.endsWith('.acmp-dag.json'))
    .map((name) => readFileSync(join(ROOT, folder, name), 'utf8'));
const SEEDS = [...filesIn('examples'), ...filesIn('examples/errors'), ...filesIn('test/fixtures/diagnostics')];

/** A larger DAG, so that work growing faster than the text shows against the budget: a ladder of 300 tasks. */
const LARGE_SEED = JSON.stringify(
  {
    dag_id: 'dag_ladder',
    tasks: Array.from({ length: 300 }, (_, i) => ({
      task_id: `task_${i}`,
      capability: 'echo',
      input:
        i < 2 ? { type: 'text', data: `rung ${i}` } : { source: { from_tasks: [`task_${i - 2}`, `task_${i - 1}`] } },
    })),
    edges: Array.from({ length: 298 }, (_, i) => [
      { from: `task_${i}`, to: `task_${i + 2}` },
      { from: `task_${i + 1}`, to: `task_${i + 2}` },
    ]).flat(),
  },
  null,
  2,
);

/** Characters an edit inserts: JSON's punctuation, escapes, and what breaks a decoder (NUL, BOM, lone surrogates). */
const INSERTED = fc.string({
  unit: fc.constantFrom('{', '}', '[', ']', ':', ',', '"', '\\', 'u', '\n', ' ', '0', '-', 'e', '.', 't', '/', '*'),
  maxLength: 8,
});
const ODD_CHARACTER = fc.constantFrom('\0', '\uFEFF', '\uD800', '\uDC00', '😀', '\u2028', '\u001b');

type Mutation =
  | { readonly kind: 'truncate'; readonly at: number }
  | { readonly kind: 'delete' | 'duplicate'; readonly at: number; readonly length: number }
  | { readonly kind: 'insert'; readonly at: number; readonly text: string }
  | { readonly kind: 'delete line' | 'duplicate line'; readonly line: number }
  | { readonly kind: 'swap lines' | 'swap tokens'; readonly first: number; readonly second: number };

const MUTATION: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constantFrom('delete' as const, 'duplicate' as const), at: fc.nat(), length: fc.nat(40) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.oneof(INSERTED, ODD_CHARACTER) }),
  fc.record({ kind: fc.constantFrom('delete line' as const, 'duplicate line' as const), line: fc.nat() }),
  fc.record({
    kind: fc.constantFrom('swap lines' as const, 'swap tokens' as const),
    first: fc.nat(),
    second: fc.nat(),
  }),
);

const TOKEN = /"(?:[^"\\\n]|\\.)*"|-?\d[\d.eE+-]*|true|false|null|[{}[\]:,]/g;

/** Exchanges the `first`th and `second`th parts (taken modulo their count); the text between them stays. */
function swapParts(
  text: string,
  parts: readonly { start: number; end: number }[],
  first: number,
  second: number,
): string {
  if (parts.length < 2) return text;
  const x = parts[first % parts.length]!;
  const y = parts[second % parts.length]!;
  if (x === y) return text;
  const [a, b] = x.start < y.start ? [x, y] : [y, x];
  return (
    text.slice(0, a.start) +
    text.slice(b.start, b.end) +
    text.slice(a.end, b.start) +
    text.slice(a.start, a.end) +
    text.slice(b.end)
  );
}

/** The lines of the text, each with its newline. */
function lineSpans(text: string): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  for (let start = 0; start <= text.length;) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline + 1;
    spans.push({ start, end });
    if (newline === -1) break;
    start = end;
  }
  return spans;
}

function mutate(text: string, mutation: Mutation): string {
  const at = (offset: number): number => offset % (text.length + 1);
  switch (mutation.kind) {
    case 'truncate':
      return text.slice(0, at(mutation.at));
    case 'delete':
      return text.slice(0, at(mutation.at)) + text.slice(at(mutation.at) + mutation.length);
    case 'duplicate': {
      const start = at(mutation.at);
      return text.slice(0, start) + text.slice(start, start + mutation.length) + text.slice(start);
    }
    case 'insert':
      return text.slice(0, at(mutation.at)) + mutation.text + text.slice(at(mutation.at));
    case 'delete line':
    case 'duplicate line': {
      const lines = lineSpans(text);
      const { start, end } = lines[mutation.line % lines.length]!;
      const line = text.slice(start, end);
      return text.slice(0, start) + (mutation.kind === 'duplicate line' ? line + line : '') + text.slice(end);
    }
    case 'swap lines':
      return swapParts(text, lineSpans(text), mutation.first, mutation.second);
    case 'swap tokens': {
      const tokens = [...text.matchAll(TOKEN)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
      return swapParts(text, tokens, mutation.first, mutation.second);
    }
  }
}

const MUTATIONS = fc.array(MUTATION, { minLength: 1, maxLength: 4 });

describe('the analysis of valid files mid-edit', () => {
  test('never throws, keeps its ranges inside the text, answers within the budget', () => {
    assert.ok(SEEDS.length >= 15, `${SEEDS.length} seed files`);
    fc.assert(
      fc.property(fc.constantFrom(...SEEDS), MUTATIONS, (seed, mutations) => {
        analyseChecked(mutations.reduce(mutate, seed));
      }),
      { seed: 7001, numRuns: 2000 },
    );
  });

  test('on a 300-task file too', () => {
    fc.assert(
      fc.property(MUTATIONS, (mutations) => {
        analyseChecked(mutations.reduce(mutate, LARGE_SEED));
      }),
      { seed: 7002, numRuns: 60 },
    );
  });
});

// --- Random DAG structures ------------------------------------------------------------------------------------------

/** A few ids, so that references, edges and duplicates meet; some name no task or break the id form. */
const ID = fc.constantFrom('task_a', 'task_b', 'task_c', 'task_d', 'task_e', 'task_missing', 'b', '');
const ANY_PATH = fc.string({
  unit: fc.constantFrom('data', 'x', '_', '.', '[', ']', '0', '1', '07', ' '),
  maxLength: 6,
});
const JSON_VALUE = fc.jsonValue({ maxDepth: 2 });

const SOURCE = fc.record(
  {
    from_task: fc.oneof(ID, JSON_VALUE),
    from_tasks: fc.array(ID, { maxLength: 3 }),
    field: fc.oneof(ANY_PATH, JSON_VALUE),
  },
  { requiredKeys: [] },
);
const INPUT = fc.oneof(
  fc.record({ type: fc.constantFrom('text', 'json'), data: JSON_VALUE }, { requiredKeys: [] }),
  fc.record({ source: SOURCE }),
  fc.record({ type: fc.constant('text'), data: JSON_VALUE, source: SOURCE }),
  JSON_VALUE,
);
const TASK = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.record(
      {
        task_id: fc.oneof({ weight: 9, arbitrary: ID }, { weight: 1, arbitrary: JSON_VALUE }),
        capability: fc.constantFrom('echo', 'text-split', ''),
        input: INPUT,
        metadata: fc.record({ dag_id: fc.constantFrom('dag_random', 'dag_other') }),
        timeout_ms: fc.oneof(fc.integer(), fc.double()),
        stream: fc.boolean(),
        unknown_property: JSON_VALUE,
      },
      { requiredKeys: ['task_id', 'input'] },
    ),
  },
  { weight: 1, arbitrary: JSON_VALUE },
);
const EDGE = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.record({ from: ID, to: ID, stream_eligible: fc.boolean() }, { requiredKeys: ['from', 'to'] }),
  },
  { weight: 1, arbitrary: JSON_VALUE },
);
const RANDOM_DAG = fc.record(
  {
    dag_id: fc.oneof(fc.constantFrom('dag_random', 'random'), JSON_VALUE),
    tasks: fc.oneof({ weight: 9, arbitrary: fc.array(TASK, { maxLength: 10 }) }, { weight: 1, arbitrary: JSON_VALUE }),
    edges: fc.oneof({ weight: 9, arbitrary: fc.array(EDGE, { maxLength: 15 }) }, { weight: 1, arbitrary: JSON_VALUE }),
  },
  { requiredKeys: [] },
);

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

const INDENT = fc.constantFrom(0, 1, 2, '\t');

describe('the analysis of random DAG structures', () => {
  test('never throws, keeps its ranges inside the text, answers within the budget', () => {
    fc.assert(
      fc.property(RANDOM_DAG, INDENT, (dag, indent) => {
        analyseChecked(JSON.stringify(dag, null, indent));
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
