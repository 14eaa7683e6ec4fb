// "Show Result Store" and "Clear Result Store": the language server's result store (`acmp.resultStore`), the one
// `acmp.cache.folder` names, shown and emptied. The server does the work; this asks, confirms and tells.
import {
  type Disposable,
  EventEmitter,
  type TextDocumentContentProvider,
  Uri,
  commands,
  window,
  workspace,
} from 'vscode';
import { ExecuteCommandRequest, type LanguageClient } from 'vscode-languageclient/node';
import { RUN_COMMANDS, type ResultStoreAnswer, type ResultStoreArguments } from '../../server/src/protocol/runMessages';
import { clearQuestion, clearedMessage, storeMarkdown, storeSummary } from './storeText';

const STORE_SCHEME = 'acmp-store';
const STORE_DOCUMENT = Uri.from({ scheme: STORE_SCHEME, path: '/Result Store.md' });

/** The store's Markdown as last asked for. */
class StoreDocument implements TextDocumentContentProvider, Disposable {
  private readonly changed = new EventEmitter<Uri>();
  readonly onDidChange = this.changed.event;
  private markdown = '';

  provideTextDocumentContent(): string {
    return this.markdown;
  }

  set(markdown: string): void {
    this.markdown = markdown;
    this.changed.fire(STORE_DOCUMENT);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export function registerResultStore(client: LanguageClient): Disposable[] {
  const document = new StoreDocument();
  const ask = (args: ResultStoreArguments): Promise<ResultStoreAnswer> =>
    client.sendRequest(ExecuteCommandRequest.type, {
      command: RUN_COMMANDS.resultStore,
      arguments: [args],
    }) as Promise<ResultStoreAnswer>;

  /** Says what the store holds, with its table a click away; resolves with the answer (undefined if it failed). */
  const showResultStore = async (): Promise<ResultStoreAnswer | undefined> => {
    const answer = await ask({ action: 'stats' }).catch((error: unknown) => {
      void window.showErrorMessage(`The result store could not be read: ${messageOf(error)}`);
      return undefined;
    });
    if (answer === undefined) return undefined;
    document.set(storeMarkdown(answer.stats));
    const details = 'Show Details';
    const clear = 'Clear…';
    const actions = answer.stats.results > 0 ? [details, clear] : [];
    void window.showInformationMessage(storeSummary(answer.stats), ...actions).then(async (choice) => {
      if (choice === details) {
        await window.showTextDocument(await workspace.openTextDocument(STORE_DOCUMENT), { preview: true });
        await commands.executeCommand('markdown.showPreview', STORE_DOCUMENT).then(undefined, () => undefined);
      } else if (choice === clear) await commands.executeCommand('acmp.clearResultStore');
    });
    return answer;
  };

  /** Empties the store once the user confirms; resolves with what went (undefined if nothing did). */
  const clearResultStore = async (): Promise<ResultStoreAnswer | undefined> => {
    try {
      const { stats: before } = await ask({ action: 'stats' });
      if (before.results === 0) {
        void window.showInformationMessage(storeSummary(before));
        return undefined;
      }
      const remove = 'Remove';
      const choice = await window.showWarningMessage(
        clearQuestion(before),
        { modal: true, detail: `From ${before.folder}. Runs will send the tasks again.` },
        remove,
      );
      if (choice !== remove) return undefined;
      const answer = await ask({ action: 'clear' });
      void window.showInformationMessage(clearedMessage(before, answer.removed ?? 0, answer.stats));
      return answer;
    } catch (error) {
      void window.showErrorMessage(`The result store could not be cleared: ${messageOf(error)}`);
      return undefined;
    }
  };

  return [
    document,
    workspace.registerTextDocumentContentProvider(STORE_SCHEME, document),
    commands.registerCommand('acmp.showResultStore', showResultStore),
    commands.registerCommand('acmp.clearResultStore', clearResultStore),
  ];
}
