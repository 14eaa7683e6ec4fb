// The command `acmp.showGraph`: a webview beside the editor that draws the DAG the language server describes
// (`acmp/graph`), coloured by run states, following the editor's cursor and revealing the task clicked.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import {
  CRITICAL_PATH_REQUEST,
  type CriticalPathParams,
  type CriticalPathResult,
  type DagGraph,
  GRAPH_REQUEST,
  type GraphParams,
} from '../../server/src/protocol/runMessages';
import {
  type FromGraphPage,
  type ShownState,
  StateChanges,
  type ToGraphPage,
  drawnAlike,
  graphHtml,
  packGraph,
  sameCriticalPath,
  shownState,
  taskIndexes,
} from './graphPage';
import type { RunsChange, RunsModel } from './runs';
import { type TaskSymbol, taskSymbols } from './taskSymbols';

const SHOW_GRAPH_COMMAND = 'acmp.showGraph';
const GRAPH_VIEW_TYPE = 'acmp.graph';
/** Typing pauses this long before the graph is asked for again. */
const REFRESH_DELAY_MS = 300;

/** One graph panel, showing one DAG document. */
class GraphPanel {
  /** The last graph of a text that parsed (or the first graph, when none has yet). */
  private graph: DagGraph | undefined;
  private stale = false;
  /** The graph the page was last sent and whether it was stale: an edit that changes nothing drawn is not sent. */
  private drawn: { graph: DagGraph; stale: boolean } | undefined;
  /** Whether the graph shown has its plan's critical path (the first came without waiting for the plan). */
  private planned = false;
  /** The index of each task of the graph the page was last sent, by which its states are posted. */
  private postedTasks: ReadonlyMap<string, number> = new Map();
  /** The run states the page has been sent, and of which run. */
  private readonly postedStates = new Map<string, ShownState>();
  private postedRunId: string | undefined;
  private postedRunning = false;
  private cursorTaskId: string | undefined;
  private outline: { version: number; tasks: Promise<readonly TaskSymbol[]> } | undefined;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  /** Whether the page has loaded: until then nothing is posted, since its `ready` asks for everything. */
  private pageReady = false;
  /** Whether the page (since it last loaded) has drawn a graph. */
  private pageHasDrawn = false;

  constructor(
    readonly uri: vscode.Uri,
    readonly panel: vscode.WebviewPanel,
    private readonly client: LanguageClient,
    private readonly runs: RunsModel,
  ) {
    panel.webview.onDidReceiveMessage((message: FromGraphPage) => this.received(message));
  }

  /**
   * Asks the server for the graph and shows it, or keeps the last good one while the text does not parse. The first
   * graph comes at once, with its plan's critical path when the text's plan is made already, else its longest chain;
   * the plan's follows once the page has drawn it (pageDrawn): a 10,000-task DAG's plan takes most of a second, which
   * the first drawing neither waits for nor shares the machine with. A changed text's graph comes with its plan's.
   */
  async refresh(): Promise<void> {
    const first = this.graph === undefined;
    const graph = await this.requestGraph(!first);
    if (graph === undefined) return;
    if (!first) this.planned = true;
    this.show(graph);
    const editor = this.shownEditor();
    if (editor !== undefined) await this.followCursor(editor);
  }

  /** The page drew its first frame of the graph: the cursor's task and the plan's critical path are asked for now. */
  private async pageDrawn(): Promise<void> {
    this.pageHasDrawn = true;
    const editor = this.shownEditor();
    if (editor !== undefined) await this.followCursor(editor);
    const shown = this.graph;
    if (this.planned || shown === undefined || !shown.parsed) return;
    const params: CriticalPathParams = { uri: this.uri.toString() };
    const { version, criticalPath } = await this.client.sendRequest<CriticalPathResult>(CRITICAL_PATH_REQUEST, params);
    // A newer graph came meanwhile, with its own plan's.
    if (this.closed || this.graph !== shown || version !== shown.version) return;
    this.planned = true;
    if (sameCriticalPath(criticalPath, shown.criticalPath)) return;
    this.graph = { ...shown, criticalPath };
    if (this.drawn?.graph === shown) this.drawn = { ...this.drawn, graph: this.graph };
    this.post({ type: 'criticalPath', criticalPath });
  }

