// What the suite cannot see or do through the `vscode` API (notifications, a lens' click, the tree's expansion, a
// context menu) it asks of the browser the code-server runner drives (askRunner.ts). Other runners drive no browser:
// `hasBrowser` then says so.
import type { BrowserRequest, ElementSeen } from '../browserProtocol';
import { askRunner, runnerAnswers } from './askRunner';

/** Whether a browser answers requests (the code-server runner); false under @vscode/test-electron. */
export const hasBrowser = (): boolean => runnerAnswers !== undefined;

/** Asks the browser; resolves with its answer, rejects with the error it met. */
export function inBrowser(request: BrowserRequest & { readonly action: 'elements' }): Promise<ElementSeen[]>;
export function inBrowser(request: BrowserRequest): Promise<unknown>;
export function inBrowser(request: BrowserRequest): Promise<unknown> {
  return askRunner('browser', request);
}
