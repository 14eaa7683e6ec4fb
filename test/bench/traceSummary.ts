// `node --import tsx test/bench/traceSummary.ts TRACE.json`: what a Chromium trace of bench:ui (ACMP_BENCH_TRACE)
// says of a window's time: each busy thread's task time, wall and CPU, and the window's longest tasks with the CPU
// time they had. A task far longer on the wall than on the CPU waited for a core: the machine's other processes, not
// the window's work (at a 10,000-task run's end here: tasks of 73-128 ms that ran 6-28 ms).
import { readFileSync } from 'node:fs';

interface TraceEvent {
  readonly ph: string;
  readonly name: string;
  readonly pid: number;
  readonly tid: number;
  readonly ts: number;
  readonly dur?: number;
  /** The thread's CPU time in the event, where the trace has it. */
  readonly tdur?: number;
  readonly args?: { readonly name?: string };
}

/** A thread's tasks: the scheduler's top-level events. */
const TASK_EVENTS = new Set(['ThreadControllerImpl::RunTask', 'RunTask', 'ThreadPool_RunTask']);
const ms = (microseconds: number): string => `${Math.round(microseconds / 1000)} ms`;

function summarise(file: string): void {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as TraceEvent[] | { traceEvents: TraceEvent[] };
  const events = Array.isArray(parsed) ? parsed : parsed.traceEvents;
  const threadNames = new Map<string, string>();
  for (const event of events) {
    if (event.ph === 'M' && event.name === 'thread_name')
      threadNames.set(`${event.pid}:${event.tid}`, event.args?.name ?? '');
  }
  // The outermost only: a task's events nest (RunTask inside ThreadControllerImpl::RunTask).
  const tasks: TraceEvent[] = [];
  const lastEnd = new Map<string, number>();
  const candidates = events.filter(
    (event) => event.ph === 'X' && TASK_EVENTS.has(event.name) && event.dur !== undefined,
  );
  for (const task of candidates.sort((a, b) => a.ts - b.ts || b.dur! - a.dur!)) {
    const thread = `${task.pid}:${task.tid}`;
    if (task.ts < (lastEnd.get(thread) ?? -Infinity)) continue;
    lastEnd.set(thread, task.ts + task.dur!);
    tasks.push(task);
  }
  const times = events.filter((event) => event.ts > 0).map((event) => event.ts);
  const start = Math.min(...times);
  console.log(`${file}: ${ms(Math.max(...times) - start)} traced`);

  const threads = new Map<string, { wall: number; cpu: number }>();
  for (const task of tasks) {
    const thread = `${threadNames.get(`${task.pid}:${task.tid}`) ?? 'thread'} (${task.pid})`;
    const total = threads.get(thread) ?? { wall: 0, cpu: 0 };
    total.wall += task.dur!;
    total.cpu += task.tdur ?? 0;
    threads.set(thread, total);
  }
  console.log('threads by task time:');
  for (const [thread, { wall, cpu }] of [...threads].sort((a, b) => b[1].wall - a[1].wall).slice(0, 8)) {
    console.log(`  ${thread.padEnd(40)} wall ${ms(wall).padStart(8)}, CPU ${ms(cpu).padStart(8)}`);
  }

  // The window's thread: the renderer main thread with the most task time.
  const mains = [...threads].filter(([thread]) => thread.startsWith('CrRendererMain'));
  const window = mains.sort((a, b) => b[1].wall - a[1].wall)[0]?.[0];
  if (window === undefined) return;
  const longest = tasks
    .filter((task) => `${threadNames.get(`${task.pid}:${task.tid}`)} (${task.pid})` === window)
    .sort((a, b) => b.dur! - a.dur!)
    .slice(0, 8);
  console.log(`the window's longest tasks (${window}):`);
  for (const task of longest) {
    console.log(
      `  at ${ms(task.ts - start).padStart(8)}: wall ${ms(task.dur!).padStart(7)}, CPU ${ms(task.tdur ?? 0).padStart(7)}`,
    );
  }
}

for (const file of process.argv.slice(2)) summarise(file);
