// Nesting deeper than a run can take. The analysis never recurses, but a run does, once per level, in code it does not
// own: the result-hash proof's canonical JSON (canonicalize), JSON.stringify of every message to a provider and of
// the report to the editor. Measured with node 20's default stack, each in a fresh process: canonicalize broke at
// 2,462 levels, JSON.stringify at 4,185, and `acmp-dag run` of a task with a proof at 2,418 levels of input data.
// The limit is well below, for the frames beneath those calls and the levels a provider's answer adds (an echo
// wraps its input); it is no setting, since raising it would only bring the stack overflow back.
/** Levels of arrays and objects a DAG file may nest, the top-level value being level 1. */
export const MAX_NESTING = 1_000;

/** A value of the file that nests too deeply. */
export interface TooDeep {
  /** The path from the top-level value to the first container beyond MAX_NESTING. */
  readonly path: readonly (string | number)[];
  /** The deepest level under the place it belongs to (a task, an edge, a property of the DAG). */
  readonly depth: number;
  /** That place, as a message names it: `task "task_a"`, `edge #2`, `property "extra"`, `the file`. */
  readonly owner: string;
}

type Container = Record<string, unknown> | unknown[];

const isContainer = (value: unknown): value is Container => typeof value === 'object' && value !== null;

/** Whether `value`, at level `level`, holds a container beyond MAX_NESTING: the cheap walk that most values pass. */
function nestsTooDeeply(value: unknown, level: number): boolean {
  if (!isContainer(value)) return false;
  const pending: unknown[] = [value];
  const levels: number[] = [level];
  while (pending.length > 0) {
    const container = pending.pop() as Container;
    const at = levels.pop()!;
    if (at > MAX_NESTING) return true;
    if (Array.isArray(container)) {
      for (const element of container) {
        if (isContainer(element)) {
          pending.push(element);
          levels.push(at + 1);
        }
      }
      continue;
    }
    for (const key in container) {
      const member = container[key];
      if (isContainer(member)) {
        pending.push(member);
        levels.push(at + 1);
      }
    }
  }
  return false;
}

/**
 * The first container beyond MAX_NESTING in `value`, which sits at level `level` under `path`, and the deepest level
 * in it; undefined when it nests no deeper than allowed. Depth first with an explicit stack, in the order of the text.
 */
function deepestIn(
  value: unknown,
  level: number,
  path: readonly (string | number)[],
): Omit<TooDeep, 'owner'> | undefined {
  if (!nestsTooDeeply(value, level)) return undefined;
  const frames: { container: Container; keys: readonly string[] | undefined; next: number }[] = [];
  const at: (string | number)[] = [...path];
  let found: (string | number)[] | undefined = level > MAX_NESTING ? [...at] : undefined;
  let deepest = level;
  const enter = (container: Container): void => {
    frames.push({ container, keys: Array.isArray(container) ? undefined : Object.keys(container), next: 0 });
  };
  enter(value as Container);
  while (frames.length > 0) {
    const frame = frames[frames.length - 1]!;
    const count = frame.keys === undefined ? (frame.container as unknown[]).length : frame.keys.length;
    if (frame.next === count) {
      frames.pop();
      if (frames.length > 0) at.pop();
      continue;
    }
    const key = frame.keys === undefined ? frame.next : frame.keys[frame.next]!;
    frame.next++;
    const child = (frame.container as Record<string | number, unknown>)[key];
    if (!isContainer(child)) continue;
    at.push(key);
    enter(child);
    const childLevel = level + frames.length - 1;
    if (childLevel > deepest) deepest = childLevel;
    if (childLevel > MAX_NESTING && found === undefined) found = [...at];
  }
  return found === undefined ? undefined : { path: found, depth: deepest };
}

/** How a message names a task or an edge of `tasks` or `edges`. */
function ownerOf(list: 'tasks' | 'edges', element: unknown, index: number): string {
  if (list === 'edges') return `edge #${index + 1}`;
  const id = isContainer(element) && !Array.isArray(element) ? element.task_id : undefined;
  return typeof id === 'string' ? `task ${JSON.stringify(id)}` : `task #${index + 1}`;
}

/**
 * The values of the text's plain value that nest deeper than MAX_NESTING: at most one a task, an edge or another
 * property of the DAG. When the schema found no problem, only a task's `input.data` and `metadata` can hold more than
 * a few levels, and only those are walked (a clean file pays for its payloads, not for its structure).
 */
export function tooDeepValues(value: unknown, schemaClean: boolean): TooDeep[] {
  const found: TooDeep[] = [];
  const add = (deep: Omit<TooDeep, 'owner'> | undefined, owner: () => string): void => {
    if (deep !== undefined) found.push({ ...deep, owner: owner() });
  };
  if (Array.isArray(value) || !isContainer(value)) {
    add(deepestIn(value, 1, []), () => 'the file');
    return found;
  }
  const dag = value as Record<string, unknown>;
  if (schemaClean) {
    (dag.tasks as Record<string, unknown>[]).forEach((task, index) => {
      const input = task.input as Record<string, unknown>;
      const data = deepestIn(input.data, 5, ['tasks', index, 'input', 'data']);
      const metadata = deepestIn(task.metadata, 4, ['tasks', index, 'metadata']);
      add(data && metadata ? { ...data, depth: Math.max(data.depth, metadata.depth) } : (data ?? metadata), () =>
        ownerOf('tasks', task, index),
      );
    });
    return found;
  }
  for (const key of Object.keys(dag)) {
    const member = dag[key];
    if ((key === 'tasks' || key === 'edges') && Array.isArray(member)) {
      member.forEach((element: unknown, index) =>
        add(deepestIn(element, 3, [key, index]), () => ownerOf(key, element, index)),
      );
    } else add(deepestIn(member, 2, [key]), () => `property ${JSON.stringify(key)}`);
  }
  return found;
}
