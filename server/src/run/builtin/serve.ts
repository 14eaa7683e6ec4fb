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
import { OVERSIZED, isStdioOverflow } from '../messageLimit';
import { ACMP_VERSION, AcmpError, METHODS } from '../protocol';
import { CancelParamsSchema, ChunkParamsSchema, InvokeParamsSchema, firstIssue } from '../schemas';
import { BuiltinProvider, INVALID_PARAMS } from './provider';

const SERVER_INFO = { name: 'acmp-dag-builtin', version: ACMP_VERSION };

/** What the MCP server serves: the built-in provider, or one that wraps it (the crash tests' counting provider). */
export type ServedProvider = Pick<BuiltinProvider, 'acmp' | 'invoke' | 'inputChunk' | 'cancel' | 'close'>;

/** An MCP server for `provider`: one per session, all sharing the provider and so its idempotency keys. */
export function createAcmpServer(provider: ServedProvider): Server {
  // The SDK's capabilities type has no member for extensions, but it sends `acmp` as given (notes/mcp-sdk.md).
  const capabilities = { acmp: { ...provider.acmp } } as ServerCapabilities;
  const server = new Server<Request, Notification, Result>(SERVER_INFO, { capabilities });
  const method = <M extends string>(name: M) => z.object({ method: z.literal(name), params: z.unknown() });

  server.setRequestHandler(method(METHODS.invoke), async (request, extra) => {
    const params = InvokeParamsSchema.safeParse(request.params);
    if (!params.success) {
      throw new AcmpError(INVALID_PARAMS, `Invalid acmp/invoke params: ${firstIssue(params.error)}`);
    }
    // A buyer that went away misses its chunks; the task itself is not affected.
    const notify = (notification: Notification) => void extra.sendNotification(notification).catch(() => undefined);
    const result = await provider.invoke(params.data, {
      onChunk: (chunk) => notify({ method: METHODS.streamChunk, params: { ...chunk } }),
      onHeartbeat: (heartbeat) => notify({ method: METHODS.heartbeat, params: { ...heartbeat } }),
    });
    return { ...result };
  });
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

/** Serves the built-in provider on stdin/stdout until stdin ends. */
export async function serveStdio(): Promise<void> {
  const provider = new BuiltinProvider();
  const server = createAcmpServer(provider);
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  // On stderr the buyer's error quotes it: the SDK ends the session on an oversized message without a word.
  server.onerror = (error) =>
    process.stderr.write(
      `acmp-dag serve: ${isStdioOverflow(error) ? `the buyer ${OVERSIZED}; the session ends` : error.message}\n`,
    );
  await server.connect(new StdioServerTransport());
  // The SDK's stdio transport does not watch for the end of stdin: the buyer closing it ends the session.
  process.stdin.once('end', () => void server.close());
  await closed;
  provider.close();
}

export interface HttpProviderServer {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  close(): Promise<void>;
}

export interface ServeHttpOptions {
  /** When set, every request needs `Authorization: Bearer <token>` (Layer 1 §5.1). */
  readonly token?: string;
  /** Served instead of a new built-in provider. */
  readonly provider?: ServedProvider;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

function refuse(response: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) {
  response
    .writeHead(status, { 'content-type': 'application/json', ...headers })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** Serves the built-in provider over Streamable HTTP at `/mcp`; port 0 picks a free port. */
export async function serveHttp(
  port: number,
  host = '127.0.0.1',
  { token, provider = new BuiltinProvider() }: ServeHttpOptions = {},
): Promise<HttpProviderServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
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
    const sessionId = request.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (session === undefined) return refuse(response, 404, 'Session not found');
      return session.handleRequest(request, response);
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await createAcmpServer(provider).connect(transport);
    await transport.handleRequest(request, response);
    // A first request that was not `initialize` opened no session: nothing keeps its transport.
    if (transport.sessionId === undefined) await transport.close();
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
      await Promise.all(Array.from(sessions.values(), (session) => session.close()));
      provider.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
