// `ACMP_BENCH_PROFILE=DIR npm run bench:ui -- 10000`: CPU profiles of the window's renderer while the graph opens and
// while each run goes (the workbench and the graph page share one renderer), written to DIR as `<name>.cpuprofile` to
// open in Chromium's DevTools. How the long frames of issue 15 were found.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CDPSession, Page } from 'playwright-core';

const PROFILE_DIR = process.env.ACMP_BENCH_PROFILE;

export interface CpuProfiler {
  start(): Promise<void>;
  stop(name: string): Promise<void>;
}

/** Profiles the page's renderer between start and stop, when ACMP_BENCH_PROFILE names a folder; else does nothing. */
export function cpuProfiler(page: Page): CpuProfiler {
  let session: CDPSession | undefined;
  return {
    async start() {
      if (PROFILE_DIR === undefined || session !== undefined) return;
      session = await page.context().newCDPSession(page);
      await session.send('Profiler.enable');
      await session.send('Profiler.setSamplingInterval', { interval: 500 });
      await session.send('Profiler.start');
    },
    async stop(name) {
      if (PROFILE_DIR === undefined || session === undefined) return;
      const { profile } = await session.send('Profiler.stop');
      await session.detach();
      session = undefined;
      mkdirSync(PROFILE_DIR, { recursive: true });
      writeFileSync(join(PROFILE_DIR, `${name}.cpuprofile`), JSON.stringify(profile));
    },
  };
}
