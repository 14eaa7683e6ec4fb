// What the views of a run read: the run as the model last told them of it. Run events change the model's records at
// once, but its views hear of the changes in batches (runs.ts); were they to read the records, a view drawing later
// than another would show a later state than the other, although both were told the same change. Each change
// publishes a copy of every run it names, and every view reads those copies: views that drew after the same change
// show the same run.
import type { RunSnapshot, TaskSnapshot } from './runSnapshot';

/** A run as the model keeps it, changing in place as its events come. */
export type LiveRun = Omit<RunSnapshot, 'tasks'> & { readonly tasks: ReadonlyMap<string, TaskSnapshot> };

export interface PublishedRun {
  readonly run: RunSnapshot;
  /** Each task's place in `run.tasks`, by task id. */
  readonly places: ReadonlyMap<string, number>;
}

/**
 * `live` as it is now, for its views. With the run's previous publication and the tasks changed since (a change of a
 * 10,000-task run names a few hundred), only those tasks are copied anew; without them, or when the tasks are not
 * the same ones, every task.
 */
export function publishRun(live: LiveRun, previous?: PublishedRun, changedTaskIds?: ReadonlySet<string>): PublishedRun {
  const { tasks, ...run } = live;
  if (previous === undefined || changedTaskIds === undefined || previous.places.size !== tasks.size) {
    const copies = [...tasks.values()].map((task) => ({ ...task }));
    return { run: { ...run, tasks: copies }, places: new Map(copies.map((task, place) => [task.taskId, place])) };
  }
  const copies = [...previous.run.tasks];
  for (const taskId of changedTaskIds) {
    const place = previous.places.get(taskId);
    const task = tasks.get(taskId);
    if (place === undefined || task === undefined) return publishRun(live);
    copies[place] = { ...task };
  }
  return { run: { ...run, tasks: copies }, places: previous.places };
}
