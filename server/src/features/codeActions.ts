// Quick fixes keyed by diagnostic code (design.md §4), each one WorkspaceEdit that keeps the file's layout.
import { distance } from 'fastest-levenshtein';
import { type CodeAction, CodeActionKind, type Diagnostic } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { DagAnalysis } from '../dag/analyze';
import { dagIndex } from '../dag/dagIndex';
import type { DiagnosticCode } from '../dag/diagnostic';
import type { JsonNode, ObjectNode } from '../dag/json';
import type { DagModel, EdgeDeclaration, TaskDeclaration } from '../dag/model';
import { type Site, edgeAt, siteAt, siteString } from '../dag/site';
import { DIAGNOSTIC_SOURCE } from '../protocol/diagnostics';
import { spanRange } from '../protocol/ranges';
import { type Feature, analysisOf } from './feature';
import {
  type OffsetEdit,
  appendElement,
  appendProperty,
  documentStyle,
  objectLayout,
  reindented,
  removeElement,
  removeProperty,
  renderArray,
  renderObject,
  replaceValue,
} from './jsonEdits';

interface Fix {
  readonly title: string;
  readonly edits: readonly OffsetEdit[];
  readonly preferred?: boolean;
}

/** What a fix works on: the diagnostic, its span in the analysed text, and that analysis. */
interface Target {
  readonly diagnostic: Diagnostic;
  readonly document: TextDocument;
  readonly analysis: DagAnalysis;
  readonly start: number;
  readonly end: number;
}

const MAX_SUGGESTIONS = 3;

const spans = (node: JsonNode | undefined, start: number, end: number): boolean =>
  node !== undefined && node.offset === start && node.offset + node.length === end;

const edgeName = (edge: EdgeDeclaration): string => `"${edge.from ?? '?'}" → "${edge.to ?? '?'}"`;

/**
 * The site the diagnostic is on, when its node is exactly the diagnostic's span: a diagnostic of an older version of
 * the text gets no fix rather than a wrong one.
 */
function siteOf(target: Target): Site | undefined {
  const site = siteAt(target.analysis.document, target.analysis.model, target.start);
  return 'node' in site && spans(site.node, target.start, target.end) ? site : undefined;
}

/** The edge whose object or one of whose ends is exactly `[start, end)`. */
function edgeOn(analysis: DagAnalysis, start: number, end: number): EdgeDeclaration | undefined {
  const [top, position] = analysis.document.pathAt(start).path;
  const edge = top === 'edges' && typeof position === 'number' ? edgeAt(analysis.model, position) : undefined;
  return edge !== undefined && [edge.node, edge.fromNode, edge.toNode].some((node) => spans(node, start, end))
    ? edge
    : undefined;
}

