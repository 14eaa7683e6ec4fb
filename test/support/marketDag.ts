// A deterministic DAG of market capabilities, valid under Layer 2 and of any size, for tests at the scale of real
// files: layers of tasks, roots with literal inputs, inner tasks reading one upstream (sometimes a field of it) or
// aggregating several, every reference with its edge, a few ordering-only edges, stream_eligible edges only where
// the whole output is read.
import type { DagFile, Edge, Task } from '../../server/src/dag/schema';

const ROOT_CAPABILITIES = ['document-fetch', 'ocr', 'speech-to-text', 'web-search'];
const INNER_CAPABILITIES = [
  'summarization',
  'translation',
  'entity-extraction',
  'classification',
  'embedding',
  'sentiment-analysis',
  'keyword-extraction',
];
const AGGREGATING_CAPABILITIES = ['report-generation', 'ranking', 'deduplication'];
const FIELDS = [undefined, undefined, 'data', 'data.summary', 'data.entities[0]'];

/** mulberry32: a small seeded generator, so that every run makes the same file. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface MarketDagOptions {
  /**
   * Back edges to add, from a late task to a root: each closes its own cycle, through tasks that only that root
   * reaches (a chain of tasks with one upstream each), so the cycles are independent.
   */
  readonly backEdges?: number;
  readonly seed?: number;
}

export const taskId = (n: number): string => `task_${n}`;

export function marketDag(size: number, { backEdges = 0, seed = 1 }: MarketDagOptions = {}): DagFile {
  const r = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
  const width = Math.max(4, Math.round(Math.sqrt(size) * 1.5));
  // An upstream of a task in layer `layer` (> 0): mostly from the layer before, sometimes from up to three before.
  const upstreamOf = (layer: number): number => {
    const from = Math.max(0, layer - (r() < 0.8 ? 1 : 2 + Math.floor(r() * 2)));
    return from * width + Math.floor(r() * width);
  };
  const tasks: Task[] = [];
  const edges: Edge[] = [];
  const upstreams: number[][] = [];
  for (let n = 0; n < size; n++) {
    const layer = Math.floor(n / width);
    const chosen = new Set<number>();
    let task: Task;
    if (layer === 0) {
      task = {
        task_id: taskId(n),
        capability: pick(ROOT_CAPABILITIES),
        input: { type: 'text', data: `document ${n}` },
      };
    } else if (r() < 0.75) {
      chosen.add(upstreamOf(layer));
      const field = pick(FIELDS);
      task = {
        task_id: taskId(n),
        capability: pick(INNER_CAPABILITIES),
        input: { source: { from_task: taskId([...chosen][0]!), ...(field === undefined ? {} : { field }) } },
      };
    } else {
      const count = r() < 0.8 ? 2 + Math.floor(r() * 2) : 4 + Math.floor(r() * 5);
      for (let attempt = 0; attempt < 3 * count && chosen.size < count; attempt++) chosen.add(upstreamOf(layer));
      task = {
        task_id: taskId(n),
        capability: pick(count > 3 ? AGGREGATING_CAPABILITIES : INNER_CAPABILITIES),
        input: { source: { from_tasks: [...chosen].map(taskId) } },
      };
    }
    tasks.push({ ...task, output_type: 'json', max_price_cu: 0.01, preferred_tier: pick(['S', 'A', 'B'] as const) });
    const source = 'source' in task.input ? task.input.source : undefined;
    const whole = source?.from_task !== undefined && (source.field === undefined || source.field === 'data');
    for (const upstream of chosen) {
      edges.push({ from: taskId(upstream), to: taskId(n), ...(whole && r() < 0.5 ? { stream_eligible: true } : {}) });
    }
    if (layer > 0 && r() < 0.05) {
      const ordering = upstreamOf(layer);
      if (!chosen.has(ordering)) {
        chosen.add(ordering);
        edges.push({ from: taskId(ordering), to: taskId(n) });
      }
    }
    upstreams.push([...chosen]);
  }

  // Each back edge goes from the end of a chain of single-upstream tasks below a root back to that root.
  const onlyChild = (parent: number): number | undefined => {
    for (let n = parent + 1; n < size; n++) if (upstreams[n]!.length === 1 && upstreams[n]![0] === parent) return n;
    return undefined;
  };
  for (let root = 0, added = 0; root < Math.min(width, size) && added < backEdges; root++) {
    let end = root;
    for (let child = onlyChild(end); child !== undefined; child = onlyChild(end)) end = child;
    if (end === root) continue;
    edges.push({ from: taskId(end), to: taskId(root) });
    added++;
    if (root === width - 1 && added < backEdges) throw new Error(`only ${added} independent back edges in this DAG`);
  }
  return { dag_id: `dag_market_${size}`, tasks, edges };
}
