// The client side of durable runs: plain HTTP calls to the Restate engine's ingress (no SDK: the CLI's commands that
// submit, follow or cancel a run load none of it), with one clear error for an engine that does not answer.
import {
  type ControlAnswer,
  type ControlRequest,
  type EventsPage,
  INDEX_KEY,
  OUTPUT_SERVICE,
  type OutputPiece,
  RUN_CONTROL,
  RUN_INDEX,
  RUN_WORKFLOW,
  type RunIndexEntry,
  type RunRequest,
} from './protocol';
import type { RunEvent, RunReport } from '../types';
import type { JournaledOutput } from './outputStore';

/** The engine did not answer: exit code 3, with its URL and how to start one. */
export class EngineUnreachable extends Error {}
/** The engine answered with an error, most often because no worker registered the run's services: exit code 3. */
export class EngineRefused extends Error {}
/** No run of that id is known to the engine: exit code 4. */
export class UnknownRun extends Error {}

const unreachable = (engine: string): EngineUnreachable =>
  new EngineUnreachable(
    `cannot reach the Restate engine at ${engine}: start one with \`acmp-dag engine start\` (it prints its ingress URL), or pass the ingress URL of a running one`,
  );

/** POSTs `body` to an ingress path and returns the answer's JSON. */
async function call<T>(engine: string, path: string, body: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${engine}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body ?? null),
    });
  } catch {
    throw unreachable(engine);
  }
  const text = await response.text();
  if (!response.ok) {
    if (response.status === 404 && text.includes('not found')) {
      throw new EngineRefused(
        `no worker is registered with the engine at ${engine}: start one with \`acmp-dag worker --engine ${engine}\``,
      );
    }
    throw new EngineRefused(`the engine at ${engine} answered ${response.status} to ${path}: ${text.slice(0, 500)}`);
  }
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

export class EngineClient {
  constructor(readonly engine: string) {}

  /** Records the run in the index, then starts its workflow; the answer comes before the run ends. */
  async submit(runId: string, dagId: string, request: RunRequest): Promise<void> {
    const entry: RunIndexEntry = { run_id: runId, dag_id: dagId, submitted_at: new Date().toISOString() };
    await call(this.engine, `${RUN_INDEX}/${INDEX_KEY}/add`, entry);
    await call(this.engine, `${RUN_WORKFLOW}/${encodeURIComponent(runId)}/run/send`, request);
  }

  /** The run's index entry; UnknownRun when the engine has none. */
  async known(runId: string): Promise<RunIndexEntry> {
    const entry = await call<RunIndexEntry | null>(this.engine, `${RUN_INDEX}/${INDEX_KEY}/get`, runId);
    if (entry === null || entry === undefined)
      throw new UnknownRun(
        `the engine at ${this.engine} knows no run "${runId}" (acmp-dag runs --engine ${this.engine} lists them)`,
      );
    return entry;
  }

  list(): Promise<RunIndexEntry[]> {
    return call<RunIndexEntry[]>(this.engine, `${RUN_INDEX}/${INDEX_KEY}/list`, null);
  }

  events(runId: string, from: number): Promise<EventsPage> {
    return call<EventsPage>(this.engine, `${RUN_WORKFLOW}/${encodeURIComponent(runId)}/events`, { from });
  }

  control(runId: string, request: ControlRequest): Promise<ControlAnswer> {
    return call<ControlAnswer>(this.engine, `${RUN_CONTROL}/${encodeURIComponent(runId)}/request`, request);
  }

  /** The report the run's workflow returned (its large outputs as references); waits for the run's end. */
  async report(runId: string): Promise<RunReport> {
    let response: Response;
    try {
      response = await fetch(`${this.engine}/restate/workflow/${RUN_WORKFLOW}/${encodeURIComponent(runId)}/attach`);
    } catch {
      throw unreachable(this.engine);
    }
    const text = await response.text();
    if (!response.ok) throw new Error(`the run "${runId}" has no report: ${response.status} ${text.slice(0, 500)}`);
    return JSON.parse(text) as RunReport;
  }

  /** A piece of a stored output's JSON text, from the character `from` on. */
  outputPiece(output: JournaledOutput, from: number): Promise<OutputPiece> {
    return call<OutputPiece>(this.engine, `${OUTPUT_SERVICE}/read`, { output, from });
  }
}

/** How often a follower asks for new events. */
const POLL_MS = 200;

/**
 * Pages through the run's event log from its start, handing each event to `onEvent`, until the run ended (its report)
 * or `stop` says to (undefined). The engine has no push to clients: an empty page waits a moment before the next.
 * The log's run-finished has the report without its tasks and result (the engine keeps its state small): the report
 * the run's workflow returned goes in its place, as an in-memory run's run-finished has it, and is returned.
 */
export async function followRun(
  client: EngineClient,
  runId: string,
  onEvent: (event: RunEvent) => void,
  stop: () => boolean = () => false,
): Promise<RunReport | undefined> {
  for (let from = 0; ;) {
    const page = await client.events(runId, from);
    for (const event of page.events) {
      if (event.type === 'run-finished') {
        const report = await client.report(runId);
        onEvent({ ...event, report });
        return report;
      }
      onEvent(event);
    }
    from = page.next;
    if (page.progress !== undefined && page.progress.status !== 'running' && from >= page.progress.batches) {
      return client.report(runId);
    }
    if (stop()) return undefined;
    if (page.events.length === 0) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
