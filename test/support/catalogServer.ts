// A host on 127.0.0.1 that serves ARD catalogs and MCP server cards: each path answers what the test put there (JSON
// or raw text), anything else 404; `hang` paths never answer. Tests change the routes between fetches.
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Route {
  readonly status?: number;
  /** Sent as JSON, unless a string (sent as it is). */
  readonly body: unknown;
}

export interface CatalogServer {
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  readonly routes: Map<string, Route | 'hang'>;
  /** The paths asked for, in order. */
  readonly asked: string[];
  close(): Promise<void>;
}

export async function startCatalogServer(): Promise<CatalogServer> {
  const routes = new Map<string, Route | 'hang'>();
  const asked: string[] = [];
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/';
    asked.push(path);
    const route = routes.get(path);
    if (route === 'hang') return;
    if (route === undefined) {
      response.writeHead(404).end('not found');
      return;
    }
    const text = typeof route.body === 'string' ? route.body : JSON.stringify(route.body);
    response.writeHead(route.status ?? 200, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    routes,
    asked,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An ARD catalog entry for an MCP server card: inline (`card`) or at `url`. */
export function serverCardEntry(
  identifier: string,
  at: { card: unknown } | { url: string },
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    identifier,
    displayName: identifier,
    type: 'application/mcp-server-card+json',
    ...('card' in at ? { data: at.card } : { url: at.url }),
    ...extra,
  };
}

/** An MCP server card whose streamable-http remote is `url`. */
export const serverCard = (
  name: string,
  url: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  name,
  version: '1.0.0',
  remotes: [{ type: 'streamable-http', url }],
  ...extra,
});

export const catalog = (entries: unknown[]): Record<string, unknown> => ({
  specVersion: '1.0',
  host: { displayName: 'Test market' },
  entries,
});
