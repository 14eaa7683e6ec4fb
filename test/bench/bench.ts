// `npm run bench`: the analysis against vscode-json-languageservice (what VS Code gives a JSON file with a
// schema) and JSON.parse (the floor), on generated layered DAGs, measured in the same run. Prints; never fails.
import { performance } from 'node:perf_hooks';
import { getLanguageService } from 'vscode-json-languageservice';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { analyzeDag } from '../../server/src/dag/analyze';
import { dagJsonSchema } from '../../server/src/dag/jsonSchema';

const LIMITS = { limits: { maxTasks: 1e9, maxDepth: 1e9, maxFanOut: 1e9 } };

type Variant = 'clean' | 'cycle' | 'dangling';

/** A layered DAG of `size` tasks, 20 a layer, each reading one or two tasks of the layer above. */
function generate(size: number, variant: Variant = 'clean'): string {
  const width = 20;
  const tasks: unknown[] = [];
  const edges: { from: string; to: string }[] = [];
  for (let i = 0; i < size; i++) {
    const id = `task_${i}`;
    const layer = Math.floor(i / width);
    if (layer === 0) {
      tasks.push({
        task_id: id,
        capability: 'text-split',
        input: { type: 'text', data: `document ${i}` },
        output_type: 'json',
      });
      continue;
    }
    const up = (layer - 1) * width + ((i * 7) % width);
    const up2 = (layer - 1) * width + ((i * 13 + 3) % width);
    const upstream = i % 3 === 0 && up !== up2 ? [`task_${up}`, `task_${up2}`] : [`task_${up}`];
    const source =
      upstream.length > 1
        ? { from_tasks: upstream }
        : { from_task: upstream[0], ...(i % 2 === 0 ? { field: 'data.items[0]' } : {}) };
    tasks.push({
      task_id: id,
      capability: i % 2 === 0 ? 'sentiment-analysis' : 'result-aggregation',
      input: { source },
      output_type: 'json',
      input_tokens_est: 200 + (i % 50),
      max_price_cu: 0.005,
    });
    for (const from of upstream) edges.push({ from, to: id });
  }
  if (variant === 'cycle') edges.push({ from: `task_${size - 1}`, to: `task_${size - 1 - width * 10}` });
  if (variant === 'dangling')
    for (let k = 0; k < 10; k++) edges.push({ from: `task_missing_${k}`, to: `task_${k * 7}` });
  return JSON.stringify({ dag_id: `dag_bench_${size}`, tasks, edges }, null, 2);
}

interface Figure {
  readonly medianMs: number;
  readonly peakMb: number;
}

function measure(run: () => unknown, iterations: number): Figure {
  const gc = (globalThis as { gc?: () => void }).gc;
  run(); // warm-up
  const times: number[] = [];
  let peak = 0;
  for (let i = 0; i < iterations; i++) {
    gc?.();
    const before = process.memoryUsage().heapUsed;
    const start = performance.now();
    const result = run();
    times.push(performance.now() - start);
    // What the call holds on to at its end: its result and whatever garbage survived until then.
    peak = Math.max(peak, process.memoryUsage().heapUsed - before);
    void result;
  }
  times.sort((a, b) => a - b);
  return { medianMs: times[Math.floor(times.length / 2)]!, peakMb: peak / 2 ** 20 };
}

function jsonService(text: string, uri: string): () => PromiseLike<unknown> {
  const service = getLanguageService({});
  service.configure({
    validate: true,
    schemas: [{ uri: 'acmp://schema', fileMatch: ['*.acmp-dag.json'], schema: dagJsonSchema() }],
  });
  const document = TextDocument.create(uri, 'json', 1, text);
  return () => service.doValidation(document, service.parseJSONDocument(document));
}

async function measureAsync(run: () => PromiseLike<unknown>, iterations: number): Promise<Figure> {
  await run();
  const times: number[] = [];
  let peak = 0;
  for (let i = 0; i < iterations; i++) {
    (globalThis as { gc?: () => void }).gc?.();
    const before = process.memoryUsage().heapUsed;
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
    peak = Math.max(peak, process.memoryUsage().heapUsed - before);
  }
  times.sort((a, b) => a - b);
  return { medianMs: times[Math.floor(times.length / 2)]!, peakMb: peak / 2 ** 20 };
}

const fmt = (f: Figure) => `${f.medianMs.toFixed(1).padStart(9)} ms ${f.peakMb.toFixed(1).padStart(7)} MB`;

async function main(): Promise<void> {
  console.log(`node ${process.version}; median wall time and heap held at the end of a call, after gc`);
  console.log('tasks    size MB | analyzeDag             | JSON service           | JSON.parse');
  const results = new Map<number, { ours: Figure; service: Figure; parse: Figure }>();
  for (const size of [1_000, 10_000, 100_000]) {
    const text = generate(size);
    const iterations = size >= 100_000 ? 3 : size >= 10_000 ? 9 : 21;
    const ours = measure(() => analyzeDag(text, LIMITS), iterations);
    const service = await measureAsync(
      jsonService(text, `file:///bench-${size}.acmp-dag.json`),
      size >= 100_000 ? 1 : iterations,
    );
    const parse = measure(() => JSON.parse(text), iterations);
    results.set(size, { ours, service, parse });
    console.log(
      `${String(size).padStart(7)} ${(text.length / 2 ** 20).toFixed(1).padStart(8)}  | ${fmt(ours)} | ${fmt(service)} | ${fmt(parse)}`,
    );
  }
  for (const variant of ['cycle', 'dangling'] as const) {
    const text = generate(10_000, variant);
    const figure = measure(() => analyzeDag(text, LIMITS), 9);
    const count = analyzeDag(text, LIMITS).diagnostics.length;
    console.log(`10000 with ${variant}: analyzeDag ${fmt(figure)}, ${count} diagnostics`);
  }

  const at10k = results.get(10_000)!;
  const at100k = results.get(100_000)!;
  const checks: [string, number, number][] = [
    ['analyzeDag / JSON service at 10,000 tasks', at10k.ours.medianMs / at10k.service.medianMs, 0.15],
    ['analyzeDag / JSON.parse at 10,000 tasks', at10k.ours.medianMs / at10k.parse.medianMs, 4],
    ['analyzeDag growth 10,000 -> 100,000 tasks', at100k.ours.medianMs / at10k.ours.medianMs, 12],
  ];
  let passed = 0;
  for (const [name, ratio, target] of checks) {
    const ok = ratio <= target;
    if (ok) passed++;
    console.log(`${ok ? 'PASS' : 'FAIL'} ${name}: ${ratio.toFixed(3)}x (target <= ${target}x)`);
  }
  console.log(`bench: ${passed} of ${checks.length} targets met`);
}

void main();
