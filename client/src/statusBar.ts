// The status bar item shown while runs are in progress; a click shows the runs view.
import { type Disposable, StatusBarAlignment, window } from 'vscode';
import { RUNS_VIEW } from './runTree';
import type { RunsModel } from './runs';

export function createRunStatusBarItem(runs: RunsModel): Disposable[] {
  const item = window.createStatusBarItem('acmp.runs', StatusBarAlignment.Left);
  item.name = 'ACMP Runs';
  item.command = `${RUNS_VIEW}.focus`;
  item.tooltip = 'ACMP DAG runs in progress: show them';
  const update = (): void => {
    const active = runs.activeRuns();
    const [first] = active;
    if (first === undefined) {
      item.hide();
      return;
    }
    item.text =
      active.length === 1
        ? `$(sync~spin) ${first.dagId} ${first.finishedTasks}/${first.totalTasks}`
        : `$(sync~spin) ${active.length} ACMP runs`;
    item.show();
  };
  update();
  return [item, runs.onDidChange(update)];
}
