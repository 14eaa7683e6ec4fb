// Quick fixes about what reads what: edges to add, remove or re-point, references to re-point, and the shapes of
// inputs and sources. Candidate ids are ranked as completion ranks them (`rankTaskIds`).
import type { DagAnalysis } from '../dag/analyze';
import { dagIndex } from '../dag/dagIndex';
import type { JsonNode, ObjectNode } from '../dag/json';
import type { DagModel, EdgeDeclaration, TaskDeclaration } from '../dag/model';
import { type Site, siteAt, siteString, taskAt } from '../dag/site';
import {
  type Change,
  type Fix,
  MAX_SUGGESTIONS,
  type Target,
  changeTo,
  closestNames,
  dropProperty,
  replace,
  spans,
} from './fixChanges';
import { documentStyle, objectLayout, propertyEntry, reindented, renderObject, replaceValue } from './jsonEdits';
import { FEEDS_SELF, LACKS_EDGE, OTHER, rankTaskIds, rankedPositions } from './taskIds';

export const edgeName = (edge: EdgeDeclaration): string => `"${edge.from ?? '?'}" → "${edge.to ?? '?'}"`;

/** The site the diagnostic is on, when its node is exactly the diagnostic's span. */
export function siteOf(target: Target): Site | undefined {
  const site = siteAt(target.analysis.document, target.analysis.model, target.start);
  return 'node' in site && spans(site.node, target.start, target.end) ? site : undefined;
}

/** The task whose object holds the diagnostic's span. */
export function taskOf(target: Target): TaskDeclaration | undefined {
  const [top, position] = target.analysis.document.pathAt(target.start).path;
  return top === 'tasks' && typeof position === 'number' ? taskAt(target.analysis.model, position) : undefined;
}

/** Each reference to another existing task without an edge from it into the referencing task, in file order. */
export function missingEdges(model: DagModel): { from: string; to: string }[] {
  const index = dagIndex(model);
  const missing: { from: string; to: string }[] = [];
  for (const task of model.tasks) {
    if (task.id === undefined || task.referenceCount === 0 || task.duplicateOf !== undefined) continue;
    const upstream = new Set(index.upstream(task).map((other) => other.id));
    for (let position = 0; position < task.referenceCount; position++) {
      const id = task.referencedId(position);
      if (id !== task.id && model.taskById.has(id) && !upstream.has(id)) missing.push({ from: id, to: task.id });
    }
  }
  return missing;
}

/** Ids for an end of `edge` of the ranks `ranks`, as completion ranks them; none while the other end is unnamed. */
function edgeEnds(model: DagModel, edge: EdgeDeclaration, end: 'from' | 'to', ranks: readonly number[]): string[] {
  if ((end === 'from' ? edge.to : edge.from) === undefined) return [];
  const ranking = rankTaskIds(model, { kind: 'edge-end', edge, end, node: undefined });
  return rankedPositions(model, ranking, () => true)
    .filter((position) => ranks.includes(ranking.rankOf(position)!))
    .map((position) => model.tasks[position]!.id!);
}

/** Ids for one end of an edge that would give a reference its missing edge, in file order. */
const unmetEnds = (model: DagModel, edge: EdgeDeclaration, end: 'from' | 'to'): string[] =>
  edgeEnds(model, edge, end, [LACKS_EDGE]);

/**
 * Ids for an end of an edge that make no new error: those that give a reference its edge, then the others as
 * completion ranks them, leaving out the pairs joined already and those that would close a cycle (the other end too).
 */
export const edgeEndCandidates = (analysis: DagAnalysis, edge: EdgeDeclaration, end: 'from' | 'to'): string[] =>
  edgeEnds(analysis.model, edge, end, [LACKS_EDGE, OTHER]);

