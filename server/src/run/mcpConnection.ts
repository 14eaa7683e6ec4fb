// ACMP over MCP stdio, Streamable HTTP and WebSocket, where this side is the Layer 1 buyer (design.md §6). Loaded by
// connect.ts with the first connection that needs it.
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  McpError,
  type Notification,
  type Request,
  type RequestId,
  type Result,
} from '@modelcontextprotocol/sdk/types.js';
import type { Writable } from 'node:stream';
import WebSocket from 'ws';
import { z } from 'zod';
import type { ProviderConfig } from '../protocol/settings';
import { coalesceWrites } from './coalescedWrites';
import { Ending } from './ending';
import { MAX_MESSAGE_BYTES, OVERSIZED, isStdioOverflow, limitedFetch } from './messageLimit';
import {
  ACMP_ERRORS,
  ACMP_VERSION,
  type AcmpCapability,
  AcmpError,
  type InvokeParams,
  type InvokeResult,
  METHODS,
  TransportError,
} from '../protocol/acmpMessages';
import {
  AcceptResultSchema,
  ChunkParamsSchema,
  HeartbeatParamsSchema,
  InvokeResultSchema,
  OfferSchema,
  firstIssue,
  readAcmpCapability,
} from './schemas';
import type { InvokeHandlers, ProviderConnection } from './types';
import { WebSocketTransport } from './websocketTransport';

const CLIENT_INFO = { name: 'acmp-dag', version: ACMP_VERSION };
/** The SDK's own request timeout, set out of the way: the executor owns the deadlines (timeout_ms, heartbeats). */
const NO_SDK_TIMEOUT = 2 ** 31 - 1;
/**
 * What the SDK checks of an invoke's answer (InvokeResultSchema checks the rest), made once: zod compiles a parser for
 * each schema it makes, which per invoke was the buyer's largest cost.
 */
const ANY_OBJECT = z.looseObject({});
/** The end of a stdio provider's stderr kept for the error that reports its exit. */
const STDERR_TAIL_CHARS = 800;
/** A peer's text quoted in an error is cut here (an unknown response is quoted whole by the SDK). */
const REASON_CHARS = 1_000;

/** An error's message with its cause's (fetch says only "fetch failed"; its cause says why). */
function describe(error: unknown): string {
  const { message, cause } = error as Error;
  return cause instanceof Error ? `${message}: ${cause.message}` : String(message ?? error);
}

/** Text with the token blanked out: a peer's stderr or error message may quote it, our errors never do. */
const redactor =
  (token: string | undefined) =>
  (text: string): string =>
    token === undefined ? text : text.split(token).join('[token]');

/**
 * The buyer's side of an MCP session, on the SDK's protocol layer. Not the SDK's Client: its connect() closes the
 * connection when `initialize` fails and its parsed capabilities drop `acmp` (notes/mcp-sdk.md), while a provider
 * that does not speak `initialize` is still used, without optional features (design.md §6).
 */
class AcmpBuyer extends Protocol<Request, Notification, Result> {
  // Capabilities are checked at the ACMP level, against the provider's `acmp` advertisement.
  protected assertCapabilityForMethod(): void {}
  protected assertNotificationCapability(): void {}
  protected assertRequestHandlerCapability(): void {}
  protected assertTaskCapability(): void {}
  protected assertTaskHandlerCapability(): void {}
}

/** A transport ready to connect, with what the connection needs to know about it. */
interface McpTransport {
  readonly transport: Transport;
  /** What the connection says when the transport closes by itself (e.g. the process exited, with its stderr). */
  readonly closedReason: () => string;
  /** Ends the session politely before the transport closes (HTTP: DELETE of the session). */
  readonly endSession?: () => Promise<void>;
  /** Whether the transport's error is a message over MAX_MESSAGE_BYTES (each transport says so its own way). */
  readonly oversized: (error: Error) => boolean;
}

/** What the parts of a connection share: its session, its end, and how it turns failures into errors. */
interface Session {
  /** How errors name the provider. */
  readonly name: string;
  readonly buyer: AcmpBuyer;
  readonly ending: Ending;
  /** Settles once the transport closed. */
  readonly closed: Promise<void>;
  /** The connection is gone or no longer to be trusted (garbage, an unknown response id, ...): end it now. */
  readonly fail: (reason: string, retryable?: boolean) => TransportError;
  /** The error an invoke or notification ends with: the provider's answer, or why the connection ended. */
  readonly errorOf: (error: unknown) => Error;
}

