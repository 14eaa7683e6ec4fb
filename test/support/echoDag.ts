// The benchmark's DAG of echo tasks, which the built-in provider runs in well under a second even at 10,000 tasks: layers
// of ECHO_LAYER_WIDTH tasks, each reading one task of the layer above with ordering-only edges from two more of them.

export const ECHO_LAYER_WIDTH = 100;

/**
 * The DAG's text (pretty-printed, one task a few lines, as a person would write it); `size` is rounded up to whole layers.
 * Each task of a layer echoes the same value as the one above it, so that the DAG makes only ECHO_LAYER_WIDTH distinct
 * results; with `distinctResults`, each task carries `metadata: {"step": <its layer>}`, which is part of its result's
 * key (resultKey.ts), so that every task makes a result of its own.
 */
export function echoLayersDag(
  size: number,
  dagId = 'dag_echo_layers',
  { distinctResults = false }: { distinctResults?: boolean } = {},
): string {
  const id = (layer: number, k: number) => `task_${layer}_${k}`;
  const tasks: unknown[] = [];
  const edges: { from: string; to: string }[] = [];
  for (let layer = 0; layer * ECHO_LAYER_WIDTH < size; layer++) {
    for (let k = 0; k < ECHO_LAYER_WIDTH; k++) {
      const metadata = distinctResults ? { metadata: { step: layer } } : {};
      if (layer === 0) {
        tasks.push({
          task_id: id(layer, k),
          capability: 'echo',
          input: { type: 'text', data: `document ${k}` },
          ...metadata,
        });
        continue;
      }
      tasks.push({
        task_id: id(layer, k),
        capability: 'echo',
        input: { source: { from_task: id(layer - 1, k) } },
        ...metadata,
      });
      for (const from of [k, (k + 1) % ECHO_LAYER_WIDTH, (k + 7) % ECHO_LAYER_WIDTH]) {
        edges.push({ from: id(layer - 1, from), to: id(layer, k) });
      }
    }
  }
  return JSON.stringify({ dag_id: dagId, tasks, edges }, null, 2);
}
