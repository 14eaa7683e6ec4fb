// Durable runs in the editor: when `acmp.engine.url` names a Restate engine, Run DAG submits the DAG to
// it (run.ts), and `acmp/durableRuns` lists the engine's runs and follows them, those started from the terminal or
// another window included: the engine has no push to clients, so the server polls its run index and pages through
// each new run's event log, handing the events to the same notifications as its own runs. Cancels go to the engine.
import { LSPErrorCodes, MessageType, ResponseError, ShowMessageNotification } from 'vscode-languageserver';
import type { DagAnalysis } from '../dag/analyze';
import type { RunEvent } from '../protocol/report';
import {
  DURABLE_POLL_MS,
  type DurableRunEntry,
  type DurableRunsParams,
  type DurableRunsResult,
  MAX_DURABLE_RUNS_REPLAYED,
} from '../protocol/runMessages';
import { normalizeSettings } from '../protocol/settings';
import { type DurableRunOptions, startDurableRun } from '../run/durable/durableRun';
import { EngineClient, followRun } from '../run/durable/engineClient';
import { parseEngineAddress } from '../run/durable/engineHttp';
import type { RunIndexEntry } from '../protocol/engineMessages';
import { messageOf } from '../protocol/acmpMessages';
import type { DagRun } from '../run/types';
import type { FeatureContext } from './feature';

/** Where the events of a run go: a sender for the run's document and engine (run.ts batches them). */
export type RunEventSink = (uri: string, engine: string) => (event: RunEvent) => void;

/** The engine address `acmp.engine.url` names, normalized; undefined when empty; refused when not an address. */
export function engineUrlOf(setting: string): string | undefined {
  if (setting === '') return undefined;
  try {
    return parseEngineAddress(setting).text;
  } catch (error) {
    throw new ResponseError(LSPErrorCodes.RequestFailed, `acmp.engine.url: ${messageOf(error)}`);
  }
}

export class DurableRuns {
  /** The engine followed now (the window's `acmp.engine.url`). */
  private client: EngineClient | undefined;
  /** The runs of each engine followed already, or listed only, by ingress URL: none is followed twice. */
  private readonly seen = new Map<string, Set<string>>();
  /** Runs whose end the client knows: never followed. */
  private known: ReadonlySet<string> = new Set();
  /** False until the first listing of the engine: then only its newest runs are followed. */
  private primed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The failure last shown: the same one is not shown again until the engine answered. */
  private shownFailure: string | undefined;

  constructor(
    private readonly context: FeatureContext,
    private readonly sink: RunEventSink,
  ) {}

  /** `acmp/durableRuns`: the engine's runs, oldest first; from now on the server follows them. */
  async list(params: DurableRunsParams | undefined): Promise<DurableRunsResult> {
    this.known = new Set(Array.isArray(params?.known) ? params.known : []);
    clearTimeout(this.timer);
    let client: EngineClient | undefined;
    try {
      client = await this.currentClient();
      if (client === undefined) return { engine: undefined, runs: [] };
      const entries = await this.poll(client);
      const runs = await Promise.all(entries.map((entry) => this.entryOf(client!, entry)));
      return { engine: client.engine, runs };
    } catch (error) {
      return { engine: client?.engine, runs: [], error: this.failed(error) };
    } finally {
      // Without an engine nothing is polled until the client asks again (it does when the setting changes).
      if (this.client !== undefined) this.schedule();
    }
  }

  /** Submits a run of `analysis` to the engine `url` names; its events go to `options.onEvent`. */
  async start(url: string, analysis: DagAnalysis, options: DurableRunOptions & { runId: string }): Promise<DagRun> {
    const client = this.client?.engine === url ? this.client : new EngineClient(url);
    // This run's events reach the client through its own request: the index poll must not follow it a second time.
    this.seenOn(url).add(options.runId);
    try {
      return await startDurableRun(client, analysis, options);
    } catch (error) {
      // An engine that does not answer, or answers an error, is the user's to fix: no internal error with its stack.
      throw new ResponseError(LSPErrorCodes.RequestFailed, messageOf(error));
    }
  }

