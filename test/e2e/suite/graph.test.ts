// The graph view in a real VS Code: `acmp.showGraph` opens one webview panel beside the DAG, markup in its ids
// included; with the code-server runner, which sees into the webview, a 10,000-task graph is zoomed, fitted and
// focused through its page, and a DAG run earlier shows that run's states. Documents are untitled: no fixture changes.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { AcmpApi } from '../../../client/src/extension';
import { DIAMOND, diamondWith } from '../../support/diamond';
import { echoLayersDag } from '../../support/echoDag';
import { marketDag } from '../../support/marketDag';
import type { DrawnView, GraphFigures, PhaseShown, ProbeStep } from '../graphBench';
import { askRunner, runnerAnswers } from './askRunner';
import { openUntitledDag } from './untitledDag';

/** Has the runner run the steps on the open graph page; answers what its `read` and `measure` steps found. */
const graphProbe = (steps: readonly ProbeStep[]): Promise<(DrawnView | GraphFigures | PhaseShown[])[]> =>
  askRunner('graph-probe', steps);

/** VS Code reports an extension's webview type with this prefix on the tab's input. */
const isGraphTab = (tab: vscode.Tab): boolean =>
  tab.input instanceof vscode.TabInputWebview && tab.input.viewType.endsWith('acmp.graph');

const graphTabs = (): vscode.Tab[] => vscode.window.tabGroups.all.flatMap((group) => group.tabs.filter(isGraphTab));

/** Resolves with what `answer` finds in the tabs, now or when they change; fails after `ms` with the tabs seen. */
function whenTabs<T>(answer: (tabs: readonly vscode.Tab[]) => T | undefined, ms = 20_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const found = answer(vscode.window.tabGroups.all.flatMap((group) => group.tabs));
      if (found === undefined) return;
      subscription.dispose();
      clearTimeout(timer);
      resolve(found);
    };
    const subscription = vscode.window.tabGroups.onDidChangeTabs(check);
    const timer = setTimeout(() => {
      subscription.dispose();
      const seen = vscode.window.tabGroups.all.flatMap((group) => group.tabs.map((tab) => tab.label));
      reject(new Error(`the tabs did not become as expected within ${ms} ms; tabs: ${seen.join(', ')}`));
    }, ms);
    check();
  });
}

const tabWhen = (accept: (tab: vscode.Tab) => boolean): Promise<vscode.Tab> => whenTabs((tabs) => tabs.find(accept));

const noGraphTabs = (): Promise<true> => whenTabs((tabs) => (tabs.some(isGraphTab) ? undefined : true));

