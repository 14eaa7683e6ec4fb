// What the views of a run read (client/src/publishedRun.ts): the run as of the last change they were told, unmoved
// by the events applied since, with the same counts in every view that read it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type LiveRun, publishRun } from '../../client/src/publishedRun';
import type { RunSnapshot, TaskSnapshot } from '../../client/src/runSnapshot';

type MutableTask = { -readonly [K in keyof TaskSnapshot]: TaskSnapshot[K] };
type MutableRun = { -readonly [K in keyof Omit<LiveRun, 'tasks'>]: LiveRun[K] } & { tasks: Map<string, MutableTask> };

function liveRun(size: number): MutableRun {
  const tasks = new Map<string, MutableTask>();
  for (let index = 0; index < size; index++) tasks.set(`task_${index}`, { taskId: `task_${index}`, state: 'pending' });
  return {
    runId: 'run-1',
    uri: 'file:///dag.acmp-dag.json',
    dagId: 'dag_live',
    status: 'running',
    startedAt: '2026-01-01T00:00:00.000Z',
    costCu: 0,
    finishedTasks: 0,
    tasks,
  };
}

/** Completes a task of the live run, as the model applies a `task-state` event. */
function complete(run: MutableRun, taskId: string): void {
  run.tasks.get(taskId)!.state = 'completed';
  run.finishedTasks += 1;
}

const finishedIn = (run: RunSnapshot): number => run.tasks.filter((task) => task.state === 'completed').length;

test('a published run does not move with the events applied after it', () => {
  const live = liveRun(1_000);
  complete(live, 'task_0');
  const first = publishRun(live);
  complete(live, 'task_1');
  live.costCu = 0.5;
  assert.equal(first.run.finishedTasks, 1);
  assert.equal(finishedIn(first.run), 1);
  assert.equal(first.run.costCu, 0);
  assert.equal(first.run.tasks[1]!.state, 'pending');
});

test('publishing the changed tasks gives the run as a full copy would, its count agreeing with its tasks', () => {
  const live = liveRun(1_000);
  let published = publishRun(live);
  for (let step = 0; step < 10; step++) {
    const changed = new Set<string>();
    for (let index = step * 50; index < step * 50 + 50; index++) {
      complete(live, `task_${index}`);
      changed.add(`task_${index}`);
    }
    const before = published;
    published = publishRun(live, published, changed);
    assert.deepEqual(published.run, publishRun(live).run);
    assert.equal(published.run.finishedTasks, finishedIn(published.run));
    // The previous publication is what a view drawing it still shows: untouched.
    assert.equal(finishedIn(before.run), step * 50);
  }
  assert.equal(published.run.finishedTasks, 500);
});

test('only the changed tasks are copied anew; a change naming an unknown task copies every task', () => {
  const live = liveRun(10);
  const first = publishRun(live);
  complete(live, 'task_3');
  const second = publishRun(live, first, new Set(['task_3']));
  assert.notEqual(second.run.tasks[3], first.run.tasks[3]);
  assert.equal(second.run.tasks[4], first.run.tasks[4]);
  assert.equal(second.places, first.places);

  live.tasks.set('task_new', { taskId: 'task_new', state: 'pending' });
  const third = publishRun(live, second, new Set(['task_new']));
  assert.equal(third.run.tasks.length, 11);
  assert.equal(third.places.get('task_new'), 10);
});
