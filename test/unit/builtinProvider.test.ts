// The built-in provider in-process: its outputs against the catalog's documented shapes, prices, refusals, proofs,
// idempotency, streaming both ways and cancellation (Layer 1), its quotes (Layer 6), and its in-process connection.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUILTIN_CATALOG, BUILTIN_CAPABILITIES } from '../../server/src/protocol/builtinCatalog';
import type { TaskOutput } from '../../server/src/protocol/report';
import {
  BUILTIN_ACMP,
  BUILTIN_PRICES_CU,
  BuiltinProvider,
  DEFAULT_OFFER_VALID_MS,
  INVALID_PARAMS,
} from '../../server/src/run/builtin/provider';
import { assembleChunks } from '../../server/src/run/chunks';
import { connectProvider } from '../../server/src/run/connect';
import { checkProof, resultHash } from '../../server/src/run/proof';
import {
  ACMP_ERRORS,
  AcmpError,
  type ChunkParams,
  type InvokeParams,
  TransportError,
} from '../../server/src/protocol/acmpMessages';
import type { InvokeHandlers } from '../../server/src/run/types';

const REVIEW = 'The product quality has declined significantly. Support was friendly and fast, and the refund arrived.';

let nextId = 0;
const freshId = () => `task_unit_${++nextId}`;

/** Handlers that keep the chunks an invoke streams. */
function recorder(): InvokeHandlers & { readonly chunks: ChunkParams[] } {
  const chunks: ChunkParams[] = [];
  return { chunks, onChunk: (chunk) => chunks.push(chunk), onHeartbeat: () => undefined };
}

const invoke = (provider: BuiltinProvider, params: Omit<InvokeParams, 'task_id'> & { task_id?: string }) =>
  provider.invoke({ task_id: freshId(), ...params }, recorder());

/** Resolves with the AcmpError an invoke rejects with. */
async function refusal(promise: Promise<unknown>): Promise<AcmpError> {
  const error = await promise.then(
    () => assert.fail('expected the invoke to be refused'),
    (reason: unknown) => reason,
  );
  assert.ok(error instanceof AcmpError, String(error));
  return error;
}

/** Same members with the same types, arrays element by element against the documented first element. */
function assertSameShape(actual: unknown, documented: unknown, path = 'output'): void {
  const kind = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);
  assert.equal(kind(actual), kind(documented), `${path}: type`);
  if (Array.isArray(actual) && Array.isArray(documented)) {
    if (documented.length > 0) actual.forEach((element, i) => assertSameShape(element, documented[0], `${path}[${i}]`));
  } else if (kind(actual) === 'object') {
    const record = actual as Record<string, unknown>;
    const expected = documented as Record<string, unknown>;
    assert.deepEqual(Object.keys(record).sort(), Object.keys(expected).sort(), `${path}: members`);
    for (const key of Object.keys(expected)) assertSameShape(record[key], expected[key], `${path}.${key}`);
  }
}

/** The §6.2 pipeline by hand: split, one sentiment per chunk, aggregation of the whole outputs. */
async function pipeline(provider: BuiltinProvider) {
  const split = await invoke(provider, { capability: 'text-split', input: { type: 'text', data: REVIEW } });
  const chunks = (split.output?.data as { chunks: string[] }).chunks;
  const sentiments = await Promise.all(
    chunks.map((chunk) => invoke(provider, { capability: 'sentiment-analysis', input: { type: 'text', data: chunk } })),
  );
  const aggregation = await invoke(provider, {
    capability: 'result-aggregation',
    input: { type: 'json', data: sentiments.map((result) => result.output) },
  });
  return { split, sentiments, aggregation };
}

