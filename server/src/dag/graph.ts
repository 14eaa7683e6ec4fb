// Graph algorithms over dense node indexes, all iterative: a 20,000-task chain must not touch the call stack.

/** Adjacency in compressed rows: the successors of node n are targets[offsets[n] .. offsets[n+1]). */
export interface Adjacency {
  readonly offsets: Int32Array;
  readonly targets: Int32Array;
}

export function adjacency(nodeCount: number, from: ArrayLike<number>, to: ArrayLike<number>): Adjacency {
  const offsets = new Int32Array(nodeCount + 1);
  for (let i = 0; i < from.length; i++) offsets[from[i]! + 1]!++;
  for (let n = 0; n < nodeCount; n++) offsets[n + 1]! += offsets[n]!;
  const cursor = offsets.slice(0, nodeCount);
  const targets = new Int32Array(from.length);
  for (let i = 0; i < from.length; i++) targets[cursor[from[i]!]!++] = to[i]!;
  return { offsets, targets };
}

/** Tarjan's strongly connected components with an explicit stack; returns each node's component number. */
export function stronglyConnectedComponents(graph: Adjacency): Int32Array {
  const nodeCount = graph.offsets.length - 1;
  const index = new Int32Array(nodeCount).fill(-1);
  const low = new Int32Array(nodeCount);
  const component = new Int32Array(nodeCount).fill(-1);
  const onStack = new Uint8Array(nodeCount);
  const stack: number[] = [];
  const callNode: number[] = [];
  const callEdge: number[] = [];
  let counter = 0;
  let components = 0;
  for (let start = 0; start < nodeCount; start++) {
    if (index[start] !== -1) continue;
    callNode.push(start);
    callEdge.push(graph.offsets[start]!);
    index[start] = low[start] = counter++;
    stack.push(start);
    onStack[start] = 1;
    while (callNode.length > 0) {
      const node = callNode[callNode.length - 1]!;
      const edge = callEdge[callEdge.length - 1]!;
      if (edge < graph.offsets[node + 1]!) {
        callEdge[callEdge.length - 1] = edge + 1;
        const next = graph.targets[edge]!;
        if (index[next] === -1) {
          index[next] = low[next] = counter++;
          stack.push(next);
          onStack[next] = 1;
          callNode.push(next);
          callEdge.push(graph.offsets[next]!);
        } else if (onStack[next]) {
          low[node] = Math.min(low[node]!, index[next]!);
        }
        continue;
      }
      callNode.pop();
      callEdge.pop();
      const parent = callNode[callNode.length - 1];
      if (parent !== undefined) low[parent] = Math.min(low[parent]!, low[node]!);
      if (low[node] === index[node]) {
        let member: number;
        do {
          member = stack.pop()!;
          onStack[member] = 0;
          component[member] = components;
        } while (member !== node);
        components++;
      }
    }
  }
  return component;
}

/** Kahn's algorithm: the longest path (in nodes) ending at each node; nodes on cycles keep 0. */
export function depths(graph: Adjacency): Int32Array {
  const nodeCount = graph.offsets.length - 1;
  const indegree = new Int32Array(nodeCount);
  for (let e = 0; e < graph.targets.length; e++) indegree[graph.targets[e]!]!++;
  const depth = new Int32Array(nodeCount);
  const queue: number[] = [];
  for (let n = 0; n < nodeCount; n++) {
    if (indegree[n] === 0) {
      depth[n] = 1;
      queue.push(n);
    }
  }
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (let e = graph.offsets[node]!; e < graph.offsets[node + 1]!; e++) {
      const next = graph.targets[e]!;
      depth[next] = Math.max(depth[next]!, depth[node]! + 1);
      if (--indegree[next]! === 0) queue.push(next);
    }
  }
  return depth;
}
