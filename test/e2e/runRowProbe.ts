/// <reference lib="dom" />
// The runs tree's row of a run and the status bar item, read together in the browser: when the row first showed, and
// their task counters in one frame. The runner answers the suite's requests with these (launcher.ts).
import type { Frame } from 'playwright-core';

/** What the page functions below take. */
interface RowOptions {
  /** The run's dag_id: the tree row's label, in the status bar item's text. */
  readonly dagId: string;
  /** With `counters`: the tree row's counter (`250/1000`) waited for. */
  readonly counter?: string;
}

/** Of one frame: the counter (`250/1000`) of the run's tree row and of the status bar item, or null where none. */
export interface CountersSeen {
  readonly treeRow: string | null;
  readonly statusBar: string | null;
}

/** Runs in the page (serialized by playwright): nothing from outside this function is in scope there. */
function shownCounters({ dagId }: RowOptions): CountersSeen & { readonly rowShown: boolean } {
  const visible = (element: Element): boolean => (element as HTMLElement).offsetParent !== null;
  const counter = (element: Element | null | undefined): string | null =>
    /\d+\/\d+/.exec(element?.textContent ?? '')?.[0] ?? null;
  const row = [...document.querySelectorAll('.tree-explorer-viewlet-tree-view .monaco-list-row')].find(
    (candidate) => visible(candidate) && candidate.querySelector('.label-name')?.textContent === dagId,
  );
  const statusBarItem = [...document.querySelectorAll('.statusbar-item')].find(
    (item) => visible(item) && (item.textContent ?? '').includes(dagId),
  );
  return {
    rowShown: row !== undefined,
    treeRow: counter(row?.querySelector('.label-description')),
    statusBar: counter(statusBarItem),
  };
}

/** Runs in the page: notes (Date.now()) the first frame in which the tree shows a row for the run. */
function watchRow(options: RowOptions): void {
  const shown = (globalThis as unknown as { acmpShownCounters: typeof shownCounters }).acmpShownCounters;
  const page = globalThis as unknown as { acmpRunRowSeenAt?: number };
  delete page.acmpRunRowSeenAt;
  const look = (): void => {
    if (shown(options).rowShown) page.acmpRunRowSeenAt = Date.now();
    else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}

const PAGE_HELPERS = `globalThis.__name = (f) => f; globalThis.acmpShownCounters = ${shownCounters.toString()};`;

/** From now on, watches for the run's row in the runs tree. */
export async function watchRunRow(frame: Frame, options: RowOptions): Promise<void> {
  await frame.evaluate(`${PAGE_HELPERS} (${watchRow.toString()})(${JSON.stringify(options)})`);
}

/** When (Date.now() in the browser) the run's row first showed since watchRunRow; waits up to `timeoutMs`. */
export async function runRowSeenAt(frame: Frame, timeoutMs: number): Promise<number> {
  const seen = await frame.waitForFunction('globalThis.acmpRunRowSeenAt', undefined, { timeout: timeoutMs });
  return (await seen.jsonValue()) as number;
}

/**
 * The counters of the tree row and the status bar in the first frame in which the tree row shows `counter`; waits up
 * to `timeoutMs`, then answers what the last frame showed.
 */
export async function countersWhenRowShows(
  frame: Frame,
  options: RowOptions,
  timeoutMs: number,
): Promise<CountersSeen> {
  const counters = `(({ treeRow, statusBar }) => ({ treeRow, statusBar }))(globalThis.acmpShownCounters(${JSON.stringify(options)}))`;
  const read = `${PAGE_HELPERS} (() => { const seen = ${counters};
    return seen.treeRow === ${JSON.stringify(options.counter ?? null)} && seen; })()`;
  const seen = await frame
    .waitForFunction(read, undefined, { timeout: timeoutMs, polling: 'raf' })
    .catch(() => undefined);
  if (seen !== undefined) return (await seen.jsonValue()) as CountersSeen;
  return frame.evaluate<CountersSeen>(`${PAGE_HELPERS} ${counters}`);
}
