// What the suite asks of the code-server runner, which drives the browser: screenshots of the real window for the
// README, and probes of the graph webview's page (which the extension host cannot see into).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DrawnView, GraphFigures, ProbeStep } from '../graphBench';

/** Whether a runner that drives the browser runs the suite (the code-server one); other runners take none. */
export const browserDriven = (): boolean => process.env.ACMP_E2E_SCREENSHOT !== undefined;

/** Logs `marker`, then resolves once the runner has written `file` (next to its first screenshot). */
async function runnerWrote(file: string, marker: string): Promise<string> {
  const written = path.join(path.dirname(process.env.ACMP_E2E_SCREENSHOT!), file);
  const done = `${written}.done`;
  fs.rmSync(done, { force: true });
  const finished = new Promise<void>((resolve) => {
    const watcher = fs.watch(path.dirname(done), () => {
      if (!fs.existsSync(done)) return;
      watcher.close();
      resolve();
    });
  });
  console.log(marker);
  await finished;
  return written;
}

/**
 * Where the code-server runner wants a screenshot named `name`: it takes it when the suite logs the marker, then
 * writes `<file>.done`. Other runners set nothing and take none.
 */
export async function screenshotTaken(name: string): Promise<void> {
  if (!browserDriven()) return;
  await runnerWrote(`${name}.png`, `acmp-e2e: screenshot ${name} now`);
}

/** Has the runner run the steps on the open graph page; answers what its `read` and `measure` steps found. */
export async function graphProbe(name: string, steps: readonly ProbeStep[]): Promise<(DrawnView | GraphFigures)[]> {
  const file = await runnerWrote(`${name}.probe.json`, `acmp-e2e: graph-probe ${name} ${JSON.stringify(steps)}`);
  const answer = JSON.parse(fs.readFileSync(file, 'utf8')) as { found?: (DrawnView | GraphFigures)[]; error?: string };
  if (answer.error !== undefined) throw new Error(`the graph probe ${name} failed: ${answer.error}`);
  return answer.found!;
}