suite('ACMP DAG graph view in VS Code', () => {
  teardown(async () => {
    await vscode.window.tabGroups.close(graphTabs());
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  test('acmp.showGraph opens the graph beside the DAG once, showing markup in ids as text', async () => {
    const text = diamondWith('"dag_diamond"', '"dag_<i>diamond</i>"').replace('"task_note"', '"task_<b>x</b>"');
    const document = await openUntitledDag(text);
    const editor = await vscode.window.showTextDocument(document);

    await vscode.commands.executeCommand('acmp.showGraph', document.uri);
    const tab = await tabWhen((candidate) => isGraphTab(candidate) && candidate.label === 'Graph: dag_<i>diamond</i>');
    assert.notEqual(tab.group.viewColumn, editor.viewColumn, 'the graph opens beside the editor');
    assert.equal(vscode.window.activeTextEditor?.document, document, 'the editor keeps the focus');

    // Asked again, the command shows the same panel rather than a second one.
    await vscode.commands.executeCommand('acmp.showGraph', document.uri);
    assert.equal(graphTabs().length, 1);
  });

  test("an untitled DAG's graph closes with it; a new DAG given its name gets a graph of its own", async () => {
    const first = await openUntitledDag(DIAMOND);
    await vscode.window.showTextDocument(first);
    await vscode.commands.executeCommand('acmp.showGraph', first.uri);
    await tabWhen((tab) => isGraphTab(tab) && tab.label === 'Graph: dag_diamond');

    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    await noGraphTabs();

    const second = await openUntitledDag(diamondWith('"dag_diamond"', '"dag_second"'));
    await vscode.window.showTextDocument(second);
    await vscode.commands.executeCommand('acmp.showGraph', second.uri);
    await tabWhen((tab) => isGraphTab(tab) && tab.label === 'Graph: dag_second');
    assert.equal(graphTabs().length, 1);
  });

  /** Opens a market DAG of `size` tasks and its graph; answers the text and its editor. */
  async function showMarketGraph(size: number): Promise<{ text: string; editor: vscode.TextEditor }> {
    const text = JSON.stringify(marketDag(size, { backEdges: 0 }), null, 2);
    const document = await openUntitledDag(text);
    const editor = await vscode.window.showTextDocument(document);
    await vscode.commands.executeCommand('acmp.showGraph', document.uri);
    return { text, editor };
  }

  const views = (found: readonly (DrawnView | GraphFigures | PhaseShown[])[]): DrawnView[] =>
    found.filter((item): item is DrawnView => 'scale' in item);

  test('300 tasks: the whole graph, drawn in a worker, then zoomed in where labels show (screenshots)', async function () {
    if (runnerAnswers === undefined) this.skip();
    // Longer than the probe's own waits (60 s to find the page, 60 s for its tasks), so that theirs is the failure.
    this.timeout(150_000);
    await showMarketGraph(300);
    const [fitted, zoomed] = views(
      await graphProbe([
        { tasks: 300 },
        { read: true },
        { screenshot: 'graph-300' },
        ...Array.from({ length: 10 }, () => ({ press: '+' })),
        { read: true },
        { screenshot: 'graph-300-zoomed' },
      ]),
    );
    assert.match(fitted!.status, /: 300 tasks, \d+ edges/);
    assert.ok(fitted!.inWorker, "the drawing runs in a worker, off the window's thread");
    assert.ok(zoomed!.scale > fitted!.scale * 5, `zoomed in: ${fitted!.scale} → ${zoomed!.scale}`);
  });

  test('10,000 tasks: the graph opens, zoom, fit and focus work through its page', async function () {
    if (runnerAnswers === undefined) this.skip();
    this.timeout(180_000);
    const { text, editor } = await showMarketGraph(10_000);
    const opened = await graphProbe([
      { tasks: 10_000 },
      { phases: true },
      { read: true },
      { screenshot: 'graph-10k' },
      { press: '+' },
      { press: '+' },
      { read: true },
      { press: '-' },
      { press: '-' },
      { press: '-' },
      { read: true },
      { press: '0' },
      { read: true },
    ]);
    // Until its first frame, the page said it was laying out the graph, and of how many tasks once it knew.
    const phases = opened.find((item): item is PhaseShown[] => Array.isArray(item))!;
    const counted = phases.findIndex(({ text }) => text === 'Laying out 10,000 tasks…');
    assert.ok(counted >= 0 && phases[counted]!.shownAt !== undefined, `the count shown: ${JSON.stringify(phases)}`);
    assert.deepEqual(
      phases.slice(counted).map(({ phase }) => phase),
      ['laying-out', 'drawn'],
      `then the first frame: ${JSON.stringify(phases)}`,
    );
    assert.ok(
      phases.slice(0, counted).every(({ phase }) => phase === 'laying-out'),
      JSON.stringify(phases),
    );
    const [fitted, zoomedIn, zoomedOut, refitted] = views(opened);
    assert.match(fitted!.status, /: 10000 tasks, \d+ edges/);
    assert.ok(zoomedIn!.scale > fitted!.scale, `+ zooms in: ${fitted!.scale} → ${zoomedIn!.scale}`);
    assert.ok(zoomedOut!.scale < zoomedIn!.scale, `- zooms out: ${zoomedIn!.scale} → ${zoomedOut!.scale}`);
    // 0 fits the graph as first shown: all of it in sight again, at about the same scale (the view's height may have
    // changed meanwhile: the status line wraps differently once the plan's critical path has replaced the longest
    // chain, and the shape's fit follows the height).
    const fits = JSON.stringify([fitted, refitted]);
    assert.deepEqual([refitted!.view, refitted!.visibleBoxes], [fitted!.view, fitted!.visibleBoxes], fits);
    assert.ok(Math.abs(refitted!.scale / fitted!.scale - 1) < 0.1, fits);

    // The cursor in task_5000's object highlights it; F shows its neighbourhood, ] one level more, F all again.
    const position = editor.document.positionAt(text.indexOf('"task_5000"'));
    editor.selection = new vscode.Selection(position, position);
    editor.revealRange(new vscode.Range(position, position), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    const found = await graphProbe([
      { current: 'task_5000' },
      { press: 'f' },
      { read: true },
      { press: ']' },
      { read: true },
      { screenshot: 'graph-10k-focus' },
      { press: 'f' },
      { read: true },
      { measure: true },
    ]);
    const [focused, wider, whole] = views(found);
    assert.equal(focused!.focus, 'task_5000');
    assert.ok(focused!.tasks > 1 && focused!.tasks < 200, `a neighbourhood: ${focused!.tasks} tasks`);
    assert.match(focused!.status, /focus: task_5000, 2 levels up and down/);
    assert.ok(wider!.tasks > focused!.tasks, `] shows more: ${focused!.tasks} → ${wider!.tasks}`);
    assert.equal(whole!.focus, '');
    assert.equal(whole!.tasks, 10_000);
    // Timing belongs to the bench: the figures are printed, not asserted.
    console.log(`graph of 10,000 tasks in VS Code: ${JSON.stringify(found.find((item) => 'firstDrawnMs' in item))}`);
  });

  test('names where they fit: at 60 px boxes every box in sight shows its id, and focus mode labels every box', async function () {
    if (runnerAnswers === undefined) this.skip();
    this.timeout(150_000);
    const text = echoLayersDag(1_000);
    const document = await openUntitledDag(text);
    const editor = await vscode.window.showTextDocument(document);
    await vscode.commands.executeCommand('acmp.showGraph', document.uri);
    const [named] = views(
      // S: the tasks rather than the shape Fit shows for a graph this large.
      await graphProbe([
        { tasks: 1_000 },
        { press: 's' },
        { boxWidth: 60 },
        { read: true },
        { screenshot: 'graph-1000-names' },
      ]),
    );
    assert.equal(named!.view, 'tasks');
    assert.ok(Math.abs(named!.boxWidth - 60) < 1, `boxes ${named!.boxWidth} px wide`);
    assert.ok(named!.visibleBoxes >= 10, `${named!.visibleBoxes} boxes in sight`);
    assert.equal(named!.labelledBoxes, named!.visibleBoxes, 'every box in sight shows its id');

    const position = editor.document.positionAt(text.indexOf('"task_4_72"'));
    editor.selection = new vscode.Selection(position, position);
    const [focused] = views(
      await graphProbe([{ current: 'task_4_72' }, { press: 'f' }, { read: true }, { screenshot: 'graph-1000-focus' }]),
    );
    assert.equal(focused!.focus, 'task_4_72');
    assert.ok(focused!.visibleBoxes >= 10, `${focused!.visibleBoxes} of the ${focused!.tasks} tasks in sight`);
    assert.equal(focused!.labelledBoxes, focused!.visibleBoxes, 'focus mode labels every box');
  });

  test('Fit shows 1,000 tasks as their shape, 10 groups of a layer; a click on a group expands it (screenshots)', async function () {
    if (runnerAnswers === undefined) this.skip();
    this.timeout(150_000);
    const document = await openUntitledDag(echoLayersDag(1_000));
    await vscode.window.showTextDocument(document);
    await vscode.commands.executeCommand('acmp.showGraph', document.uri);
    const [shape] = views(await graphProbe([{ tasks: 1_000 }, { read: true }, { screenshot: 'graph-1000-shape' }]));
    assert.deepEqual([shape!.view, shape!.groups], ['shape', 10]);
    assert.match(shape!.status, /shape: 1,000 tasks in 10 groups by id prefix/);
    assert.ok(shape!.boxWidth >= 60, `groups ${shape!.boxWidth} px wide: room for their names`);
    assert.equal(shape!.labelledBoxes, shape!.visibleBoxes, 'every group shows its name');

    // The shape is a column of one group a layer: the fourth, middle of its box.
    const click = { x: shape!.x + shape!.boxWidth / 2, y: shape!.y + (3 * 100 + 22) * shape!.scale };
    const [expanded] = views(
      await graphProbe([{ tasks: 1_000 }, { click }, { read: true }, { screenshot: 'graph-1000-shape-expanded' }]),
    );
    assert.deepEqual([expanded!.view, expanded!.groups, expanded!.expanded], ['shape', 9, 1]);
    assert.match(expanded!.status, /shape: 900 tasks in 9 groups by id prefix, 100 tasks expanded/);
  });

  test("Fit shows 10,000 tasks' shape legibly: bands of layers, every group named (screenshot)", async function () {
    if (runnerAnswers === undefined) this.skip();
    this.timeout(150_000);
    const document = await openUntitledDag(echoLayersDag(10_000));
    await vscode.window.showTextDocument(document);
    await vscode.commands.executeCommand('acmp.showGraph', document.uri);
    const [shape] = views(await graphProbe([{ tasks: 10_000 }, { read: true }, { screenshot: 'graph-10k-shape' }]));
    assert.equal(shape!.view, 'shape');
    assert.ok(shape!.groups >= 3 && shape!.groups <= 25, `${shape!.groups} groups`);
    assert.match(shape!.status, new RegExp(`shape: 10,000 tasks in ${shape!.groups} groups by id prefix`));
    assert.ok(shape!.boxWidth >= 60, `groups ${shape!.boxWidth} px wide: room for their names`);
    assert.equal(shape!.labelledBoxes, shape!.visibleBoxes, 'every group shows its name');
  });

  test("the README's screenshots: 1,000 tasks at fit, a focus view, 10,000 tasks zoomed to names, light and dark", async function () {
    if (runnerAnswers === undefined) this.skip();
    this.timeout(300_000);
    const workbench = vscode.workspace.getConfiguration('workbench');
    const themeBefore = workbench.inspect<string>('colorTheme')?.globalValue;
    // The graph beside the editor, with the room the side bars would take.
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
    /** Steps that take a screenshot named `name-light` in Light Modern, then `name-dark` in Dark Modern. */
    const inBothThemes = async (name: string, before: readonly ProbeStep[] = []): Promise<void> => {
      await graphProbe(before);
      for (const [kind, theme] of [
        ['light', 'Default Light Modern'],
        ['dark', 'Default Dark Modern'],
      ] as const) {
        await workbench.update('colorTheme', theme, vscode.ConfigurationTarget.Global);
        await graphProbe([{ themeKind: `vscode-${kind}` }, { screenshot: `${name}-${kind}` }]);
      }
    };
    try {
      const text = echoLayersDag(1_000);
      const document = await openUntitledDag(text);
      const editor = await vscode.window.showTextDocument(document);
      await vscode.commands.executeCommand('acmp.showGraph', document.uri);
      await inBothThemes('readme-graph-1000', [{ tasks: 1_000 }]);
      const position = editor.document.positionAt(text.indexOf('"task_4_72"'));
      editor.selection = new vscode.Selection(position, position);
      editor.revealRange(new vscode.Range(position, position), vscode.TextEditorRevealType.InCenter);
      await inBothThemes('readme-graph-focus', [{ current: 'task_4_72' }, { press: 'f' }]);
      await graphProbe([{ press: 'f' }]);
      await vscode.window.tabGroups.close(graphTabs());
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');

      const large = await openUntitledDag(echoLayersDag(10_000));
      await vscode.window.showTextDocument(large);
      await vscode.commands.executeCommand('acmp.showGraph', large.uri);
      await inBothThemes('readme-graph-10k-names', [{ tasks: 10_000 }, { press: 's' }, { boxWidth: 80 }]);
    } finally {
      await workbench.update('colorTheme', themeBefore, vscode.ConfigurationTarget.Global);
      await vscode.commands.executeCommand('workbench.action.toggleSidebarVisibility');
    }
  });

  test('the graph of a DAG run earlier shows the states of that run', async function () {
    if (runnerAnswers === undefined) this.skip();
    const api = vscode.extensions.getExtension<AcmpApi>('acmp-dag.acmp-dag')!.exports;
    const run = api.runs().find((candidate) => candidate.status !== 'running');
    if (run === undefined) this.skip();
    const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(run.uri));
    await vscode.window.showTextDocument(document);
    await vscode.commands.executeCommand('acmp.showGraph', document.uri);
    const [shown] = views(await graphProbe([{ tasks: run.tasks.length }, { read: true }]));
    const finished = run.tasks.filter((task) => task.state !== 'pending' && task.state !== 'running').length;
    assert.match(shown!.status, new RegExp(`last run: ${finished}/${run.tasks.length} finished`));
  });
});
