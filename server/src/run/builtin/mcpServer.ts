// `acmp-dag serve`: the built-in provider as a real MCP server advertising the `acmp` capability (Layer 1 §1), over
// stdio or Streamable HTTP on 127.0.0.1, so other buyers, and our cross-process tests, can use it.
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Notification, Request, Result, ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { coalesceWrites } from '../coalescedWrites';
import { OVERSIZED, isStdioOverflow } from '../messageLimit';
import { ACMP_VERSION, AcmpError, METHODS } from '../../protocol/acmpMessages';
import {
  AcceptParamsSchema,
  CancelParamsSchema,
  ChunkParamsSchema,
  InvokeParamsSchema,
  OfferRequestParamsSchema,
  firstIssue,
} from '../schemas';
import { BuiltinProvider, INVALID_PARAMS } from './provider';

const SERVER_INFO = { name: 'acmp-dag-builtin', version: ACMP_VERSION };

/**
 * What the MCP server serves: the built-in provider, or one that wraps it (the crash tests' counting provider). One
 * without `offerRequest` and `accept` does not negotiate: those methods are not served, and a buyer gets -32601.
 */
export type ServedProvider = Pick<BuiltinProvider, 'acmp' | 'invoke' | 'inputChunk' | 'cancel' | 'close'> &
  Partial<Pick<BuiltinProvider, 'offerRequest' | 'accept'>>;

/** An MCP server for `provider`: one per session, all sharing the provider and so its idempotency keys. */
export function createAcmpServer(provider: ServedProvider): Server {
  // The SDK's capabilities type has no member for extensions, but it sends `acmp` as given (notes/mcp-sdk.md).
  const capabilities = { acmp: { ...provider.acmp } } as ServerCapabilities;
  const server = new Server<Request, Notification, Result>(SERVER_INFO, { capabilities });
  const method = <M extends string>(name: M) => z.object({ method: z.literal(name), params: z.unknown() });

  /**
   * Serves a request method by `answer`, once `schema` has checked its params (-32602 otherwise); `notify` sends the
   * buyer a notification tied to the request.
   */
  const serve = <P>(
    name: string,
    schema: z.ZodType<P>,
    answer: (params: P, notify: (notification: Notification) => void) => Promise<object>,
  ) =>
    server.setRequestHandler(method(name), async (request, extra) => {
      const params = schema.safeParse(request.params);
      if (!params.success) throw new AcmpError(INVALID_PARAMS, `Invalid ${name} params: ${firstIssue(params.error)}`);
      // A buyer that went away misses its chunks; the task itself is not affected.
      const notify = (notification: Notification) => void extra.sendNotification(notification).catch(() => undefined);
      return { ...(await answer(params.data, notify)) };
    });

  serve(METHODS.invoke, InvokeParamsSchema, (params, notify) =>
    provider.invoke(params, {
      onChunk: (chunk) => notify({ method: METHODS.streamChunk, params: { ...chunk } }),
      onHeartbeat: (heartbeat) => notify({ method: METHODS.heartbeat, params: { ...heartbeat } }),
    }),
  );
  const { offerRequest, accept } = provider;
  if (offerRequest !== undefined) {
    serve(METHODS.offerRequest, OfferRequestParamsSchema, (params) => offerRequest.call(provider, params));
  }
  if (accept !== undefined) serve(METHODS.accept, AcceptParamsSchema, (params) => accept.call(provider, params));
  // Notifications have no answer: malformed ones are dropped.
  server.setNotificationHandler(method(METHODS.inputChunk), (notification) => {
    const params = ChunkParamsSchema.safeParse(notification.params);
    if (params.success) provider.inputChunk(params.data);
  });
  server.setNotificationHandler(method(METHODS.cancel), (notification) => {
    const params = CancelParamsSchema.safeParse(notification.params);
    if (params.success) provider.cancel(params.data);
  });
  return server;
}

/** Serves `provider` (default a new built-in provider) on stdin/stdout until stdin ends or `stop` is aborted. */
export async function serveStdio(stop?: AbortSignal, provider: ServedProvider = new BuiltinProvider()): Promise<void> {
  const server = createAcmpServer(provider);
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  // On stderr the buyer's error quotes it: the SDK ends the session on an oversized message without a word.
  server.onerror = (error) =>
    process.stderr.write(
      `acmp-dag serve: ${isStdioOverflow(error) ? `the buyer ${OVERSIZED}; the session ends` : error.message}\n`,
    );
  const transport = new StdioServerTransport();
  const send = transport.send.bind(transport);
  const coalesce = coalesceWrites(process.stdout);
  transport.send = (message) => {
    coalesce();
    return send(message);
  };
  await server.connect(transport);
  // The SDK's stdio transport does not watch for the end of stdin: the buyer closing it ends the session.
  process.stdin.once('end', () => void server.close());
  stop?.addEventListener('abort', () => void server.close(), { once: true });
  await closed;
  provider.close();
}

