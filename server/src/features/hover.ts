// Hover: on a task id, the task (capability, input, upstream and downstream, price) and its plan (the providers that
// may take it, their terms, the one chosen and why); on `dag_id`, the plan's summary and the DAG's figures; on a field
// path, what it selects; on a capability, what the built-in provider does with it; on a property name, the schema's
// documentation. A task whose result the result store holds says when and by whom it was made.
import { type Hover, MarkupKind } from 'vscode-languageserver';
import type { DagAnalysis } from '../dag/analyze';
import { builtinCapability } from '../protocol/builtinCatalog';
import type { TaskOutput } from '../protocol/report';
import { dagIndex } from '../dag/dagIndex';
import { parseFieldPath, resolveFieldPath } from '../dag/fieldPath';
import { dagJsonSchema } from '../dag/jsonSchema';
import type { TaskDeclaration } from '../dag/model';
import { type ObjectKind, type Site, siteAt, siteString } from '../dag/site';
import { nodeRange } from '../lspRanges';
import { cachedFromText, formatCu } from '../run/planText';
import type { StoredResult } from '../run/types';
import { type Feature, type FeatureContext, analysisOf } from './feature';
import { plannedTaskHover, plansOf } from './plan';
import { resultStoresOf } from './resultStore';
import { describeValue, knownOutput, preview } from './outputs';

/** Inline code that survives backticks in the text. */
export function code(text: string): string {
  const fence = text.includes('`') ? '``' : '`';
  return `${fence}${fence.length > 1 ? ' ' : ''}${text}${fence.length > 1 ? ' ' : ''}${fence}`;
}

/** At most `limit` ids, then how many more. */
function idList(ids: readonly (string | undefined)[], none: string, limit = 12): string {
  if (ids.length === 0) return none;
  const shown = ids.slice(0, limit).map((id) => code(id ?? '(no id)'));
  return ids.length > limit ? `${shown.join(', ')} and ${ids.length - limit} more` : shown.join(', ');
}

function inputSummary(task: TaskDeclaration): string {
  const source = task.references.map((reference) => reference.taskId);
  const field = task.field === undefined ? '' : ` (field ${code(task.field)})`;
  switch (task.inputForm) {
    case 'literal': {
      const type = task.inputNode?.kind === 'object' ? task.inputNode.get('type') : undefined;
      return `literal${type?.kind === 'string' ? ` ${code(type.value)}` : ''}`;
    }
    case 'reference':
      return task.sourceForm === 'many'
        ? `the outputs of ${idList(source, 'no task')}, in order${field}`
        : `the output of ${idList(source, 'no task')}${field}`;
    default:
      return 'not valid yet';
  }
}

function taskHover(analysis: DagAnalysis, id: string): string {
  const task = analysis.model.taskById.get(id);
  if (task === undefined) return `No task has the id ${code(id)}.`;
  const index = dagIndex(analysis.model);
  const lines = [
    `**${code(id)}** · ${task.capability === undefined ? 'no capability' : code(task.capability)}`,
    '',
    `- input: ${inputSummary(task)}`,
    `- upstream: ${idList(
      index.upstream(task).map((t) => t.id),
      'none (a root)',
    )}`,
    `- downstream: ${idList(
      index.downstream(task).map((t) => t.id),
      'none (a leaf)',
    )}`,
  ];
  if (task.maxPriceCu !== undefined) lines.push(`- max_price_cu: ${task.maxPriceCu}`);
  return lines.join('\n');
}

