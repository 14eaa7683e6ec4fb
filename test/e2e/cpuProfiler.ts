// `ACMP_BENCH_PROFILE=DIR npm run bench:ui -- 10000`: CPU profiles of the window's renderer while the graph opens and
// while each run goes (the workbench and the graph page share one renderer), written to DIR as `<name>.cpuprofile` to
// open in Chromium's DevTools, to find what a long frame was made of. `ACMP_BENCH_TRACE=DIR`: Chromium traces of
// the same stretches instead (`<name>.json`, for DevTools' Performance panel or `node --import tsx
// test/bench/traceSummary.ts FILE`): they have every thread's tasks with their CPU time, which tells a thread that
// worked from one that waited for a core.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CDPSession, Page } from 'playwright-core';

const PROFILE_DIR = process.env.ACMP_BENCH_PROFILE;
const TRACE_DIR = process.env.ACMP_BENCH_TRACE;
/** What a trace records: the renderer's tasks and frames (with their thread times), and the compositor's. */
const TRACE_CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'toplevel',
  'blink',
  'cc',
  'v8',
];

export interface CpuProfiler {
  start(): Promise<void>;
  stop(name: string): Promise<void>;
}

/**
 * Profiles (or traces) the page's renderer between start and stop, when ACMP_BENCH_PROFILE (or ACMP_BENCH_TRACE)
 * names a folder; else does nothing.
 */
export function cpuProfiler(page: Page): CpuProfiler {
  let session: CDPSession | undefined;
  let tracing = false;
  return {
    async start() {
      const browser = page.context().browser();
      if (TRACE_DIR !== undefined && browser !== null && !tracing) {
        await browser.startTracing(page, { categories: TRACE_CATEGORIES });
        tracing = true;
        return;
      }
      if (PROFILE_DIR === undefined || session !== undefined) return;
      session = await page.context().newCDPSession(page);
      await session.send('Profiler.enable');
      await session.send('Profiler.setSamplingInterval', { interval: 500 });
      await session.send('Profiler.start');
    },
    async stop(name) {
      const browser = page.context().browser();
      if (TRACE_DIR !== undefined && browser !== null && tracing) {
        const trace = await browser.stopTracing();
        tracing = false;
        mkdirSync(TRACE_DIR, { recursive: true });
        writeFileSync(join(TRACE_DIR, `${name}.json`), trace);
        return;
      }
      if (PROFILE_DIR === undefined || session === undefined) return;
      const { profile } = await session.send('Profiler.stop');
      await session.detach();
      session = undefined;
      mkdirSync(PROFILE_DIR, { recursive: true });
      writeFileSync(join(PROFILE_DIR, `${name}.cpuprofile`), JSON.stringify(profile));
    },
  };
}
