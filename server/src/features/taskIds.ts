// Which task ids fit a place where a task is named, best first (completion lists them, quick fixes pick from them),
// and a fresh id for a new task.
import type { DagAnalysis } from '../dag/analyze';
import { dagIndex } from '../dag/dagIndex';
import type { DagModel, TaskDeclaration } from '../dag/model';
import type { Site } from '../dag/site';

export type IdSite = Extract<Site, { kind: 'edge-end' } | { kind: 'reference' }>;

/** Ranks, best first: has an edge into the task, any other, the edge exists already, would close a cycle. */
export const FEEDS_SELF = 0;
export const OTHER = 1;
export const JOINED = 2;
export const CLOSES_CYCLE = 3;

export interface TaskIdRanking {
  /** The task the site names the other end of, or reads for; never offered. */
  readonly self: TaskDeclaration | undefined;
  /** Where an id that closes a cycle lies, e.g. `downstream of task_b`. */
  readonly cycleNote: string;
  /** The rank of `model.tasks[position]`; undefined when that task is never offered here. */
  rankOf(position: number): number | undefined;
}

/**
 * An edge end never offers its other end (a self-loop); ids that would close a cycle come last. Inside task T, tasks
 * with an edge into T come first and T itself is never offered, nor an id its `from_tasks` lists already.
 */
export function rankTaskIds(model: DagModel, site: IdSite): TaskIdRanking {
  const index = dagIndex(model);
  let self: TaskDeclaration | undefined;
  let closesCycle: Uint8Array | undefined;
  let feedsSelf: ReadonlySet<TaskDeclaration> = new Set();
  let listed: ReadonlySet<string> = new Set();
  let cycleNote = '';
  /** The tasks already joined to the other end by an edge in the same direction (a duplicate edge). */
  let joined: ReadonlySet<TaskDeclaration> = new Set();
  if (site.kind === 'edge-end') {
    const otherId = site.end === 'from' ? site.edge.to : site.edge.from;
    self = otherId === undefined ? undefined : model.taskById.get(otherId);
    if (self !== undefined) {
      // A new `from` X closes a cycle when X is downstream of `to`; a new `to` X when X is upstream of `from`.
      closesCycle = index.reachable(self, site.end === 'from' ? 'downstream' : 'upstream');
      cycleNote = site.end === 'from' ? `downstream of ${self.id}` : `upstream of ${self.id}`;
      joined = new Set(site.end === 'from' ? index.upstream(self) : index.downstream(self));
    }
  } else {
    self = site.task.duplicateOf ?? site.task;
    closesCycle = index.reachable(self, 'downstream');
    cycleNote = `downstream of ${self.id ?? 'this task'}`;
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
  return {
    self,
    cycleNote,
    rankOf(position) {
      const task = model.tasks[position]!;
      if (task.id === undefined || task.duplicateOf !== undefined || task === self || listed.has(task.id)) {
        return undefined;
      }
      return closesCycle?.[position] === 1
        ? CLOSES_CYCLE
        : joined.has(task)
          ? JOINED
          : feedsSelf.has(task)
            ? FEEDS_SELF
            : OTHER;
    },
  };
}

/** The positions in `model.tasks` of the offered tasks whose id `accept` takes, best rank first, each in file order. */
export function rankedPositions(model: DagModel, ranking: TaskIdRanking, accept: (id: string) => boolean): number[] {
  const ranked: number[][] = [[], [], [], []];
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
