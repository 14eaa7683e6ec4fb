// The built-in ACMP provider, independent of any transport: the capabilities of protocol/builtinCatalog.ts with
// prices, result-hash proofs, idempotency by task_id, output and input streaming and cancellation (Layer 1), and
// stateless quotes (Layer 6).
// connect.ts calls it in-process; mcpServer.ts puts it behind a real MCP server.
import Sentiment from 'sentiment';
import { assembleChunks } from '../chunks';
import { RESULT_HASH, resultHash } from '../proof';
import type { TaskOutput } from '../../protocol/report';
import {
  BUILTIN_CAPABILITIES,
  BUILTIN_CATALOG,
  type BuiltinCapabilityName,
  builtinCapability,
} from '../../protocol/builtinCatalog';
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
  METHODS,
  type Offer,
  type OfferRequestParams,
} from '../../protocol/acmpMessages';
import type { Building, InvokeHandlers } from '../types';
import { OfferBook } from './offers';

export const BUILTIN_PROVIDER_ID = 'agent:acmp-dag-builtin:local';

/**
 * What one invoke costs, in CU, at price factor 1: fixed per capability, so the minimum price is the price (Layer 1
 * §3.1), and the price it quotes (Layer 6).
 */
export const BUILTIN_PRICES_CU: Readonly<Record<BuiltinCapabilityName, number>> = Object.fromEntries(
  BUILTIN_CAPABILITIES.map((name) => [name, BUILTIN_CATALOG[name].priceCu]),
) as Record<BuiltinCapabilityName, number>;

/** The `acmp` capability the built-in provider advertises (Layer 1 §1); it sends no heartbeats. */
export const BUILTIN_ACMP: AcmpCapability = {
  version: ACMP_VERSION,
  role: 'provider',
  accepts: [METHODS.invoke, METHODS.cancel, METHODS.inputChunk, METHODS.offerRequest, METHODS.accept],
  emits: [METHODS.streamChunk],
  features: { output_streaming: true, input_streaming: true },
};

/** JSON-RPC "Invalid params": Layer 1 has no code of its own for an input a capability cannot read. */
export const INVALID_PARAMS = -32602;

/** Executions remembered after they settle, so that a retry with the same task_id replays instead of running. */
const REMEMBERED_EXECUTIONS = 10_000;
/** Tasks whose input chunks or cancel may wait for their invoke (over HTTP they can overtake it). */
const EARLY_TASKS = 1_000;
const DEFAULT_TIMEOUT_MS = 30_000;
/** How long an offer holds by default (the reference SDK's window); a buyer may ask for less, never more. */
export const DEFAULT_OFFER_VALID_MS = 5_000;

// Made on first use: the segmenter loads ICU's data (some 15 ms), which a run of echo tasks never needs.
let sentences: Intl.Segmenter | undefined;
let sentiment: Sentiment | undefined;

const invalidInput = (capability: string, detail: string) =>
  new AcmpError(INVALID_PARAMS, `${capability}: ${detail}`, { capability });

/** The text of an input: its data when a string, or the data of a `{type, data}` it carries. */
function textOf(input: TaskOutput, capability: string): string {
  if (typeof input.data === 'string') return input.data;
  const inner = (input.data as { data?: unknown } | null | undefined)?.data;
  if (typeof inner === 'string') return inner;
  throw invalidInput(
    capability,
    `expects a text (a string, or a {type, data} whose data is a string), got ${input.type}`,
  );
}

/** The sentences of a text with their trailing space: joined, they give the text back. */
const sentencesOf = (text: string): string[] =>
  Array.from(
    (sentences ??= new Intl.Segmenter('en', { granularity: 'sentence' })).segment(text),
    (part) => part.segment,
  );

const labelOf = (score: number) => (score > 0 ? 'positive' : score < 0 ? 'negative' : 'neutral');

