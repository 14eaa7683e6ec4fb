/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// What a user sees of a run, read in the browser: a probe in the workbench page (and in a graph webview's frame)
// that on every animation frame notes the gap since the last one and whether each display of the run shows its final
// state yet. The extension host cannot see the window; the runner installs this through playwright (launcher.ts).
import type { Frame } from 'playwright-core';

/** The displays of a run: the runs tree, the status bar item, the progress notification, the inline states, the graph. */
export type Display = 'tree' | 'statusBar' | 'notification' | 'decorations' | 'graph';

export interface ProbeOptions {
  /** The DAG file's name, as the notification's title shows it. */
  readonly fileName: string;
  /** The DAG's dag_id, as the tree's run row and the status bar show it. */
  readonly dagId: string;
  readonly displays: readonly Display[];
}

export interface ProbeResult {
  /** Which frame: the workbench's, or a graph webview's. */
  readonly frame: 'workbench' | 'graph';
  readonly frames: number;
  /** The longest gap between two animation frames: the longest the window could not draw. */
  readonly longestFrameMs: number;
  readonly framesOver100Ms: number;
  /**
   * When each frame began and when the probe's own checks of the displays ran in it (start, end, ...), in ms since
   * the epoch: the checks share the window's thread, so the bench can tell the frames net of them.
   */
  readonly frameTimes: readonly number[];
  readonly checkTimes: readonly number[];
  /** The longest frame the browser's Long Animation Frames API reported, where it has one. */
  readonly longestAnimationFrameMs: number | undefined;
  /** What that frame was made of. */
  readonly longestAnimationFrame?: AnimationFrameParts;
  /** For each display that shows the final state now: since when (Date.now()). */
  readonly finalSince: Partial<Record<Display, number>>;
  /** The displays seen showing the run unfinished at least once (a short run may end before one is drawn). */
  readonly seenRunning: readonly Display[];
  /** Frames in which both the status bar and the notification showed a task counter, and those where they differed. */
  readonly countersCompared: number;
  readonly countersDisagreed: number;
  /** The first disagreement seen, as `status bar | notification`. */
  readonly firstDisagreement: string | undefined;
}

/** A run as a user saw it (suite/measuredRun.ts). */
export interface RunMeasure {
  /** The server's time from the run's start to its end. */
  readonly runMs: number;
  /** For each display, how long after the run's end it showed the final states (0: by then); absent: not in time. */
  readonly finalAfterMs: Partial<Record<Display, number>>;
  /** The workbench's probe, then the graph's when it was open. */
  readonly probes: readonly ProbeResult[];
  /**
   * CPU time from the run's start until every display showed the final states: the extension host's, and the
   * language server's where it could be read. On two cores they compete with the window.
   */
  readonly cpuMs?: { readonly extensionHost: number; readonly server?: number };
}

/** Of a long animation frame: its scripts' time (the longest few, by source file and what called them), its forced
 * style and layout, and its rendering (from the rendering's start to the frame's end, style and layout included). */
export interface AnimationFrameParts {
  readonly scriptsMs: number;
  readonly scripts: readonly { readonly source: string; readonly ms: number }[];
  readonly forcedLayoutMs: number;
  readonly renderingMs: number;
}

interface PageProbe {
  done(): boolean;
  stop(): ProbeResult;
}

/** Runs in the page (serialized by playwright): nothing from outside this function is in scope there. */
/**
 * Resolves once the window has drawn every frame in time for a second and its thread was mostly idle in it (or after
 * 30 s, whatever it is doing): what came before (opening a large DAG: tokenizing, laying out) is then over. Frames in
 * time alone are not enough: VS Code tokenizes a 200,000-line file for seconds after showing it, in small tasks that
 * keep every frame in time and the window's thread busy.
 */
