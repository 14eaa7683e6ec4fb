// Scripted in-process providers for the executor's tests: a test writes each capability's behaviour (answer when a
// promise resolves, fail with a code, stream chunks in any order, send heartbeats, never answer, ...); the provider
// honours idempotency by task_id, counts executions, can drop answers or refuse connections N times, and records
// every message it receives; it negotiates (Layer 6) when given a Negotiation, else answers -32601 as a provider that
// does not. Also a recorder of run events to wait on.
import {
  type AcceptParams,
  type AcceptResult,
  ACMP_ERRORS,
  ACMP_VERSION,
  type AcmpCapability,
  AcmpError,
  type CancelParams,
  type ChunkParams,
  type InvokeParams,
  type InvokeResult,
  METHOD_NOT_FOUND,
  METHODS,
  type Offer,
  type OfferRequestParams,
  TransportError,
} from '../../server/src/protocol/acmpMessages';
import type { TaskOutput, RunEvent } from '../../server/src/protocol/report';
import type { Connector, InvokeHandlers, ProviderConnection } from '../../server/src/run/types';

export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** Every optional feature of Layer 1 except heartbeats (a silent task would otherwise fail for liveness). */
export const FULL: AcmpCapability = {
  version: ACMP_VERSION,
  role: 'provider',
  accepts: [METHODS.invoke, METHODS.cancel, METHODS.inputChunk],
  emits: [METHODS.streamChunk],
  features: { output_streaming: true, input_streaming: true },
};

/** The methods a provider that negotiates advertises (Layer 6). */
export const QUOTES = [METHODS.offerRequest, METHODS.accept];

/** Invoke only: no cancel, no streaming, no heartbeats. */
export const PLAIN: AcmpCapability = {
  version: ACMP_VERSION,
  accepts: [METHODS.invoke],
  emits: [],
  features: {},
};

export const heartbeating = (intervalMs: number): AcmpCapability => ({
  ...FULL,
  emits: [...FULL.emits, METHODS.heartbeat],
  features: { ...FULL.features, heartbeat_interval_ms: intervalMs },
});

/** What a behaviour sees of its invoke and can do with it. */
export interface ScriptedCall {
  readonly params: InvokeParams;
  /** Sends an `acmp/streamChunk` to the latest invoke of this task_id. */
  chunk(seq: number, chunk: TaskOutput, final?: boolean): void;
  heartbeat(progress?: number): void;
  /** The `acmp/inputChunk`s in the order they arrived, once the final one came. */
  readonly input: Promise<readonly ChunkParams[]>;
  /** Resolves when `acmp/cancel` for this task_id arrives. */
  readonly cancelled: Promise<CancelParams>;
}

export type Behaviour = (call: ScriptedCall) => InvokeResult | Promise<InvokeResult>;

export function answer(call: ScriptedCall, output: TaskOutput, extra: Partial<InvokeResult> = {}): InvokeResult {
  return { task_id: call.params.task_id, output, tokens_used: 1, cost_cu: 0.001, ...extra };
}

/** Answers with its input. */
export const echo: Behaviour = (call) => answer(call, call.params.input!);

/** Answers only an `acmp/cancel` (with -33004), so never when none comes. */
export const untilCancelled: Behaviour = async (call) => {
  const cancel = await call.cancelled;
  throw new AcmpError(ACMP_ERRORS.cancelled, `cancelled: ${cancel.reason ?? ''}`);
};

export const refuse =
  (code: number, message: string): Behaviour =>
  () => {
    throw new AcmpError(code, message, { detail: message });
  };

/** How a scripted provider answers `acmp/offerRequest` and `acmp/accept` (throw AcmpError to refuse). */
export interface Negotiation {
  offerRequest(params: OfferRequestParams): Offer | Promise<Offer>;
  accept(params: AcceptParams): AcceptResult | Promise<AcceptResult>;
}

/**
 * A Negotiation that quotes fixed prices by capability, as Layer 6 says: -33002 for a capability without a price,
 * -33001 above `max_price_cu`, offers valid for `validMs` (or the buyer's shorter `offer_valid_ms`) on the clock
 * `now`, single-use (-34001 unknown, -34002 expired, -34003 accepted already). `accepted` lists the accepted ids.
 */
