// Completion of everything the format allows: task ids where a task is named (ranked by the graph), capabilities,
// field paths into the upstream's known output, snippets for new tasks, edges and inputs, and, through the JSON
// language service, the schema's property names and values.
import {
  type CompletionItem,
  CompletionItemKind,
  CompletionItemTag,
  type CompletionList,
  InsertTextFormat,
  MarkupKind,
  type Range,
} from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { DagAnalysis } from '../dag/analyze';
import { BUILTIN_CAPABILITIES, builtinCapability } from '../protocol/builtinCatalog';
import type { TaskOutput } from '../protocol/report';
import type { JsonNode } from '../dag/json';
import type { TaskDeclaration } from '../dag/model';
import { TYPE_TAXONOMY } from '../dag/schema';
import { siteAt } from '../dag/site';
import { nodeRange } from '../lspRanges';
import type { ProviderConfig } from '../protocol/settings';
import { describeValue, knownOutput, outputPaths, preview } from './outputs';
import { type Feature, type FeatureContext, analysisOf } from './feature';
import { matchesQuery } from './matching';
import { schemaCompletions } from './schemaService';
import {
  CLOSES_CYCLE,
  FEEDS_SELF,
  type IdSite,
  JOINED,
  LACKS_EDGE,
  type TaskIdRanking,
  freshTaskId,
  rankTaskIds,
  rankedPositions,
} from './taskIds';

/** Where a completed value goes: over the value being typed, or at the cursor when there is none yet. */
function valueRange(document: TextDocument, node: JsonNode | undefined, offset: number): Range {
  if (node === undefined) return { start: document.positionAt(offset), end: document.positionAt(offset) };
  return nodeRange(document, node);
}

/** A string value to put at `range`; the quote is part of what the user types, so it is part of the filter too. */
function stringItem(label: string, range: Range, item: Omit<CompletionItem, 'label'>): CompletionItem {
  const newText = JSON.stringify(label);
  return { label, filterText: newText, textEdit: { range, newText }, ...item };
}

/** Sorts by rank, then in declaration order. */
const sortKey = (rank: number, position: number): string => `${rank}${String(position).padStart(7, '0')}`;

/**
 * At most this many task ids in one answer, the best ranked; the list is then marked incomplete, so the editor asks
 * again as the user types. Ten thousand items took 70 ms to send and read over stdio, most of it the JSON.
 */
export const MAX_TASK_ID_ITEMS = 200;

/**
 * Why a task id ranks where it does, for the ranks that have a reason: `reason` for the item's detail, and, where the
 * user should see it before choosing, a `mark` short enough for the list.
 */
function rankReason(
  ranking: TaskIdRanking,
  site: IdSite,
  rank: number,
  position: number,
): { mark?: string; reason: string } | undefined {
  const selfId = ranking.self?.id ?? 'this task';
  switch (rank) {
    case LACKS_EDGE:
      return {
        mark: 'needs this edge',
        reason:
          site.kind === 'edge-end' && site.end === 'from'
            ? `read by ${selfId}; no edge yet`
            : `reads ${selfId}; no edge yet`,
      };
    case FEEDS_SELF:
      return { reason: `has an edge into ${selfId}` };
    case JOINED:
      return { mark: 'edge exists', reason: 'this edge exists already' };
    case CLOSES_CYCLE:
      return { mark: 'closes a cycle', reason: `would close a cycle: ${ranking.cycleThrough(position)}` };
    default:
      return undefined;
  }
}

/** Task ids for an edge end or a reference, ranked (see `rankTaskIds`); `typed` is the part before the cursor. */
function taskIdItems(analysis: DagAnalysis, site: IdSite, typed: string, range: Range): CompletionList {
  const { model } = analysis;
  const ranking = rankTaskIds(model, site);
  const kept = rankedPositions(model, ranking, (id) => matchesQuery(id, typed));
  const items: CompletionItem[] = [];
  for (const position of kept.slice(0, MAX_TASK_ID_ITEMS)) {
    const task = model.tasks[position]!;
    const rank = ranking.rankOf(position)!;
    const why = rankReason(ranking, site, rank, position);
    const capability = task.capability ?? '(no capability)';
    items.push(
      stringItem(task.id!, range, {
        kind: CompletionItemKind.Reference,
        // The list shows the description of every item, the detail only of the selected one: the mark goes first.
        labelDetails: { description: why?.mark === undefined ? task.capability : `${why.mark} · ${capability}` },
        detail: why === undefined ? capability : `${capability} · ${why.reason}`,
        sortText: sortKey(rank, position),
        // Struck through in the list: offered so that the user who looks for it learns why not.
        ...(rank === CLOSES_CYCLE ? { tags: [CompletionItemTag.Deprecated] } : {}),
      }),
    );
  }
  return { isIncomplete: kept.length > MAX_TASK_ID_ITEMS, items };
}

