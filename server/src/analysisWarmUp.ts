// The analysis's first runs are slow: V8 runs it in its interpreter until it has compiled the hot functions. Over LSP
// at 10,000 tasks the first analysis takes about 90 ms, the second about 55, and only the fourth or fifth the 15-20 ms
// of compiled code. So once the server has answered its first document, it analyses a small generated DAG a few
// times while idle: the user's next keystrokes and files get compiled code from their first analysis.
import { type DagAnalysis, analyzeDag } from './dag/analyze';

/** Analyses of a DAG of this many tasks (about 15 ms each before compilation, 1-2 ms after). */
const WARM_UP = { tasks: 1_000, analyses: 6 } as const;
const LAYER_WIDTH = 20;

let started = false;

/**
 * A clean layered DAG that takes the analysis's common paths: literal inputs, `from_task` with and without a field
 * path, `from_tasks`, ordering-only edges, the optional numbers.
 */
export function warmUpDag(size: number): string {
  const id = (index: number) => `task_${index}`;
  const tasks: unknown[] = [];
  const edges: { from: string; to: string }[] = [];
  const common = { capability: 'summarization', output_type: 'json', input_tokens_est: 500, max_price_cu: 0.01 };
  for (let index = 0; index < size; index++) {
    const up = index - LAYER_WIDTH;
    if (up < 0) {
      tasks.push({ task_id: id(index), input: { type: 'text', data: `document ${index}` }, ...common });
      continue;
    }
    const other = index % LAYER_WIDTH < LAYER_WIDTH - 1 ? up + 1 : up - 1;
    const source =
      index % 3 === 0
        ? { from_tasks: [id(up), id(other)] }
        : index % 3 === 1
          ? { from_task: id(up), field: 'data.items[0]' }
          : { from_task: id(up) };
    tasks.push({ task_id: id(index), input: { source }, ...common });
    edges.push({ from: id(up), to: id(index) }, { from: id(other), to: id(index) });
  }
  return JSON.stringify({ dag_id: 'dag_warm_up', tasks, edges }, null, 2);
}

/**
 * Once per process, in the idle turns after the first diagnostics: a few analyses of the generated DAG, each handed
 * to `prepare` (what the server does after publishing, so the editor features' indexing compiles too). One analysis
 * a turn, so a message that arrives meanwhile waits for one at most; `then` runs after them (at once after the first
 * call).
 */
export function warmUpAnalysisOnce(prepare: (analysis: DagAnalysis) => void, then: () => void): void {
  if (started) {
    then();
    return;
  }
  started = true;
  const text = warmUpDag(WARM_UP.tasks);
  let left = WARM_UP.analyses;
  const step = (): void => {
    prepare(analyzeDag(text));
    if (--left > 0) setImmediate(step);
    else then();
  };
  setImmediate(step);
}
