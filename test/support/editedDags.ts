// Texts a user's editor holds: valid files mid-edit (mutations of the examples and fixtures, and of a 300-task file)
// and random DAG structures, as fast-check arbitraries. The property tests (test/unit/properties.test.ts) check the
// analysis on them; the bench (test/bench/bench.ts) times it on a sample of them.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';

const ROOT = join(__dirname, '../..');
const filesIn = (folder: string): string[] =>
  readdirSync(join(ROOT, folder))
    .filter((name) => name.endsWith('.acmp-dag.json'))
    .map((name) => readFileSync(join(ROOT, folder, name), 'utf8'));
export const SEEDS = [...filesIn('examples'), ...filesIn('examples/errors'), ...filesIn('test/fixtures/diagnostics')];

/** A larger DAG, where work growing faster than the text would show: a ladder of 300 tasks. */
export const LARGE_SEED = JSON.stringify(
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

/** A seed file after one to four edits. */
export const editedText = (seeds: readonly string[]): fc.Arbitrary<string> =>
  fc.tuple(fc.constantFrom(...seeds), MUTATIONS).map(([seed, mutations]) => mutations.reduce(mutate, seed));

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

export const INDENT = fc.constantFrom(0, 1, 2, '\t');

/** A random DAG structure, as JSON text. */
export const RANDOM_DAG_TEXT: fc.Arbitrary<string> = fc
  .tuple(RANDOM_DAG, INDENT)
  .map(([dag, indent]) => JSON.stringify(dag, null, indent));