const compute: Readonly<Record<BuiltinCapabilityName, (input: TaskOutput) => TaskOutput>> = {
  'text-split': (input) => {
    const chunks = sentencesOf(textOf(input, 'text-split'))
      .map((sentence) => sentence.trim())
      .filter((sentence) => sentence.length > 0);
    return { type: 'json', data: { chunks, count: chunks.length } };
  },
  'sentiment-analysis': (input) => {
    const { score, comparative, positive, negative } = (sentiment ??= new Sentiment()).analyze(
      textOf(input, 'sentiment-analysis'),
    );
    return { type: 'json', data: { label: labelOf(score), score, comparative, positive, negative } };
  },
  'result-aggregation': (input) => {
    if (!Array.isArray(input.data)) throw invalidInput('result-aggregation', 'expects json data: an array of results');
    const results = input.data.map((element: unknown, index) => {
      // An element is a whole sentiment output (`from_tasks` without `field`) or its data.
      const value = (element as { data?: unknown } | null)?.data ?? element;
      const { score, comparative } = (value ?? {}) as { score?: unknown; comparative?: unknown };
      if (typeof score !== 'number' || typeof comparative !== 'number') {
        throw invalidInput('result-aggregation', `element ${index} is not a sentiment result (numeric score)`);
      }
      return { label: labelOf(score), score, comparative };
    });
    const score = results.reduce((sum, result) => sum + result.score, 0);
    const comparative =
      results.length === 0 ? 0 : results.reduce((sum, result) => sum + result.comparative, 0) / results.length;
    return { type: 'json', data: { label: labelOf(score), score, comparative, count: results.length, results } };
  },
  echo: (input) => ({ type: input.type, data: input.data }),
};

/** Outputs that can stream: pieces that assembleChunks joins back into the output (strings and arrays). */
const streamable = (data: unknown) => typeof data === 'string' || Array.isArray(data);

/** The chunks an output streams as: a text sentence by sentence, an array element by element; never none. */
function streamPieces({ type, data }: TaskOutput): TaskOutput[] {
  const parts = typeof data === 'string' ? sentencesOf(data) : (data as unknown[]).map((element) => [element]);
  return parts.length > 0 ? parts.map((part) => ({ type, data: part })) : [{ type, data }];
}

const WORD = /[\p{L}\p{N}]+/gu;

/** `tokens_used`: the words (letter and digit runs) of the input's text, or of its JSON. */
function wordsOf(input: TaskOutput): number {
  const text = typeof input.data === 'string' ? input.data : (JSON.stringify(input.data) ?? '');
  // Counted by `test`, which moves `lastIndex` on (and back to 0 at the end) without making the matches.
  let words = 0;
  while (WORD.test(text)) words++;
  return words;
}

/** Takes a rejection that no one else may await (one function for all of them, not a closure each). */
const IGNORED = (): void => undefined;

/** One execution of a task_id. It settles once; a repeated invoke joins it (Layer 1 §3.1.1). */
class Execution {
  readonly result: Promise<InvokeResult>;
  private resolve!: (result: InvokeResult) => void;
  private reject!: (error: Error) => void;
  private settled = false;
  /** The complete output, kept for a repeated invoke when the first one streamed it. */
  private output: TaskOutput | undefined;
  /** Input received so far, in seq order, and chunks that came ahead of their turn. */
  private inputParts: TaskOutput[] | undefined;
  private ahead: Map<number, ChunkParams> | undefined;
  private nextInputSeq = 0;
  private nextOutputSeq = 0;
  private deadline: NodeJS.Timeout | undefined;

  constructor(
    private readonly params: InvokeParams,
    private readonly capability: BuiltinCapabilityName,
    private readonly priceCu: number,
    private handlers: InvokeHandlers | undefined,
    private readonly onSettled: (taskId: string) => void,
  ) {
    this.result = new Promise<InvokeResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // The invoker awaits the same promise; this only keeps a rejection that no one awaits from going unhandled.
    this.result.catch(IGNORED);
  }

  /** Echo with both streams on passes each input chunk on as an output chunk as it arrives. */
  private get forwarding(): boolean {
    return this.params.input_stream === true && this.params.stream === true;
  }

