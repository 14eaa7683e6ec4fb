// "ACMP: Show Plan": the language server's `acmp/plan` answer shown as a read-only Markdown document (its preview where
// the Markdown extension is there), with "Get Quotes" to ask the providers for real offers (trusted workspaces only:
// quoting starts the configured providers). Rendering only: the plan and its Markdown are the server's.
import {
  type Disposable,
  EventEmitter,
  type TextDocumentContentProvider,
  Uri,
  commands,
  window,
  workspace,
} from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { PLAN_REQUEST, type PlanParams, type PlanResult } from '../../server/src/protocol/runMessages';
import type { ProviderTokens } from './tokens';

export const PLAN_SCHEME = 'acmp-plan';

/** The plan document of a DAG file: its name, and the DAG's URI in the query. */
const planUri = (dag: Uri): Uri =>
  Uri.from({ scheme: PLAN_SCHEME, path: `/${dag.path.split('/').pop() ?? 'dag'}.plan.md`, query: dag.toString() });

/** The plans shown, by plan document URI: what the server answered last. */
class PlanDocuments implements TextDocumentContentProvider, Disposable {
  private readonly changed = new EventEmitter<Uri>();
  readonly onDidChange = this.changed.event;
  private readonly shown = new Map<string, string>();

  provideTextDocumentContent(uri: Uri): string {
    return this.shown.get(uri.toString()) ?? 'No plan yet: run ACMP: Show Plan on the DAG file.';
  }

  set(uri: Uri, markdown: string): void {
    this.shown.set(uri.toString(), markdown);
    this.changed.fire(uri);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** The DAG a plan command means: the one it was invoked on, else the active editor's. */
function dagOf(target: unknown): Uri | undefined {
  if (target instanceof Uri) return target;
  const document = window.activeTextEditor?.document;
  return document?.languageId === 'acmp-dag' ? document.uri : undefined;
}

export function registerPlanView(client: LanguageClient, tokens: ProviderTokens): Disposable[] {
  const documents = new PlanDocuments();

  const plan = async (dag: Uri, quote: boolean): Promise<PlanResult> => {
    const params: PlanParams = {
      uri: dag.toString(),
      ...(quote ? { quote: true, tokens: await tokens.forProviders(dag) } : {}),
    };
    return client.sendRequest<PlanResult>(PLAN_REQUEST, params);
  };

  /** Shows the plan, then offers quotes (not waited for); each answer replaces the document's text. */
  const show = async (dag: Uri, quote: boolean): Promise<void> => {
    const result = await plan(dag, quote);
    const uri = planUri(dag);
    documents.set(uri, result.markdown);
    const document = await workspace.openTextDocument(uri);
    await window.showTextDocument(document, { preview: true });
    // The preview renders the table; without the Markdown extension the text stays readable as it is.
    await commands.executeCommand('markdown.showPreview', uri).then(undefined, () => undefined);
    const quotes = workspace.isTrusted && !result.quoted ? ['Get Quotes'] : [];
    void window
      .showInformationMessage(`${result.quoted ? 'Quoted plan' : 'Plan'}: ${result.summary}`, ...quotes)
      .then((picked) => (picked === 'Get Quotes' ? show(dag, true) : undefined))
      .then(undefined, (error: unknown) => {
        void window.showErrorMessage(`The quotes failed: ${error instanceof Error ? error.message : String(error)}`);
      });
  };

  const showPlan = async (target?: unknown): Promise<void> => {
    const dag = dagOf(target);
    if (dag === undefined) {
      void window.showInformationMessage('Open an ACMP DAG file (*.acmp-dag.json) to see its plan.');
      return;
    }
    await show(dag, false);
  };

  return [
    documents,
    workspace.registerTextDocumentContentProvider(PLAN_SCHEME, documents),
    commands.registerCommand('acmp.showPlan', showPlan),
  ];
}
