// The cycle check and the field-path grammar agree with independent implementations: graphlib's strongly connected
// components and acyclicity test, and a regular expression written from Layer 2 §3.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { analyzeDag } from '../../server/src/dag/analyze';
import { dagIndex } from '../../server/src/dag/dagIndex';
import { parseFieldPath } from '../../server/src/dag/fieldPath';

interface RandomGraph {
  readonly size: number;
  /** Pairs of node numbers; duplicates and self-loops included. A node number of `size` names no task. */
  readonly edges: readonly (readonly [number, number])[];
  /** Positions in the tasks list holding something that is not a task object (it declares no task). */
  readonly strays: readonly number[];
}

const RANDOM_GRAPH: fc.Arbitrary<RandomGraph> = fc.integer({ min: 1, max: 25 }).chain((size) =>
  fc.record({
    size: fc.constant(size),
    edges: fc.array(fc.tuple(fc.nat(size), fc.nat(size)), { maxLength: 3 * size }),
    strays: fc.array(fc.nat(size), { maxLength: 2 }),
  }),
);

const pairKey = (from: number, to: number): string => `${from}>${to}`;

/** The DAG file of a graph: each edge on its own line, so a diagnostic's offset tells its edge. */
function dagText({ size, edges, strays }: RandomGraph): { text: string; edgeAt: Map<number, string> } {
  const tasks: unknown[] = Array.from({ length: size }, (_, n) => ({
    task_id: `task_${n}`,
    capability: 'echo',
    input: { type: 'text', data: 'x' },
  }));
  for (const position of strays) tasks.splice(position, 0, null);
  let text = `{"dag_id": "dag_graph", "tasks": ${JSON.stringify(tasks)}, "edges": [\n`;
  const edgeAt = new Map<number, string>();
  edges.forEach(([from, to], i) => {
    edgeAt.set(text.length, pairKey(from, to));
    text += `{"from": "task_${from}", "to": "task_${to}"}${i < edges.length - 1 ? ',' : ''}\n`;
  });
  return { text: `${text}]}`, edgeAt };
}

// graphlib is an ES module, which this CommonJS test can only import dynamically.
const graphlib = import('@dagrejs/graphlib');

/** The edges inside a strongly connected component, self-loops included, computed by graphlib. */
function edgesInComponents({ size, edges }: RandomGraph, { Graph, alg }: Awaited<typeof graphlib>): Set<string> {
  const graph = new Graph({ directed: true });
  for (let n = 0; n < size; n++) graph.setNode(String(n));
  for (const [from, to] of edges) if (from < size && to < size) graph.setEdge(String(from), String(to));
  const componentOf = new Map<string, number>();
  alg.tarjan(graph).forEach((component, c) => component.forEach((node) => componentOf.set(node, c)));
  const inside = new Set<string>();
  for (const { v, w } of graph.edges()) {
    if (componentOf.get(v) === componentOf.get(w)) inside.add(pairKey(Number(v), Number(w)));
  }
  return inside;
}

/** Whether the graph without the `removed` edges has no cycle, by graphlib. */
function acyclicWithout(
  { size, edges }: RandomGraph,
  removed: ReadonlySet<string>,
  { Graph, alg }: Awaited<typeof graphlib>,
): boolean {
  const graph = new Graph({ directed: true });
  for (let n = 0; n < size; n++) graph.setNode(String(n));
  for (const [from, to] of edges) {
    if (from < size && to < size && !removed.has(pairKey(from, to))) graph.setEdge(String(from), String(to));
  }
  return alg.isAcyclic(graph);
}