  start(): void {
    const { input, input_stream: inputStream, timeout_ms: timeoutMs = DEFAULT_TIMEOUT_MS } = this.params;
    if (inputStream !== true) return this.complete(input as TaskOutput);
    if (input !== undefined) this.takeInput(input, false);
    // An input that never completes (the buyer died) must not hold the execution forever.
    this.deadline = setTimeout(
      () =>
        this.fail(new AcmpError(ACMP_ERRORS.timeout, `Timeout: the input stream did not end within ${timeoutMs} ms`)),
      timeoutMs,
    );
  }

  /** An `acmp/inputChunk`: chunks are taken in seq order, whatever order they come in; repeats are ignored. */
  accept(params: ChunkParams): void {
    if (this.settled || this.params.input_stream !== true || params.seq < this.nextInputSeq) return;
    const ahead = (this.ahead ??= new Map<number, ChunkParams>()).set(params.seq, params);
    for (let next = ahead.get(this.nextInputSeq); next !== undefined; next = ahead.get(this.nextInputSeq)) {
      ahead.delete(this.nextInputSeq++);
      this.takeInput(next.chunk, next.final);
      if (next.final) return this.complete(assembleChunks(this.inputParts!));
    }
  }

  cancel(reason: string | undefined): void {
    // Closing the provider cancels every remembered execution: most are settled, and an Error each costs a stack.
    if (this.settled) return;
    this.fail(
      new AcmpError(ACMP_ERRORS.cancelled, reason === undefined ? 'Task cancelled' : `Task cancelled: ${reason}`, {
        task_id: this.params.task_id,
        reason,
      }),
    );
  }

  /** Ends an execution in flight with `error` (its connection closed); a settled one stays as it is. */
  abandon(error: Error): void {
    this.fail(error);
  }

  /** A repeated invoke: the first one's result, with the complete output even when the first one streamed it. */
  joined(): Promise<InvokeResult> {
    return this.result.then((result) =>
      result.output_streamed === true ? { ...result, output: this.output, output_streamed: false } : result,
    );
  }

  private takeInput(part: TaskOutput, final: boolean): void {
    const { type, data } = part;
    (this.inputParts ??= []).push({ type, data });
    if (this.forwarding) this.emit({ type, data }, final);
  }

  private emit(chunk: TaskOutput, final: boolean): void {
    this.handlers?.onChunk({ task_id: this.params.task_id, seq: this.nextOutputSeq++, chunk, final });
  }

  private complete(input: TaskOutput): void {
    if (this.settled) return;
    let output: TaskOutput;
    try {
      output = compute[this.capability](input);
    } catch (error) {
      return this.fail(
        error instanceof AcmpError
          ? error
          : new AcmpError(ACMP_ERRORS.internal, `${this.capability}: ${String(error)}`),
      );
    }
    const streamed = this.params.stream === true;
    if (streamed && !this.forwarding) {
      const pieces = streamPieces(output);
      pieces.forEach((piece, index) => this.emit(piece, index === pieces.length - 1));
    }
    this.output = output;
    this.settle();
    // Members set one by one, in the order of the wire: the spreads of optional parts made an object each to copy.
    const result = { task_id: this.params.task_id } as Building<InvokeResult>;
    if (streamed) result.output_streamed = true;
    else result.output = output;
    result.tokens_used = wordsOf(input);
    result.cost_cu = this.priceCu;
    if (this.params.proof_method === RESULT_HASH) {
      result.proof = { method: RESULT_HASH, hash: resultHash(output), input_hash: resultHash(input) };
    }
    result.provider_id = BUILTIN_PROVIDER_ID;
    this.resolve(result);
  }

  private fail(error: Error): void {
    if (this.settled) return;
    this.settle();
    this.reject(error);
  }

  private settle(): void {
    this.settled = true;
    // A remembered execution no longer holds its invoker's handlers (over MCP, the request's whole context).
    this.handlers = undefined;
    clearTimeout(this.deadline);
    this.onSettled(this.params.task_id);
  }
}

const isBuiltin = (name: string): name is BuiltinCapabilityName => builtinCapability(name) !== undefined;

/** What an invoke and a quote both ask of the provider: a capability, at most a price, a proof method. */
type Terms = Pick<InvokeParams, 'capability' | 'max_price_cu' | 'proof_method'>;

/**
 * The capability of `terms` with its price, or the error that refuses them (-33002, -33001, -33006); `about` goes in
 * the error's data (an invoke's task_id).
 */