function dagHover(analysis: DagAnalysis, dagId: string): string {
  const figures = dagIndex(analysis.model).figures();
  const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`;
  const lines = [
    `**${code(dagId)}** · ${plural(figures.tasks, 'task')}, ${plural(figures.edges, 'edge')}`,
    '',
    `- roots: ${idList(figures.roots, 'none')}`,
    `- leaves: ${idList(figures.leaves, 'none')}`,
    figures.depth === undefined
      ? '- depth: undefined (the graph has a cycle)'
      : `- depth: ${plural(figures.depth, 'task')}; longest path: ${figures.longestPath.map(code).join(' → ')}`,
    `- Σ max_price_cu: ${Number(figures.maxPriceCu.toPrecision(12))}${
      figures.unpriced > 0 ? ` (${figures.unpriced} of ${figures.tasks} tasks set none)` : ''
    }`,
    `- Σ input_tokens_est: ${figures.inputTokensEst}`,
  ];
  return lines.join('\n');
}

function fieldHover(
  analysis: DagAnalysis,
  task: TaskDeclaration,
  path: string,
  lastRun: ReadonlyMap<string, TaskOutput> | undefined,
): string {
  const parsed = parseFieldPath(path);
  if (!parsed.ok) return `Not a field path: ${parsed.message}.`;
  const steps = parsed.segments
    .slice(1)
    .map((segment) => (typeof segment === 'number' ? `element ${segment}` : `member ${code(segment)}`));
  const selects = steps.length === 0 ? 'the payload (`data`)' : `${steps.reverse().join(' of ')} of the payload`;
  const upstreamIds = task.references.map((reference) => reference.taskId);
  const lines = [`Selects ${selects} from the output of ${idList(upstreamIds, 'no task')}.`];
  const upstream = analysis.model.taskById.get(upstreamIds[0] ?? '');
  const known = upstream === undefined ? undefined : knownOutput(analysis, upstream, lastRun);
  if (known !== undefined) {
    const resolved = resolveFieldPath(known.output, parsed.segments);
    const value = resolved.found ? resolved.value : undefined;
    lines.push(
      '',
      value === undefined
        ? `${known.source[0]!.toUpperCase()}${known.source.slice(1)} has no such member.`
        : `In ${known.source}: ${describeValue(value)}, e.g.\n\n\`\`\`json\n${preview(value)}\n\`\`\``,
    );
  }
  return lines.join('\n');
}

function capabilityHover(capability: string): string | undefined {
  const builtin = builtinCapability(capability);
  if (builtin === undefined) return undefined;
  const output =
    builtin.exampleOutput === 'the input' ? 'its input' : `\n\n\`\`\`json\n${preview(builtin.exampleOutput)}\n\`\`\``;
  return `**${code(capability)}** (built-in provider): ${builtin.description}\n\n- input: ${builtin.input}\n- output: ${output}`;
}

type JsonSchemaObject = {
  properties?: Record<string, JsonSchemaObject>;
  anyOf?: JsonSchemaObject[];
  description?: string;
  items?: JsonSchemaObject;
};

/** The documentation of each property of each object kind, read from the generated JSON Schema. */
const PROPERTY_DOCS: Record<ObjectKind, Record<string, JsonSchemaObject>> = (() => {
  const dag = dagJsonSchema() as JsonSchemaObject;
  const task = dag.properties!.tasks!.items!;
  const inputBranches = task.properties!.input!.anyOf!;
  const input = Object.assign({}, ...inputBranches.map((branch) => branch.properties)) as Record<
    string,
    JsonSchemaObject
  >;
  return {
    dag: dag.properties!,
    task: task.properties!,
    edge: dag.properties!.edges!.items!.properties!,
    input,
    source: input.source!.properties!,
    metadata: task.properties!.metadata!.properties!,
  };
})();

function propertyHover(owner: ObjectKind, key: string): string | undefined {
  const description = Object.hasOwn(PROPERTY_DOCS[owner], key) ? PROPERTY_DOCS[owner][key]!.description : undefined;
  return description === undefined ? undefined : `${code(key)}: ${description}`;
}