  private async requestGraph(waitForPlan: boolean): Promise<DagGraph | undefined> {
    const params: GraphParams = { uri: this.uri.toString(), layout: true, waitForPlan };
    const graph = await this.client.sendRequest<DagGraph>(GRAPH_REQUEST, params);
    return this.closed ? undefined : graph;
  }

  /** Shows `graph`, posted to the page when what it draws of it changed. */
  private show(graph: DagGraph): void {
    this.stale = !graph.parsed;
    if (graph.parsed || this.graph === undefined) this.graph = graph;
    this.panel.title = `Graph: ${this.graph.dagId ?? path.posix.basename(this.uri.path)}`;
    const { drawn } = this;
    if (drawn === undefined || drawn.stale !== this.stale || !drawnAlike(drawn.graph, this.graph)) {
      this.drawn = { graph: this.graph, stale: this.stale };
      this.postGraph();
    }
  }

  /** An editor of the document in sight, if any. */
  private shownEditor(): vscode.TextEditor | undefined {
    return vscode.window.visibleTextEditors.find((shown) => shown.document.uri.toString() === this.uri.toString());
  }

  refreshSoon(): void {
    clearTimeout(this.refreshTimer);
    // A failed request (the document closed meanwhile, the server restarting) keeps the graph shown until the next edit.
    this.refreshTimer = setTimeout(() => void this.refresh().catch(() => undefined), REFRESH_DELAY_MS);
  }

  /**
   * Sends the page the states of the document's latest run that changed since it was last sent them: of the tasks
   * `change` names while the run goes on (a run's tasks are thousands, a change's a few), else of every task.
   */
  showStates(reset = false, change?: RunsChange): void {
    const latest = this.runs.latestStatusOf(this.uri.toString());
    const onlyChanged =
      !reset &&
      change !== undefined &&
      latest !== undefined &&
      latest.runId === this.postedRunId &&
      latest.status === 'running' &&
      !change.listChanged &&
      !change.ended.has(latest.runId);
    if (onlyChanged) {
      const changed = new StateChanges(this.postedTasks);
      for (const taskId of change.tasks.get(latest.runId) ?? []) {
        const task = this.runs.task(latest.runId, taskId);
        const state = task === undefined ? undefined : shownState(task);
        if (state === undefined || this.postedStates.get(taskId) === state) continue;
        this.postedStates.set(taskId, state);
        changed.add(taskId, state);
      }
      if (changed.size > 0) this.post({ type: 'states', reset: false, states: changed.posted(), running: true });
      return;
    }
    const run = this.runs.latestOf(this.uri.toString());
    const newRun = run?.runId !== this.postedRunId;
    if (reset || newRun) this.postedStates.clear();
    const changed = new StateChanges(this.postedTasks);
    const current = new Set<string>();
    for (const task of run?.tasks ?? []) {
      const { taskId } = task;
      const state = shownState(task);
      current.add(taskId);
      if (this.postedStates.get(taskId) === state) continue;
      this.postedStates.set(taskId, state);
      changed.add(taskId, state);
    }
    for (const taskId of this.postedStates.keys()) {
      if (current.has(taskId)) continue;
      this.postedStates.delete(taskId);
      changed.add(taskId);
    }
    const running = run?.status === 'running';
    this.postedRunId = run?.runId;
    if (changed.size === 0 && !reset && !newRun && running === this.postedRunning) return;
    this.postedRunning = running;
    this.post({ type: 'states', reset: reset || newRun, states: changed.posted(), running });
  }

  /** Marks the task whose object holds the cursor of an editor of the document. */
  async followCursor(editor: vscode.TextEditor): Promise<void> {
    // The outline of a large DAG is a large answer: not asked for before the page has drawn the graph.
    if (this.graph === undefined || !this.pageHasDrawn) return;
    const { version } = editor.document;
    if (this.outline?.version !== version) this.outline = { version, tasks: taskSymbols(this.client, this.uri) };
    const cursor = editor.selection.active;
    const symbol = (await this.outline.tasks).find((task) => task.range.contains(cursor));
    const taskId = this.graph.nodes.find(
      (node) => node.line === symbol?.idAt.line && node.character === symbol.idAt.character,
    )?.id;
    if (taskId === this.cursorTaskId) return;
    this.cursorTaskId = taskId;
    this.post({ type: 'cursor', taskId });
  }

