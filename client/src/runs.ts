// The runs the extension shows, built from the server's run events and reports; finished runs survive a reload.
import { type Disposable, EventEmitter } from 'vscode';
import type { RunEvent, RunReport, TaskState } from '../../server/src/protocol/report';
import { type PublishedRun, publishRun } from './publishedRun';
import type { RunSnapshot, TaskSnapshot } from './runSnapshot';
import { type RunsStore, storedRuns } from './storedRuns';

/** What a progress display needs of a running run (without a copy of its tasks). */
export interface RunProgress {
  readonly runId: string;
  readonly uri: string;
  readonly dagId: string;
  readonly finishedTasks: number;
  readonly totalTasks: number;
}

/**
 * What one change event says changed. Run events come by the thousand a second: the model applies each at once but
 * tells its listeners at most every CHANGE_INTERVAL_MS, with everything that changed meanwhile, so a view does work
 * per change event rather than per run event (and at once when a run starts or ends). What the model answers is the
 * runs as of the last change event (publishedRun.ts): every view shows the counts of the change it last drew.
 */
export interface RunsChange {
  /** Runs were added, dropped or cleared: a view of the runs draws them all anew. */
  readonly listChanged: boolean;
  /** Every run that changed in any way. */
  readonly runIds: ReadonlySet<string>;
  /** Runs that ended (their report taken, or abandoned): any of their tasks may have changed. */
  readonly ended: ReadonlySet<string>;
  /** The tasks whose state, provider or cost changed, by run id (an ended run's may be more: see ended). */
  readonly tasks: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * The longest a change waits before the model tells its listeners. VS Code's tree views hold back a refresh that comes
 * within 200 ms of the one before until refreshes pause that long: with changes coming faster, the runs tree would
 * not move until the run ended, while the status bar counted on.
 */
export const CHANGE_INTERVAL_MS = 250;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type TaskRecord = Mutable<TaskSnapshot>;
type RunRecord = Omit<Mutable<RunSnapshot>, 'tasks'> & { readonly tasks: Map<string, TaskRecord> };

/** A run that ends is stored this long after its views were told: storing megabytes of runs must not delay them. */
const PERSIST_DELAY_MS = 1_000;
/** Runs kept, newest first: older finished runs are dropped. */
export const MAX_RUNS = 20;

const isFinished = (state: TaskState): boolean => state !== 'pending' && state !== 'running';

const toRecord = (run: RunSnapshot): RunRecord => ({
  ...run,
  tasks: new Map(run.tasks.map((task) => [task.taskId, { ...task }])),
});

/** The change being gathered until the model tells its listeners. */
class PendingChange implements RunsChange {
  listChanged = false;
  readonly runIds = new Set<string>();
  readonly ended = new Set<string>();
  readonly tasks = new Map<string, Set<string>>();

  task(runId: string, taskId: string): void {
    this.runIds.add(runId);
    let tasks = this.tasks.get(runId);
    if (tasks === undefined) this.tasks.set(runId, (tasks = new Set()));
    tasks.add(taskId);
  }
}

export class RunsModel implements Disposable {
  private readonly changed = new EventEmitter<RunsChange>();
  /** Fires with what changed since it last fired: at once when runs start, end or are cleared, else coalesced. */
  readonly onDidChange = this.changed.event;
  private pending = new PendingChange();
  private pendingTimer: ReturnType<typeof setTimeout> | undefined;
  private persistTimer: ReturnType<typeof setTimeout> | undefined;
  private records: RunRecord[];
  /** Each run as the listeners were last told of it: what the model answers. */
  private readonly published = new WeakMap<RunRecord, PublishedRun>();
  /** The capability of each task, given by the client before a run starts (run events do not carry them). */
  private readonly capabilities = new Map<string, ReadonlyMap<string, string>>();

  constructor(private readonly storage: RunsStore) {
    this.records = storage.read().map(toRecord);
    for (const record of this.records) this.published.set(record, publishRun(record));
  }

  /** Newest first. */
  get runs(): readonly RunSnapshot[] {
    return this.records.map((run) => this.snapshotOf(run));
  }

  /** One task of a run, without the others. */
  task(runId: string, taskId: string): TaskSnapshot | undefined {
    const record = this.records.find((run) => run.runId === runId);
    const published = record === undefined ? undefined : this.publishedOf(record);
    const place = published?.places.get(taskId);
    return place === undefined ? undefined : published?.run.tasks[place];
  }

  get(runId: string): RunSnapshot | undefined {
    return this.snapshot((run) => run.runId === runId);
  }