test('the edges flagged `cycle` break every cycle and lie inside strongly connected components; edgesOnCycles marks all of those (graphlib)', async () => {
  const library = await graphlib;
  let cyclic = 0;
  let fewer = 0;
  fc.assert(
    fc.property(RANDOM_GRAPH, (graph) => {
      const { text, edgeAt } = dagText(graph);
      const analysis = analyzeDag(text);
      const flagged = analysis.diagnostics
        .filter((d) => d.code === 'cycle')
        .map((d) => edgeAt.get(d.start) ?? `not on an edge: ${d.start}`);
      const expected = edgesInComponents(graph, library);
      if (expected.size > 0) cyclic++;
      // One error per cycle to break, each on its own edge: removing the flagged edges leaves no cycle.
      assert.equal(new Set(flagged).size, flagged.length, 'one error an edge');
      assert.deepEqual(
        flagged.filter((edge) => !expected.has(edge)),
        [],
        'flagged edges lie on cycles',
      );
      assert.ok(acyclicWithout(graph, new Set(flagged), library), 'the flagged edges break every cycle');
      for (const [from, to] of graph.edges) {
        if (from === to && from < graph.size) assert.ok(flagged.includes(pairKey(from, to)), 'a self-loop is flagged');
      }
      if (flagged.length < expected.size) fewer++;
      // The graph view's marks (acmp/graph) come from the index: every edge on a cycle.
      const marks = dagIndex(analysis.model).edgesOnCycles();
      const marked = new Set(graph.edges.filter((_, e) => marks[e] === 1).map(([from, to]) => pairKey(from, to)));
      assert.deepEqual([...marked].sort(), [...expected].sort(), 'edgesOnCycles');
    }),
    { seed: 7005, numRuns: 3000 },
  );
  // The graphs must exercise both answers (some acyclic, many with cycles), and cycles of several edges.
  assert.ok(cyclic > 1000 && cyclic < 2900, `${cyclic} of 3000 graphs have a cycle`);
  assert.ok(fewer > cyclic / 5, `${fewer} of ${cyclic} cyclic graphs have fewer cycle errors than edges on cycles`);
});

/** Layer 2 §3: path := "data" ( "." ident | "[" index "]" )*, ident := [A-Za-z_][A-Za-z0-9_]*, index := "0" | [1-9][0-9]* */
const REFERENCE_GRAMMAR = /^data(\.[A-Za-z_][A-Za-z0-9_]*|\[(0|[1-9][0-9]*)\])*$/;

/** Strings over the characters that matter to the grammar, and a few that do not belong in it. */
const PATH_CHARACTER = fc.constantFrom(
  ...'data.[]0123456789_xyzAZ',
  'data',
  'data.',
  ' ',
  '-',
  '*',
  '\n',
  'é',
  '٣',
  '"',
  "'",
  '$',
);
/** Strings near the grammar: valid paths with a character or two changed. */
const NEAR_PATH = fc
  .tuple(
    fc.array(
      fc.oneof(fc.stringMatching(/^\.[A-Za-z_][A-Za-z0-9_]{0,3}$/), fc.stringMatching(/^\[(0|[1-9][0-9]{0,2})\]$/)),
      {
        maxLength: 4,
      },
    ),
    fc.array(fc.tuple(fc.nat(), PATH_CHARACTER), { maxLength: 2 }),
  )
  .map(([parts, edits]) =>
    edits.reduce(
      (path, [at, character]) => {
        const i = at % (path.length + 1);
        return path.slice(0, i) + character + path.slice(i + 1);
      },
      `data${parts.join('')}`,
    ),
  );

test('the field-path grammar accepts exactly the strings of the reference expression', () => {
  let accepted = 0;
  fc.assert(
    fc.property(fc.oneof(fc.string({ unit: PATH_CHARACTER, maxLength: 12 }), NEAR_PATH), (path) => {
      const expected = REFERENCE_GRAMMAR.test(path);
      if (expected) accepted++;
      assert.equal(parseFieldPath(path).ok, expected, JSON.stringify(path));
    }),
    { seed: 7006, numRuns: 20_000 },
  );
  assert.ok(accepted > 2000 && accepted < 18_000, `${accepted} of 20,000 strings are paths`);
});
