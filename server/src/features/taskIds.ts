// Which task ids fit a place where a task is named, best first (completion lists them, quick fixes pick from them),
// and a fresh id for a new task.
import type { DagAnalysis } from '../dag/analyze';
import { dagIndex } from '../dag/dagIndex';
import type { DagModel, TaskDeclaration } from '../dag/model';
import type { Site } from '../dag/site';

export type IdSite = Extract<Site, { kind: 'edge-end' } | { kind: 'reference' }>;

/**
 * Ranks, best first: at an edge end, reads the other end (or is read by it) without this edge; in a reference, has an
 * edge into the task; any other; the edge exists already; would close a cycle.
 */
export const LACKS_EDGE = 0;
export const FEEDS_SELF = 1;
export const OTHER = 2;
export const JOINED = 3;
export const CLOSES_CYCLE = 4;

export interface TaskIdRanking {
  /** The task the site names the other end of, or reads for; offered last, as a cycle of its own. */
  readonly self: TaskDeclaration | undefined;
  /** The rank of `model.tasks[position]`; undefined when that task is never offered here. */
  rankOf(position: number): number | undefined;
  /** The cycle choosing `model.tasks[position]` would close, e.g. `task_a → task_b → … → task_a`. */
  cycleThrough(position: number): string;
}

/** How many tasks of the way back a cycle shows before it elides the middle. */
const CYCLE_SHOWN = 4;

/**
 * At an edge end, the tasks whose reference needs exactly this edge come first. Inside task T, tasks with an edge
 * into T come first, and an id its `from_tasks` lists already is not offered. Ids that would close a cycle, through
 * edges or references, come last, the other end itself (a self-loop) among them: left out, the user who types one
 * would see the editor's plain word suggestions offer it unmarked. One walk of the graph per ranking; each id then
 * costs a few steps.
 */
export function rankTaskIds(model: DagModel, site: IdSite): TaskIdRanking {
  const index = dagIndex(model);
  let self: TaskDeclaration | undefined;
  /** Which way the walk from `self` finds the ids that would close a cycle. */
  let direction: 'downstream' | 'upstream' = 'downstream';
  let steps: Int32Array | undefined;
  let feedsSelf: ReadonlySet<TaskDeclaration> = new Set();
  let listed: ReadonlySet<string> = new Set();
  /** The tasks, by graph node, at the far end of another edge in the same direction (a duplicate edge). */
  const joined = new Set<number>();
  /** The tasks, by graph node, whose reference needs the edge between them and the other end. */
  const lacking = new Set<number>();
  if (site.kind === 'edge-end') {
    const otherId = site.end === 'from' ? site.edge.to : site.edge.from;
    self = otherId === undefined ? undefined : model.taskById.get(otherId);
    if (self !== undefined) {
      // A new `from` X closes a cycle when X is downstream of `to`; a new `to` X when X is upstream of `from`.
      direction = site.end === 'from' ? 'downstream' : 'upstream';
      steps = index.dependencyWalk(self, direction);
      const { successors, predecessors } = index.dependencies();
      const neighbours = site.end === 'to' ? successors : predecessors;
      const node = index.nodeOf(self)!;
      // The edge being edited does not count: its current end is what is being replaced.
      const current = site.end === 'to' ? site.edge.to : site.edge.from;
      const currentTask = current === undefined ? undefined : model.taskById.get(current);
      let editedNode = currentTask === undefined ? undefined : index.nodeOf(currentTask);
      for (let e = neighbours.offsets[node]!; e < neighbours.offsets[node + 1]!; e++) {
        const far = neighbours.targets[e]!;
        if (far === editedNode) editedNode = undefined;
        else joined.add(far);
      }
      const reading = site.end === 'to' ? index.readers(self) : index.readBy(self);
      for (const task of reading) lacking.add(index.nodeOf(task)!);
    }
  } else {
    self = site.task.duplicateOf ?? site.task;
    steps = index.dependencyWalk(self, direction);
    feedsSelf = new Set(index.upstream(self));
    if (site.via === 'from_tasks') {
      const current = site.node?.kind === 'string' ? site.node.value : undefined;
      listed = new Set(
        Array.from({ length: site.task.referenceCount }, (_, k) => site.task.referencedId(k)).filter(
          (id) => id !== current,
        ),
      );
    }
  }
  const idOf = (node: number): string => model.tasks[node]!.id ?? `#${node + 1}`;
  return {
    self,
    rankOf(position) {
      const task = model.tasks[position]!;
      if (task.id === undefined || task.duplicateOf !== undefined || listed.has(task.id)) return undefined;
      if (steps !== undefined && steps[position] !== -1) return CLOSES_CYCLE;
      if (joined.has(position)) return JOINED;
      if (lacking.has(position)) return LACKS_EDGE;
      return feedsSelf.has(task) ? FEEDS_SELF : OTHER;
    },
    cycleThrough(position) {
      if (steps === undefined || self === undefined || steps[position] === -1) return '';
      // The way back from the chosen task to `self`, its middle elided on a long way.
      const start = index.nodeOf(self)!;
      const way = [position];
      while (way.length < CYCLE_SHOWN && way.at(-1) !== start) way.push(steps[way.at(-1)!]!);
      const names = way.map(idOf);
      if (way.at(-1) !== start) names.splice(2, names.length - 2, '…', idOf(start));
      // Upstream, the new edge runs self → chosen, then the way back; downstream, chosen → self, then the way there.
      const cycle = direction === 'upstream' ? [names.at(-1)!, ...names] : [names[0]!, ...names.slice().reverse()];
      return cycle.join(' → ');
    },
  };
}

/** The positions in `model.tasks` of the offered tasks whose id `accept` takes, best rank first, each in file order. */
export function rankedPositions(model: DagModel, ranking: TaskIdRanking, accept: (id: string) => boolean): number[] {
  const ranked: number[][] = Array.from({ length: CLOSES_CYCLE + 1 }, () => []);
  for (let position = 0; position < model.tasks.length; position++) {
    const rank = ranking.rankOf(position);
    if (rank !== undefined && accept(model.tasks[position]!.id!)) ranked[rank]!.push(position);
  }
  return ranked.flat();
}

/** The first `task_<n>` written nowhere in the file (an id only an edge names would connect to the new task). */
export function freshTaskId(analysis: DagAnalysis): string {
  const index = dagIndex(analysis.model);
  for (let n = analysis.model.tasks.length + 1; ; n++) {
    const id = `task_${String(n).padStart(2, '0')}`;
    if (index.occurrences(id).length === 0) return id;
  }
}