  activeRuns(): RunProgress[] {
    return this.runs
      .filter((run) => run.status === 'running')
      .map(({ runId, uri, dagId, finishedTasks, tasks }) => ({
        runId,
        uri,
        dagId,
        finishedTasks,
        totalTasks: tasks.length,
      }));
  }

  /** The id and status of the newest run of a document. */
  latestStatusOf(uri: string): Pick<RunSnapshot, 'runId' | 'status'> | undefined {
    const run = this.latestOf(uri);
    return run === undefined ? undefined : { runId: run.runId, status: run.status };
  }

  /** The newest run of a document. */
  latestOf(uri: string): RunSnapshot | undefined {
    return this.snapshot((run) => run.uri === uri);
  }

  private snapshot(matches: (run: RunRecord) => boolean): RunSnapshot | undefined {
    const record = this.records.find(matches);
    return record === undefined ? undefined : this.snapshotOf(record);
  }

  private snapshotOf(run: RunRecord): RunSnapshot {
    return this.publishedOf(run).run;
  }

  private publishedOf(run: RunRecord): PublishedRun {
    let published = this.published.get(run);
    // Every run is published when it is added; this is a safeguard, not a path.
    if (published === undefined) this.published.set(run, (published = publishRun(run)));
    return published;
  }

  /** Tells the model the capability of each task of a run about to start. */
  expect(runId: string, capabilities: ReadonlyMap<string, string>): void {
    this.capabilities.set(runId, capabilities);
  }

  /**
   * A run whose request failed without a report: refused before it started, or lost with the language server. A lost
   * run ends as failed, and its unfinished tasks as cancelled: nothing runs them any more. A durable run goes on on
   * its engine: the language server follows it again when it is back.
   */
  abandon(runId: string, at: string): void {
    this.capabilities.delete(runId);
    const run = this.records.find((record) => record.runId === runId);
    if (run?.status !== 'running' || run.engine !== undefined) return;
    run.status = 'failed';
    run.finishedAt = at;
    for (const task of run.tasks.values()) {
      if (isFinished(task.state)) continue;
      task.state = 'cancelled';
      task.finishedAt = at;
    }
    run.finishedTasks = run.tasks.size;
    this.endedNow(run);
    this.persistSoon();
  }

  /** Applies a run's event; `engine`: the run is a durable run on that engine. */
  apply(uri: string, event: RunEvent, engine?: string): void {
    if (event.type === 'run-started') {
      const capabilities = this.capabilities.get(event.run_id);
      this.capabilities.delete(event.run_id);
      // A durable run's log is replayed from its start when the language server follows it again: it starts anew.
      this.records = this.records.filter((run) => run.runId !== event.run_id);
      const tasks = event.tasks.map((taskId): [string, TaskRecord] => {
        const capability = capabilities?.get(taskId);
        return [taskId, { taskId, state: 'pending', ...(capability !== undefined && { capability }) }];
      });
      this.records.unshift({
        runId: event.run_id,
        uri,
        dagId: event.dag_id,
        policy: event.policy,
        status: 'running',
        startedAt: event.at,
        costCu: 0,
        tasks: new Map(tasks),
        finishedTasks: 0,
        ...(engine !== undefined && { engine }),
      });
      this.records = this.records.filter((run, index) => index < MAX_RUNS || run.status === 'running');
      this.pending.listChanged = true;
      this.changedNow(this.records[0]!);
    } else if (event.type === 'run-finished') {
      this.finish(event.report);
    } else if (event.type === 'task-state' || event.type === 'cost') {
      const run = this.records.find((record) => record.runId === event.run_id);
      const task = run?.tasks.get(event.task_id);
      if (run === undefined || task === undefined) return;
      this.pending.task(run.runId, task.taskId);
      this.pendingTimer ??= setTimeout(() => this.tell(), CHANGE_INTERVAL_MS);
      if (event.type === 'cost') {
        task.costCu = event.cost_cu;
        task.tokensUsed = event.tokens_used;
        run.costCu += event.cost_cu;
      } else {
        if (!isFinished(task.state) && isFinished(event.state)) run.finishedTasks += 1;
        task.state = event.state;
        if (event.provider_id !== undefined) task.providerId = event.provider_id;
        if (event.error !== undefined) task.error = event.error;
        if (event.price_cu !== undefined) task.priceCu = event.price_cu;
        if (event.pricing !== undefined) task.pricing = event.pricing;
        if (event.cached !== undefined) task.cached = event.cached;
        // A second `running` names the next provider tried after a refusal: the task started at the first.
        if (event.state === 'running') task.startedAt ??= event.at;
        else if (event.state !== 'pending') {
          if (event.started_at !== undefined) task.startedAt ??= event.started_at;
          task.finishedAt = event.at;
        }
      }
    }
    // Chunks and heartbeats change no state the extension shows.
  }