test('every capability returns the shape the catalog documents', async () => {
  const provider = new BuiltinProvider();
  const { split, sentiments, aggregation } = await pipeline(provider);
  assertSameShape(split.output, BUILTIN_CATALOG['text-split'].exampleOutput);
  assert.deepEqual(split.output?.data, {
    chunks: [
      'The product quality has declined significantly.',
      'Support was friendly and fast, and the refund arrived.',
    ],
    count: 2,
  });
  for (const sentiment of sentiments)
    assertSameShape(sentiment.output, BUILTIN_CATALOG['sentiment-analysis'].exampleOutput);
  const mixed = await invoke(provider, {
    capability: 'sentiment-analysis',
    input: { type: 'text', data: 'Great support, terrible quality.' },
  });
  assertSameShape(mixed.output, BUILTIN_CATALOG['sentiment-analysis'].exampleOutput);
  const { positive, negative } = mixed.output?.data as { positive: string[]; negative: string[] };
  assert.ok(positive.includes('great') && negative.includes('terrible'), JSON.stringify(mixed.output));
  assertSameShape(aggregation.output, BUILTIN_CATALOG['result-aggregation'].exampleOutput);
  assert.equal((aggregation.output?.data as { count: number }).count, 2);
  const input = { type: 'json', data: { nested: [1, 'two', null] } };
  assert.equal(BUILTIN_CATALOG.echo.exampleOutput, 'the input');
  assert.deepEqual((await invoke(provider, { capability: 'echo', input })).output, input);
});

test('sentiment reads a text or a {type, data} carrying one; aggregation takes whole outputs or their data', async () => {
  const provider = new BuiltinProvider();
  const text = { type: 'text', data: 'Friendly and fast.' };
  const direct = await invoke(provider, { capability: 'sentiment-analysis', input: text });
  const wrapped = await invoke(provider, { capability: 'sentiment-analysis', input: { type: 'json', data: text } });
  assert.deepEqual(wrapped.output, direct.output);
  const data = direct.output?.data as { label: string; score: number; comparative: number };
  assert.equal(data.label, 'positive');
  const fromData = await invoke(provider, { capability: 'result-aggregation', input: { type: 'json', data: [data] } });
  const fromOutputs = await invoke(provider, {
    capability: 'result-aggregation',
    input: { type: 'json', data: [direct.output] },
  });
  assert.deepEqual(fromData.output, fromOutputs.output);
  assert.deepEqual(fromData.output?.data, {
    label: 'positive',
    score: data.score,
    comparative: data.comparative,
    count: 1,
    results: [{ label: 'positive', score: data.score, comparative: data.comparative }],
  });
});

test('an input a capability cannot read is refused with Invalid params, naming the capability', async () => {
  const provider = new BuiltinProvider();
  const split = await refusal(invoke(provider, { capability: 'text-split', input: { type: 'json', data: 42 } }));
  assert.equal(split.code, INVALID_PARAMS);
  assert.match(split.message, /^text-split: expects a text/);
  const aggregate = await refusal(
    invoke(provider, { capability: 'result-aggregation', input: { type: 'json', data: [{ label: 'positive' }] } }),
  );
  assert.match(aggregate.message, /element 0 is not a sentiment result/);
  const missing = await refusal(invoke(provider, { capability: 'echo' }));
  assert.equal(missing.code, INVALID_PARAMS);
});

test('each capability has its price; tokens_used counts the words of the input', async () => {
  const provider = new BuiltinProvider();
  for (const capability of BUILTIN_CAPABILITIES) {
    const input = capability === 'result-aggregation' ? { type: 'json', data: [] } : { type: 'text', data: REVIEW };
    const result = await invoke(provider, { capability, input, max_price_cu: BUILTIN_PRICES_CU[capability] });
    assert.equal(result.cost_cu, BUILTIN_PRICES_CU[capability], capability);
    assert.ok(result.cost_cu > 0, capability);
  }
  const result = await invoke(provider, {
    capability: 'echo',
    input: { type: 'text', data: 'It was fast, and free.' },
  });
  assert.equal(result.tokens_used, 5);
});

