// Running a part of a DAG, and what the result store already holds of it: the tasks a run of one task (or of a task
// and everything downstream of it) needs, the DAG of just those, and which of them the store can complete without an
// invoke. The CLI (`run --task`, `--from`, `plan`), the language server (Run Task, Run From Here, Re-run Failed, hover)
// and the durable CLI path share them.
import type { DagModel } from '../dag/model';
import type { TaskOutput } from '../protocol/report';
import type { ProviderConfig } from '../protocol/settings';
import { resolveInput } from './inputs';
import { mayOffer, servingProviders } from './pricing';
import { resultKey } from './resultKey';
import type { ResultReuse, StoredResult } from './types';

/** A part of a DAG to run, by task id. */
export interface Selection {
  /** These tasks run, with the upstream tasks they need. */
  readonly tasks?: readonly string[];
  /** These tasks run, and everything downstream of them, with the upstream tasks those need. */
  readonly from?: readonly string[];
}

/** The tasks of a selection, as positions in `model.tasks`. */
export interface SelectedTasks {
  /**
   * The tasks the selection names, with their downstream under `from`: the part of the DAG that runs. The named ones
   * run whatever the store holds of them; their downstream tasks take the store's result where their input is the same.
   */
  readonly chosen: ReadonlySet<number>;
  /** The tasks they need that the selection does not name: their outputs come from the store. */
  readonly upstream: ReadonlySet<number>;
}

/** Whether a selection names any task. */
export const selects = (selection: Selection): boolean =>
  (selection.tasks?.length ?? 0) > 0 || (selection.from?.length ?? 0) > 0;

/** The selection's tasks in `model` (a DAG without errors), or the ids it names that are no task of it. */
export function selectTasks(
  model: DagModel,
  selection: Selection,
): { readonly ok: true; readonly tasks: SelectedTasks } | { readonly ok: false; readonly unknown: readonly string[] } {
  const unknown: string[] = [];
  const indexOf = (id: string): number | undefined => {
    const index = model.taskById.get(id)?.index;
    if (index === undefined) unknown.push(id);
    return index;
  };
  const named = (selection.tasks ?? []).map(indexOf);
  const from = (selection.from ?? []).map(indexOf);
  if (unknown.length > 0) return { ok: false, unknown };
  const { upstreamOf, downstreamOf } = links(model);
  const chosen = new Set<number>(named as number[]);
  for (const index of closure(from as number[], downstreamOf)) chosen.add(index);
  const upstream = new Set<number>();
  for (const index of closure([...chosen], upstreamOf)) if (!chosen.has(index)) upstream.add(index);
  return { ok: true, tasks: { chosen, upstream } };
}

/**
 * The DAG's text with only the tasks at `keep` (positions in its `tasks`) and the edges between them; the rest of
 * its members as they were. `dag` is the file's value (JSON.parse of its text).
 */
export function partOfDag(dag: Readonly<Record<string, unknown>>, keep: ReadonlySet<number>): string {
  const tasks = Array.isArray(dag.tasks) ? dag.tasks : [];
  const ids = new Set<unknown>();
  const kept = tasks.filter((task: unknown, index) => {
    if (!keep.has(index)) return false;
    ids.add((task as Record<string, unknown>).task_id);
    return true;
  });
  const edges = Array.isArray(dag.edges)
    ? dag.edges.filter((edge: unknown) => {
        const { from, to } = (edge ?? {}) as Record<string, unknown>;
        return ids.has(from) && ids.has(to);
      })
    : dag.edges;
  return JSON.stringify({ ...dag, tasks: kept, ...(edges === undefined ? {} : { edges }) }, null, 2);
}

/**
 * What the store holds for each task of `model` (a DAG without errors), as a run would look it up, without counting a
 * use: a task's input is made from its literal or from its upstream tasks' stored outputs, so a task whose upstream
 * the store lacks has no stored result either (its input is not known before they run). Positions in `scope` only,
 * when given (and what they read). `providerIds` gives a capability's candidate providers, for a store that ties
 * results to providers.
 */