async function connectMcp(
  provider: ProviderConfig,
  mcpTransport: McpTransport,
  redact: (text: string) => string,
  initializeTimeoutMs: number,
): Promise<ProviderConnection> {
  const session = openSession(provider, mcpTransport, redact);
  try {
    await session.buyer.connect(mcpTransport.transport);
  } catch (error) {
    throw session.fail(`cannot connect: ${describe(error)}`);
  }
  const routes = routeAcmpMessages(mcpTransport.transport, session.fail);
  void session.closed.then(routes.forget);
  const acmp = await initialize(session, mcpTransport.transport, initializeTimeoutMs);
  return acmpConnection(provider, session, routes, acmp, mcpTransport.endSession);
}

/** The buyer on the transport, not yet connected, and how the connection fails and reports errors. */
function openSession(
  provider: ProviderConfig,
  { transport, closedReason, oversized }: McpTransport,
  redact: (text: string) => string,
): Session {
  const name = `provider "${provider.id}" (${provider.transport})`;
  const buyer = new AcmpBuyer();
  const ending = new Ending();
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));

  const fail = (reason: string, retryable = true): TransportError => {
    const quoted = reason.length > REASON_CHARS ? `${reason.slice(0, REASON_CHARS)}…` : reason;
    const error = new TransportError(`${name}: ${redact(quoted)}`, { retryable });
    const first = ending.end(error);
    if (first === error) transport.close().catch(() => undefined);
    return first;
  };
  buyer.onerror = (error) =>
    oversized(error)
      ? // Its answer was lost with the connection, and sending the invoke again would bring the same answer.
        fail(`${OVERSIZED}; the invoke is not sent again`, false)
      : fail(
          error instanceof SyntaxError || error instanceof z.ZodError
            ? `sent something that is not JSON-RPC: ${error instanceof z.ZodError ? firstIssue(error) : error.message}`
            : describe(error),
        );
  buyer.onclose = () => {
    fail(closedReason());
    markClosed();
  };
  const errorOf = (error: unknown): Error => {
    if (error instanceof AcmpError || error instanceof TransportError) return error;
    if (ending.error !== undefined) return ending.error;
    if (error instanceof McpError) {
      // A JSON-RPC error answer; the SDK prefixes its message with "MCP error <code>: ".
      const prefix = `MCP error ${error.code}: `;
      const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
      // The error's data is the provider's too, shown in reports: it may quote the token as much as the message.
      const data: unknown =
        error.data === undefined ? undefined : JSON.parse(redact(JSON.stringify(error.data) ?? 'null'));
      return new AcmpError(error.code, redact(message), data);
    }
    return new TransportError(`${name}: ${redact(describe(error))}`, { cause: error });
  };
  return { name, buyer, ending, closed, fail, errorOf };
}

/** What the connection sends and receives past the SDK's protocol layer. */
interface AcmpRoutes {
  /** The handlers of the invokes in flight, by task_id, for the connection to fill. */
  readonly handlers: Map<string, InvokeHandlers>;
  /** Sends a request and settles with its result, or rejects with the McpError of an error answer. */
  readonly request: (method: string, params: object) => Promise<unknown>;
  /** The connection ended: no request sent past the SDK will be answered. */
  readonly forget: () => void;
}

/** The id prefix of requests sent past the SDK: the SDK numbers its own, so a string id cannot be one of them. */
const DIRECT_ID_PREFIX = 'acmp-';

/**
 * Wraps the connected transport so that ACMP's notifications reach the invoke in flight with their task_id, and so
 * that quotes and accepts go past the SDK's request machinery: a timer, an abort listener, closures and a schema parse
 * per request, which were most of a quote's cost on this side (the SDK's transport still checks every message).
 */
