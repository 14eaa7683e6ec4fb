// The plan of a DAG in the editor (run/plan.ts): the request `acmp/plan` (and its quotes), the CodeLens on `dag_id`
// with the plan's summary, and what hover shows of it. A plan is made on demand, once per document version, providers,
// run settings, price history and state of the result store (the tasks it holds are planned at 0), and never reaches
// a provider unless quotes are asked for.
import {
  type ClientCapabilities,
  type CodeLens,
  CodeLensRefreshRequest,
  type Connection,
  ErrorCodes,
  ResponseError,
} from 'vscode-languageserver';
import type { DagAnalysis } from '../dag/analyze';
import type { Budget, DagPlan, PlannedCandidate, PlannedTask } from '../protocol/market';
import { PLAN_REQUEST, type PlanParams, type PlanResult, SHOW_PLAN_COMMAND } from '../protocol/runMessages';
import type { ProviderConfig, Settings } from '../protocol/settings';
import { providersOf } from '../providerOffers';
import { createConnector } from '../run/connect';
import { type PlanOptions, planDag } from '../run/plan';
import { latencyText, planMarkdown, planSummary, priceText } from '../run/planText';
import { type PriceHistory, readPriceHistory } from '../run/priceHistory';
import { requestQuotes } from '../run/quotes';
import type { ResultStore } from '../run/resultStore';
import type { StoredResult } from '../run/types';
import { nodeRange } from '../lspRanges';
import { type Feature, type FeatureContext, analysisOf } from './feature';
import { resultStoresOf } from './resultStore';

/** A run's limits from the settings (0: none). */
export function budgetOf(settings: Settings): Budget {
  const { maxCostCu, perTaskMaxCu } = settings.run;
  return {
    ...(maxCostCu > 0 ? { total_cap_cu: maxCostCu } : {}),
    ...(perTaskMaxCu > 0 ? { per_task_max_cu: perTaskMaxCu } : {}),
  };
}

const planOptions = (
  settings: Settings,
  history: PriceHistory | undefined,
  stored: readonly (StoredResult | undefined)[] | undefined,
): PlanOptions => ({
  policy: settings.run.routing,
  concurrency: settings.run.maxConcurrency,
  budget: budgetOf(settings),
  ...(history === undefined ? {} : { history }),
  ...(stored === undefined ? {} : { stored }),
});

/** The run's budget as the summary names it; undefined when there is none. */
const maxCostOf = (settings: Settings): number | undefined =>
  settings.run.maxCostCu > 0 ? settings.run.maxCostCu : undefined;

interface PlanEntry {
  readonly analysis: DagAnalysis;
  readonly providers: readonly ProviderConfig[];
  readonly run: string;
  readonly history: PriceHistory | undefined;
  /** The view of the result store it was made with (runs keep results, and the next view is another). */
  readonly store: ResultStore | undefined;
  readonly plan: DagPlan;
  byTask?: Map<string, PlannedTask>;
}

/** The plans of one server's documents, and the price history they were made with. */
export class Plans {
  private readonly entries = new Map<string, PlanEntry>();
  private history: Promise<PriceHistory> | undefined;

  constructor(private readonly context: FeatureContext) {}

  /** The plan of the open document at `uri` with its settings; undefined when it is not open or too large. */
  async planOf(uri: string): Promise<{ plan: DagPlan; settings: Settings; entry: PlanEntry } | undefined> {
    const settings = await this.context.settingsFor(uri);
    const history = await (this.history ??= readPriceHistory());
    const store = await resultStoresOf(this.context).viewOf(settings.cache);
    // Read after the waits: the current text is planned.
    const open = analysisOf(this.context, uri);
    if (open === undefined) return undefined;
    const providers = providersOf(settings);
    const run = JSON.stringify([settings.run, settings.cache]);
    const known = this.entries.get(uri);
    if (
      known?.analysis === open.analysis &&
      known.providers === providers &&
      known.run === run &&
      known.history === history &&
      known.store === store
    ) {
      return { plan: known.plan, settings, entry: known };
    }
    const stored = this.storedOf(store, open.analysis, settings);
    const plan = planDag(open.analysis.model, providers, planOptions(settings, history, stored));
    const entry: PlanEntry = { analysis: open.analysis, providers, run, history, store, plan };
    this.entries.set(uri, entry);
    return { plan, settings, entry };
  }

  /** The plan made already of the document's current text, if any, whatever its settings: none is made. */
  madePlanOf(uri: string): PlanEntry | undefined {
    const known = this.entries.get(uri);
    return known !== undefined && known.analysis === analysisOf(this.context, uri)?.analysis ? known : undefined;
  }

  /** What the store holds of the DAG's tasks, as a run would find it. */
  private storedOf(
    store: ResultStore | undefined,
    analysis: DagAnalysis,
    settings: Settings,
  ): readonly (StoredResult | undefined)[] | undefined {
    return store === undefined ? undefined : resultStoresOf(this.context).storedIn(store, analysis, settings);
  }

  /** The planned task of `taskId` in the document's plan. */
  async taskOf(uri: string, taskId: string): Promise<PlannedTask | undefined> {
    const found = await this.planOf(uri);
    if (found === undefined) return undefined;
    found.entry.byTask ??= new Map(found.plan.tasks.map((task) => [task.task_id, task]));
    return found.entry.byTask.get(taskId);
  }

