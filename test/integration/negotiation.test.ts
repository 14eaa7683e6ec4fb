// Layer 6 across real process boundaries, through our own buyer connection (run/connect.ts): `acmp-dag serve --stdio`
// and `serve --http` quote, accept once and then charge the accepted price; their refusals keep their codes; a served
// provider that does not negotiate answers -32601; a quote that never comes ends with its connection.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { before, describe, test } from 'node:test';
import { WebSocketServer } from 'ws';
import {
  ACMP_ERRORS,
  AcmpError,
  type InvokeParams,
  METHOD_NOT_FOUND,
  type OfferRequestParams,
  TransportError,
} from '../../server/src/protocol/acmpMessages';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import { serveCommand } from '../../server/src/cli/serve';
import { UsageError } from '../../server/src/cli/usage';
import { type ServedProvider, createAcmpServer, serveHttp } from '../../server/src/run/builtin/mcpServer';
import { BUILTIN_PRICES_CU, BuiltinProvider, INVALID_PARAMS } from '../../server/src/run/builtin/provider';
import { connectProvider } from '../../server/src/run/connect';
import type { ProviderConnection } from '../../server/src/run/types';
import { WebSocketTransport } from '../../server/src/run/websocketTransport';
import { CLI_BUNDLE, startHttpServe } from '../support/serveProcess';

const SUITE_TIMEOUT_MS = 30_000;
const INPUT = { type: 'text', data: 'Support was friendly and fast.' };
const IGNORE = { onChunk: () => undefined, onHeartbeat: () => undefined };

let nextId = 0;
const freshId = () => `task_negotiation_${++nextId}`;

/** The AcmpError `promise` rejects with. */
async function refusal(promise: Promise<unknown>): Promise<AcmpError> {
  const error = await promise.then(
    () => assert.fail('expected a refusal'),
    (reason: unknown) => reason,
  );
  assert.ok(error instanceof AcmpError, String(error));
  return error;
}

async function withConnection(config: ProviderConfig, use: (connection: ProviderConnection) => Promise<void>) {
  const connection = await connectProvider(config);
  try {
    await use(connection);
  } finally {
    await connection.close();
  }
}

/**
 * Quote, accept, invoke at the accepted price: the provider charges what it quoted. Returns the accepted offer's id.
 */
async function quoteAcceptInvoke(connection: ProviderConnection, request: OfferRequestParams, expectedPrice: number) {
  assert.ok(connection.acmp?.accepts.includes('acmp/offerRequest'), 'it advertises acmp/offerRequest');
  assert.ok(connection.acmp?.accepts.includes('acmp/accept'), 'it advertises acmp/accept');
  const offer = await connection.offerRequest(request);
  assert.equal(offer.capability, request.capability);
  assert.equal(offer.price_cu, expectedPrice);
  const ack = await connection.accept({ offer_id: offer.offer_id, escrow_id: 'esc_a3f9c2' });
  assert.deepEqual(ack, { offer_id: offer.offer_id, escrow_id: 'esc_a3f9c2', price_cu: expectedPrice });
  const invoke: InvokeParams = { task_id: freshId(), capability: request.capability, input: INPUT };
  const result = await connection.invoke({ ...invoke, max_price_cu: ack.price_cu }, IGNORE);
  assert.equal(result.cost_cu, ack.price_cu, 'the invoke charges the accepted price');
  return offer;
}

before(() => assert.ok(existsSync(CLI_BUNDLE), `no CLI bundle at ${CLI_BUNDLE}: build it, or set ACMP_CLI_BUNDLE`));