  /** Takes a run's report as the final word on it (from `run-finished` or the answer to the run command). */
  finish(report: RunReport): void {
    const run = this.records.find((record) => record.runId === report.run_id);
    if (run === undefined || run.status !== 'running') return;
    run.status = report.status;
    run.finishedAt = report.finished_at;
    run.costCu = report.totals.cost_cu;
    run.tokensUsed = report.totals.tokens_used;
    run.policy = report.policy;
    run.resultTaskIds = Object.keys(report.result);
    run.streamedEdges = report.streamed_edges;
    if (report.budget !== undefined) run.budget = report.budget;
    run.finishedTasks = report.tasks.filter((task) => isFinished(task.state)).length;
    for (const task of report.tasks) {
      const { capability } = run.tasks.get(task.task_id) ?? {};
      run.tasks.set(task.task_id, {
        taskId: task.task_id,
        state: task.state,
        ...(capability !== undefined && { capability }),
        ...(task.provider_id !== undefined && { providerId: task.provider_id }),
        ...(task.started_at !== undefined && { startedAt: task.started_at }),
        ...(task.finished_at !== undefined && { finishedAt: task.finished_at }),
        ...(task.cost_cu !== undefined && { costCu: task.cost_cu }),
        ...(task.tokens_used !== undefined && { tokensUsed: task.tokens_used }),
        ...(task.output !== undefined && { output: task.output }),
        ...(task.output_not_sent_bytes !== undefined && { outputNotSentBytes: task.output_not_sent_bytes }),
        ...(task.output_redacted === true && { outputRedacted: true }),
        ...(task.error !== undefined && { error: task.error }),
        proof: task.proof,
        ...(task.wire_task_id !== undefined && { wireTaskId: task.wire_task_id }),
        ...(task.violations !== undefined && { violations: task.violations }),
        ...(task.accepted?.price_cu !== undefined && { priceCu: task.accepted.price_cu }),
        ...(task.accepted !== undefined && { pricing: task.accepted.pricing }),
        ...(task.offers !== undefined && task.offers.length > 0 && { offers: task.offers.length }),
        ...(task.cached !== undefined && { cached: task.cached }),
      });
    }
    this.endedNow(run);
    this.persistSoon();
  }

  /** The durable runs whose end the model knows: the language server need not replay them. */
  finishedDurableRuns(): string[] {
    return this.records.filter((run) => run.engine !== undefined && run.status !== 'running').map((run) => run.runId);
  }

  /** Forgets a finished run. */
  remove(runId: string): void {
    const before = this.records.length;
    this.records = this.records.filter((run) => run.runId !== runId || run.status === 'running');
    if (this.records.length === before) return;
    this.persist();
    this.pending.runIds.add(runId);
    this.pending.listChanged = true;
    this.tell();
  }

  /** Forgets every finished run. */
  clear(): void {
    const cleared = this.records.filter((run) => run.status !== 'running');
    if (cleared.length === 0) return;
    this.records = this.records.filter((run) => run.status === 'running');
    this.persist();
    for (const run of cleared) this.pending.runIds.add(run.runId);
    this.pending.listChanged = true;
    this.tell();
  }

  private endedNow(run: RunRecord): void {
    this.pending.ended.add(run.runId);
    this.changedNow(run);
  }

  /** `run` was added or ended: listeners hear of it, and of everything pending, at once. */
  private changedNow(run: RunRecord): void {
    this.pending.runIds.add(run.runId);
    this.tell();
  }

  /** Publishes the runs that changed and tells the listeners what changed since they last heard. */
  private tell(): void {
    clearTimeout(this.pendingTimer);
    this.pendingTimer = undefined;
    const change = this.pending;
    this.pending = new PendingChange();
    for (const record of this.records) {
      if (!change.runIds.has(record.runId)) continue;
      // An ended run's report may have changed any task.
      const tasks = change.ended.has(record.runId) ? undefined : change.tasks.get(record.runId);
      this.published.set(record, publishRun(record, this.published.get(record), tasks));
    }
    this.changed.fire(change);
  }

  private persistSoon(): void {
    this.persistTimer ??= setTimeout(() => this.persist(), PERSIST_DELAY_MS);
  }

  private persist(): void {
    clearTimeout(this.persistTimer);
    this.persistTimer = undefined;
    // Only finished runs: a running one ends with the window's language server.
    const finished = this.records.filter((run) => run.status !== 'running').map((run) => this.snapshotOf(run));
    this.storage.write(storedRuns(finished));
  }

  dispose(): void {
    clearTimeout(this.pendingTimer);
    if (this.persistTimer !== undefined) this.persist();
    this.changed.dispose();
  }
}
