// Connections to the providers of the providers file (design.md §6): the built-in provider in-process, and ACMP
// over MCP stdio, Streamable HTTP and WebSocket (mcpConnection.ts), where this side is the Layer 1 buyer. The MCP SDK
// and ws load with the first such connection: a run on the built-in provider alone never needs them.
import type { ProviderConfig } from '../protocol/settings';
import { BuiltinProvider } from './builtin/provider';
import { Ending } from './ending';
import { TransportError } from '../protocol/acmpMessages';
import type { Connector, ProviderConnection } from './types';

export interface ConnectOptions {
  /** How long a provider may take to answer `initialize` (default 10 s). */
  readonly initializeTimeoutMs?: number;
  /**
   * Bearer tokens by provider id, handed over for one run (the editor keeps them in its secret storage); a provider
   * without one here takes its token from the variable its `tokenEnv` names.
   */
  readonly tokens?: Readonly<Record<string, string>>;
}

/** The bearer token handed over for the run, else the one in the variable `tokenEnv` names (design.md §6). */
function tokenOf(provider: ProviderConfig, tokens: Readonly<Record<string, string>>): string | undefined {
  if (Object.hasOwn(tokens, provider.id) && tokens[provider.id] !== '') return tokens[provider.id];
  if (provider.tokenEnv === undefined) return undefined;
  const token = process.env[provider.tokenEnv];
  if (token === undefined || token === '') {
    throw new TransportError(`provider "${provider.id}": the variable ${provider.tokenEnv} (tokenEnv) is not set`);
  }
  return token;
}

/**
 * The built-in provider in this process. No copies cross it: its outputs are JSON values by construction, as the wire
 * would deliver them, and a JSON copy each way would cost about a third of the executor's budget per task.
 */
function connectBuiltin(provider: ProviderConfig): ProviderConnection {
  const builtin = new BuiltinProvider({ remembered: 0 });
  const ending = new Ending();
  return {
    providerId: provider.id,
    acmp: builtin.acmp,
    // Not raced against the end, a race per invoke: closing ends the executions in flight with the end's error.
    invoke: (params, handlers) =>
      ending.error === undefined ? builtin.invoke(params, handlers) : Promise.reject(ending.error),
    inputChunk: (params) => ending.race(() => Promise.resolve(builtin.inputChunk(params))),
    offerRequest: (params) => ending.race(() => builtin.offerRequest(params)),
    accept: (params) => ending.race(() => builtin.accept(params)),
    cancel: (params) => Promise.resolve(builtin.cancel(params)),
    close: () => {
      const error = ending.end(new TransportError(`provider "${provider.id}": the connection was closed`));
      return Promise.resolve(builtin.close(error));
    },
  };
}

/** A Connector (types.ts) with its own options; `connectProvider` is the one with the defaults. */
export function createConnector({ initializeTimeoutMs = 10_000, tokens = {} }: ConnectOptions = {}): Connector {
  return async (provider) => {
    if (provider.transport === 'builtin') return connectBuiltin(provider);
    const token = tokenOf(provider, tokens);
    const { connectMcpProvider } = await import('./mcpConnection.js');
    return connectMcpProvider(provider, token, initializeTimeoutMs);
  };
}

/** Opens a connection to a configured provider (design.md §6). Rejects with TransportError when it cannot. */
export const connectProvider: Connector = createConnector();