/** Appends the edge `from` → `to`, written like the last edge, or, for the first one, like `like`. */
function addEdge(analysis: DagAnalysis, from: string, to: string, like: ObjectNode): Change | undefined {
  const root = analysis.model.root;
  if (root === undefined) return undefined;
  const text = analysis.document.text;
  const style = documentStyle(text, root);
  const entries = [
    ['from', from],
    ['to', to],
  ] as const;
  const firstEdge = (indent: string): string =>
    renderObject(reindented(objectLayout(text, like), indent, style), entries);
  const edges = root.get('edges');
  if (edges?.kind === 'array') {
    const last = edges.items[edges.items.length - 1];
    return {
      kind: 'append',
      container: edges,
      render: (indent) =>
        last?.kind === 'object' ? renderObject(objectLayout(text, last), entries) : firstEdge(indent),
    };
  }
  return root.has('edges') ? undefined : { kind: 'append-list', container: root, list: 'edges', element: firstEdge };
}

export function removeEdge(analysis: DagAnalysis, edge: EdgeDeclaration, verb: string, preferred: boolean): Fix[] {
  const edges = analysis.model.root?.get('edges');
  return edges?.kind === 'array'
    ? [
        {
          title: `${verb} ${edgeName(edge)}`,
          changes: [{ kind: 'remove', container: edges, index: edge.index }],
          preferred,
        },
      ]
    : [];
}

/**
 * The tasks `task` could read from, best first: those with an edge into it, then (unless `upstreamOnly`) the others
 * that close no cycle, whose edge the fix adds.
 */
function readCandidates(
  model: DagModel,
  task: TaskDeclaration,
  via: 'from_task' | 'from_tasks',
  upstreamOnly: boolean,
): { id: string; upstream: boolean }[] {
  const ranking = rankTaskIds(model, { kind: 'reference', task, via, node: undefined });
  return rankedPositions(model, ranking, () => true)
    .map((position) => ({ id: model.tasks[position]!.id!, rank: ranking.rankOf(position) }))
    .filter(({ rank }) => rank === FEEDS_SELF || (!upstreamOnly && rank === OTHER))
    .map(({ id, rank }) => ({ id, upstream: rank === FEEDS_SELF }));
}

/** A task whose source names itself: point the reference at another task (adding its edge when it has none). */
function readFromOthers(
  target: Target,
  task: TaskDeclaration,
  reference: JsonNode,
  via: 'from_task' | 'from_tasks',
): Fix[] {
  const { analysis } = target;
  const like = task.sourceNode;
  return readCandidates(analysis.model, task, via, false)
    .slice(0, MAX_SUGGESTIONS)
    .map(({ id, upstream }, rank) => {
      const edge = upstream || like === undefined ? undefined : addEdge(analysis, id, task.id!, like);
      return {
        title: `Read from ${JSON.stringify(id)}`,
        changes: [replace(replaceValue(reference, id)), ...(edge === undefined ? [] : [edge])],
        preferred: rank === 0 && upstream,
      };
    });
}

export function addMissingEdge(target: Target): Fix[] {
  const site = siteOf(target);
  if (site?.kind !== 'reference' || site.node === undefined) return [];
  const { model } = target.analysis;
  const from = siteString(site);
  const task = site.task;
  const source = task.sourceNode;
  if (from === undefined || task.id === undefined || source === undefined) return [];
  // A self-loop is never the fix for a task reading itself: it would be a cycle.
  if (from === task.id) return readFromOthers(target, task, site.node, site.via);
  if (
    dagIndex(model)
      .upstream(task)
      .some((upstream) => upstream.id === from)
  )
    return [];
  const edge = addEdge(target.analysis, from, task.id, source);
  return edge === undefined ? [] : [{ title: `Add edge "${from}" → "${task.id}"`, changes: [edge], preferred: true }];
}

/**
 * First the ids that would give a reference its missing edge (an edge into T from an id T reads: typically a task
 * renamed in one place), then the close ids; never the other end (a self-loop). Or remove the edge.
 */