test('-33001 when the price exceeds max_price_cu, -33002 for an unknown capability, -33006 for another proof', async () => {
  const provider = new BuiltinProvider();
  const price = BUILTIN_PRICES_CU['sentiment-analysis'];
  const input = { type: 'text', data: 'fine' };
  const budget = await refusal(invoke(provider, { capability: 'sentiment-analysis', input, max_price_cu: price / 2 }));
  assert.equal(budget.code, ACMP_ERRORS.budget_exceeded);
  assert.equal((budget.data as { min_price_cu: number }).min_price_cu, price);
  const unknown = await refusal(invoke(provider, { capability: 'translation', input }));
  assert.equal(unknown.code, ACMP_ERRORS.capability_not_found);
  assert.deepEqual((unknown.data as { capability: string }).capability, 'translation');
  const proof = await refusal(invoke(provider, { capability: 'echo', input, proof_method: 'execution-trace' }));
  assert.equal(proof.code, ACMP_ERRORS.proof_unsupported);
});

test('-33007 for a stream it does not offer: only echo of a text or an array streams its output', async () => {
  const provider = new BuiltinProvider();
  const text = { type: 'text', data: REVIEW };
  for (const capability of ['text-split', 'sentiment-analysis'] as const) {
    const error = await refusal(invoke(provider, { capability, input: text, stream: true }));
    assert.equal(error.code, ACMP_ERRORS.feature_unsupported, capability);
  }
  const object = await refusal(
    invoke(provider, { capability: 'echo', input: { type: 'json', data: {} }, stream: true }),
  );
  assert.equal(object.code, ACMP_ERRORS.feature_unsupported);
});

test('result-hash proofs commit to the output and the input, and verify with resultHash', async () => {
  const provider = new BuiltinProvider();
  const input = { type: 'text', data: REVIEW };
  for (const capability of ['text-split', 'sentiment-analysis', 'echo'] as const) {
    const result = await invoke(provider, { capability, input, proof_method: 'result-hash' });
    assert.ok(result.output !== undefined);
    assert.equal(result.proof?.method, 'result-hash');
    assert.equal(result.proof?.hash, resultHash(result.output));
    assert.equal(result.proof?.input_hash, resultHash(input));
    assert.equal(checkProof(result.proof, result.output), 'verified');
  }
  const plain = await invoke(provider, { capability: 'echo', input });
  assert.equal(plain.proof, undefined);
  const handlers = recorder();
  const streamed = await provider.invoke(
    { task_id: freshId(), capability: 'echo', input, stream: true, proof_method: 'result-hash' },
    handlers,
  );
  assert.equal(checkProof(streamed.proof, assembleChunks(handlers.chunks.map((c) => c.chunk))), 'verified');
});

test('a repeated task_id never executes again: it returns the first result, or joins the running one', async () => {
  const provider = new BuiltinProvider();
  const taskId = freshId();
  const first = await provider.invoke(
    { task_id: taskId, capability: 'echo', input: { type: 'text', data: 'first' } },
    recorder(),
  );
  const again = await provider.invoke(
    { task_id: taskId, capability: 'echo', input: { type: 'text', data: 'second' } },
    recorder(),
  );
  assert.deepEqual(again, first);

  // A streamed first execution: the repeat sees no chunks but gets the whole output.
  const streamedId = freshId();
  const firstHandlers = recorder();
  const input = { type: 'text', data: REVIEW };
  const streamed = await provider.invoke(
    { task_id: streamedId, capability: 'echo', input, stream: true },
    firstHandlers,
  );
  const repeatHandlers = recorder();
  const repeat = await provider.invoke(
    { task_id: streamedId, capability: 'echo', input, stream: true },
    repeatHandlers,
  );
  assert.equal(firstHandlers.chunks.length, 2);
  assert.equal(repeatHandlers.chunks.length, 0);
  assert.equal(streamed.output_streamed, true);
  assert.deepEqual(repeat.output, input);

  // A running execution (waiting for its input): the repeat joins it.
  const runningId = freshId();
  const running = provider.invoke({ task_id: runningId, capability: 'echo', input_stream: true }, recorder());
  const joining = provider.invoke({ task_id: runningId, capability: 'echo', input_stream: true }, recorder());
  provider.inputChunk({ task_id: runningId, seq: 0, chunk: { type: 'text', data: 'once' }, final: true });
  provider.inputChunk({ task_id: runningId, seq: 0, chunk: { type: 'text', data: 'twice' }, final: true });
  assert.deepEqual(await joining, await running);
  assert.deepEqual((await running).output, { type: 'text', data: 'once' });
});

