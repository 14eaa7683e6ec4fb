// The "Run DAG" lens above a DAG file's `dag_id`, in trusted workspaces only. Its command has no arguments: VS Code
// turns a lens command with arguments into a cached stand-in (`acmp.runDag /N`) that it drops when the lenses are
// provided again, yet a lens out of view keeps the stand-in after the file changed (on disk, say), and its click
// then fails with "Actual command not found". Clicking a lens focuses its editor first, so acmp.runDag without
// arguments runs the active editor's DAG: the one clicked.
import { CodeLens, type CodeLensProvider, type Disposable, EventEmitter, type TextDocument, workspace } from 'vscode';
import { dagIdKeyRange } from './declarations';

export class RunCodeLensProvider implements CodeLensProvider, Disposable {
  private readonly changed = new EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly trustGranted = workspace.onDidGrantWorkspaceTrust(() => this.changed.fire());

  provideCodeLenses(document: TextDocument): CodeLens[] {
    const range = workspace.isTrusted ? dagIdKeyRange(document) : undefined;
    if (range === undefined) return [];
    return [new CodeLens(range, { title: '$(play) Run DAG', command: 'acmp.runDag' })];
  }

  dispose(): void {
    this.trustGranted.dispose();
    this.changed.dispose();
  }
}
