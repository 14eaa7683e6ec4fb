// The benchmark's DAG of echo tasks, which the built-in provider runs in well under a second even at 10,000 tasks: layers
// of ECHO_LAYER_WIDTH tasks, each reading one task of the layer above with ordering-only edges from two more of them.

export const ECHO_LAYER_WIDTH = 100;

/** The DAG's text (pretty-printed, one task a few lines, as a person would write it); `size` is rounded up to whole layers. */
export function echoLayersDag(size: number, dagId = 'dag_echo_layers'): string {
  const id = (layer: number, k: number) => `task_${layer}_${k}`;
  const tasks: unknown[] = [];
  const edges: { from: string; to: string }[] = [];
  for (let layer = 0; layer * ECHO_LAYER_WIDTH < size; layer++) {
    for (let k = 0; k < ECHO_LAYER_WIDTH; k++) {
      if (layer === 0) {
        tasks.push({ task_id: id(layer, k), capability: 'echo', input: { type: 'text', data: `document ${k}` } });
        continue;
      }
      tasks.push({ task_id: id(layer, k), capability: 'echo', input: { source: { from_task: id(layer - 1, k) } } });
      for (const from of [k, (k + 1) % ECHO_LAYER_WIDTH, (k + 7) % ECHO_LAYER_WIDTH]) {
        edges.push({ from: id(layer - 1, from), to: id(layer, k) });
      }
    }
  }
  return JSON.stringify({ dag_id: dagId, tasks, edges }, null, 2);
}