test('a refused invoke is no execution: the same task_id may be sent again', async () => {
  const provider = new BuiltinProvider();
  const params = { task_id: freshId(), capability: 'echo', input: { type: 'text', data: 'x' } };
  await refusal(provider.invoke({ ...params, max_price_cu: 0 }, recorder()));
  assert.deepEqual((await provider.invoke(params, recorder())).output, params.input);
});

test('a streamed output assembles to the output sent without streaming', async () => {
  const provider = new BuiltinProvider();
  const inputs: TaskOutput[] = [
    { type: 'text', data: REVIEW },
    { type: 'text', data: '' },
    { type: 'json', data: [1, [2, 3], { four: 4 }] },
    { type: 'json', data: [] },
  ];
  for (const input of inputs) {
    const handlers = recorder();
    const taskId = freshId();
    const streamed = await provider.invoke({ task_id: taskId, capability: 'echo', input, stream: true }, handlers);
    const plain = await invoke(provider, { capability: 'echo', input });
    assert.equal(streamed.output, undefined);
    assert.equal(streamed.output_streamed, true);
    assert.deepEqual(
      handlers.chunks.map(({ seq, final, task_id }) => ({ seq, final, task_id })),
      handlers.chunks.map((_, seq) => ({ seq, final: seq === handlers.chunks.length - 1, task_id: taskId })),
    );
    assert.deepEqual(assembleChunks(handlers.chunks.map((chunk) => chunk.chunk)), plain.output, JSON.stringify(input));
  }
});

test('an input stream is taken in seq order, however its chunks arrive, and repeats are ignored', async () => {
  const provider = new BuiltinProvider();
  const parts = ['Support was friendly. ', 'The refund was slow. ', 'Overall fine.'];
  const expected = await invoke(provider, {
    capability: 'sentiment-analysis',
    input: { type: 'text', data: parts.join('') },
  });
  for (const order of [
    [0, 1, 2],
    [2, 0, 1],
    [1, 2, 1, 0],
  ]) {
    const taskId = freshId();
    const result = provider.invoke(
      { task_id: taskId, capability: 'sentiment-analysis', input_stream: true },
      recorder(),
    );
    for (const seq of order) {
      provider.inputChunk({ task_id: taskId, seq, chunk: { type: 'text', data: parts[seq] }, final: seq === 2 });
    }
    assert.deepEqual((await result).output, expected.output, order.join(','));
  }
});

test('echo with both streams passes each input chunk on as it arrives, in seq order', async () => {
  const provider = new BuiltinProvider();
  const taskId = freshId();
  const handlers = recorder();
  const result = provider.invoke({ task_id: taskId, capability: 'echo', input_stream: true, stream: true }, handlers);
  provider.inputChunk({ task_id: taskId, seq: 1, chunk: { type: 'text', data: 'b' }, final: false });
  assert.equal(handlers.chunks.length, 0);
  provider.inputChunk({ task_id: taskId, seq: 0, chunk: { type: 'text', data: 'a' }, final: false });
  assert.deepEqual(
    handlers.chunks.map((chunk) => chunk.chunk.data),
    ['a', 'b'],
  );
  provider.inputChunk({ task_id: taskId, seq: 2, chunk: { type: 'text', data: 'c' }, final: true });
  assert.equal((await result).output_streamed, true);
  assert.deepEqual(
    handlers.chunks.map(({ seq, final }) => [seq, final]),
    [
      [0, false],
      [1, false],
      [2, true],
    ],
  );
  assert.deepEqual(assembleChunks(handlers.chunks.map((chunk) => chunk.chunk)), { type: 'text', data: 'abc' });
});