export interface HttpProviderServer {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Sessions open at once by default: more than the buyers of one machine keep, few enough that a buyer opening session
 * after session cannot make the server grow (each costs some 60 KB).
 */
export const DEFAULT_MAX_SESSIONS = 100;
/** How long a session may go without a request by default before it is ended: its buyer went away without a word. */
export const DEFAULT_SESSION_IDLE_MS = 5 * 60_000;

export interface ServeHttpOptions {
  /** When set, every request needs `Authorization: Bearer <token>` (Layer 1 §5.1). */
  readonly token?: string;
  /** Served instead of a new built-in provider. */
  readonly provider?: ServedProvider;
  /** Sessions open at once; a new one beyond them is refused (503) until one ends. */
  readonly maxSessions?: number;
  /** A session with no request open for this long is ended (its Server and transport released). */
  readonly sessionIdleMs?: number;
}

/** A buyer's MCP session: its own Server and transport, on the provider all sessions share. */
interface Session {
  readonly server: Server;
  readonly transport: StreamableHTTPServerTransport;
  /** Its requests whose answers are still open: an invoke running, a stream of notifications held. */
  openRequests: number;
  /** Ends the session once it has been idle for the timeout. */
  idleTimer: ReturnType<typeof setTimeout> | undefined;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

function refuse(response: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) {
  response
    .writeHead(status, { 'content-type': 'application/json', ...headers })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** The sessions of one HTTP server, on the provider they share: bounded in number, each ended once idle. */
class HttpSessions {
  private readonly sessions = new Map<string, Session>();
  /** Sessionless requests being handled: each may open a session, so each holds a place under the bound. */
  private opening = 0;

  constructor(
    private readonly provider: ServedProvider,
    private readonly maxSessions: number,
    private readonly sessionIdleMs: number,
  ) {}

  /** Hands a request to the session it names, or (naming none) to a new session while the bound allows one. */
  async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const sessionId = request.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      if (session === undefined) return refuse(response, 404, 'Session not found');
      return this.serveIn(session, request, response);
    }
    if (this.sessions.size + this.opening >= this.maxSessions) {
      return refuse(
        response,
        503,
        `Service unavailable: ${this.maxSessions} sessions are open, the most this server keeps; retry when one has ended`,
      );
    }
    this.opening++;
    try {
      await this.open(request, response);
    } finally {
      this.opening--;
    }
  }

  /** Ends every session. */
  async close(): Promise<void> {
    await Promise.all(Array.from(this.sessions.values(), (session) => session.server.close()));
  }

  /** Hands a request to its session, which counts as busy until the answer is done, then idle. */
  private serveIn(session: Session, request: IncomingMessage, response: ServerResponse): Promise<void> {
    session.openRequests++;
    clearTimeout(session.idleTimer);
    response.once('close', () => {
      session.openRequests--;
      const { sessionId } = session.transport;
      if (session.openRequests > 0 || sessionId === undefined || this.sessions.get(sessionId) !== session) return;
      session.idleTimer = setTimeout(() => void session.server.close(), this.sessionIdleMs);
      session.idleTimer.unref();
    });
    return session.transport.handleRequest(request, response);
  }

  /** A request without a session: an `initialize` opens one, anything else is answered and leaves nothing behind. */
  private async open(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { sessions } = this;
    const server = createAcmpServer(this.provider);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, session),
    });
    const session: Session = { server, transport, openRequests: 0, idleTimer: undefined };
    transport.onclose = () => {
      clearTimeout(session.idleTimer);
      if (transport.sessionId !== undefined && sessions.get(transport.sessionId) === session) {
        sessions.delete(transport.sessionId);
      }
    };
    await server.connect(transport);
    await this.serveIn(session, request, response);
    if (transport.sessionId === undefined) await server.close();
  }
}

/**
 * Serves the built-in provider over Streamable HTTP at `/mcp`; port 0 picks a free port. Sessions are bounded in number
 * and end when idle: a new session beyond the bound is refused rather than one in use ended, for a refusal tells the
 * newcomer why and costs the buyers at work nothing, and the bound frees itself as idle sessions time out.
 */
export async function serveHttp(
  port: number,
  host = '127.0.0.1',
  {
    token,
    provider = new BuiltinProvider(),
    maxSessions = DEFAULT_MAX_SESSIONS,
    sessionIdleMs = DEFAULT_SESSION_IDLE_MS,
  }: ServeHttpOptions = {},
): Promise<HttpProviderServer> {
  const sessions = new HttpSessions(provider, maxSessions, sessionIdleMs);
  const expected = token === undefined ? undefined : sha256(`Bearer ${token}`);
  const authority = host.includes(':') ? `[${host}]` : host;
  let allowedHosts: readonly string[] = [];

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    // A page the browser loaded from another site may reach 127.0.0.1 by DNS rebinding: its Host header gives it away.
    if (!allowedHosts.includes(request.headers.host ?? '')) return refuse(response, 403, 'Forbidden: unexpected Host');
    const given = request.headers.authorization;
    if (expected !== undefined && (given === undefined || !timingSafeEqual(sha256(given), expected))) {
      return refuse(response, 401, 'Unauthorized: a valid bearer token is required', { 'www-authenticate': 'Bearer' });
    }
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== '/mcp') return refuse(response, 404, 'Not found');
    return sessions.serve(request, response);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) refuse(response, 500, 'Internal error');
      else response.end();
    });
  });
  await new Promise<void>((resolve, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      resolve();
    });
  });
  const actualPort = (server.address() as AddressInfo).port;
  allowedHosts = [`${authority}:${actualPort}`, `localhost:${actualPort}`];
  return {
    url: `http://${authority}:${actualPort}/mcp`,
    async close() {
      await sessions.close();
      provider.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
