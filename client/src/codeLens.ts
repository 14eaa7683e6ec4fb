// The "Run DAG" lens above a DAG file's `dag_id`, in trusted workspaces only.
import { CodeLens, type CodeLensProvider, type Disposable, EventEmitter, type TextDocument, workspace } from 'vscode';
import { dagIdKeyRange } from './declarations';

export class RunCodeLensProvider implements CodeLensProvider, Disposable {
  private readonly changed = new EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly trustGranted = workspace.onDidGrantWorkspaceTrust(() => this.changed.fire());

  provideCodeLenses(document: TextDocument): CodeLens[] {
    const range = workspace.isTrusted ? dagIdKeyRange(document) : undefined;
    if (range === undefined) return [];
    return [new CodeLens(range, { title: '$(play) Run DAG', command: 'acmp.runDag', arguments: [document.uri] })];
  }

  dispose(): void {
    this.trustGranted.dispose();
    this.changed.dispose();
  }
}
