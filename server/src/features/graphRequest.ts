// The request `acmp/graph`: a DAG's tasks and edges from the analysis, for graph views in any editor.
import { ErrorCodes, ResponseError } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { DagAnalysis } from '../dag/analyze';
import { dagIndex } from '../dag/dagIndex';
import { layOutTasks } from '../dag/layout';
import { type DagGraph, GRAPH_REQUEST, type GraphParams } from '../protocol/runMessages';
import { type Feature, analysisOf } from './feature';

/** The graph of an analysed document, laid out when asked. */
export function dagGraph(
  document: Pick<TextDocument, 'positionAt'>,
  { model, diagnostics }: DagAnalysis,
  layout: boolean,
): DagGraph {
  const nodes: DagGraph['nodes'][number][] = [];
  for (const task of model.tasks) {
    if (task.id === undefined || task.duplicateOf !== undefined) continue;
    const { line, character } = document.positionAt(task.idNode!.offset);
    nodes.push({ id: task.id, capability: task.capability, line, character });
  }
  const onCycle = dagIndex(model).edgesOnCycles();
  const edges: DagGraph['edges'][number][] = [];
  model.edges.forEach(({ from, to, streamEligible }, e) => {
    // An end that is not a string cannot be drawn; the diagnostics report it.
    if (from === undefined || to === undefined) return;
    const dangling = !model.taskById.has(from) || !model.taskById.has(to);
    edges.push({ from, to, cycle: onCycle[e] === 1, dangling, streamEligible });
  });
  return {
    parsed: !diagnostics.some((diagnostic) => diagnostic.code === 'json-syntax'),
    dagId: model.dagId,
    nodes,
    edges,
    ...(layout && {
      layout: layOutTasks(
        nodes.map(({ id }) => id),
        edges,
      ),
    }),
  };
}

export const graphFeature: Feature = {
  capabilities: {},
  register(context) {
    context.connection.onRequest(GRAPH_REQUEST, ({ uri, layout }: GraphParams): DagGraph | ResponseError => {
      const open = analysisOf(context, uri);
      if (open === undefined) return new ResponseError(ErrorCodes.InvalidParams, `The document ${uri} is not open.`);
      return dagGraph(open.document, open.analysis, layout === true);
    });
  },
};