  /** The one-line summary of the document's plan. */
  async summaryOf(uri: string): Promise<string | undefined> {
    const found = await this.planOf(uri);
    return found === undefined ? undefined : planSummary(found.plan, maxCostOf(found.settings));
  }

  /** Past runs may have ended since: the history is read again for the next plan. */
  forgetHistory(): void {
    this.history = undefined;
  }

  forget(uri: string): void {
    this.entries.delete(uri);
  }

  /** The answer to `acmp/plan`: the plan from advertised figures, or with the providers' quotes. */
  async request({ uri, quote, tokens }: PlanParams): Promise<PlanResult> {
    this.forgetHistory();
    const found = await this.planOf(uri);
    const open = analysisOf(this.context, uri);
    if (found === undefined || open === undefined) {
      throw new ResponseError(ErrorCodes.InvalidParams, `${uri} is not an open DAG document the server can analyse`);
    }
    const { settings } = found;
    let plan = found.plan;
    if (quote === true) {
      const providers = providersOf(settings);
      const connect = createConnector({ tokens: tokens ?? {} });
      const offers = await requestQuotes(open.analysis.model, providers, { connect, budget: budgetOf(settings) });
      const store = await resultStoresOf(this.context).viewOf(settings.cache);
      const options = planOptions(settings, found.entry.history, this.storedOf(store, open.analysis, settings));
      plan = planDag(open.analysis.model, providers, { ...options, offers });
    }
    const maxCostCu = maxCostOf(settings);
    return {
      plan,
      summary: planSummary(plan, maxCostCu),
      markdown: planMarkdown(plan, maxCostCu === undefined ? {} : { maxCostCu }),
      quoted: quote === true,
    };
  }
}

const plansByContext = new WeakMap<FeatureContext, Plans>();

/** The plans of the server `context` belongs to (hover and the plan feature share them). */
export function plansOf(context: FeatureContext): Plans {
  let plans = plansByContext.get(context);
  if (plans === undefined) {
    plans = new Plans(context);
    plansByContext.set(context, plans);
  }
  return plans;
}

const candidateRow = (candidate: PlannedCandidate, chosen: string | undefined): string => {
  const mark = candidate.provider_id === chosen ? ' ✓' : '';
  const note = candidate.excluded === undefined ? (mark === '' ? '' : 'chosen') : `not taken: ${candidate.excluded}`;
  const cells = [
    `\`${candidate.provider_id}\`${mark}`,
    priceText(candidate.price),
    latencyText(candidate.latency),
    candidate.tier ?? '—',
    note,
  ];
  return `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`;
};

/** At most this many candidates in a task's hover; the plan shows them all. */
const MAX_HOVER_CANDIDATES = 8;

/** What a task's hover says of its plan: the providers that may take it, with their terms, and the one chosen. */
export function plannedTaskHover(task: PlannedTask, policy: string): string {
  if (task.no_provider === true) return `**Plan:** no provider offers ${JSON.stringify(task.capability)}.`;
  const chosen =
    task.provider_id === undefined
      ? `no provider would take it: ${task.reason}`
      : `\`${task.provider_id}\` at ${priceText(task.price)}, ${task.reason} (routing ${policy})`;
  const shown = task.candidates.slice(0, MAX_HOVER_CANDIDATES);
  const lines = [
    `**Plan:** ${chosen}`,
    '',
    '| provider | price | latency | tier | |',
    '| --- | --- | --- | --- | --- |',
    ...shown.map((candidate) => candidateRow(candidate, task.provider_id)),
  ];
  const more = task.candidates.length - shown.length;
  if (more > 0) lines.push('', `_and ${more} more: ACMP: Show Plan lists them all_`);
  return lines.join('\n');
}

/**
 * The providers or the run settings changed, and with them the plans: the client is asked for the CodeLenses again
 * (LSP 3.16 `workspace/codeLens/refresh`), where it says it can; a client that cannot asks on its next edit.
 */
export function refreshPlanLenses(connection: Connection, client: ClientCapabilities): void {
  if (client.workspace?.codeLens?.refreshSupport !== true) return;
  // A client that fails to refresh keeps its lenses until it asks again: nothing to tell the user.
  connection.sendRequest(CodeLensRefreshRequest.type).catch(() => undefined);
}

/** The CodeLens on `dag_id`, its title the plan's summary once resolved. */
interface PlanLensData {
  readonly uri: string;
}

export const planFeature: Feature = {
  capabilities: { codeLensProvider: { resolveProvider: true } },
  register(context) {
    const plans = plansOf(context);
    const { connection } = context;
    connection.onRequest(PLAN_REQUEST, (params: PlanParams) => plans.request(params));
    connection.onCodeLens(({ textDocument }): CodeLens[] => {
      const open = analysisOf(context, textDocument.uri);
      const node = open?.analysis.model.dagIdNode;
      if (open === undefined || node === undefined) return [];
      const data: PlanLensData = { uri: textDocument.uri };
      return [{ range: nodeRange(open.document, node), data }];
    });
    connection.onCodeLensResolve(async (lens): Promise<CodeLens> => {
      const { uri } = lens.data as PlanLensData;
      const summary = await plans.summaryOf(uri);
      // No arguments: the command shows the active editor's plan (a click on a lens focuses its editor first).
      return { ...lens, command: { title: `Plan: ${summary ?? 'not available'}`, command: SHOW_PLAN_COMMAND } };
    });
    context.documents.onDidClose(({ document }) => plans.forget(document.uri));
  },
};