  /** The panel was closed. */
  stop(): void {
    this.closed = true;
    clearTimeout(this.refreshTimer);
  }

  private received(message: FromGraphPage): void {
    switch (message.type) {
      case 'ready':
        // The page is new (opened, or shown again after being hidden): it needs everything.
        this.pageReady = true;
        this.pageHasDrawn = false;
        if (this.graph !== undefined) this.postGraph();
        else this.showStates(true);
        this.post({ type: 'cursor', taskId: this.cursorTaskId });
        break;
      case 'drawn':
        // A failed request (the document closed meanwhile, the server restarting) leaves the graph as drawn.
        void this.pageDrawn().catch(() => undefined);
        break;
      case 'reveal':
        // The page has highlighted the task already: the cursor's move to it must not post it again.
        this.cursorTaskId = message.taskId;
        void this.reveal(message.taskId);
        break;
    }
  }

  private async reveal(taskId: string): Promise<void> {
    const node = this.graph?.nodes.find((candidate) => candidate.id === taskId);
    if (node === undefined) return;
    const position = new vscode.Position(node.line, node.character);
    await vscode.window.showTextDocument(this.uri, {
      viewColumn: this.shownEditor()?.viewColumn ?? vscode.ViewColumn.One,
      selection: new vscode.Range(position, position),
    });
  }

  /** Sends the page the graph, then the states by its tasks' indexes. */
  private postGraph(): void {
    if (this.graph === undefined || !this.pageReady) return;
    this.postedTasks = taskIndexes(this.graph);
    this.post({ type: 'graph', graph: packGraph(this.graph), stale: this.stale });
    this.showStates(true);
  }

  private post(message: ToGraphPage): void {
    // A 10,000-task graph is megabytes: posted once, when the page can take it.
    if (!this.closed && this.pageReady) void this.panel.webview.postMessage(message);
  }
}

export function registerGraphView(context: vscode.ExtensionContext, client: LanguageClient, runs: RunsModel): void {
  const panels = new Map<string, GraphPanel>();
  const dist = vscode.Uri.joinPath(context.extensionUri, 'dist');

  async function showGraph(resource?: vscode.Uri): Promise<void> {
    const uri = resource ?? vscode.window.activeTextEditor?.document.uri;
    // Opening the document sends it to the language server, which answers only for open documents.
    const document = uri === undefined ? undefined : await vscode.workspace.openTextDocument(uri);
    if (document?.languageId !== 'acmp-dag') {
      void vscode.window.showInformationMessage('Open an ACMP DAG file (*.acmp-dag.json) to show its graph.');
      return;
    }
    const key = document.uri.toString();
    const open = panels.get(key);
    if (open !== undefined) {
      open.panel.reveal(undefined, true);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      GRAPH_VIEW_TYPE,
      'Graph',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, localResourceRoots: [dist] },
    );
    const { webview } = panel;
    webview.html = graphHtml({
      cspSource: webview.cspSource,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'graph.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'graph.css')).toString(),
    });
    const graphPanel = new GraphPanel(document.uri, panel, client, runs);
    panels.set(key, graphPanel);
    panel.onDidDispose(() => {
      graphPanel.stop();
      panels.delete(key);
    });
    await graphPanel.refresh();
  }

  context.subscriptions.push(
    vscode.commands.registerCommand(SHOW_GRAPH_COMMAND, showGraph),
    vscode.workspace.onDidChangeTextDocument(({ document }) => panels.get(document.uri.toString())?.refreshSoon()),
    // A closed untitled document is gone for good: its graph would only mislead.
    vscode.workspace.onDidCloseTextDocument((document) => {
      if (document.isUntitled) panels.get(document.uri.toString())?.panel.dispose();
    }),
    vscode.window.onDidChangeTextEditorSelection(({ textEditor }) => {
      void panels.get(textEditor.document.uri.toString())?.followCursor(textEditor);
    }),
    runs.onDidChange((change) => {
      for (const graphPanel of panels.values()) graphPanel.showStates(false, change);
    }),
    {
      dispose: () => {
        for (const graphPanel of panels.values()) graphPanel.panel.dispose();
      },
    },
  );
}
