// What the suite cannot see or do through the `vscode` API (notifications, a lens' click, the tree's expansion, a
// context menu) it asks of the browser the code-server runner drives: the request goes out as a console line, the
// runner answers in a file beside the screenshots. Other runners drive no browser: `inBrowser` then says so.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BROWSER_MARKER, type BrowserRequest, type ElementSeen, browserAnswerFile } from '../browserProtocol';

let requests = 0;

/** Whether a browser answers requests (the code-server runner); false under @vscode/test-electron. */
export const hasBrowser = (): boolean => process.env.ACMP_E2E_SCREENSHOT !== undefined;

/** Asks the browser; resolves with its answer, rejects with the error it met. */
export async function inBrowser(request: BrowserRequest & { readonly action: 'elements' }): Promise<ElementSeen[]>;
export async function inBrowser(request: BrowserRequest): Promise<unknown>;
export async function inBrowser(request: BrowserRequest): Promise<unknown> {
  const first = process.env.ACMP_E2E_SCREENSHOT;
  if (first === undefined) throw new Error('no browser answers here: only the code-server runner drives one');
  const id = `${process.pid}-${(requests += 1)}`;
  const file = browserAnswerFile(path.dirname(first), id);
  const answered = new Promise<void>((resolve) => {
    const watcher = fs.watch(path.dirname(file), () => {
      if (!fs.existsSync(file)) return;
      watcher.close();
      resolve();
    });
  });
  console.log(`${BROWSER_MARKER} ${id} ${JSON.stringify(request)}`);
  await answered;
  const answer = JSON.parse(fs.readFileSync(file, 'utf8')) as { result?: unknown; error?: string };
  fs.rmSync(file);
  if (answer.error !== undefined) throw new Error(`the browser could not ${request.action}: ${answer.error}`);
  return answer.result;
}
