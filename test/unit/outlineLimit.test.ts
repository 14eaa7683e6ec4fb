// The outline given to the editor: a large DAG's cut to VS Code's own limit, the outermost symbols and the tasks first.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_OUTLINE_SYMBOLS, limitOutline } from '../../client/src/outlineLimit';

interface Symbol {
  name: string;
  children: Symbol[];
}

const symbol = (name: string, children: Symbol[] = []): Symbol => ({ name, children });

/** A DAG's outline as the server answers it: dag_id, then the tasks and the edges lists. */
function outline(tasks: number, edges: number): Symbol[] {
  return [
    symbol('dag_id'),
    symbol(
      'tasks',
      Array.from({ length: tasks }, (_, n) => symbol(`task_${n}`)),
    ),
    symbol(
      'edges',
      Array.from({ length: edges }, (_, n) => symbol(`task_${n} → task_${n + 1}`)),
    ),
  ];
}

const count = (symbols: readonly Symbol[]): number =>
  symbols.reduce((sum, { children }) => sum + 1 + count(children), 0);

describe('the outline given to the editor', () => {
  test("a small DAG's outline is given whole", () => {
    const given = limitOutline(outline(100, 250));
    assert.equal(count(given), 3 + 100 + 250);
  });

  test("a 10,000-task DAG's outline is cut to VS Code's limit: the lists, then the tasks in order, then edges", () => {
    const given = limitOutline(outline(10_000, 29_700));
    assert.equal(count(given), MAX_OUTLINE_SYMBOLS);
    assert.deepEqual(
      given.map(({ name }) => name),
      ['dag_id', 'tasks', 'edges'],
    );
    const [, tasks, edges] = given;
    assert.equal(tasks!.children.length, MAX_OUTLINE_SYMBOLS - 3);
    assert.equal(tasks!.children.at(-1)!.name, `task_${MAX_OUTLINE_SYMBOLS - 4}`);
    assert.equal(edges!.children.length, 0);

    const fewerTasks = limitOutline(outline(3_000, 29_700));
    assert.equal(count(fewerTasks), MAX_OUTLINE_SYMBOLS);
    assert.equal(fewerTasks[1]!.children.length, 3_000, 'every task');
    assert.equal(fewerTasks[2]!.children[0]!.name, 'task_0 → task_1', 'the edges from the first');
  });
});
