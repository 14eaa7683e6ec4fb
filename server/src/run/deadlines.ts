// The deadlines of a run's tasks on one timer: a min-heap by time, armed for the earliest. A timer per task was a
// Timeout object, its list entry and a closure for each of 10,000 tasks, though nearly all end long before theirs.

/** Deadlines of items on one timer. An item whose deadline no longer counts is left in the heap and skipped. */
export class Deadlines<T> {
  /** A binary min-heap over `times`, with `items` moved alongside (no entry object per deadline). */
  private readonly times: number[] = [];
  private readonly items: T[] = [];
  /** Entries that no longer count, not yet dropped. */
  private stale = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private armedAt = Infinity;

  constructor(
    /** Called when an item's deadline passes while it still counts. */
    private readonly expire: (item: T) => void,
    /** Whether an item's deadline still counts (the task is still running). */
    private readonly counts: (item: T) => boolean,
  ) {}

  /** `item` expires `delayMs` from now unless it stops counting first. */
  add(item: T, delayMs: number): void {
    this.push(performance.now() + delayMs, item);
    this.arm();
  }

  /** An item stopped counting: its entry is dropped once half the heap is such entries. */
  dropped(): void {
    if (++this.stale * 2 <= this.times.length || this.times.length < 64) return;
    const times = this.times.splice(0);
    const items = this.items.splice(0);
    this.stale = 0;
    for (let k = 0; k < items.length; k++) if (this.counts(items[k]!)) this.push(times[k]!, items[k]!);
  }

  /** Stops the timer and forgets every deadline. */
  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Infinity;
    this.times.length = 0;
    this.items.length = 0;
    this.stale = 0;
  }

  private arm(): void {
    const first = this.times[0];
    if (first === undefined || first >= this.armedAt) return;
    clearTimeout(this.timer);
    this.armedAt = first;
    // Timers round to whole milliseconds and may fire a fraction early: `fire` re-arms for what is left.
    this.timer = setTimeout(() => this.fire(), Math.max(1, Math.ceil(first - performance.now())));
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    const now = performance.now();
    while (this.times.length > 0 && this.times[0]! <= now) {
      const item = this.pop();
      if (this.counts(item)) this.expire(item);
      else if (this.stale > 0) this.stale--;
    }
    this.arm();
  }

  private push(time: number, item: T): void {
    const { times, items } = this;
    let at = times.length;
    times.push(time);
    items.push(item);
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (times[parent]! <= time) break;
      times[at] = times[parent]!;
      items[at] = items[parent]!;
      at = parent;
    }
    times[at] = time;
    items[at] = item;
  }

  private pop(): T {
    const { times, items } = this;
    const top = items[0]!;
    const lastTime = times.pop()!;
    const lastItem = items.pop()!;
    const size = times.length;
    if (size === 0) return top;
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= size) break;
      if (child + 1 < size && times[child + 1]! < times[child]!) child++;
      if (times[child]! >= lastTime) break;
      times[at] = times[child]!;
      items[at] = items[child]!;
      at = child;
    }
    times[at] = lastTime;
    items[at] = lastItem;
    return top;
  }
}
