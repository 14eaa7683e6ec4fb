// The outline the editor is given (breadcrumbs, sticky scroll, the Outline view, Go to Symbol in Editor), cut to a
// size the window can take. The editor builds its outline model on the window's thread: a 10,000-task DAG's outline
// (its tasks and about 30,000 edges) held the window for a second as the file opened. The extension's own look-ups of
// the tasks (taskSymbols.ts) ask the server directly and get them all; workspace symbols (Go to Symbol in Workspace)
// find every task too.

/**
 * Symbols the editor's outline is given at most: VS Code's own limit for a JSON file's outline
 * (`json.maxItemsComputed`).
 */
export const MAX_OUTLINE_SYMBOLS = 5_000;

/** A symbol with its children, as VS Code's DocumentSymbol (kept free of `vscode` for the unit tests). */
export interface OutlineSymbol<T> {
  children: T[];
}

/**
 * The outline cut to at most `limit` symbols, outermost first and in document order at each level: the top level
 * (`dag_id`, `tasks`, `edges`) whole, then the tasks and, with what room is left, the edges. Cuts the children lists in
 * place.
 */
export function limitOutline<T extends OutlineSymbol<T>>(symbols: T[], limit = MAX_OUTLINE_SYMBOLS): T[] {
  const top = symbols.slice(0, limit);
  let room = limit - top.length;
  let level = top;
  while (level.length > 0) {
    const next: T[] = [];
    for (const symbol of level) {
      if (symbol.children.length > room) symbol.children = symbol.children.slice(0, room);
      room -= symbol.children.length;
      next.push(...symbol.children);
    }
    level = next;
  }
  return top;
}
