// Each task's last state inline in the DAG editor, after its `task_id` line (`✓ completed · 120 ms · 0.003 CU`),
// from the newest run of the document; live during a run, gone when the runs are cleared. Only the lines in sight
// (and a margin) are decorated: a redraw costs what the editor shows, not the size of the DAG.
import {
  type DecorationOptions,
  DecorationRangeBehavior,
  type Disposable,
  Range,
  type TextEditor,
  ThemeColor,
  window,
  workspace,
} from 'vscode';
import { taskIdRanges } from './declarations';
import { stateColor, taskSummary } from './presentation';
import type { RunsModel } from './runs';

/** Run events can come by the thousand: the editors are redrawn at most this often. */
const REDRAW_MS = 100;
/** Lines decorated above and below what an editor shows, so that a scroll shows states before the next redraw. */
const MARGIN_LINES = 200;
const DEFAULT_COLOR = new ThemeColor('editorCodeLens.foreground');

export class RunDecorations implements Disposable {
  private readonly type = window.createTextEditorDecorationType({
    after: { margin: '0 0 0 2em', fontStyle: 'italic' },
    rangeBehavior: DecorationRangeBehavior.ClosedClosed,
  });
  private readonly subscriptions: Disposable[];
  private redraw: NodeJS.Timeout | undefined;

  constructor(private readonly runs: RunsModel) {
    this.subscriptions = [
      runs.onDidChange(() => this.scheduleRedraw()),
      window.onDidChangeVisibleTextEditors(() => this.scheduleRedraw()),
      window.onDidChangeTextEditorVisibleRanges(({ textEditor }) => {
        if (this.runs.latestOf(textEditor.document.uri.toString()) !== undefined) this.scheduleRedraw();
      }),
      workspace.onDidChangeTextDocument((event) => {
        if (this.runs.latestOf(event.document.uri.toString()) !== undefined) this.scheduleRedraw();
      }),
    ];
    this.scheduleRedraw();
  }

  private scheduleRedraw(): void {
    this.redraw ??= setTimeout(() => {
      this.redraw = undefined;
      for (const editor of window.visibleTextEditors) this.decorate(editor);
    }, REDRAW_MS);
  }

  private decorate(editor: TextEditor): void {
    const { document } = editor;
    const run = document.languageId === 'acmp-dag' ? this.runs.latestOf(document.uri.toString()) : undefined;
    const declarations = run === undefined ? undefined : taskIdRanges(document);
    const inSight = editor.visibleRanges.map(
      ({ start, end }) => [start.line - MARGIN_LINES, end.line + MARGIN_LINES] as const,
    );
    const decorations = (run?.tasks ?? []).flatMap((task): DecorationOptions[] => {
      const declaration = declarations?.get(task.taskId);
      const line = declaration?.end.line ?? -1;
      if (declaration === undefined || !inSight.some(([first, last]) => line >= first && line <= last)) return [];
      const lineEnd = document.lineAt(declaration.end.line).range.end;
      return [
        {
          range: new Range(lineEnd, lineEnd),
          renderOptions: { after: { contentText: taskSummary(task), color: stateColor(task.state) ?? DEFAULT_COLOR } },
        },
      ];
    });
    editor.setDecorations(this.type, decorations);
  }

  dispose(): void {
    clearTimeout(this.redraw);
    for (const subscription of this.subscriptions) subscription.dispose();
    this.type.dispose();
  }
}