test('chunks and a cancel that overtake their invoke are kept for it', async () => {
  const provider = new BuiltinProvider();
  const taskId = freshId();
  provider.inputChunk({ task_id: taskId, seq: 0, chunk: { type: 'text', data: 'early' }, final: true });
  const result = await provider.invoke({ task_id: taskId, capability: 'echo', input_stream: true }, recorder());
  assert.deepEqual(result.output, { type: 'text', data: 'early' });
  const cancelledId = freshId();
  provider.cancel({ task_id: cancelledId });
  const error = await refusal(
    provider.invoke({ task_id: cancelledId, capability: 'echo', input_stream: true }, recorder()),
  );
  assert.equal(error.code, ACMP_ERRORS.cancelled);
});

test('acmp/cancel answers the invoke with -33004; a settled task stays settled', async () => {
  const provider = new BuiltinProvider();
  const taskId = freshId();
  const running = provider.invoke(
    { task_id: taskId, capability: 'sentiment-analysis', input_stream: true },
    recorder(),
  );
  provider.cancel({ task_id: taskId, reason: 'upstream failed' });
  const error = await refusal(running);
  assert.equal(error.code, ACMP_ERRORS.cancelled);
  assert.match(error.message, /upstream failed/);
  provider.inputChunk({ task_id: taskId, seq: 0, chunk: { type: 'text', data: 'late' }, final: true });
  assert.equal((await refusal(provider.invoke({ task_id: taskId, capability: 'echo' }, recorder()))).code, -33004);
  const doneId = freshId();
  const done = await provider.invoke(
    { task_id: doneId, capability: 'echo', input: { type: 'text', data: 'x' } },
    recorder(),
  );
  provider.cancel({ task_id: doneId });
  assert.deepEqual(await provider.invoke({ task_id: doneId, capability: 'echo' }, recorder()), done);
});

test('an input stream that does not end within timeout_ms fails with -33003; close() cancels what runs', async () => {
  const provider = new BuiltinProvider();
  const late = provider.invoke(
    { task_id: freshId(), capability: 'echo', input_stream: true, timeout_ms: 10 },
    recorder(),
  );
  assert.equal((await refusal(late)).code, ACMP_ERRORS.timeout);
  const waiting = provider.invoke({ task_id: freshId(), capability: 'echo', input_stream: true }, recorder());
  provider.close();
  assert.equal((await refusal(waiting)).code, ACMP_ERRORS.cancelled);
});

/** A provider on a clock the test moves by hand; `clock.now` is what the provider reads. */
function onClock(options: ConstructorParameters<typeof BuiltinProvider>[0] = {}) {
  const clock = { now: 1_000_000 };
  return { clock, provider: new BuiltinProvider({ ...options, now: () => clock.now }) };
}

test('a quote: the catalog price, valid for the provider window or the shorter one asked, the proof asked for', async () => {
  const { clock, provider } = onClock();
  const offer = await provider.offerRequest({ capability: 'sentiment-analysis' });
  assert.equal(offer.capability, 'sentiment-analysis');
  assert.equal(offer.price_cu, BUILTIN_PRICES_CU['sentiment-analysis']);
  assert.equal(offer.valid_until_ms, clock.now + DEFAULT_OFFER_VALID_MS);
  assert.equal(offer.latency_sla_ms, undefined);
  assert.equal(offer.proof_method, undefined);
  assert.ok(offer.offer_id.length > 0);
  const again = await provider.offerRequest({ capability: 'sentiment-analysis' });
  assert.notEqual(again.offer_id, offer.offer_id, 'each offer is single-use, so each has its own id');

  const short = await provider.offerRequest({ capability: 'echo', offer_valid_ms: 50, proof_method: 'result-hash' });
  assert.equal(short.valid_until_ms, clock.now + 50);
  assert.equal(short.proof_method, 'result-hash');
  const long = await provider.offerRequest({ capability: 'echo', offer_valid_ms: 3_600_000 });
  assert.equal(long.valid_until_ms, clock.now + DEFAULT_OFFER_VALID_MS, 'clamped to the provider window');

  const configured = onClock({ offerValidMs: 200, latencyMs: 40 });
  const terms = await configured.provider.offerRequest({ capability: 'echo', max_price_cu: 1 });
  assert.equal(terms.valid_until_ms, configured.clock.now + 200);
  assert.equal(terms.latency_sla_ms, 40);
});