export function fixDanglingEdge(target: Target): Fix[] {
  const site = siteOf(target);
  if (site?.kind !== 'edge-end' || site.node?.kind !== 'string') return [];
  const { model } = target.analysis;
  const otherEnd = site.end === 'from' ? site.edge.to : site.edge.from;
  const unmet = unmetEnds(model, site.edge, site.end);
  const close = closestNames(model.taskById.keys(), site.node.value, [otherEnd, ...unmet]);
  return [
    ...changeTo([...new Set([...unmet, ...close])].slice(0, MAX_SUGGESTIONS), [site.node]),
    ...removeEdge(target.analysis, site.edge, 'Remove edge', false),
  ];
}

export function fixUnknownTask(target: Target): Fix[] {
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
  return changeTo(closestNames(model.taskById.keys(), node.value, [task.id, ...named]), [node, ...misspelledEdges]);
}

/** "Read from" each task with an edge into `task`, as the property `key` appended to `object`; preferred when one. */
function readFromUpstream(
  target: Target,
  task: TaskDeclaration,
  object: ObjectNode,
  key: 'source' | 'from_task',
): Fix[] {
  const text = target.analysis.document.text;
  const upstream = readCandidates(target.analysis.model, task, 'from_task', true);
  return upstream.map(({ id }) => ({
    title: `Read from ${JSON.stringify(id)}`,
    changes: [
      {
        kind: 'append',
        container: object,
        render: propertyEntry(text, object, key, () =>
          key === 'source' ? renderObject(objectLayout(text, object), [['from_task', id]]) : JSON.stringify(id),
        ),
      },
    ],
    preferred: upstream.length === 1,
  }));
}

/** Removes each of `object`'s properties named one of `keys`. */
const propertiesNamed = (object: ObjectNode, keys: readonly string[]): Change[] =>
  object.properties.flatMap((property, index) =>
    keys.includes(property.key.value) ? [{ kind: 'remove', container: object, index } as const] : [],
  );

export function fixInputShape(target: Target): Fix[] {
  const task = taskOf(target);
  const input = task?.inputNode;
  if (task === undefined || input === undefined || !spans(input, target.start, target.end)) return [];
  const fed = dagIndex(target.analysis.model).upstream(task).length > 0;
  if (task.inputForm === 'both') {
    return [
      { title: 'Keep the source', changes: propertiesNamed(input, ['type', 'data']), preferred: fed },
      { title: 'Keep the literal (type/data)', changes: propertiesNamed(input, ['source']), preferred: !fed },
    ];
  }
  if (task.inputForm !== 'neither') return [];
  const text = target.analysis.document.text;
  const literal = (key: string, value: string): Change => ({
    kind: 'append',
    container: input,
    render: propertyEntry(text, input, key, () => JSON.stringify(value)),
  });
  return [
    ...readFromUpstream(target, task, input, 'source'),
    {
      title: 'Add a literal input (type/data)',
      changes: [literal('type', 'text'), literal('data', '')],
      preferred: !fed,
    },
  ];
}

export function fixSourceShape(target: Target): Fix[] {
  const task = taskOf(target);
  const source = task?.sourceNode;
  if (task === undefined || source === undefined || !spans(source, target.start, target.end)) return [];
  switch (task.sourceForm) {
    case 'both':
      return [
        ...dropProperty(source, 'from_tasks', 'Keep "from_task"'),
        ...dropProperty(source, 'from_task', 'Keep "from_tasks"'),
      ];
    case 'neither':
      return readFromUpstream(target, task, source, 'from_task');
    case 'empty': {
      const list = source.get('from_tasks');
      const ids = readCandidates(target.analysis.model, task, 'from_tasks', true).map(({ id }) => id);
      if (list === undefined || ids.length === 0) return [];
      return [
        {
          title: `Read from ${ids.map((id) => JSON.stringify(id)).join(', ')}`,
          changes: [
            replace({
              start: list.offset,
              end: list.offset + list.length,
              newText: `[${ids.map((id) => JSON.stringify(id)).join(', ')}]`,
            }),
          ],
          preferred: true,
        },
      ];
    }
    default:
      return [];
  }
}
