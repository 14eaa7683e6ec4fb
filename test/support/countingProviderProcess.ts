// A provider as its own process, for the durable-run crash tests: ACMP over MCP Streamable HTTP (run/builtin/mcpServer.ts) with three
// capabilities, `echo` (answers its input at once), `hold` (answers its input once released, or -33004 on
// acmp/cancel) and `deal` (answers its input at once, but the answer to the accept of its offer waits for a release).
// It counts the invokes it receives and the executions it performs by wire task id, executing a task id once however
// often it is invoked (Layer 1 §3.1.1), and outlives the workers, so its counts see across their crashes. It
// negotiates (Layer 6) at fixed prices (PRICES_CU, charged as quoted), with offers valid for a minute so that none
// expires while a worker restarts, and counts by offer id the offers it made, the accepts it received and those it
// granted (an offer is granted once; a repeat is -34003). A control server on another port: GET /counts,
// POST /release (the tasks and accepts held now answer), GET /wait?table=<a table of Counts>&count=N (answers once N
// distinct ids are in that table). Prints `{"mcp": URL, "control": URL}` on stdout once listening.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveHttp } from '../../server/src/run/builtin/mcpServer';
import {
  ACMP_ERRORS,
  ACMP_VERSION,
  type AcmpCapability,
  AcmpError,
  type AcceptParams,
  type AcceptResult,
  type CancelParams,
  type InvokeParams,
  type InvokeResult,
  METHODS,
  type Offer,
  type OfferRequestParams,
} from '../../server/src/protocol/acmpMessages';

/** What a task of each capability costs here, quoted and charged alike. */
export const PRICES_CU: Readonly<Record<string, number>> = { echo: 0.001, hold: 0.001, deal: 0.002 };
const OFFER_VALID_MS = 60_000;

const ACMP: AcmpCapability = {
  version: ACMP_VERSION,
  role: 'provider',
  accepts: [METHODS.invoke, METHODS.cancel, METHODS.offerRequest, METHODS.accept],
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
  /** Offers made, by offer id. */
  readonly offers: Record<string, number>;
  /** acmp/accept received, by offer id. */
  readonly accepts: Record<string, number>;
  /** Accepts granted, by offer id: more than one would bind one offer twice. */
  readonly accepted: Record<string, number>;
}

const counts: Counts = { invokes: {}, executions: {}, cancels: {}, offers: {}, accepts: {}, accepted: {} };
const offers = new Map<string, Offer>();
const heldAccepts: (() => void)[] = [];
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
    cost_cu: PRICES_CU[params.capability] ?? 0,
    tokens_used: 1,
  });
  if (params.capability === 'echo' || params.capability === 'deal') return answer();
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
  offerRequest(params: OfferRequestParams): Promise<Offer> {
    const price = PRICES_CU[params.capability];
    if (price === undefined) {
      return Promise.reject(new AcmpError(ACMP_ERRORS.capability_not_found, `no capability ${params.capability}`));
    }
    const offer: Offer = {
      offer_id: `offer-${offers.size + 1}`,
      capability: params.capability,
      price_cu: price,
      valid_until_ms: Date.now() + OFFER_VALID_MS,
    };
    offers.set(offer.offer_id, offer);
    bump('offers', offer.offer_id);
    return Promise.resolve(offer);
  },
  async accept(params: AcceptParams): Promise<AcceptResult> {
    const offer = offers.get(params.offer_id);
    bump('accepts', params.offer_id);
    if (offer === undefined) throw new AcmpError(ACMP_ERRORS.offer_not_found, 'Offer not found');
    if (counts.accepted[offer.offer_id] !== undefined) {
      throw new AcmpError(ACMP_ERRORS.already_accepted, 'Offer already accepted');
    }
    if (Date.now() > offer.valid_until_ms) throw new AcmpError(ACMP_ERRORS.offer_expired, 'Offer expired');
    bump('accepted', offer.offer_id);
    if (offer.capability === 'deal') await new Promise<void>((resolve) => heldAccepts.push(resolve));
    return { offer_id: offer.offer_id, price_cu: offer.price_cu };
  },
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
      [...heldUntilRelease.splice(0), ...heldAccepts.splice(0)].forEach((release) => release());
      return reply({ released: true });
    }
    const table = url.searchParams.get('table');
    if (url.pathname === '/wait' && table !== null && Object.hasOwn(counts, table)) {
      const count = Number(url.searchParams.get('count') ?? '1');
      const name = table as keyof Counts;
      const answer = () => reply({ [name]: Object.keys(counts[name]).length });
      if (Object.keys(counts[name]).length >= count) return answer();
      waiters.push({ table: name, count, answer });
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