function routeAcmpMessages(transport: Transport, fail: (reason: string) => TransportError): AcmpRoutes {
  const routes = new Map<string, InvokeHandlers>();
  /** The requests sent past the SDK and not yet answered, by id. */
  const pending = new Map<string, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  /** Delivers a provider's notification to the invoke in flight with its task_id. */
  const route = <P extends { task_id: string }>(
    method: string,
    schema: z.ZodType<P>,
    deliver: (handlers: InvokeHandlers, params: P) => void,
  ) => ({
    method,
    receive(params: unknown): void {
      const parsed = schema.safeParse(params);
      if (!parsed.success) return void fail(`sent a malformed ${method}: ${firstIssue(parsed.error)}`);
      const handlers = routes.get(parsed.data.task_id);
      if (handlers !== undefined) deliver(handlers, parsed.data);
    },
  });
  const notifications = [
    route(METHODS.streamChunk, ChunkParamsSchema, (handlers, params) => handlers.onChunk(params)),
    route(METHODS.heartbeat, HeartbeatParamsSchema, (handlers, params) => handlers.onHeartbeat(params)),
  ];
  /** The task_id of each invoke in flight, by its JSON-RPC request id. */
  const invokeIds = new Map<RequestId, string>();
  // ACMP's notifications and invoke results are taken in the order they arrived, whatever the reads: the SDK hands a
  // notification to its handler a microtask later, and an invoke's answer reaches the executor several later, so a
  // chunk read in one piece with the result before it would count as before it. A result closes its task's stream
  // (Layer 1 §7.1: the final chunk comes first); anything later for that task is ignored.
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if ('method' in message && message.method === METHODS.invoke && 'id' in message) {
      invokeIds.set(message.id, (message.params as { task_id: string }).task_id);
    }
    return send(message, options);
  };
  const receive = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ('method' in message && !('id' in message)) {
      const notification = notifications.find((candidate) => candidate.method === message.method);
      if (notification !== undefined) return notification.receive(message.params);
    } else if (!('method' in message) && message.id !== undefined) {
      const direct = typeof message.id === 'string' ? pending.get(message.id) : undefined;
      if (direct !== undefined) {
        pending.delete(message.id as string);
        if ('result' in message) return direct.resolve(message.result);
        if ('error' in message) {
          const { code, message: text, data } = message.error;
          return direct.reject(new McpError(code, text, data));
        }
      }
      const taskId = invokeIds.get(message.id);
      if (taskId !== undefined) routes.delete(taskId);
      invokeIds.delete(message.id);
    }
    receive?.(message, extra);
  };
  const request = (method: string, params: object): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = `${DIRECT_ID_PREFIX}${nextId++}`;
      pending.set(id, { resolve, reject });
      const message: JSONRPCMessage = { jsonrpc: '2.0', id, method, params: { ...params } };
      transport.send(message).catch((error: unknown) => {
        pending.delete(id);
        reject(error instanceof Error ? error : new Error(String(error)));
      });
    });
  return { handlers: routes, request, forget: () => pending.clear() };
}

/** The MCP handshake: the provider's `acmp` capability, or none when it does not speak `initialize`. */
async function initialize(
  { buyer, ending, fail, closed }: Session,
  transport: Transport,
  initializeTimeoutMs: number,
): Promise<AcmpCapability | undefined> {
  let acmp: AcmpCapability | undefined;
  try {
    let timer: NodeJS.Timeout | undefined;
    const answer = await ending.race(() =>
      Promise.race([
        buyer.request(
          {
            method: 'initialize',
            params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
          },
          z.looseObject({ protocolVersion: z.string().optional(), capabilities: z.unknown() }),
          { timeout: NO_SDK_TIMEOUT },
        ),
        new Promise<never>((_, reject) => {
          const message = `no answer to initialize within ${initializeTimeoutMs} ms`;
          timer = setTimeout(() => reject(new Error(message)), initializeTimeoutMs);
        }),
      ]).finally(() => clearTimeout(timer)),
    );
    acmp = readAcmpCapability(answer.capabilities);
    if (answer.protocolVersion !== undefined) transport.setProtocolVersion?.(answer.protocolVersion);
    await buyer.notification({ method: 'notifications/initialized' });
  } catch (error) {
    // An error answer means no MCP handshake, not no ACMP: the provider is used without optional features.
    if (!(error instanceof McpError) || ending.error !== undefined) {
      const failure = fail(describe(error));
      await closed;
      throw failure;
    }
  }
  return acmp;
}