export function quoting(
  prices: Readonly<Record<string, number>>,
  { validMs = 5_000, latencyMs, now = Date.now }: { validMs?: number; latencyMs?: number; now?: () => number } = {},
): Negotiation & { readonly accepted: string[] } {
  const offers = new Map<string, Offer>();
  const accepted: string[] = [];
  return {
    accepted,
    offerRequest(params) {
      const price = prices[params.capability];
      if (price === undefined) throw new AcmpError(ACMP_ERRORS.capability_not_found, `no ${params.capability}`);
      if (params.max_price_cu !== undefined && price > params.max_price_cu) {
        throw new AcmpError(ACMP_ERRORS.budget_exceeded, 'Budget exceeded', { min_price_cu: price });
      }
      const offer: Offer = {
        offer_id: `offer_${offers.size + 1}`,
        capability: params.capability,
        price_cu: price,
        valid_until_ms: now() + Math.min(validMs, params.offer_valid_ms ?? validMs),
        ...(latencyMs !== undefined && { latency_sla_ms: latencyMs }),
      };
      offers.set(offer.offer_id, offer);
      return offer;
    },
    accept({ offer_id: offerId, escrow_id: escrowId }) {
      const offer = offers.get(offerId);
      if (offer === undefined) throw new AcmpError(ACMP_ERRORS.offer_not_found, 'Offer not found');
      if (accepted.includes(offerId)) throw new AcmpError(ACMP_ERRORS.already_accepted, 'Offer already accepted');
      if (now() > offer.valid_until_ms) throw new AcmpError(ACMP_ERRORS.offer_expired, 'Offer expired');
      accepted.push(offerId);
      return { offer_id: offerId, ...(escrowId !== undefined && { escrow_id: escrowId }), price_cu: offer.price_cu };
    },
  };
}

export interface Received {
  readonly method: string;
  readonly params: { readonly task_id: string } & Record<string, unknown>;
  /** Which of the provider's connections it came on, from 1. */
  readonly connection: number;
}

/** A task_id as the provider knows it: one execution however many invokes name it. */
class ProviderTask {
  handlers: InvokeHandlers | undefined;
  result: Promise<InvokeResult> | undefined;
  readonly inputChunks: ChunkParams[] = [];
  readonly input = deferred<readonly ChunkParams[]>();
  readonly cancelled = deferred<CancelParams>();
}

export class ScriptedProvider {
  readonly received: Received[] = [];
  /** Executions by task_id: more than one would be a double execution. */
  readonly executions = new Map<string, number>();
  connectionsOpened = 0;
  connectionsClosed = 0;
  /** The next N invokes execute, but their answers are lost with the connection (a TransportError). */
  dropAnswers = 0;
  /** The next N connection attempts fail. */
  failConnects = 0;
  /** Behaviours running now, and the most at once. */
  active = 0;
  peakActive = 0;
  private readonly tasks = new Map<string, ProviderTask>();
  private readonly waiters: { match: (message: Received) => boolean; resolve: (message: Received) => void }[] = [];

  /** The `acmp/offerRequest`s and `acmp/accept`s received, in order. */
  readonly offerRequests: OfferRequestParams[] = [];
  readonly accepts: AcceptParams[] = [];

  /**
   * The `acmp` capability it advertises: FULL unless `options.acmp` is given (undefined: none at all), with the quote
   * methods when it negotiates.
   */
  readonly acmp: AcmpCapability | undefined;
  private readonly negotiation: Negotiation | undefined;

  constructor(
    readonly id: string,
    private readonly behaviours: Readonly<Record<string, Behaviour>>,
    options: { readonly acmp?: AcmpCapability | undefined; readonly negotiation?: Negotiation } = {},
  ) {
    const acmp = 'acmp' in options ? options.acmp : FULL;
    this.acmp =
      acmp === undefined || options.negotiation === undefined
        ? acmp
        : { ...acmp, accepts: [...acmp.accepts, ...QUOTES] };
    this.negotiation = options.negotiation;
  }

  /** The params of every message of `method` received, in order. */
  messages(method: string): Received['params'][] {
    return this.received.filter((message) => message.method === method).map((message) => message.params);
  }

  invokes(): InvokeParams[] {
    return this.messages(METHODS.invoke) as unknown as InvokeParams[];
  }

