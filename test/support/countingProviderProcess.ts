// A provider as its own process, for the durable-run crash tests: ACMP over MCP Streamable HTTP (run/builtin/mcpServer.ts) with two
// capabilities, `echo` (answers its input at once) and `hold` (answers its input once released, or -33004 on
// acmp/cancel). It counts the invokes it receives and the executions it performs by wire task id, executing a task
// id once however often it is invoked (Layer 1 §3.1.1), and outlives the workers, so its counts see across their
// crashes. A control server on another port: GET /counts, POST /release (the tasks held now answer), GET /wait?table=invokes|executions|cancels&count=N
// (answers once N distinct task ids are in that table). Prints `{"mcp": URL, "control": URL}` on stdout once listening.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveHttp } from '../../server/src/run/builtin/mcpServer';
import {
  ACMP_ERRORS,
  ACMP_VERSION,
  type AcmpCapability,
  AcmpError,
  type CancelParams,
  type InvokeParams,
  type InvokeResult,
  METHODS,
} from '../../server/src/protocol/acmpMessages';

const ACMP: AcmpCapability = {
  version: ACMP_VERSION,
  role: 'provider',
  accepts: [METHODS.invoke, METHODS.cancel],
  emits: [],
  features: {},
};

export interface Counts {
  /** Invokes received, by wire task id. */
  readonly invokes: Record<string, number>;
  /** Executions performed, by wire task id: more than one would be a double execution. */
  readonly executions: Record<string, number>;
  /** acmp/cancel received, by wire task id. */
  readonly cancels: Record<string, number>;
}

const counts: Counts = { invokes: {}, executions: {}, cancels: {} };
const results = new Map<string, Promise<InvokeResult>>();
const cancelled = new Map<string, (params: CancelParams) => void>();
const heldUntilRelease: (() => void)[] = [];
const waiters: { table: keyof Counts; count: number; answer: () => void }[] = [];

/** Counts `taskId` in `table`, and answers the waits for as many distinct ids in it. */
function bump(table: keyof Counts, taskId: string): void {
  counts[table][taskId] = (counts[table][taskId] ?? 0) + 1;
  const distinct = Object.keys(counts[table]).length;
  for (const waiter of waiters.filter((candidate) => candidate.table === table && candidate.count <= distinct)) {
    waiters.splice(waiters.indexOf(waiter), 1);
    waiter.answer();
  }
}

async function execute(params: InvokeParams): Promise<InvokeResult> {
  const answer = (): InvokeResult => ({
    task_id: params.task_id,
    output: params.input ?? { type: 'text', data: '' },
    cost_cu: 0.001,
    tokens_used: 1,
  });
  if (params.capability === 'echo') return answer();
  if (params.capability !== 'hold') {
    throw new AcmpError(ACMP_ERRORS.capability_not_found, `no capability ${params.capability}`);
  }
  const cancel = new Promise<CancelParams>((resolve) => cancelled.set(params.task_id, resolve));
  const release = new Promise<void>((resolve) => heldUntilRelease.push(resolve));
  const outcome = await Promise.race([release.then(() => undefined), cancel]);
  if (outcome !== undefined) throw new AcmpError(ACMP_ERRORS.cancelled, `cancelled: ${outcome.reason ?? ''}`);
  return answer();
}

const provider = {
  acmp: ACMP,
  invoke(params: InvokeParams): Promise<InvokeResult> {
    let result = results.get(params.task_id);
    if (result === undefined) {
      result = execute(params);
      results.set(params.task_id, result);
      bump('executions', params.task_id);
    }
    bump('invokes', params.task_id);
    return result;
  },
  inputChunk(): void {},
  cancel(params: CancelParams): void {
    bump('cancels', params.task_id);
    cancelled.get(params.task_id)?.(params);
  },
  close(): void {},
};

async function main(): Promise<void> {
  const mcp = await serveHttp(0, '127.0.0.1', { provider });
  const control = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const reply = (body: unknown) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/counts') return reply(counts);
    if (url.pathname === '/release') {
      heldUntilRelease.splice(0).forEach((release) => release());
      return reply({ released: true });
    }
    const table = url.searchParams.get('table');
    if (url.pathname === '/wait' && (table === 'invokes' || table === 'executions' || table === 'cancels')) {
      const count = Number(url.searchParams.get('count') ?? '1');
      const answer = () => reply({ [table]: Object.keys(counts[table]).length });
      if (Object.keys(counts[table]).length >= count) return answer();
      waiters.push({ table, count, answer });
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
  const controlPort = (control.address() as AddressInfo).port;
  process.stdout.write(JSON.stringify({ mcp: mcp.url, control: `http://127.0.0.1:${controlPort}` }) + '\n');
  process.once('SIGTERM', () => process.exit(0));
}

void main();
