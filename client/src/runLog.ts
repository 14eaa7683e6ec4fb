// The output channel "ACMP Runs": one line per run event (never an output's data, never a token); a large run's
// routine lines (each task's changes of state, its cost) at debug level.
import { type Disposable, LogLevel, type LogOutputChannel, window } from 'vscode';
import type { RunEventParams, RunRefusedData } from '../../server/src/protocol/runMessages';
import type { RunReport } from '../../server/src/protocol/report';
import { MAX_TASKS_LISTED } from './runTree';
import { durationMs, fileName, formatCost, formatDuration, refusalMessage } from './runText';

const short = (runId: string): string => runId.slice(0, 8);

export class RunLog implements Disposable {
  private readonly channel: LogOutputChannel = window.createOutputChannel('ACMP Runs', { log: true });
  /** The runs going on of more than MAX_TASKS_LISTED tasks. */
  private readonly largeRuns = new Set<string>();

  event({ uri, event }: RunEventParams): void {
    const run = `run ${short(event.run_id)}`;
    switch (event.type) {
      case 'run-started': {
        const large = event.tasks.length > MAX_TASKS_LISTED;
        if (large) this.largeRuns.add(event.run_id);
        this.channel.info(
          `${run} ${event.dag_id} started (${fileName(uri)}): ${event.tasks.length} tasks, ${event.policy}${large ? "; each task's changes at debug level" : ''}`,
        );
        return;
      }
      case 'task-state': {
        const provider = event.provider_id === undefined ? '' : ` (${event.provider_id})`;
        const line = (): string => `${run} ${event.task_id} → ${event.state}${provider}`;
        if (event.error === undefined) this.routine(event.run_id, line);
        else if (event.state === 'failed') this.channel.error(`${line()}: ${event.error.code} ${event.error.message}`);
        else this.channel.warn(`${line()}: ${event.error.code} ${event.error.message}`);
        return;
      }
      case 'chunk':
        this.channel.debug(`${run} ${event.task_id} chunk ${event.seq}${event.final ? ' (final)' : ''}`);
        return;
      case 'heartbeat': {
        const progress = event.progress === undefined ? '' : ` ${Math.round(event.progress * 100)}%`;
        this.channel.debug(`${run} ${event.task_id} heartbeat${progress}${event.detail ? ` ${event.detail}` : ''}`);
        return;
      }
      case 'cost': {
        const line = (): string =>
          `${run} ${event.task_id} cost ${formatCost(event.cost_cu)}, ${event.tokens_used} tokens`;
        if (event.violation) this.channel.warn(`${line()}: above max_price_cu ${String(event.max_price_cu)}`);
        else this.routine(event.run_id, line);
        return;
      }
      case 'run-finished':
        this.finished(event.report);
        return;
    }
  }

  /** A run's last line, from its report (`run-finished`, or the answer to the run command in batches). */
  finished(report: RunReport): void {
    this.largeRuns.delete(report.run_id);
    const took = formatDuration(durationMs(report.started_at, report.finished_at) ?? 0);
    const line = `run ${short(report.run_id)} ${report.dag_id} ${report.status} in ${took}, ${formatCost(report.totals.cost_cu)}, ${report.totals.tokens_used} tokens`;
    if (report.status === 'completed') this.channel.info(line);
    else if (report.status === 'failed') this.channel.error(line);
    else this.channel.warn(line);
  }

  /**
   * A routine line of a run, made only when written: at info level, or at debug level for a large run (its tens of
   * thousands of lines took the extension host 0.2 s of CPU in a 10,000-task run, beside the window's own work).
   */
  private routine(runId: string, line: () => string): void {
    if (!this.largeRuns.has(runId)) this.channel.info(line());
    else if (this.channel.logLevel !== LogLevel.Off && this.channel.logLevel <= LogLevel.Debug) {
      this.channel.debug(line());
    }
  }

  refused(uri: string, { errors }: RunRefusedData): void {
    this.channel.error(refusalMessage(uri, errors.length));
  }

  failed(uri: string, message: string): void {
    this.channel.error(`${fileName(uri)}: the run failed: ${message}`);
  }

  dispose(): void {
    this.channel.dispose();
  }
}