  /** The first message of `method` (received already or to come) that `match` accepts. */
  whenReceived(method: string, match: (params: Received['params']) => boolean = () => true): Promise<Received> {
    const accept = (message: Received): boolean => message.method === method && match(message.params);
    const found = this.received.find(accept);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ match: accept, resolve }));
  }

  readonly connect = (): Promise<ProviderConnection> => {
    if (this.failConnects > 0) {
      this.failConnects--;
      return Promise.reject(new TransportError(`${this.id}: connection refused`));
    }
    const number = ++this.connectionsOpened;
    const closed = deferred();
    let open = true;
    const record = (method: string, params: Received['params']): void => {
      const message = { method, params, connection: number };
      this.received.push(message);
      for (const waiter of this.waiters.filter((candidate) => candidate.match(message))) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    };
    const lost = closed.promise.then(() => {
      throw new TransportError(`${this.id}: connection closed`);
    });
    lost.catch(() => undefined);
    /** A negotiation message's answer, raced against the connection's end; -32601 from a provider without one. */
    const negotiate = <T>(answer: (negotiation: Negotiation) => T | Promise<T>): Promise<T> => {
      if (!open) return Promise.reject(new TransportError(`${this.id}: connection closed`));
      const negotiation = this.negotiation;
      const result =
        negotiation === undefined
          ? Promise.reject(new AcmpError(METHOD_NOT_FOUND, 'Method not found'))
          : (async () => answer(negotiation))();
      return Promise.race([result, lost]);
    };
    return Promise.resolve({
      providerId: this.id,
      acmp: this.acmp,
      invoke: (params, handlers) => {
        record(METHODS.invoke, { ...params });
        if (!open) return Promise.reject(new TransportError(`${this.id}: connection closed`));
        const result = this.execute(params, handlers);
        if (this.dropAnswers > 0) {
          this.dropAnswers--;
          return Promise.reject(new TransportError(`${this.id}: connection lost`));
        }
        return Promise.race([result, lost]);
      },
      inputChunk: (params) => {
        record(METHODS.inputChunk, { ...params });
        const task = this.task(params.task_id);
        task.inputChunks.push(params);
        if (params.final) task.input.resolve(task.inputChunks);
        return Promise.resolve();
      },
      offerRequest: (params) => {
        this.offerRequests.push({ ...params });
        return negotiate((negotiation) => negotiation.offerRequest(params));
      },
      accept: (params) => {
        this.accepts.push({ ...params });
        return negotiate((negotiation) => negotiation.accept(params));
      },
      cancel: (params) => {
        record(METHODS.cancel, { ...params });
        this.task(params.task_id).cancelled.resolve(params);
        return Promise.resolve();
      },
      close: () => {
        if (open) {
          open = false;
          this.connectionsClosed++;
          closed.resolve();
        }
        return Promise.resolve();
      },
    });
  };

  private task(taskId: string): ProviderTask {
    let task = this.tasks.get(taskId);
    if (task === undefined) {
      task = new ProviderTask();
      this.tasks.set(taskId, task);
    }
    return task;
  }

  /** Runs the behaviour once per task_id (Layer 1 §3.1.1); a repeated invoke gets the same answer. */
  private execute(params: InvokeParams, handlers: InvokeHandlers): Promise<InvokeResult> {
    const task = this.task(params.task_id);
    task.handlers = handlers;
    if (task.result !== undefined) return task.result;
    this.executions.set(params.task_id, (this.executions.get(params.task_id) ?? 0) + 1);
    const behaviour = this.behaviours[params.capability];
    const call: ScriptedCall = {
      params,
      chunk: (seq, chunk, final = false) => task.handlers?.onChunk({ task_id: params.task_id, seq, chunk, final }),
      heartbeat: (progress) =>
        task.handlers?.onHeartbeat({ task_id: params.task_id, ...(progress === undefined ? {} : { progress }) }),
      input: task.input.promise,
      cancelled: task.cancelled.promise,
    };
    task.result = (async () => {
      if (behaviour === undefined) {
        throw new AcmpError(ACMP_ERRORS.capability_not_found, `${this.id} has no ${params.capability}`);
      }
      this.active++;
      this.peakActive = Math.max(this.peakActive, this.active);
      try {
        return await behaviour(call);
      } finally {
        this.active--;
      }
    })();
    task.result.catch(() => undefined);
    return task.result;
  }
}

/** A Connector over scripted providers, found by the id of the providers-file entry; records what it was asked. */
export function scriptedConnector(...providers: ScriptedProvider[]): Connector & { readonly asked: string[] } {
  const asked: string[] = [];
  const connect = (config: { id: string }): Promise<ProviderConnection> => {
    asked.push(config.id);
    const provider = providers.find((candidate) => candidate.id === config.id);
    return provider === undefined
      ? Promise.reject(new TransportError(`no scripted provider "${config.id}"`))
      : provider.connect();
  };
  return Object.assign(connect, { asked });
}

/** Records a run's events; a test waits on the one it needs. */
export class EventLog {
  readonly events: RunEvent[] = [];
  private readonly waiters: { match: (event: RunEvent) => boolean; resolve: (event: RunEvent) => void }[] = [];

  readonly onEvent = (event: RunEvent): void => {
    this.events.push(event);
    for (const waiter of this.waiters.filter((candidate) => candidate.match(event))) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(event);
    }
  };

  /** The first event (past or to come) that `match` accepts. */
  waitFor(match: (event: RunEvent) => boolean): Promise<RunEvent> {
    const found = this.events.find(match);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** When `taskId` reaches `state`. */
  whenState(taskId: string, state: string): Promise<RunEvent> {
    return this.waitFor((event) => event.type === 'task-state' && event.task_id === taskId && event.state === state);
  }

  /** The task ids in the order their `state` events came. */
  order(state: string): string[] {
    return this.events.flatMap((event) =>
      event.type === 'task-state' && event.state === state ? [event.task_id] : [],
    );
  }
}