/** The task ids close enough to `id` to be what was meant, closest first; never one of `excluded`. */
function closestIds(model: DagModel, id: string, excluded: readonly (string | undefined)[]): string[] {
  const scored: { id: string; distance: number }[] = [];
  for (const candidate of model.taskById.keys()) {
    if (excluded.includes(candidate)) continue;
    const edits = distance(id, candidate);
    // A typo changes about one character in three at most; farther ids are other tasks, not what was meant.
    if (edits <= Math.max(1, Math.floor(Math.max(id.length, candidate.length) / 3))) {
      scored.push({ id: candidate, distance: edits });
    }
  }
  scored.sort((a, b) => a.distance - b.distance || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return scored.slice(0, MAX_SUGGESTIONS).map((entry) => entry.id);
}

/** "Change to …" for each close id, the closest preferred; `nodes` are the places the fix rewrites. */
const changeTo = (candidates: readonly string[], nodes: readonly JsonNode[]): Fix[] =>
  candidates.map((candidate, rank) => ({
    title: `Change to "${candidate}"`,
    edits: nodes.map((node) => replaceValue(node, candidate)),
    preferred: rank === 0,
  }));

function removeEdge(target: Target, edge: EdgeDeclaration, verb: string, preferred: boolean): Fix[] {
  const edges = target.analysis.model.root?.get('edges');
  const edit = edges?.kind === 'array' ? removeElement(target.analysis.document.text, edges, edge.index) : undefined;
  return edit === undefined ? [] : [{ title: `${verb} ${edgeName(edge)}`, edits: [edit], preferred }];
}

/** Removes the last property named `key` (the one JSON.parse keeps). */
function dropProperty(target: Target, object: ObjectNode | undefined, key: string, title: string): Fix[] {
  const property = object?.properties.filter((candidate) => candidate.key.value === key).pop();
  const edit = object && property && removeProperty(target.analysis.document.text, object, property);
  return edit === undefined ? [] : [{ title, edits: [edit] }];
}

function addMissingEdge(target: Target): Fix[] {
  const site = siteOf(target);
  if (site?.kind !== 'reference') return [];
  const { model, document } = target.analysis;
  const from = siteString(site);
  const to = site.task.id;
  const root = model.root;
  const source = site.task.sourceNode;
  if (from === undefined || to === undefined || root === undefined || source === undefined) return [];
  if (
    dagIndex(model)
      .upstream(site.task)
      .some((task) => task.id === from)
  )
    return [];
  const text = document.text;
  const style = documentStyle(text, root);
  const entries = [
    ['from', from],
    ['to', to],
  ] as const;
  // Without an edge to copy, the new one is written like the task's source, a small object of the same file.
  const firstEdge = (indent: string): string =>
    renderObject(reindented(objectLayout(text, source), indent, style), entries);
  const edges = root.get('edges');
  let edit: OffsetEdit;
  if (edges?.kind === 'array') {
    const last = edges.items[edges.items.length - 1];
    edit = appendElement(
      text,
      edges,
      (indent) => (last?.kind === 'object' ? renderObject(objectLayout(text, last), entries) : firstEdge(indent)),
      style,
    );
  } else if (!root.has('edges')) {
    edit = appendProperty(text, root, 'edges', (indent) => renderArray(firstEdge, indent, style), style);
  } else {
    return [];
  }
  return [{ title: `Add edge "${from}" → "${to}"`, edits: [edit], preferred: true }];
}

function fixDanglingEdge(target: Target): Fix[] {
  const site = siteOf(target);
  if (site?.kind !== 'edge-end' || site.node?.kind !== 'string') return [];
  // The other end is never suggested: that would make a self-loop.
  const otherEnd = site.end === 'from' ? site.edge.to : site.edge.from;
  return [
    ...changeTo(closestIds(target.analysis.model, site.node.value, [otherEnd]), [site.node]),
    ...removeEdge(target, site.edge, 'Remove edge', false),
  ];
}

function fixUnknownTask(target: Target): Fix[] {
  const site = siteOf(target);
  if (site?.kind !== 'reference' || site.node?.kind !== 'string') return [];
  const { model } = target.analysis;
  const { task, node } = site;
  // The edges into this task that name the same id change with the reference, so no dangling edge is left behind.
  const misspelledEdges = dagIndex(model)
    .occurrences(node.value)
    .filter((occurrence) => occurrence.kind === 'edge-from' && task.id !== undefined && occurrence.edge!.to === task.id)
    .map((occurrence) => occurrence.node);
  // Neither the task itself (a self-reference) nor an id its source already names (a duplicate reference).
  const named = Array.from({ length: task.referenceCount }, (_, position) => task.referencedId(position));
  return changeTo(closestIds(model, node.value, [task.id, ...named]), [node, ...misspelledEdges]);
}

function renameDuplicateTask(target: Target): Fix[] {
  const site = siteOf(target);
  if (site?.kind !== 'task-id' || site.node?.kind !== 'string' || site.task.duplicateOf === undefined) return [];
  const index = dagIndex(target.analysis.model);
  let suffix = 2;
  // Not taken anywhere: an id only some edge or reference names would silently connect to the renamed task.
  while (index.occurrences(`${site.node.value}_${suffix}`).length > 0) suffix++;
  const fresh = `${site.node.value}_${suffix}`;
  return [{ title: `Rename this task to "${fresh}"`, edits: [replaceValue(site.node, fresh)], preferred: true }];
}

/** The stream_eligible edge a `stream-field` diagnostic names: its related location, else the model's edge. */
function streamEdgeOf(target: Target, task: TaskDeclaration): EdgeDeclaration | undefined {
  const { document, analysis } = target;
  for (const { location } of target.diagnostic.relatedInformation ?? []) {
    if (location.uri !== document.uri) continue;
    const edge = edgeOn(analysis, document.offsetAt(location.range.start), document.offsetAt(location.range.end));
    if (edge?.streamEligible === true) return edge;
  }
  const referenced = new Set(task.references.map((reference) => reference.taskId));
  return analysis.model.edges.find(
    (edge) => edge.streamEligible && edge.to === task.id && edge.from !== undefined && referenced.has(edge.from),
  );
}

function fixStreamField(target: Target): Fix[] {
  const site = siteOf(target);
  if (site?.kind !== 'field' || site.node?.kind !== 'string') return [];
  const edge = streamEdgeOf(target, site.task);
  return [
    ...(edge === undefined
      ? []
      : dropProperty(target, edge.node, 'stream_eligible', `Drop stream_eligible from edge ${edgeName(edge)}`)),
    ...dropProperty(target, site.task.sourceNode, 'field', `Remove field ${JSON.stringify(site.node.value)}`),
  ];
}

function edgeFix(verb: string, preferred: boolean): (target: Target) => Fix[] {
  return (target) => {
    const edge = edgeOn(target.analysis, target.start, target.end);
    return edge === undefined ? [] : removeEdge(target, edge, verb, preferred);
  };
}

const FIXES = new Map<string, (target: Target) => Fix[]>([
  ['missing-edge', addMissingEdge],
  ['dangling-edge', fixDanglingEdge],
  ['unknown-task', fixUnknownTask],
  ['duplicate-edge', edgeFix('Remove duplicate edge', true)],
  ['duplicate-task-id', renameDuplicateTask],
  ['stream-field', fixStreamField],
  ['cycle', edgeFix('Remove edge', false)],
] satisfies [DiagnosticCode, (target: Target) => Fix[]][]);

export const codeActionsFeature: Feature = {
  capabilities: { codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] } },
  register(context) {
    context.connection.onCodeAction(({ textDocument, context: { diagnostics, only } }): CodeAction[] => {
      if (
        only !== undefined &&
        !only.some((kind) => kind === CodeActionKind.Empty || kind === CodeActionKind.QuickFix)
      ) {
        return [];
      }
      const open = analysisOf(context, textDocument.uri);
      if (open === undefined) return [];
      const { document, analysis } = open;
      return diagnostics.flatMap((diagnostic) => {
        const fixes = diagnostic.source === DIAGNOSTIC_SOURCE ? FIXES.get(String(diagnostic.code)) : undefined;
        if (fixes === undefined) return [];
        const target: Target = {
          diagnostic,
          document,
          analysis,
          start: document.offsetAt(diagnostic.range.start),
          end: document.offsetAt(diagnostic.range.end),
        };
        return fixes(target).map((fix): CodeAction => ({
          title: fix.title,
          kind: CodeActionKind.QuickFix,
          diagnostics: [diagnostic],
          edit: {
            changes: {
              [document.uri]: fix.edits.map(({ start, end, newText }) => ({
                range: spanRange(document, start, end),
                newText,
              })),
            },
          },
          ...(fix.preferred === true ? { isPreferred: true } : {}),
        }));
      });
    });
  },
};
