// Quick fixes keyed by diagnostic code (design.md §4: a message that states its fix comes with a quick fix that does
// it), each one WorkspaceEdit that keeps the file's layout; and "fix all": the preferred fix of every diagnostic of the
// server's own analysis in one edit (one undo), as `source.fixAll` and, per code, as a quick fix.
import { type CodeAction, CodeActionKind, type Diagnostic } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { DagAnalysis } from '../dag/analyze';
import { dagIndex } from '../dag/dagIndex';
import type { DagDiagnostic, DiagnosticCode } from '../dag/diagnostic';
import type { EdgeDeclaration, TaskDeclaration } from '../dag/model';
import { edgeAt } from '../dag/site';
import { DIAGNOSTIC_SOURCE } from '../protocol/diagnosticSource';
import { spanRange } from '../lspRanges';
import { type ProviderOffers, roundCu } from '../dag/checks';
import { providerOffers, providersOf } from '../providerOffers';
import { type Feature, analysisOf } from './feature';
import {
  type Change,
  type Fix,
  type Target,
  closestNames,
  compatible,
  nearestNames,
  dropProperty,
  replace,
  resolveChanges,
  spans,
} from './fixChanges';
import { type DocumentStyle, type OffsetEdit, documentStyle, replaceValue } from './jsonEdits';
import {
  addMissingEdge,
  edgeName,
  fixDanglingEdge,
  fixInputShape,
  fixSourceShape,
  fixUnknownTask,
  removeEdge,
  siteOf,
  taskOf,
} from './references';
import { renamePlaces } from './rename';
import { fixSchema } from './schemaFixes';

/** The edge whose object or one of whose ends is exactly `[start, end)`. */
function edgeOn(analysis: DagAnalysis, start: number, end: number): EdgeDeclaration | undefined {
  const [top, position] = analysis.document.pathAt(start).path;
  const edge = top === 'edges' && typeof position === 'number' ? edgeAt(analysis.model, position) : undefined;
  return edge !== undefined && [edge.node, edge.fromNode, edge.toNode].some((node) => spans(node, start, end))
    ? edge
    : undefined;
}

function renameDuplicateTask(target: Target): Fix[] {
  const site = siteOf(target);
  if (site?.kind !== 'task-id' || site.node?.kind !== 'string' || site.task.duplicateOf === undefined) return [];
  const index = dagIndex(target.analysis.model);
  let suffix = 2;
  // Not taken anywhere: an id only some edge or reference names would silently connect to the renamed task.
  while (index.occurrences(`${site.node.value}_${suffix}`).length > 0) suffix++;
  const fresh = `${site.node.value}_${suffix}`;
  return [
    { title: `Rename this task to "${fresh}"`, changes: [replace(replaceValue(site.node, fresh))], preferred: true },
  ];
}

/** The stream_eligible edge a `stream-field` diagnostic names: its related place, else the model's edge. */
function streamEdgeOf(target: Target, task: TaskDeclaration): EdgeDeclaration | undefined {
  const { analysis } = target;
  for (const { start, end } of target.related) {
    const edge = edgeOn(analysis, start, end);
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
      : dropProperty(edge.node, 'stream_eligible', `Drop stream_eligible from edge ${edgeName(edge)}`)),
    ...dropProperty(site.task.sourceNode, 'field', `Remove field ${JSON.stringify(site.node.value)}`),
  ];
}

function edgeFix(verb: string, preferred: boolean): (target: Target) => Fix[] {
  return (target) => {
    const edge = edgeOn(target.analysis, target.start, target.end);
    return edge === undefined ? [] : removeEdge(target.analysis, edge, verb, preferred);
  };
}

/** The parser's trailing comma is the one syntax error whose fix is certain: the message and the text say which. */
function removeTrailingComma(target: Target): Fix[] {
  const { text } = target.analysis.document;
  if (!target.message.startsWith('Trailing comma') || text.slice(target.start, target.end) !== ',') return [];
  return [
    {
      title: 'Remove trailing comma',
      changes: [replace({ start: target.start, end: target.end, newText: '' })],
      preferred: true,
    },
  ];
}

function fixMetadataDagId(target: Target): Fix[] {
  const task = taskOf(target);
  const node = task?.metadataDagIdNode;
  const dagId = target.analysis.model.dagId;
  if (task === undefined || dagId === undefined || !spans(node, target.start, target.end)) return [];
  const metadata = task.node.get('metadata');
  return [
    {
      title: `Set metadata.dag_id to ${JSON.stringify(dagId)}`,
      changes: [replace(replaceValue(node!, dagId))],
      preferred: true,
    },
    ...(metadata?.kind === 'object' ? dropProperty(metadata, 'dag_id', 'Remove metadata.dag_id') : []),
  ];
}

