// A DAG whose outputs grow exponentially: each task of a layer echoes `from_tasks` of every task of the
// layer above, so a task's output holds `width ** layer` copies of the first layer's texts.
export function nestedOutputsDag(layers: number, width: number, text: string): string {
  const id = (layer: number, k: number) => `task_${layer}_${k}`;
  const tasks: unknown[] = [];
  const edges: { from: string; to: string }[] = [];
  for (let layer = 0; layer < layers; layer++) {
    const above = Array.from({ length: width }, (_, k) => id(layer - 1, k));
    for (let k = 0; k < width; k++) {
      if (layer === 0) {
        tasks.push({ task_id: id(layer, k), capability: 'echo', input: { type: 'text', data: `${k} ${text}` } });
        continue;
      }
      tasks.push({ task_id: id(layer, k), capability: 'echo', input: { source: { from_tasks: above } } });
      for (const from of above) edges.push({ from, to: id(layer, k) });
    }
  }
  return JSON.stringify({ dag_id: 'dag_nested_outputs', tasks, edges }, null, 2);
}