async function windowSettles(): Promise<void> {
  const SETTLED_MS = 1_000;
  const SETTLE_LIMIT_MS = 30_000;
  /** Of the last SETTLED_MS, at least this share idle (the idle periods the browser gave idle callbacks). */
  const IDLE_SHARE = 0.5;
  await new Promise<void>((settled) => {
    const begun = performance.now();
    let quietSince = begun;
    let previous = begun;
    const idlePeriods: { readonly at: number; readonly ms: number }[] = [];
    let idleCallback = requestIdleCallback(function idle(deadline) {
      idlePeriods.push({ at: performance.now(), ms: deadline.timeRemaining() });
      idleCallback = requestIdleCallback(idle);
    });
    const idleMs = (now: number): number =>
      idlePeriods.reduce((sum, { at, ms }) => (at >= now - SETTLED_MS ? sum + ms : sum), 0);
    const wait = (now: number): void => {
      if (now - previous > 50) quietSince = now;
      previous = now;
      const calm = now - quietSince >= SETTLED_MS && idleMs(now) >= IDLE_SHARE * SETTLED_MS;
      if (calm || now - begun >= SETTLE_LIMIT_MS) {
        cancelIdleCallback(idleCallback);
        settled();
      } else requestAnimationFrame(wait);
    };
    requestAnimationFrame(wait);
  });
}

async function probe(options: ProbeOptions & { frame: ProbeResult['frame'] }): Promise<void> {
  // What came before the run is not the run's.
  await (globalThis as unknown as { acmpWindowSettles: typeof windowSettles }).acmpWindowSettles();
  /** The inline state after a task's declaration (client/src/presentation.ts, taskSummary). */
  const TASK_STATE = /^"[○◔✓✗⊘] (pending|running|completed|cached|failed|cancelled)/;
  const visible = (element: Element): boolean => (element as HTMLElement).offsetParent !== null;
  const textOf = (element: Element | null | undefined): string => element?.textContent ?? '';
  const statusBarItem = (): Element | undefined =>
    [...document.querySelectorAll('.statusbar-item')].find(
      (item) => visible(item) && textOf(item).includes(options.dagId),
    );
  // The progress notification is a toast, or, while toasts are not shown, its line in the status bar.
  const notification = (): Element | undefined =>
    [...document.querySelectorAll('.notification-toast, .statusbar-item')].find(
      (element) => visible(element) && textOf(element).includes(`Running ${options.fileName}`),
    );
  const counter = (text: string): string | undefined => /(\d+)\/(\d+)/.exec(text)?.[0];
  const checks: Record<Display, () => boolean> = {
    tree: () => {
      const rows = [...document.querySelectorAll('.tree-explorer-viewlet-tree-view .monaco-list-row')];
      const run = rows.find((row) => textOf(row.querySelector('.label-name')) === options.dagId);
      if (run === undefined || /^running/.test(textOf(run.querySelector('.label-description')))) return false;
      return !rows.some((row) => row.querySelector('.codicon-sync, .codicon-circle-outline') !== null);
    },
    statusBar: () => statusBarItem() === undefined,
    notification: () => notification() === undefined,
    decorations: () => {
      const states = [...document.querySelectorAll('.monaco-editor .view-line span[class*="ced-"]')]
        .map((span) => TASK_STATE.exec(getComputedStyle(span, '::after').content)?.[1])
        .filter((state) => state !== undefined);
      return states.length > 0 && states.every((state) => state !== 'pending' && state !== 'running');
    },
    graph: () => {
      // The graph page's status line: `run: 3/10 finished` while its run goes, `last run: 10/10 finished` after.
      const counts = /last run: (\d+)\/(\d+) finished/.exec(document.getElementById('status')?.textContent ?? '');
      return counts !== null && counts[1] === counts[2];
    },
  };
  const finalSince: Partial<Record<Display, number>> = {};
  const seenRunning = new Set<Display>();
  let frames = 0;
  let longestFrameMs = 0;
  let framesOver100Ms = 0;
  let longestAnimationFrameMs: number | undefined;
  let longestAnimationFrame: AnimationFrameParts | undefined;
  interface ScriptTiming {
    readonly duration: number;
    readonly sourceURL: string;
    readonly invoker: string;
    readonly forcedStyleAndLayoutDuration: number;
  }
  interface AnimationFrameTiming {
    readonly startTime: number;
    readonly duration: number;
    readonly renderStart: number;
    readonly scripts: readonly ScriptTiming[];
  }
  const partsOf = (entry: AnimationFrameTiming): AnimationFrameParts => ({
    scriptsMs: Math.round(entry.scripts.reduce((sum, script) => sum + script.duration, 0)),
    scripts: [...entry.scripts]
      .sort((a, b) => b.duration - a.duration)
      .slice(0, 4)
      .map((script) => ({
        source: `${script.sourceURL.split('/').pop()?.split('?')[0] ?? ''} ${script.invoker}`.slice(0, 80),
        ms: Math.round(script.duration),
      })),
    forcedLayoutMs: Math.round(entry.scripts.reduce((sum, script) => sum + script.forcedStyleAndLayoutDuration, 0)),
    renderingMs: entry.renderStart > 0 ? Math.round(entry.startTime + entry.duration - entry.renderStart) : 0,
  });
  let countersCompared = 0;
  let countersDisagreed = 0;
  let firstDisagreement: string | undefined;
  let last: number | undefined;
  let stopped = false;
  const frameTimes: number[] = [];
  const checkTimes: number[] = [];
  const epoch = (time: number): number => performance.timeOrigin + time;
  const observer = PerformanceObserver.supportedEntryTypes.includes('long-animation-frame')
    ? new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
          if (entry.duration <= (longestAnimationFrameMs ?? 0)) continue;
          longestAnimationFrameMs = entry.duration;
          longestAnimationFrame = partsOf(entry as unknown as AnimationFrameTiming);
        }
      })
    : undefined;
  observer?.observe({ type: 'long-animation-frame' });
  const tick = (now: number): void => {
    if (stopped) return;
    if (last !== undefined) {
      const gap = now - last;
      frames += 1;
      longestFrameMs = Math.max(longestFrameMs, gap);
      if (gap > 100) framesOver100Ms += 1;
    }
    last = now;
    frameTimes.push(epoch(now));
    const checkStart = performance.now();
    for (const display of options.displays) {
      if (checks[display]()) {
        finalSince[display] ??= Date.now();
      } else {
        delete finalSince[display];
        seenRunning.add(display);
      }
    }
    if (options.displays.includes('statusBar') && options.displays.includes('notification')) {
      const shown = [counter(textOf(statusBarItem())), counter(textOf(notification()))];
      if (shown[0] !== undefined && shown[1] !== undefined) {
        countersCompared += 1;
        if (shown[0] !== shown[1]) {
          countersDisagreed += 1;
          firstDisagreement ??= shown.join(' | ');
        }
      }
    }
    checkTimes.push(epoch(checkStart), epoch(performance.now()));
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  const pageProbe: PageProbe = {
    done: () => options.displays.every((display) => finalSince[display] !== undefined),
    stop: () => {
      stopped = true;
      observer?.disconnect();
      return {
        frame: options.frame,
        frames,
        longestFrameMs,
        framesOver100Ms,
        frameTimes,
        checkTimes,
        longestAnimationFrameMs,
        ...(longestAnimationFrame !== undefined && { longestAnimationFrame }),
        finalSince,
        seenRunning: [...seenRunning],
        countersCompared,
        countersDisagreed,
        firstDisagreement,
      };
    },
  };
  (globalThis as unknown as { acmpProbe: PageProbe }).acmpProbe = pageProbe;
}