function price(
  terms: Terms,
  priceOf: (capability: BuiltinCapabilityName) => number,
  about: Readonly<Record<string, unknown>>,
): { capability: BuiltinCapabilityName; priceCu: number } | AcmpError {
  const { capability, max_price_cu: maxPrice, proof_method: proofMethod } = terms;
  if (!isBuiltin(capability)) {
    return new AcmpError(
      ACMP_ERRORS.capability_not_found,
      `Capability not found: the built-in provider offers ${BUILTIN_CAPABILITIES.join(', ')}`,
      { ...about, capability },
    );
  }
  const priceCu = priceOf(capability);
  if (maxPrice !== undefined && priceCu > maxPrice) {
    return new AcmpError(ACMP_ERRORS.budget_exceeded, 'Budget exceeded', {
      ...about,
      min_price_cu: priceCu,
      detail: `Minimum price for ${capability} is ${priceCu} CU.`,
    });
  }
  if (proofMethod !== undefined && proofMethod !== RESULT_HASH) {
    return new AcmpError(ACMP_ERRORS.proof_unsupported, `Proof method "${proofMethod}" is not supported`, {
      ...about,
      supported: [RESULT_HASH],
    });
  }
  return { capability, priceCu };
}

/**
 * Checks an invoke before anything runs: its capability and price, or the error that refuses it. A refused invoke is
 * not an execution, so it may be sent again.
 */
function admit(
  params: InvokeParams,
  priceOf: (capability: BuiltinCapabilityName) => number,
): { capability: BuiltinCapabilityName; priceCu: number } | AcmpError {
  const taskId = params.task_id;
  const priced = price(params, priceOf, { task_id: taskId });
  if (priced instanceof AcmpError) return priced;
  const { capability } = priced;
  const inputStream = params.input_stream === true;
  if (params.stream === true && !(capability === 'echo' && (inputStream || streamable(params.input?.data)))) {
    return new AcmpError(
      ACMP_ERRORS.feature_unsupported,
      `Output streaming is not offered for ${capability} of this input (only echo of a text or an array streams)`,
      { task_id: taskId, feature: 'stream' },
    );
  }
  if (!inputStream && params.input === undefined) {
    return new AcmpError(INVALID_PARAMS, 'The input is missing (only input_stream: true may omit it)', {
      task_id: taskId,
    });
  }
  return priced;
}

interface EarlyMessages {
  readonly chunks: ChunkParams[];
  cancel?: CancelParams;
}

export interface BuiltinProviderOptions {
  /**
   * Settled executions kept for a repeated task_id (default 10,000). In process (connect.ts) none need be: a retry
   * comes only after the connection failed, on a new one, and each remembered result would hold its output.
   */
  readonly remembered?: number;
  /** Multiplies each capability's catalog price, in quotes and charges alike (default 1). */
  readonly priceFactor?: number;
  /** The longest an offer holds, in ms (default 5,000); a buyer's `offer_valid_ms` may shorten it. */
  readonly offerValidMs?: number;
  /** The latency the provider commits to in its offers (`latency_sla_ms`); none by default. */
  readonly latencyMs?: number;
  /** The clock of offer validity, epoch ms (default Date.now). */
  readonly now?: () => number;
}

/** The built-in provider. One instance is one provider: its task_ids are its idempotency keys. */
export class BuiltinProvider {
  readonly acmp = BUILTIN_ACMP;
  private readonly executions = new Map<string, Execution>();
  /** Settled task_ids, oldest first; the first `forgotten` of them are forgotten already. */
  private readonly settledIds: string[] = [];
  private forgotten = 0;
  private readonly early = new Map<string, EarlyMessages>();
  private readonly remembered: number;
  private readonly priceFactor: number;
  private readonly offers: OfferBook;

  constructor({
    remembered = REMEMBERED_EXECUTIONS,
    priceFactor = 1,
    offerValidMs = DEFAULT_OFFER_VALID_MS,
    latencyMs,
    now = Date.now,
  }: BuiltinProviderOptions = {}) {
    this.remembered = remembered;
    this.priceFactor = priceFactor;
    this.offers = new OfferBook({ validMs: offerValidMs, latencyMs, now });
  }