/** The connection the executor uses, on a session past its handshake. */
function acmpConnection(
  provider: ProviderConfig,
  { name, buyer, ending, closed, fail, errorOf }: Session,
  { handlers: routes, request: sendDirect }: AcmpRoutes,
  acmp: AcmpCapability | undefined,
  endSession: (() => Promise<void>) | undefined,
): ProviderConnection {
  /** An invoke goes through the SDK, which ties the provider's progress to it; quotes and accepts go past it. */
  const send = (method: string, params: object): Promise<unknown> =>
    method === METHODS.invoke
      ? buyer.request({ method, params: { ...params } }, ANY_OBJECT, { timeout: NO_SDK_TIMEOUT })
      : sendDirect(method, params);
  /**
   * Sends a request and reads its answer with `schema`; an answer it cannot read is a -33099 AcmpError with `data`.
   * Rejects with the error `errorOf` makes: the provider's error answer (AcmpError), or why the connection ended.
   */
  async function request<T>(
    method: string,
    params: object,
    schema: z.ZodType<T>,
    data?: Readonly<Record<string, unknown>>,
  ): Promise<T> {
    try {
      const answer = await ending.race(() => send(method, params));
      const result = schema.safeParse(answer);
      if (!result.success) {
        throw new AcmpError(
          ACMP_ERRORS.internal,
          `${name} answered ${method} with an invalid result: ${firstIssue(result.error)}`,
          data,
        );
      }
      return result.data;
    } catch (error) {
      throw errorOf(error);
    }
  }
  return {
    providerId: provider.id,
    acmp,
    async invoke(params: InvokeParams, handlers: InvokeHandlers): Promise<InvokeResult> {
      routes.set(params.task_id, handlers);
      try {
        return await request(METHODS.invoke, params, InvokeResultSchema, { task_id: params.task_id });
      } finally {
        if (routes.get(params.task_id) === handlers) routes.delete(params.task_id);
      }
    },
    offerRequest: (params) => request(METHODS.offerRequest, params, OfferSchema, { capability: params.capability }),
    accept: (params) => request(METHODS.accept, params, AcceptResultSchema, { offer_id: params.offer_id }),
    async inputChunk(params) {
      try {
        await ending.race(() => buyer.notification({ method: METHODS.inputChunk, params: { ...params } }));
      } catch (error) {
        throw errorOf(error);
      }
    },
    // Best effort: on a connection that failed, the invoke it would cancel has already ended with that failure.
    async cancel(params) {
      await ending
        .race(() => buyer.notification({ method: METHODS.cancel, params: { ...params } }))
        .catch(() => undefined);
    },
    async close() {
      if (ending.error === undefined) await endSession?.().catch(() => undefined);
      fail('the connection was closed');
      await closed;
    },
  };
}

function stdioTransport(provider: ProviderConfig, token: string | undefined, redact: (text: string) => string) {
  if (provider.command === undefined) throw new TransportError(`provider "${provider.id}" (stdio) has no command`);
  // No shell; the SDK passes on only a safe part of our environment (PATH, HOME, ...), then `env`, then the token.
  const transport = new StdioClientTransport({
    command: provider.command,
    args: provider.args ?? [],
    env: { ...provider.env, ...(token !== undefined && { ACMP_TOKEN: token }) },
    stderr: 'pipe',
    maxBufferSize: MAX_MESSAGE_BYTES,
  });
  // The SDK keeps the child process to itself; its stdin, once started, is where the messages go.
  const stdinOf = () => (transport as unknown as { _process?: { stdin?: Writable | null } })._process?.stdin;
  let coalesce: (() => void) | undefined;
  const send = transport.send.bind(transport);
  transport.send = (message) => {
    const stdin = stdinOf();
    if (stdin) (coalesce ??= coalesceWrites(stdin))();
    return send(message);
  };
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
  });
  const closedReason = () => {
    const tail = redact(stderr.trim());
    return tail === '' ? 'the process exited' : `the process exited; its stderr ends with: ${tail}`;
  };
  return { transport, closedReason, oversized: isStdioOverflow };
}

function urlOf(provider: ProviderConfig): URL {
  try {
    return new URL(provider.url ?? '');
  } catch {
    throw new TransportError(`provider "${provider.id}" (${provider.transport}) needs a valid url`);
  }
}

const authorization = (token: string | undefined) =>
  token === undefined ? undefined : { Authorization: `Bearer ${token}` };

function httpTransport(provider: ProviderConfig, token: string | undefined): McpTransport {
  let exceeded = false;
  const transport = new StreamableHTTPClientTransport(urlOf(provider), {
    requestInit: { headers: authorization(token) },
    fetch: limitedFetch(MAX_MESSAGE_BYTES, () => (exceeded = true)),
  });
  return {
    transport,
    closedReason: () => 'the connection closed',
    endSession: () => transport.terminateSession(),
    oversized: () => exceeded,
  };
}

function websocketTransport(provider: ProviderConfig, token: string | undefined): McpTransport {
  const socket = new WebSocket(urlOf(provider), { headers: authorization(token), maxPayload: MAX_MESSAGE_BYTES });
  return {
    transport: new WebSocketTransport(socket),
    closedReason: () => 'the connection closed',
    oversized: (error) => (error as NodeJS.ErrnoException).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH',
  };
}

/** A connection to an MCP provider (stdio, http or websocket), with its bearer token when it has one. */
export function connectMcpProvider(
  provider: ProviderConfig,
  token: string | undefined,
  initializeTimeoutMs: number,
): Promise<ProviderConnection> {
  const redact = redactor(token);
  const transport =
    provider.transport === 'stdio'
      ? stdioTransport(provider, token, redact)
      : provider.transport === 'http'
        ? httpTransport(provider, token)
        : websocketTransport(provider, token);
  return connectMcp(provider, transport, redact, initializeTimeoutMs);
}
