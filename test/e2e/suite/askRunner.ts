// What the extension-host side asks of the code-server runner (test/e2e/launcher.ts), which sees the window from the
// browser: a screenshot, what the workbench's DOM shows during a run. The request is a marked line on the console
// (which the runner receives through `codeAutomationLog`), the answer a file the runner writes in ACMP_E2E_ANSWERS.
// Other runners (@vscode/test-electron) set no ACMP_E2E_ANSWERS and answer nothing.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ASK_MARKER, type Asked } from '../askProtocol';

/** Where the runner writes its answers; undefined under a runner that answers nothing. */
export const runnerAnswers: string | undefined = process.env.ACMP_E2E_ANSWERS;

let asked = 0;

/** Asks the runner for `name`; resolves with its answer, or rejects with the error it answered. */
export async function askRunner<T = unknown>(name: string, argument: unknown = {}): Promise<T> {
  const folder = runnerAnswers;
  if (folder === undefined) throw new Error('no runner answers here (ACMP_E2E_ANSWERS is not set)');
  const id = `${process.pid}-${++asked}`;
  const file = path.join(folder, `${id}.json`);
  const answered = new Promise<string>((resolve) => {
    const watcher = fs.watch(folder, () => {
      if (!fs.existsSync(file)) return;
      watcher.close();
      resolve(fs.readFileSync(file, 'utf8'));
    });
  });
  console.log(`${ASK_MARKER}${JSON.stringify({ id, name, argument } satisfies Asked)}`);
  const reply = JSON.parse(await answered) as { value?: T; error?: string };
  if (reply.error !== undefined) throw new Error(`the runner could not answer ${name}: ${reply.error}`);
  return reply.value as T;
}

/** A screenshot of the window as out/e2e/NAME.png, under the code-server runner (others take none). */
export async function screenshotTaken(name: string): Promise<void> {
  if (runnerAnswers !== undefined) await askRunner('screenshot', { name });
}