export function storedResults(
  model: DagModel,
  plainTasks: readonly unknown[],
  reuse: ResultReuse,
  providerIds: (capability: string) => readonly string[] = () => [],
  scope?: ReadonlySet<number>,
): (StoredResult | undefined)[] {
  const count = model.tasks.length;
  const stored = new Array<StoredResult | undefined>(count).fill(undefined);
  const { upstreamOf, downstreamOf } = links(model);
  const wanted = scope === undefined ? undefined : new Set(closure([...scope], upstreamOf));
  const outputOf = (id: string): TaskOutput => stored[model.taskById.get(id)!.index]!.output;
  for (const index of topologicalOrder(upstreamOf, downstreamOf)) {
    if (wanted !== undefined && !wanted.has(index)) continue;
    const declaration = model.tasks[index]!;
    const capability = declaration.capability!;
    if (reuse.exclude?.has(capability) === true) continue;
    if (upstreamOf[index]!.some((upstream) => stored[upstream] === undefined)) continue;
    const plain = (plainTasks[index] ?? {}) as Record<string, unknown>;
    const input = resolveInput(declaration, plain.input, outputOf);
    if (!input.ok) continue;
    if (reuse.perProvider === true) {
      for (const providerId of providerIds(capability)) {
        stored[index] = reuse.store.peek(resultKey(capability, input.input, plain, providerId));
        if (stored[index] !== undefined) break;
      }
    } else {
      stored[index] = reuse.store.peek(resultKey(capability, input.input, plain));
    }
  }
  return stored;
}

/** `storedResults`'s `providerIds` for `providers`: a capability's candidates by id, in the order a run tries them. */
export function providerIdsOf(providers: readonly ProviderConfig[]): (capability: string) => readonly string[] {
  const serving = servingProviders(providers);
  return (capability) => serving.filter((provider) => mayOffer(provider, capability)).map((provider) => provider.id);
}

/** By task, the tasks it depends on (edges and the tasks its input reads), and those that depend on it. */
function links(model: DagModel): { upstreamOf: number[][]; downstreamOf: number[][] } {
  const count = model.tasks.length;
  const upstreamOf = Array.from({ length: count }, (): number[] => []);
  const downstreamOf = Array.from({ length: count }, (): number[] => []);
  const link = (from: number | undefined, to: number): void => {
    if (from === undefined || upstreamOf[to]!.includes(from)) return;
    upstreamOf[to]!.push(from);
    downstreamOf[from]!.push(to);
  };
  for (const edge of model.edges) {
    const to = model.taskById.get(edge.to!)?.index;
    if (to !== undefined) link(model.taskById.get(edge.from!)?.index, to);
  }
  model.tasks.forEach((task, index) => {
    if (task.inputForm !== 'reference') return;
    for (let k = 0; k < task.referenceCount; k++) link(model.taskById.get(task.referencedId(k))?.index, index);
  });
  return { upstreamOf, downstreamOf };
}

/** `start` and every task reachable from it along `next`, each once. */
function closure(start: readonly number[], next: readonly (readonly number[])[]): number[] {
  const seen = new Set(start);
  const queue = [...seen];
  for (let head = 0; head < queue.length; head++) {
    for (const after of next[queue[head]!]!) {
      if (seen.has(after)) continue;
      seen.add(after);
      queue.push(after);
    }
  }
  return queue;
}

/** The tasks, each after those it depends on (Kahn's order; a DAG without errors has no cycle). */
function topologicalOrder(
  upstreamOf: readonly (readonly number[])[],
  downstreamOf: readonly (readonly number[])[],
): number[] {
  const waiting = Int32Array.from(upstreamOf, (upstream) => upstream.length);
  const order: number[] = [];
  for (let index = 0; index < waiting.length; index++) if (waiting[index] === 0) order.push(index);
  for (let head = 0; head < order.length; head++) {
    for (const next of downstreamOf[order[head]!]!) if (--waiting[next]! === 0) order.push(next);
  }
  return order;
}