  /** What one task of `capability` costs here: its catalog price times the price factor. */
  private readonly priceOf = (capability: BuiltinCapabilityName): number =>
    BUILTIN_PRICES_CU[capability] * this.priceFactor;

  /**
   * `acmp/offerRequest`: a quote that holds until `valid_until_ms`, the shorter of the buyer's `offer_valid_ms` and
   * the provider's window. Nothing is stored (Layer 6 §3). Rejects with AcmpError -33002, -33001 or -33006.
   */
  offerRequest(params: OfferRequestParams): Promise<Offer> {
    const priced = price(params, this.priceOf, {});
    return priced instanceof AcmpError
      ? Promise.reject(priced)
      : Promise.resolve(this.offers.quote(params, priced.priceCu));
  }

  /** `acmp/accept`: binds the offer's price once. Rejects with AcmpError -34001, -34002 or -34003. */
  accept(params: AcceptParams): Promise<AcceptResult> {
    return new Promise((resolve) => resolve(this.offers.accept(params)));
  }

  /** `acmp/invoke`. Rejects with AcmpError; a repeated task_id never executes again. */
  invoke(params: InvokeParams, handlers: InvokeHandlers): Promise<InvokeResult> {
    const taskId = params.task_id;
    const existing = this.executions.get(taskId);
    if (existing !== undefined) return existing.joined();
    const admitted = admit(params, this.priceOf);
    if (admitted instanceof AcmpError) return Promise.reject(admitted);
    const execution = new Execution(params, admitted.capability, admitted.priceCu, handlers, this.settledOne);
    this.executions.set(taskId, execution);
    const early = this.early.get(taskId);
    this.early.delete(taskId);
    if (early?.cancel !== undefined) {
      execution.cancel(early.cancel.reason);
    } else {
      execution.start();
      for (const chunk of early?.chunks ?? []) execution.accept(chunk);
    }
    return execution.result;
  }

  /** `acmp/inputChunk`. */
  inputChunk(params: ChunkParams): void {
    const execution = this.executions.get(params.task_id);
    if (execution !== undefined) execution.accept(params);
    else this.earlyFor(params.task_id).chunks.push(params);
  }

  /** `acmp/cancel`: the invoke in flight ends with -33004; a settled one stays as it is. */
  cancel(params: CancelParams): void {
    const execution = this.executions.get(params.task_id);
    if (execution !== undefined) execution.cancel(params.reason);
    else this.earlyFor(params.task_id).cancel = params;
  }

  /**
   * Cancels every execution in flight (their timers included) and forgets what waited for an invoke; with `error`,
   * those in flight end with it instead (the buyer's connection closed).
   */
  close(error?: Error): void {
    for (const execution of this.executions.values()) {
      if (error === undefined) execution.cancel('the provider closed');
      else execution.abandon(error);
    }
    this.early.clear();
  }

  private earlyFor(taskId: string): EarlyMessages {
    let messages = this.early.get(taskId);
    if (messages === undefined) {
      messages = { chunks: [] };
      this.early.set(taskId, messages);
      if (this.early.size > EARLY_TASKS) this.early.delete(this.early.keys().next().value as string);
    }
    return messages;
  }

  /** Shared by the executions rather than a closure each. */
  private readonly settledOne = (taskId: string): void => this.forgetOldest(taskId);

  /** Keeps the last `remembered` settled executions (a queue: a Set's oldest entry is slow to reach). */
  private forgetOldest(settledId: string): void {
    // In process none is remembered: the queue would take each id only to drop it at once.
    if (this.remembered === 0) return void this.executions.delete(settledId);
    this.settledIds.push(settledId);
    if (this.settledIds.length - this.forgotten <= this.remembered) return;
    this.executions.delete(this.settledIds[this.forgotten++] as string);
    // The queue drops its forgotten head in batches, not one shift per settled execution.
    if (this.forgotten >= Math.max(this.remembered, 1_000)) {
      this.settledIds.splice(0, this.forgotten);
      this.forgotten = 0;
    }
  }
}
