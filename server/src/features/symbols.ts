// The outline (document symbols: `dag_id`, the tasks by `task_id`, the edges as `from → to`) and workspace symbols
// (the tasks of every DAG file of the workspace).
import { type DocumentSymbol, type SymbolInformation, SymbolKind } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { DagAnalysis } from '../dag/analyze';
import type { PropertyNode } from '../dag/json';
import { taskLabel } from '../dag/model';
import { nodeRange, spanRange } from '../lspRanges';
import { type Feature, analysisOf } from './feature';
import { matchesQuery } from './matching';

/** Workspace symbols answered at most: the editor asks again as the query grows. */
const MAX_WORKSPACE_SYMBOLS = 1_000;

/** The last segment of a URI, decoded: what names a file without a `dag_id`. */
function fileName(uri: string): string {
  const segment = uri.slice(uri.lastIndexOf('/') + 1);
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function documentSymbols(document: TextDocument, { model }: DagAnalysis): DocumentSymbol[] {
  // The last of duplicate keys is the one the model reads (JSON.parse semantics).
  const properties = new Map<string, PropertyNode>(
    model.root?.properties.map((property) => [property.key.value, property]),
  );
  const container = (key: string, kind: SymbolKind, children: DocumentSymbol[], detail?: string) => {
    const property = properties.get(key);
    if (property === undefined) return [];
    const end = property.value ?? property.key;
    const symbol: DocumentSymbol = {
      name: key,
      kind,
      range: spanRange(document, property.key.offset, end.offset + end.length),
      selectionRange: nodeRange(document, property.value?.kind === 'string' ? property.value : property.key),
      children,
    };
    if (detail !== undefined) symbol.detail = detail;
    return [{ offset: property.key.offset, symbol }];
  };
  const tasks = model.tasks.map((task): DocumentSymbol => {
    const range = nodeRange(document, task.node);
    const symbol: DocumentSymbol = {
      // An empty name would make VS Code reject the whole outline: "" names an empty id.
      name: task.id || taskLabel(task),
      kind: SymbolKind.Function,
      range,
      selectionRange: task.idNode === undefined ? range : nodeRange(document, task.idNode),
    };
    if (task.capability !== undefined) symbol.detail = task.capability;
    return symbol;
  });
  const edges = model.edges.map((edge): DocumentSymbol => {
    const range = nodeRange(document, edge.node);
    const end = edge.fromNode ?? edge.toNode;
    const symbol: DocumentSymbol = {
      name: `${edge.from ?? '?'} → ${edge.to ?? '?'}`,
      kind: SymbolKind.Operator,
      range,
      selectionRange: end === undefined ? range : nodeRange(document, end),
    };
    if (edge.streamEligible) symbol.detail = 'stream_eligible';
    return symbol;
  });
  return [
    ...container('dag_id', SymbolKind.Key, [], model.dagId),
    ...container('tasks', SymbolKind.Array, tasks),
    ...container('edges', SymbolKind.Array, edges),
  ]
    .sort((a, b) => a.offset - b.offset)
    .map(({ symbol }) => symbol);
}

export const symbolsFeature: Feature = {
  capabilities: { documentSymbolProvider: true, workspaceSymbolProvider: true },
  register(context) {
    const { connection } = context;

    connection.onDocumentSymbol(({ textDocument }) => {
      const open = analysisOf(context, textDocument.uri);
      return open === undefined ? [] : documentSymbols(open.document, open.analysis);
    });

    connection.onWorkspaceSymbol(async ({ query }) => {
      const symbols: SymbolInformation[] = [];
      for (const file of await context.workspace.files()) {
        for (const task of file.tasks) {
          if (task.id === '' || !matchesQuery(task.id, query)) continue;
          symbols.push({
            name: task.id,
            kind: SymbolKind.Function,
            location: { uri: file.uri, range: task.range },
            containerName: file.dagId ?? fileName(file.uri),
          });
          if (symbols.length === MAX_WORKSPACE_SYMBOLS) return symbols;
        }
      }
      return symbols;
    });
  },
};