/** Rename a task id to `task_<id>` everywhere it is written, as rename does; a dag_id to `dag_<id>`. */
function fixIdFormat(target: Target): Fix[] {
  const site = siteOf(target);
  if (site?.kind === 'dag-id' && site.node?.kind === 'string') {
    const fresh = `dag_${site.node.value}`;
    return [{ title: `Rename to ${JSON.stringify(fresh)}`, changes: [replace(replaceValue(site.node, fresh))] }];
  }
  if (site?.kind !== 'task-id' || site.node?.kind !== 'string') return [];
  const fresh = `task_${site.node.value}`;
  const places = renamePlaces(target.analysis, site.node.value, fresh);
  return typeof places === 'string'
    ? []
    : [
        {
          title: `Rename to ${JSON.stringify(fresh)}`,
          changes: places.map((node) => replace(replaceValue(node, fresh))),
        },
      ];
}

/** "Use capability …" for the offered capabilities nearest the name; preferred only for a likely typo of it. */
function fixNoProvider(target: Target): Fix[] {
  const site = siteOf(target);
  const offered = target.offers?.capabilities;
  if (site?.kind !== 'capability' || site.node?.kind !== 'string' || offered === undefined) return [];
  const node = site.node;
  const typo = closestNames(offered, node.value, [])[0];
  return nearestNames(offered, node.value).map((capability) => ({
    title: `Use capability ${JSON.stringify(capability)}`,
    changes: [replace(replaceValue(node, capability))],
    preferred: capability === typo,
  }));
}

/** The task's max_price_cu raised to the cheapest known price, the number over-budget's message names. */
function raiseMaxPrice(target: Target): Fix[] {
  const task = taskOf(target);
  const node = task?.maxPriceCuNode;
  if (task?.capability === undefined || target.offers === undefined || !spans(node, target.start, target.end))
    return [];
  const cheapest = target.offers.cheapest(task.capability, task.inputTokensEst);
  if (cheapest === undefined) return [];
  const price = roundCu(cheapest.priceCu);
  return [{ title: `Raise max_price_cu to ${price}`, changes: [replace(replaceValue(node!, price))], preferred: true }];
}

const FIXES = new Map<string, (target: Target) => Fix[]>([
  ['json-syntax', removeTrailingComma],
  ['schema', fixSchema],
  ['input-shape', fixInputShape],
  ['source-shape', fixSourceShape],
  ['missing-edge', addMissingEdge],
  ['dangling-edge', fixDanglingEdge],
  ['unknown-task', fixUnknownTask],
  ['duplicate-edge', edgeFix('Remove duplicate edge', true)],
  ['duplicate-task-id', renameDuplicateTask],
  ['stream-field', fixStreamField],
  ['cycle', edgeFix('Remove edge', false)],
  ['metadata-dag-id', fixMetadataDagId],
  ['id-format', fixIdFormat],
  ['no-provider', fixNoProvider],
  ['over-budget', raiseMaxPrice],
] satisfies [DiagnosticCode, (target: Target) => Fix[]][]);

/** Where a fix's changes are written to: the analysed document, its text, and the file's layout. */
interface Scope {
  readonly document: TextDocument;
  readonly analysis: DagAnalysis;
  readonly style: DocumentStyle;
  readonly offers: ProviderOffers | undefined;
}

const fixesOf = (scope: Scope, diagnostic: Omit<Target, 'uri' | 'analysis' | 'offers'>): Fix[] => {
  const fixes = FIXES.get(diagnostic.code);
  if (fixes === undefined) return [];
  const { document, analysis } = scope;
  return fixes({ ...diagnostic, uri: document.uri, analysis, offers: scope.offers });
};

const resolved = (scope: Scope, changes: readonly Change[]): OffsetEdit[] =>
  resolveChanges(scope.analysis.document.text, scope.style, changes);

/**
 * The preferred fix of each of the analysis's diagnostics that `accept` takes, as far as they go together: in text
 * order, a fix that changes text an earlier one changes is left for the next run, and a fix that another diagnostic
 * brought already (two on one object) is not made twice.
 */
function preferredFixes(scope: Scope, accept: (diagnostic: DagDiagnostic) => boolean): Change[][] {
  const taken: Change[][] = [];
  const seen = new Set<string>();
  for (const diagnostic of scope.analysis.diagnostics) {
    if (!accept(diagnostic)) continue;
    const fix = fixesOf(scope, { ...diagnostic, related: diagnostic.related ?? [] }).find(
      (candidate) => candidate.preferred,
    );
    if (fix === undefined) continue;
    const key = JSON.stringify(resolved(scope, fix.changes));
    if (seen.has(key) || !compatible(fix.changes, taken.flat())) continue;
    seen.add(key);
    taken.push([...fix.changes]);
  }
  return taken;
}