/** The part of a string value before the cursor (without its opening quote). */
const typedBefore = (node: JsonNode | undefined, offset: number, text: string): string =>
  node?.kind === 'string' && offset > node.offset ? text.slice(node.offset + 1, offset) : '';

/** Capabilities: those of the configured providers (or the built-in one), of this file and of the workspace. */
async function capabilityItems(
  context: FeatureContext,
  document: TextDocument,
  analysis: DagAnalysis,
  editing: TaskDeclaration,
  range: Range,
): Promise<CompletionItem[]> {
  const sources = new Map<string, { rank: number; where: string[] }>();
  const note = (capability: string, rank: number, where: string): void => {
    const known = sources.get(capability);
    if (known === undefined) sources.set(capability, { rank, where: [where] });
    else {
      known.rank = Math.min(known.rank, rank);
      if (!known.where.includes(where)) known.where.push(where);
    }
  };
  const settings = await context.settingsFor(document.uri);
  const providers: readonly ProviderConfig[] =
    settings.providers.length > 0 ? settings.providers : [{ id: 'built-in', transport: 'builtin' }];
  for (const provider of providers) {
    const offered =
      provider.transport === 'builtin' && provider.capabilities === undefined
        ? BUILTIN_CAPABILITIES
        : (provider.capabilities ?? []);
    for (const capability of offered) note(capability, 0, `provider ${provider.id}`);
  }
  const usedHere = new Map<string, number>();
  for (const task of analysis.model.tasks) {
    // The task being edited does not count: its capability is what is being typed.
    if (task.capability !== undefined && task !== editing)
      usedHere.set(task.capability, (usedHere.get(task.capability) ?? 0) + 1);
  }
  for (const [capability, count] of usedHere) note(capability, 1, `${count} task${count === 1 ? '' : 's'} here`);
  for (const file of await context.workspace.files()) {
    if (file.uri === document.uri) continue;
    for (const task of file.tasks) if (task.capability !== undefined) note(task.capability, 2, 'workspace');
  }
  return [...sources].map(([capability, { rank, where }]) => {
    const description = builtinCapability(capability)?.description;
    return stringItem(capability, range, {
      kind: CompletionItemKind.EnumMember,
      detail: where.join(' · '),
      ...(description === undefined ? {} : { documentation: description }),
      sortText: `${rank}${capability}`,
    });
  });
}

/** Field paths into the output of the task the reference names, as far as that output's shape is known. */
function fieldItems(
  analysis: DagAnalysis,
  task: TaskDeclaration,
  range: Range,
  lastRun: ReadonlyMap<string, TaskOutput> | undefined,
): CompletionItem[] {
  const upstreamId = task.referenceCount > 0 ? task.referencedId(0) : undefined;
  const upstream = upstreamId === undefined ? undefined : analysis.model.taskById.get(upstreamId);
  const known = upstream === undefined ? undefined : knownOutput(analysis, upstream, lastRun);
  const paths = known === undefined ? [{ path: 'data', value: undefined }] : outputPaths(known.output);
  return paths.map(({ path, value }, position) =>
    stringItem(path, range, {
      kind: CompletionItemKind.Field,
      detail: value === undefined ? 'the output payload' : describeValue(value),
      ...(value === undefined || known === undefined
        ? {}
        : {
            documentation: {
              kind: MarkupKind.Markdown,
              value: `In ${known.source}:\n\n\`\`\`json\n${preview(value)}\n\`\`\``,
            },
          }),
      sortText: sortKey(0, position),
    }),
  );
}

const snippet = (label: string, detail: string, text: string, range: Range, sortText: string): CompletionItem => ({
  label,
  kind: CompletionItemKind.Snippet,
  detail,
  insertTextFormat: InsertTextFormat.Snippet,
  textEdit: { range, newText: text },
  sortText,
});