test('accept: the Ack with the offered price once, -34003 the second time', async () => {
  const { provider } = onClock();
  const offer = await provider.offerRequest({ capability: 'text-split' });
  assert.deepEqual(await provider.accept({ offer_id: offer.offer_id, escrow_id: 'esc_1' }), {
    offer_id: offer.offer_id,
    escrow_id: 'esc_1',
    price_cu: BUILTIN_PRICES_CU['text-split'],
  });
  const second = await refusal(provider.accept({ offer_id: offer.offer_id }));
  assert.equal(second.code, ACMP_ERRORS.already_accepted);
  const other = await provider.offerRequest({ capability: 'text-split' });
  assert.deepEqual(await provider.accept({ offer_id: other.offer_id }), {
    offer_id: other.offer_id,
    price_cu: BUILTIN_PRICES_CU['text-split'],
  });
});

test('accept after valid_until_ms: -34002, even for an offer accepted before', async () => {
  const { clock, provider } = onClock();
  const offer = await provider.offerRequest({ capability: 'echo', offer_valid_ms: 1 });
  clock.now += 1;
  const accepted = await provider.offerRequest({ capability: 'echo', offer_valid_ms: 1 });
  await provider.accept({ offer_id: accepted.offer_id });
  clock.now += 1;
  const expired = await refusal(provider.accept({ offer_id: offer.offer_id }));
  assert.equal(expired.code, ACMP_ERRORS.offer_expired);
  assert.equal((expired.data as { valid_until_ms: number }).valid_until_ms, offer.valid_until_ms);
  clock.now += 1;
  assert.equal((await refusal(provider.accept({ offer_id: accepted.offer_id }))).code, ACMP_ERRORS.offer_expired);
});