function action(
  scope: Scope,
  title: string,
  kind: string,
  changes: readonly Change[],
  extra: Partial<CodeAction>,
): CodeAction {
  const { document } = scope;
  return {
    title,
    kind,
    ...extra,
    edit: {
      changes: {
        [document.uri]: resolved(scope, changes).map(({ start, end, newText }) => ({
          range: spanRange(document, start, end),
          newText,
        })),
      },
    },
  };
}

/** Whether an action of `kind` is asked for: `only` lists kinds, each also standing for its sub-kinds. */
const wanted = (only: readonly string[] | undefined, kind: string): boolean =>
  only === undefined ||
  only.some((asked) => asked === CodeActionKind.Empty || kind === asked || kind.startsWith(`${asked}.`));

function quickFixes(scope: Scope, diagnostics: readonly Diagnostic[]): CodeAction[] {
  const { document } = scope;
  const actions = new Map<string, CodeAction>();
  const fixAllOffered = new Set<string>();
  for (const diagnostic of diagnostics) {
    if (diagnostic.source !== DIAGNOSTIC_SOURCE) continue;
    const code = String(diagnostic.code);
    const start = document.offsetAt(diagnostic.range.start);
    const end = document.offsetAt(diagnostic.range.end);
    const related = (diagnostic.relatedInformation ?? [])
      .filter(({ location }) => location.uri === document.uri)
      .map(({ location }) => ({
        start: document.offsetAt(location.range.start),
        end: document.offsetAt(location.range.end),
      }));
    const message = typeof diagnostic.message === 'string' ? diagnostic.message : diagnostic.message.value;
    const fixes = fixesOf(scope, { code, message, start, end, related });
    for (const fix of fixes) {
      const made = action(scope, fix.title, CodeActionKind.QuickFix, fix.changes, {
        diagnostics: [diagnostic],
        ...(fix.preferred === true ? { isPreferred: true } : {}),
      });
      // The same fix for two diagnostics (two missing properties of one object) is offered once, for both.
      const key = JSON.stringify([made.title, made.edit]);
      const known = actions.get(key);
      if (known === undefined) actions.set(key, made);
      else known.diagnostics!.push(diagnostic);
    }
    if (fixes.length > 0 && !fixAllOffered.has(code)) {
      fixAllOffered.add(code);
      const all = preferredFixes(scope, (candidate) => candidate.code === code);
      if (all.length > 1) {
        const title = `Fix all ${code} problems in this file (${all.length})`;
        actions.set(title, action(scope, title, CodeActionKind.QuickFix, all.flat(), { diagnostics: [diagnostic] }));
      }
    }
  }
  return [...actions.values()];
}

/**
 * A leading byte order mark is accepted without a diagnostic (VS Code keeps it as the file's encoding, "UTF-8 with BOM",
 * and shows no character); a client that passes it on in the text is offered to drop it on the first line.
 */
function removeByteOrderMark(scope: Scope): CodeAction[] {
  if (scope.analysis.document.text.charCodeAt(0) !== 0xfeff) return [];
  return [
    action(
      scope,
      'Remove the byte order mark',
      CodeActionKind.QuickFix,
      [replace({ start: 0, end: 1, newText: '' })],
      {},
    ),
  ];
}

export const codeActionsFeature: Feature = {
  capabilities: {
    codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, CodeActionKind.SourceFixAll] },
  },
  register(context) {
    context.connection.onCodeAction(
      async ({ textDocument, range, context: { diagnostics, only } }): Promise<CodeAction[]> => {
        const wantsQuickFixes = wanted(only, CodeActionKind.QuickFix);
        const wantsFixAll = wanted(only, CodeActionKind.SourceFixAll);
        if (!wantsQuickFixes && !wantsFixAll) return [];
        const settings = await context.settingsFor(textDocument.uri);
        // Read after the settings: the document may have changed meanwhile, and only its current text is edited.
        const open = analysisOf(context, textDocument.uri);
        const root = open?.analysis.model.root;
        if (open === undefined || root === undefined) return [];
        const scope: Scope = {
          ...open,
          style: documentStyle(open.analysis.document.text, root),
          offers: providerOffers(providersOf(settings)),
        };
        const actions = wantsQuickFixes ? quickFixes(scope, diagnostics) : [];
        if (wantsQuickFixes && range.start.line === 0) actions.push(...removeByteOrderMark(scope));
        if (wantsFixAll) {
          const all = preferredFixes(scope, () => true);
          if (all.length > 0) {
            actions.push(
              action(
                scope,
                `Fix all problems in this file (${all.length})`,
                CodeActionKind.SourceFixAll,
                all.flat(),
                {},
              ),
            );
          }
        }
        return actions;
      },
    );
  },
};