describe('acmp-dag serve negotiates (Layer 6)', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('serve --stdio --price-factor 5: quote, accept, invoke; each refusal with its code', async () => {
    const config: ProviderConfig = {
      id: 'serve-stdio',
      transport: 'stdio',
      command: process.execPath,
      args: [CLI_BUNDLE, 'serve', '--stdio', '--price-factor', '5'],
    };
    await withConnection(config, async (connection) => {
      const price = BUILTIN_PRICES_CU['sentiment-analysis'] * 5;
      const request = { capability: 'sentiment-analysis', proof_method: 'result-hash', offer_valid_ms: 60_000 };
      const asked = Date.now();
      const offer = await quoteAcceptInvoke(connection, request, price);
      assert.equal(offer.proof_method, 'result-hash');
      assert.ok(offer.valid_until_ms <= Date.now() + 5_000, 'the 60 s asked for is clamped to the 5 s window');
      assert.ok(offer.valid_until_ms >= asked + 5_000);
      assert.equal(offer.latency_sla_ms, undefined);

      const again = await refusal(connection.accept({ offer_id: offer.offer_id }));
      assert.equal(again.code, ACMP_ERRORS.already_accepted);
      const fresh = await connection.offerRequest({ capability: 'echo' });
      const [body, mac] = fresh.offer_id.split('.') as [string, string];
      const forged = `${body}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
      const tampered = await refusal(connection.accept({ offer_id: forged }));
      assert.equal(tampered.code, ACMP_ERRORS.offer_not_found);
      const budget = await refusal(
        connection.offerRequest({ capability: 'sentiment-analysis', max_price_cu: price / 2 }),
      );
      assert.equal(budget.code, ACMP_ERRORS.budget_exceeded);
      assert.equal((budget.data as { min_price_cu: number }).min_price_cu, price);
      const unknown = await refusal(connection.offerRequest({ capability: 'translation' }));
      assert.equal(unknown.code, ACMP_ERRORS.capability_not_found);
      const proof = await refusal(connection.offerRequest({ capability: 'echo', proof_method: 'tee-attestation' }));
      assert.equal(proof.code, ACMP_ERRORS.proof_unsupported);
      const malformed = await refusal(connection.offerRequest({ capability: 42 } as unknown as OfferRequestParams));
      assert.equal(malformed.code, INVALID_PARAMS);
    });
  });

  test('serve --http --latency-ms 250 --offer-valid-ms 1000: the offer commits to both', async () => {
    const server = await startHttpServe(['--price-factor', '2', '--latency-ms', '250', '--offer-valid-ms', '1000']);
    try {
      await withConnection({ id: 'serve-http', transport: 'http', url: server.url }, async (connection) => {
        const asked = Date.now();
        const offer = await quoteAcceptInvoke(
          connection,
          { capability: 'text-split' },
          BUILTIN_PRICES_CU['text-split'] * 2,
        );
        assert.equal(offer.latency_sla_ms, 250);
        assert.ok(offer.valid_until_ms >= asked + 1_000 && offer.valid_until_ms <= Date.now() + 1_000);
        assert.equal(offer.proof_method, undefined);
      });
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  test('over WebSocket the built-in provider negotiates too', async () => {
    const provider = new BuiltinProvider({ priceFactor: 3 });
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    wss.on('connection', (socket) => void createAcmpServer(provider).connect(new WebSocketTransport(socket)));
    await new Promise((resolve) => wss.once('listening', resolve));
    const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`;
    try {
      await withConnection({ id: 'ws', transport: 'websocket', url }, (connection) =>
        quoteAcceptInvoke(connection, { capability: 'echo' }, BUILTIN_PRICES_CU.echo * 3).then(() => undefined),
      );
    } finally {
      await new Promise((resolve) => wss.close(resolve));
    }
  });

  test('bad values of the serve options are usage errors, before anything is served', async () => {
    const cases = [
      [['--price-factor', 'cheap'], /^--price-factor needs a number of 0 or more, not "cheap"$/],
      [['--price-factor=-1'], /^--price-factor needs a number of 0 or more, not "-1"$/],
      [['--offer-valid-ms', '0'], /^--offer-valid-ms needs a positive integer, not "0"$/],
      [['--latency-ms', '1.5'], /^--latency-ms needs a positive integer, not "1.5"$/],
    ] as const;
    for (const [options, message] of cases) {
      await assert.rejects(serveCommand(['--http', '0', ...options]), (error: Error) => {
        assert.ok(error instanceof UsageError, String(error));
        assert.match(error.message, message);
        return true;
      });
    }
  });
});

describe('a served provider that does not negotiate', { timeout: SUITE_TIMEOUT_MS }, () => {
  /** The built-in provider's invoke, without offerRequest and accept, and a quote that never comes when asked. */
  function serving(negotiation: Pick<ServedProvider, 'offerRequest'> = {}): ServedProvider {
    const builtin = new BuiltinProvider();
    return {
      acmp: { ...builtin.acmp, accepts: ['acmp/invoke', 'acmp/cancel'] },
      invoke: (params, handlers) => builtin.invoke(params, handlers),
      inputChunk: (params) => builtin.inputChunk(params),
      cancel: (params) => builtin.cancel(params),
      close: () => builtin.close(),
      ...negotiation,
    };
  }

  test('answers -32601 to acmp/offerRequest and acmp/accept, an AcmpError the buyer can tell; invokes still run', async () => {
    const server = await serveHttp(0, '127.0.0.1', { provider: serving() });
    try {
      await withConnection({ id: 'direct-only', transport: 'http', url: server.url }, async (connection) => {
        const quote = await refusal(connection.offerRequest({ capability: 'echo' }));
        assert.equal(quote.code, METHOD_NOT_FOUND);
        assert.equal(quote.message, 'Method not found');
        const accept = await refusal(connection.accept({ offer_id: 'offer_6217d1' }));
        assert.equal(accept.code, METHOD_NOT_FOUND);
        const result = await connection.invoke({ task_id: freshId(), capability: 'echo', input: INPUT }, IGNORE);
        assert.deepEqual(result.output, INPUT);
      });
    } finally {
      await server.close();
    }
  });

  test('a quote that never comes ends when its connection closes', async () => {
    let asked!: () => void;
    const quoteArrived = new Promise<void>((resolve) => (asked = resolve));
    const hanging = serving({
      offerRequest: () => {
        asked();
        return new Promise(() => undefined);
      },
    });
    const server = await serveHttp(0, '127.0.0.1', { provider: hanging });
    try {
      const connection = await connectProvider({ id: 'hanging', transport: 'http', url: server.url });
      const quote = connection.offerRequest({ capability: 'echo' });
      await quoteArrived;
      await connection.close();
      const error = await quote.then(
        () => assert.fail('expected the quote to end with the connection'),
        (reason: unknown) => reason,
      );
      assert.ok(error instanceof TransportError, String(error));
    } finally {
      await server.close();
    }
  });
});
