// Screenshots of the real window for the README: the code-server runner takes one when the suite asks.
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Where the code-server runner wants a screenshot named `name`, next to its first one: it takes it when the suite
 * logs the marker, then writes `<file>.done`. Other runners set nothing and take none.
 */
export async function screenshotTaken(name: string): Promise<void> {
  const first = process.env.ACMP_E2E_SCREENSHOT;
  if (first === undefined) return;
  const done = path.join(path.dirname(first), `${name}.png.done`);
  fs.rmSync(done, { force: true });
  const written = new Promise<void>((resolve) => {
    const watcher = fs.watch(path.dirname(done), () => {
      if (!fs.existsSync(done)) return;
      watcher.close();
      resolve();
    });
  });
  console.log(`acmp-e2e: screenshot ${name} now`);
  await written;
}