function hoverText(
  analysis: DagAnalysis,
  site: Site,
  lastRun: ReadonlyMap<string, TaskOutput> | undefined,
): string | undefined {
  switch (site.kind) {
    case 'task-id':
    case 'edge-end':
    case 'reference': {
      const id = siteString(site);
      return id === undefined ? undefined : taskHover(analysis, id);
    }
    case 'dag-id': {
      const id = siteString(site);
      return id === undefined ? undefined : dagHover(analysis, id);
    }
    case 'field': {
      const path = siteString(site);
      return path === undefined ? undefined : fieldHover(analysis, site.task, path, lastRun);
    }
    case 'capability': {
      const capability = siteString(site);
      return capability === undefined ? undefined : capabilityHover(capability);
    }
    case 'property':
      return propertyHover(site.owner, site.key);
    default:
      return undefined;
  }
}

/** What the plan adds to a hover on a task or on `dag_id`: the task's providers, the DAG's summary. */
async function planText(context: FeatureContext, uri: string, site: Site): Promise<string | undefined> {
  const plans = plansOf(context);
  if (site.kind === 'dag-id') {
    const summary = await plans.summaryOf(uri);
    return summary === undefined ? undefined : `**Plan:** ${summary} · ACMP: Show Plan for the whole plan`;
  }
  if (site.kind !== 'task-id' && site.kind !== 'edge-end' && site.kind !== 'reference') return undefined;
  const id = siteString(site);
  const task = id === undefined ? undefined : await plans.taskOf(uri, id);
  const plan = await plans.planOf(uri);
  return task === undefined || plan === undefined ? undefined : plannedTaskHover(task, plan.plan.policy);
}

/** What a task's hover says of the result the store holds for it. */
function cachedResultLine(taskId: string, stored: StoredResult): string {
  const made = stored.task_id === taskId ? '' : ` for task ${code(stored.task_id)}`;
  return (
    `**Cached result:** made${made} by provider ${code(stored.provider_id)} in ${cachedFromText(stored)} ` +
    `(cost ${formatCu(stored.cost_cu)} then; a run reuses it at no cost)`
  );
}

/** The result the store holds for the task a hover is on, as a run would find it; undefined when none. */
async function cachedText(
  context: FeatureContext,
  uri: string,
  analysis: DagAnalysis,
  site: Site,
): Promise<string | undefined> {
  if (site.kind !== 'task-id' && site.kind !== 'edge-end' && site.kind !== 'reference') return undefined;
  const id = siteString(site);
  const task = id === undefined ? undefined : analysis.model.taskById.get(id);
  if (id === undefined || task === undefined) return undefined;
  const settings = await context.settingsFor(uri);
  const stores = resultStoresOf(context);
  const store = await stores.viewOf(settings.cache);
  const stored = store === undefined ? undefined : stores.storedIn(store, analysis, settings)?.[task.index];
  return stored === undefined ? undefined : cachedResultLine(id, stored);
}

export const hoverFeature: Feature = {
  capabilities: { hoverProvider: true },
  register(context) {
    context.connection.onHover(async ({ textDocument, position }): Promise<Hover | null> => {
      const open = analysisOf(context, textDocument.uri);
      if (open === undefined) return null;
      const { document, analysis } = open;
      const site = siteAt(analysis.document, analysis.model, document.offsetAt(position));
      const shown = hoverText(analysis, site, context.lastOutputs.get(textDocument.uri));
      if (shown === undefined) return null;
      const [cached, planned] = await Promise.all([
        cachedText(context, textDocument.uri, analysis, site),
        planText(context, textDocument.uri, site),
      ]);
      const described = cached === undefined ? shown : `${shown}\n\n${cached}`;
      // The plan may have been made of a newer text: it is shown only for the text the range is of.
      const stillCurrent = context.documents.get(textDocument.uri)?.version === document.version;
      const text =
        planned === undefined || !stillCurrent
          ? described
          : site.kind === 'dag-id'
            ? `${planned}\n\n${described}`
            : `${described}\n\n${planned}`;
      const node = site.kind === 'property' ? site.keyNode : 'node' in site ? site.node : undefined;
      return {
        contents: { kind: MarkupKind.Markdown, value: text },
        ...(node === undefined ? {} : { range: nodeRange(document, node) }),
      };
    });
  },
};