  /** Cancels a run of the followed engine, or one of its tasks; false when the engine has no such running run. */
  async cancel(runId: string, task: string | undefined, reason?: string): Promise<boolean> {
    const client = this.client;
    if (client === undefined || !this.seenOn(client.engine).has(runId)) return false;
    reason ??= task === undefined ? 'the run was cancelled' : 'cancelled by the user';
    const at = new Date().toISOString();
    try {
      return (await client.control(runId, { ...(task === undefined ? {} : { task }), reason, at })) === 'sent';
    } catch (error) {
      throw new ResponseError(LSPErrorCodes.RequestFailed, messageOf(error));
    }
  }

  private seenOn(engine: string): Set<string> {
    let seen = this.seen.get(engine);
    if (seen === undefined) this.seen.set(engine, (seen = new Set()));
    return seen;
  }

  /** The engine of the window's setting; the followers of the last one stop. */
  private async currentClient(): Promise<EngineClient | undefined> {
    const settings = await this.context.connection.workspace
      .getConfiguration({ section: 'acmp' })
      .then(normalizeSettings, () => normalizeSettings({}));
    let url: string | undefined;
    try {
      url = engineUrlOf(settings.engine.url);
    } catch (error) {
      this.client = undefined;
      throw error;
    }
    if (url !== this.client?.engine) {
      this.client = url === undefined ? undefined : new EngineClient(url);
      this.primed = false;
      this.shownFailure = undefined;
    }
    return this.client;
  }

  /** Lists the engine's runs and follows those not seen yet (at first, only the newest). */
  private async poll(client: EngineClient): Promise<RunIndexEntry[]> {
    const entries = (await client.list()).sort((a, b) => a.submitted_at.localeCompare(b.submitted_at));
    this.shownFailure = undefined;
    const seen = this.seenOn(client.engine);
    const fresh = entries.filter((entry) => !seen.has(entry.run_id));
    const followed = this.primed ? fresh : fresh.slice(-MAX_DURABLE_RUNS_REPLAYED);
    this.primed = true;
    for (const entry of fresh) seen.add(entry.run_id);
    for (const entry of followed) if (!this.known.has(entry.run_id)) void this.follow(client, entry);
    return entries;
  }

  private async follow(client: EngineClient, entry: RunIndexEntry): Promise<void> {
    try {
      const uri = await this.uriOf(client, entry);
      await followRun(client, entry.run_id, this.sink(uri, client.engine), () => this.client !== client);
    } catch (error) {
      // Followed again from the start of its log once the engine answers (the client replaces what it had).
      this.seenOn(client.engine).delete(entry.run_id);
      this.failed(error);
    }
  }

  /** The workspace's DAG file of the run's dag_id (its inline states, Reveal Task), else the run's place on the engine. */
  private async uriOf(client: EngineClient, entry: RunIndexEntry): Promise<string> {
    const files = await this.context.workspace.files();
    return (
      files.find((file) => file.dagId === entry.dag_id)?.uri ??
      `${client.engine}/runs/${encodeURIComponent(entry.run_id)}`
    );
  }

  private async entryOf(client: EngineClient, entry: RunIndexEntry): Promise<DurableRunEntry> {
    const { progress } = await client.events(entry.run_id, Number.MAX_SAFE_INTEGER);
    return {
      runId: entry.run_id,
      dagId: entry.dag_id,
      submittedAt: entry.submitted_at,
      durable: true,
      uri: await this.uriOf(client, entry),
      status: progress?.status ?? 'submitted',
      done: progress?.done ?? 0,
      total: progress?.total ?? 0,
      costCu: progress?.cost_cu ?? 0,
    };
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), DURABLE_POLL_MS);
    // The poll must not keep a server alive that its client asked to exit.
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      const client = await this.currentClient();
      if (client !== undefined) await this.poll(client);
    } catch (error) {
      this.failed(error);
    }
    if (this.client !== undefined) this.schedule();
  }

  /** Shows a failure once (a warning, and a line in the log) until the engine answers again; returns its message. */
  private failed(error: unknown): string {
    const message = messageOf(error);
    if (message !== this.shownFailure) {
      this.shownFailure = message;
      this.context.connection.console.warn(`durable runs: ${message}`);
      // A notification, not a request: the message needs no answer, and a client may not take requests.
      void this.context.connection.sendNotification(ShowMessageNotification.type, {
        type: MessageType.Warning,
        message: `ACMP durable runs: ${message}`,
      });
    }
    return message;
  }
}
