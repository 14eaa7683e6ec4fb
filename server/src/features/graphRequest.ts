// The request `acmp/graph`: a DAG's tasks and edges from the analysis, for graph views in any editor.
import { ErrorCodes, ResponseError } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { DagAnalysis } from '../dag/analyze';
import { dagIndex } from '../dag/dagIndex';
import { layOutTasks } from '../dag/layout';
import {
  CRITICAL_PATH_REQUEST,
  type CriticalPathParams,
  type CriticalPathResult,
  type DagGraph,
  GRAPH_REQUEST,
  type GraphParams,
} from '../protocol/runMessages';
import type { DagPlan } from '../protocol/market';
import { type Feature, analysisOf } from './feature';
import { plansOf } from './plan';

/** A document's graph, the same for every version of the same analysis. */
type AnalysedGraph = Omit<DagGraph, 'version' | 'criticalPath'>;

/** The graph of an analysed document, laid out when asked. */
export function dagGraph(
  document: Pick<TextDocument, 'positionAt'>,
  { model, diagnostics }: DagAnalysis,
  layout: boolean,
): AnalysedGraph {
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

/**
 * The plan's critical path: by latency when some task on it has a known latency, else by depth (the plan breaks ties
 * by the number of tasks, so with no latency known it is the longest chain). None while the graph has a cycle.
 */
function criticalPathOf(plan: DagPlan, analysis: DagAnalysis): DagGraph['criticalPath'] {
  const { task_ids: taskIds, unknown, latency_ms: latencyMs } = plan.critical_path;
  if (taskIds.length === 0 || dagIndex(analysis.model).figures().depth === undefined) return undefined;
  return unknown < taskIds.length
    ? { taskIds, by: 'latency', latencyMs, unknownLatency: unknown }
    : { taskIds, by: 'depth' };
}

/** Until the plan is made: the longest chain of tasks (by depth). None while the graph has a cycle. */
function longestChainOf(analysis: DagAnalysis): DagGraph['criticalPath'] {
  const { depth, longestPath } = dagIndex(analysis.model).figures();
  return depth === undefined || longestPath.length === 0 ? undefined : { taskIds: longestPath, by: 'depth' };
}

/**
 * The graphs laid out, by the analysis they are of: the same text's graph is asked for again (a graph view closed and
 * opened again, another editor's view), and laying out 10,000 tasks takes a third of a second.
 */
const laidOut = new WeakMap<DagAnalysis, AnalysedGraph>();

function graphOf(document: Pick<TextDocument, 'positionAt'>, analysis: DagAnalysis, layout: boolean): AnalysedGraph {
  if (!layout) return dagGraph(document, analysis, false);
  let graph = laidOut.get(analysis);
  if (graph === undefined) laidOut.set(analysis, (graph = dagGraph(document, analysis, true)));
  return graph;
}

export const graphFeature: Feature = {
  capabilities: {},
  register(context) {
    const plans = plansOf(context);
    context.connection.onRequest(
      GRAPH_REQUEST,
      async ({ uri, layout, waitForPlan = true }: GraphParams): Promise<DagGraph | ResponseError> => {
        const planned = waitForPlan ? (await plans.planOf(uri))?.entry : plans.madePlanOf(uri);
        // Read after the plan: the graph is of the current text, its critical path only when the plan is of it too.
        const open = analysisOf(context, uri);
        if (open === undefined) return new ResponseError(ErrorCodes.InvalidParams, `The document ${uri} is not open.`);
        const graph = graphOf(open.document, open.analysis, layout === true);
        const criticalPath =
          planned?.analysis === open.analysis
            ? criticalPathOf(planned.plan, open.analysis)
            : waitForPlan
              ? undefined
              : longestChainOf(open.analysis);
        return { ...graph, version: open.document.version, ...(criticalPath !== undefined && { criticalPath }) };
      },
    );
    context.connection.onRequest(
      CRITICAL_PATH_REQUEST,
      async ({ uri }: CriticalPathParams): Promise<CriticalPathResult | ResponseError> => {
        const planned = (await plans.planOf(uri))?.entry;
        const open = analysisOf(context, uri);
        if (open === undefined) return new ResponseError(ErrorCodes.InvalidParams, `The document ${uri} is not open.`);
        const criticalPath =
          planned?.analysis === open.analysis ? criticalPathOf(planned.plan, open.analysis) : undefined;
        return { version: open.document.version, ...(criticalPath !== undefined && { criticalPath }) };
      },
    );
  },
};
