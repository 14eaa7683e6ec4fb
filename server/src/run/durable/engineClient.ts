// The client side of durable runs: plain HTTP calls to the Restate engine's ingress (no SDK: the CLI's commands that
// submit, follow or cancel a run load none of it), with one clear error for an engine that does not answer.
import {
  type EngineAddress,
  EngineAnswerTooLarge,
  EngineUnreachable,
  engineRequest,
  parseEngineAddress,
} from './engineHttp';
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
} from '../../protocol/engineMessages';
import type { RunEvent, RunReport } from '../../protocol/report';
import type { JournaledOutput } from './outputStore';

/** The engine answered with an error, most often because no worker registered the run's services: exit code 3. */
export class EngineRefused extends Error {}
/** No run of that id is known to the engine: exit code 4. */
export class UnknownRun extends Error {}

/** An ingress request; EngineUnreachable with the address and how to start an engine when nothing answers. */
async function ask(address: EngineAddress, path: string, body?: unknown) {
  try {
    return await engineRequest(address, path, body === undefined ? {} : { body: JSON.stringify(body) });
  } catch (error) {
    if (error instanceof EngineAnswerTooLarge) throw new EngineRefused(error.message);
    if (!(error instanceof EngineUnreachable)) throw error;
    throw new EngineUnreachable(
      `cannot reach the Restate engine at ${address.text}: start one with \`acmp-dag engine start\` (it prints its ingress address), or pass the ingress address of a running one`,
    );
  }
}

/** POSTs `body` to an ingress path and returns the answer's JSON. */
async function call<T>(address: EngineAddress, path: string, body: unknown): Promise<T> {
  const { status, text } = await ask(address, path, body ?? null);
  const engine = address.text;
  if (status < 200 || status >= 300) {
    if (status === 404 && text.includes('not found')) {
      throw new EngineRefused(
        `no worker is registered with the engine at ${engine}: start one with \`acmp-dag worker --engine ${engine}\``,
      );
    }
    if (status === 401 || status === 403) {
      throw new EngineRefused(`the engine at ${engine} refused the request (${status}): check ACMP_ENGINE_TOKEN`);
    }
    throw new EngineRefused(`the engine at ${engine} answered ${status} to ${path}: ${text.slice(0, 500)}`);
  }
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

export class EngineClient {
  /** The engine's ingress, as the user gave it (normalized). */
  readonly engine: string;
  private readonly address: EngineAddress;

  /** EngineAddressError for an address that is not one. */
  constructor(engine: string) {
    this.address = parseEngineAddress(engine);
    this.engine = this.address.text;
  }

  /** Records the run in the index, then starts its workflow; the answer comes before the run ends. */
  async submit(runId: string, dagId: string, request: RunRequest): Promise<void> {
    const entry: RunIndexEntry = { run_id: runId, dag_id: dagId, submitted_at: new Date().toISOString() };
    await call(this.address, `${RUN_INDEX}/${INDEX_KEY}/add`, entry);
    await call(this.address, `${RUN_WORKFLOW}/${encodeURIComponent(runId)}/run/send`, request);
  }

  /** The run's index entry; UnknownRun when the engine has none. */
  async known(runId: string): Promise<RunIndexEntry> {
    const entry = await call<RunIndexEntry | null>(this.address, `${RUN_INDEX}/${INDEX_KEY}/get`, runId);
    if (entry === null || entry === undefined)
      throw new UnknownRun(
        `the engine at ${this.engine} knows no run "${runId}" (acmp-dag runs --engine ${this.engine} lists them)`,
      );
    return entry;
  }

  list(): Promise<RunIndexEntry[]> {
    return call<RunIndexEntry[]>(this.address, `${RUN_INDEX}/${INDEX_KEY}/list`, null);
  }

  events(runId: string, from: number): Promise<EventsPage> {
    return call<EventsPage>(this.address, `${RUN_WORKFLOW}/${encodeURIComponent(runId)}/events`, { from });
  }

  control(runId: string, request: ControlRequest): Promise<ControlAnswer> {
    return call<ControlAnswer>(this.address, `${RUN_CONTROL}/${encodeURIComponent(runId)}/request`, request);
  }

  /** The report the run's workflow returned (its large outputs as references); waits for the run's end. */
  async report(runId: string): Promise<RunReport> {
    const { status, text } = await ask(
      this.address,
      `restate/workflow/${RUN_WORKFLOW}/${encodeURIComponent(runId)}/attach`,
    );
    if (status < 200 || status >= 300)
      throw new Error(`the run "${runId}" has no report: ${status} ${text.slice(0, 500)}`);
    return JSON.parse(text) as RunReport;
  }

  /** A piece of a stored output's JSON text, from the character `from` on. */
  outputPiece(output: JournaledOutput, from: number): Promise<OutputPiece> {
    return call<OutputPiece>(this.address, `${OUTPUT_SERVICE}/read`, { output, from });
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
    checkPage(client, runId, from, page);
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

/**
 * A page must move the cursor on when it has events, never back, and not past the log's end: an engine that breaks
 * this would have a follower send the same events again and again.
 */
function checkPage(client: EngineClient, runId: string, from: number, page: EventsPage): void {
  const next = page.next;
  const valid =
    Array.isArray(page.events) &&
    Number.isInteger(next) &&
    next >= from &&
    (page.events.length === 0 || next > from) &&
    (page.progress === undefined || next <= page.progress.batches);
  if (!valid) {
    throw new EngineRefused(
      `the engine at ${client.engine} sent an event page of run "${runId}" that does not move forward (from ${from} to ${String(next)}): following stops`,
    );
  }
}
