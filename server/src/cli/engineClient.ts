// The CLI's side of durable runs: plain HTTP calls to the Restate engine's ingress (no SDK: `run` without --engine,
// and these commands too, load none of it), with one clear error for an engine that does not answer.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
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
} from '../run/durable/protocol';
import type { RunReport } from '../run/types';
import type { JournaledOutput } from '../run/durable/outputStore';
import { DEFAULT_ENGINE_DIR } from './engine';
import { UsageError } from './usage';

/** The engine did not answer: exit code 3, with its URL and how to start one. */
export class EngineUnreachable extends Error {}
/** No run of that id is known to the engine: exit code 4. */
export class UnknownRun extends Error {}

/** The --engine URL (the ingress), or ACMP_ENGINE_URL; a usage error without either. */
export function engineOption(value: string | undefined): string {
  const url = value ?? process.env.ACMP_ENGINE_URL;
  if (url === undefined || url === '') {
    throw new UsageError(
      'this command needs --engine URL (the Restate ingress, e.g. http://127.0.0.1:8080) or ACMP_ENGINE_URL',
    );
  }
  try {
    return new URL(url).toString().replace(/\/$/, '');
  } catch {
    throw new UsageError(`--engine needs a URL, not "${url}"`);
  }
}

/** The admin URL of the engine `engine start` recorded with this ingress, else the engine's host on port 9070. */
export function adminUrlFor(ingress: string): string {
  const record = join(resolve(DEFAULT_ENGINE_DIR), 'engine.json');
  if (existsSync(record)) {
    try {
      const recorded = JSON.parse(readFileSync(record, 'utf8')) as { ingress?: string; admin?: string };
      if (recorded.ingress === ingress && typeof recorded.admin === 'string') return recorded.admin;
    } catch {
      // An unreadable record names no admin URL.
    }
  }
  const url = new URL(ingress);
  url.port = '9070';
  return url.toString().replace(/\/$/, '');
}

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
    const hint =
      response.status === 404 ? ' (is a worker registered? start one with `acmp-dag worker --engine URL`)' : '';
    throw new Error(`the engine answered ${response.status} to ${path}${hint}: ${text.slice(0, 500)}`);
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