test('accept of an offer this provider did not make: -34001 (tampered, another provider, garbage)', async () => {
  const { provider } = onClock();
  const offer = await provider.offerRequest({ capability: 'echo' });
  const [body, mac] = offer.offer_id.split('.') as [string, string];
  // The terms say a lower price, under the old MAC.
  const terms = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
  const cheaper = Buffer.from(JSON.stringify({ ...terms, p: 0 })).toString('base64url');
  const foreign = await new BuiltinProvider().offerRequest({ capability: 'echo' });
  const flipped = `${body}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
  for (const offerId of [`${cheaper}.${mac}`, flipped, foreign.offer_id, 'offer_6217d1', '', '.', 'x'.repeat(5_000)]) {
    const error = await refusal(provider.accept({ offer_id: offerId }));
    assert.equal(error.code, ACMP_ERRORS.offer_not_found, offerId.slice(0, 40));
  }
  assert.equal((await provider.accept({ offer_id: offer.offer_id })).price_cu, offer.price_cu);
});

test('no quote above max_price_cu (-33001 with min_price_cu), for an unknown capability (-33002), another proof (-33006)', async () => {
  const provider = new BuiltinProvider();
  const price = BUILTIN_PRICES_CU['sentiment-analysis'];
  const budget = await refusal(provider.offerRequest({ capability: 'sentiment-analysis', max_price_cu: price / 2 }));
  assert.equal(budget.code, ACMP_ERRORS.budget_exceeded);
  assert.equal((budget.data as { min_price_cu: number }).min_price_cu, price);
  assert.equal(
    (await provider.offerRequest({ capability: 'sentiment-analysis', max_price_cu: price })).price_cu,
    price,
  );
  const unknown = await refusal(provider.offerRequest({ capability: 'translation' }));
  assert.equal(unknown.code, ACMP_ERRORS.capability_not_found);
  assert.equal((unknown.data as { capability: string }).capability, 'translation');
  const proof = await refusal(provider.offerRequest({ capability: 'echo', proof_method: 'tee-attestation' }));
  assert.equal(proof.code, ACMP_ERRORS.proof_unsupported);
});

test('the price factor: quotes and charges agree, and max_price_cu holds against the factored price', async () => {
  const provider = new BuiltinProvider({ priceFactor: 5 });
  const price = BUILTIN_PRICES_CU['sentiment-analysis'] * 5;
  const offer = await provider.offerRequest({ capability: 'sentiment-analysis' });
  assert.equal(offer.price_cu, price);
  const ack = await provider.accept({ offer_id: offer.offer_id });
  const input = { type: 'text', data: REVIEW };
  const result = await invoke(provider, { capability: 'sentiment-analysis', input, max_price_cu: ack.price_cu });
  assert.equal(result.cost_cu, ack.price_cu);
  const catalogPrice = BUILTIN_PRICES_CU['sentiment-analysis'];
  const budget = await refusal(
    invoke(provider, { capability: 'sentiment-analysis', input, max_price_cu: catalogPrice }),
  );
  assert.equal((budget.data as { min_price_cu: number }).min_price_cu, price);
  assert.equal((await invoke(new BuiltinProvider({ priceFactor: 0 }), { capability: 'echo', input })).cost_cu, 0);
});

test('the acmp capability follows Layer 1 §1', () => {
  const { accepts, emits, features } = BUILTIN_ACMP;
  assert.equal(BUILTIN_ACMP.version, '0.1.0');
  assert.ok(accepts.includes('acmp/invoke') && accepts.includes('acmp/cancel'));
  assert.ok(accepts.includes('acmp/offerRequest') && accepts.includes('acmp/accept'), 'it negotiates (Layer 6)');
  assert.equal(accepts.includes('acmp/inputChunk'), features.input_streaming === true);
  assert.equal(emits.includes('acmp/streamChunk'), features.output_streaming === true);
  assert.equal(emits.includes('acmp/heartbeat'), features.heartbeat_interval_ms !== undefined);
  assert.equal(new BuiltinProvider().acmp, BUILTIN_ACMP);
});

test('the builtin transport: the provider in-process; closing ends what is in flight and what comes after', async () => {
  const connection = await connectProvider({ id: 'local', transport: 'builtin' });
  assert.equal(connection.providerId, 'local');
  assert.deepEqual(connection.acmp, BUILTIN_ACMP);
  const input = { type: 'text', data: REVIEW };
  const result = await connection.invoke({ task_id: freshId(), capability: 'text-split', input }, recorder());
  assert.deepEqual(
    result.output,
    await invoke(new BuiltinProvider(), { capability: 'text-split', input }).then((r) => r.output),
  );

  const offer = await connection.offerRequest({ capability: 'text-split' });
  assert.equal((await connection.accept({ offer_id: offer.offer_id })).price_cu, BUILTIN_PRICES_CU['text-split']);
  const refused = await refusal(connection.accept({ offer_id: offer.offer_id }));
  assert.equal(refused.code, ACMP_ERRORS.already_accepted);

  const streamId = freshId();
  const handlers = recorder();
  const streaming = connection.invoke(
    { task_id: streamId, capability: 'echo', input_stream: true, stream: true },
    handlers,
  );
  await connection.inputChunk({ task_id: streamId, seq: 0, chunk: { type: 'text', data: 'a' }, final: false });
  assert.equal(handlers.chunks.length, 1);
  await connection.close();
  await assert.rejects(streaming, TransportError);
  await assert.rejects(
    connection.invoke({ task_id: freshId(), capability: 'echo', input }, recorder()),
    /the connection was closed/,
  );
  await assert.rejects(
    connection.inputChunk({ task_id: streamId, seq: 1, chunk: { type: 'text', data: 'b' }, final: true }),
    TransportError,
  );
  await assert.rejects(connection.offerRequest({ capability: 'echo' }), TransportError);
  await assert.rejects(connection.accept({ offer_id: offer.offer_id }), TransportError);
});
