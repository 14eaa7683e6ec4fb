// Where each task of a DAG document is, from the language server's outline (document symbols): the graph follows the
// cursor with it, and Run Task, Run From Here and Re-run Failed find their tasks with it.
import type * as vscode from 'vscode';
import {
  type DocumentSymbol,
  DocumentSymbolRequest,
  type LanguageClient,
  SymbolKind,
} from 'vscode-languageclient/node';

/** A task's object in the outline, its id, and where its `task_id` is (the start of the symbol's selection). */
export interface TaskSymbol {
  /** Its `task_id` (a task without one is named by a label no task id matches). */
  readonly id: string;
  readonly range: vscode.Range;
  readonly idAt: { readonly line: number; readonly character: number };
}

/**
 * The task declarations of the outline. Asked of the language server directly: through the API command the outline
 * of 10,000 tasks crossed the window's renderer and back (a second of the window's time, measured with a CPU profile
 * of the page during a run with the graph open).
 */
export async function taskSymbols(client: LanguageClient, uri: vscode.Uri): Promise<readonly TaskSymbol[]> {
  const symbols = await client.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri: uri.toString() } });
  const outline = (symbols ?? []) as DocumentSymbol[];
  const tasks = outline.find((symbol) => symbol.name === 'tasks' && symbol.kind === SymbolKind.Array)?.children ?? [];
  const converter = client.protocol2CodeConverter;
  return tasks.map((task) => ({
    id: task.name,
    range: converter.asRange(task.range),
    idAt: task.selectionRange.start,
  }));
}
