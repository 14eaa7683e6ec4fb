// Go to definition, find all references and document highlights for task ids: from the declaration, any edge end,
// `from_task` or an element of `from_tasks`.
import { DocumentHighlightKind, type Location } from 'vscode-languageserver';
import { dagIndex } from '../dag/dagIndex';
import { siteAt, siteString } from '../dag/site';
import { nodeRange } from '../lspRanges';
import { type Feature, type FeatureContext, analysisOf } from './feature';

/** The task id at a position, when the position is on one of its places. */
export function taskIdAt(context: FeatureContext, uri: string, position: { line: number; character: number }) {
  const open = analysisOf(context, uri);
  if (open === undefined) return undefined;
  const { document, analysis } = open;
  const site = siteAt(analysis.document, analysis.model, document.offsetAt(position));
  if (site.kind !== 'task-id' && site.kind !== 'edge-end' && site.kind !== 'reference') return undefined;
  const id = siteString(site);
  return id === undefined ? undefined : { id, document, analysis };
}

export const navigationFeature: Feature = {
  capabilities: { definitionProvider: true, referencesProvider: true, documentHighlightProvider: true },
  register(context) {
    const { connection } = context;

    connection.onDefinition(({ textDocument, position }): Location[] => {
      const found = taskIdAt(context, textDocument.uri, position);
      const declaration = found && found.analysis.model.taskById.get(found.id)?.idNode;
      if (found === undefined || declaration === undefined) return [];
      return [{ uri: textDocument.uri, range: nodeRange(found.document, declaration) }];
    });

    connection.onReferences(({ textDocument, position, context: { includeDeclaration } }): Location[] => {
      const found = taskIdAt(context, textDocument.uri, position);
      if (found === undefined) return [];
      return dagIndex(found.analysis.model)
        .occurrences(found.id)
        .filter((occurrence) => includeDeclaration || occurrence.kind !== 'declaration')
        .sort((a, b) => a.node.offset - b.node.offset)
        .map((occurrence) => ({ uri: textDocument.uri, range: nodeRange(found.document, occurrence.node) }));
    });

    connection.onDocumentHighlight(({ textDocument, position }) => {
      const found = taskIdAt(context, textDocument.uri, position);
      if (found === undefined) return [];
      return dagIndex(found.analysis.model)
        .occurrences(found.id)
        .sort((a, b) => a.node.offset - b.node.offset)
        .map((occurrence) => ({
          range: nodeRange(found.document, occurrence.node),
          kind: occurrence.kind === 'declaration' ? DocumentHighlightKind.Write : DocumentHighlightKind.Read,
        }));
    });
  },
};