/** A comma before and after a new array element, where its neighbours need one. */
function separated(text: string, offset: number, element: string): string {
  let before = offset - 1;
  while (before >= 0 && /\s/.test(text[before]!)) before--;
  let after = offset;
  while (after < text.length && /\s/.test(text[after]!)) after++;
  const lead = before >= 0 && /[}\]"\delu]/.test(text[before]!) ? ',' : '';
  const trail = after < text.length && /[{["\d\-tfn]/.test(text[after]!) ? ',' : '';
  return `${lead}${element}${trail}`;
}

const escapeChoice = (value: string): string => value.replace(/[$}\\|,]/g, '\\$&');
const TYPE_CHOICE = `\${1|${TYPE_TAXONOMY.map(escapeChoice).join(',')}|}`;

function newElementSnippets(analysis: DagAnalysis, list: 'tasks' | 'edges', offset: number, range: Range) {
  const text = analysis.document.text;
  if (list === 'edges') {
    return [
      snippet('New edge', 'a data dependency', separated(text, offset, '{ "from": "$1", "to": "$2" }'), range, '0'),
    ];
  }
  const id = freshTaskId(analysis);
  const task = (input: string): string =>
    separated(text, offset, `{\n\t"task_id": "\${1:${id}}",\n\t"capability": "$2",\n\t"input": ${input}\n}`);
  return [
    snippet(
      'New task',
      'a task reading another task’s output',
      task('{ "source": { "from_task": "$3" } }'),
      range,
      '0',
    ),
    snippet('New root task', 'a task with a literal input', task('{ "type": "text", "data": "$3" }'), range, '1'),
  ];
}

function inputSnippets(node: JsonNode | undefined, range: Range): CompletionItem[] {
  const literal = `"type": "${TYPE_CHOICE}", "data": "$2"`;
  const reference = '"source": { "from_task": "$1" }';
  const aggregation = '"source": { "from_tasks": ["$1"] }';
  // As the input's value, whole objects; inside its braces, the members.
  const wrap = (members: string): string => (node === undefined ? `{ ${members} }` : members);
  if (node !== undefined && node.kind !== 'object') return [];
  return [
    snippet('Reference input', 'the output of another task', wrap(reference), range, '0'),
    snippet('Aggregation input', 'the outputs of several tasks, in order', wrap(aggregation), range, '1'),
    snippet('Literal input', 'concrete data', wrap(literal), range, '2'),
  ];
}

/** Our items first; the schema's where they add something (a label ours already has is left out). */
function merged(ours: CompletionItem[], schema: CompletionItem[]): CompletionItem[] {
  const labels = new Set(ours.map((item) => item.label.replace(/^"|"$/g, '')));
  return [...ours, ...schema.filter((item) => !labels.has(item.label.replace(/^"|"$/g, '')))];
}

export async function complete(
  context: FeatureContext,
  uri: string,
  position: { line: number; character: number },
): Promise<CompletionList | null> {
  const open = analysisOf(context, uri);
  if (open === undefined) return null;
  const { document, analysis } = open;
  const offset = document.offsetAt(position);
  const site = siteAt(analysis.document, analysis.model, offset);
  const list = (items: CompletionItem[]): CompletionList => ({ isIncomplete: false, items });
  switch (site.kind) {
    case 'edge-end':
    case 'reference':
      return taskIdItems(
        analysis,
        site,
        typedBefore(site.node, offset, analysis.document.text),
        valueRange(document, site.node, offset),
      );
    case 'capability':
      return list(
        await capabilityItems(context, document, analysis, site.task, valueRange(document, site.node, offset)),
      );
    case 'field':
      return list(
        fieldItems(analysis, site.task, valueRange(document, site.node, offset), context.lastOutputs.get(uri)),
      );
    case 'task-id':
    case 'dag-id':
      return list([]);
    case 'new-element':
      return list(newElementSnippets(analysis, site.list, offset, valueRange(document, undefined, offset)));
    case 'input': {
      // As the input's value, our snippets cover every form; inside its braces, the schema adds the property names.
      const snippets = inputSnippets(site.node, valueRange(document, undefined, offset));
      return list(
        site.node === undefined ? snippets : merged(snippets, await schemaCompletions(document, analysis, offset)),
      );
    }
    default:
      return list(await schemaCompletions(document, analysis, offset));
  }
}

export const completionFeature: Feature = {
  capabilities: { completionProvider: { triggerCharacters: ['"', ':', '.', '['] } },
  register(context) {
    context.connection.onCompletion(({ textDocument, position }) => complete(context, textDocument.uri, position));
  },
};