/** What a function's source sent as text needs in the page: the test runner's transpiler adds esbuild's `__name`. */
const PAGE_HELPERS = 'globalThis.__name = (f) => f;';

/** Starts the probe in a frame: the graph frame watches the graph, the workbench's every other display. */
export async function startProbe(frame: Frame, options: ProbeOptions, isGraph: boolean): Promise<void> {
  const displays = options.displays.filter((display) => (display === 'graph') === isGraph);
  const argument = { ...options, displays, frame: isGraph ? 'graph' : 'workbench' };
  await frame.evaluate(
    `${PAGE_HELPERS} globalThis.acmpWindowSettles = ${windowSettles.toString()}; (${probe.toString()})(${JSON.stringify(argument)})`,
  );
}

/** Resolves once the window in `frame` has settled (windowSettles). */
export async function settled(frame: Frame): Promise<void> {
  await frame.evaluate(`${PAGE_HELPERS} (${windowSettles.toString()})()`);
}

/** The probe's figures once every display shows its final state, or after `timeoutMs` with those that do. */
export async function probeResult(frame: Frame, timeoutMs: number): Promise<ProbeResult> {
  await frame
    .waitForFunction('globalThis.acmpProbe.done()', undefined, { timeout: timeoutMs, polling: 50 })
    .catch(() => undefined);
  return frame.evaluate<ProbeResult>('globalThis.acmpProbe.stop()');
}
