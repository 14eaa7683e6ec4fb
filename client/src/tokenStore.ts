// Where stored provider tokens are kept: under the provider's id AND its endpoint (its url, or for stdio the command,
// its arguments and environment), so that a workspace redefining provider "cloud" with its own url or command does not
// receive the token the user stored for the real one. No VS Code here beyond the secret storage it is given.
import { createHash } from 'node:crypto';
import type { SecretStorage } from 'vscode';
import type { ProviderConfig } from '../../server/src/protocol/settings';

export type Secrets = Pick<SecretStorage, 'get' | 'store' | 'delete'>;

/** A configured provider as far as its token's key goes. */
export type TokenProvider = Pick<ProviderConfig, 'id' | 'transport' | 'url' | 'command' | 'args' | 'env'>;

/** Where a provider's requests and its token go, in words a user recognises: its url, or its command line. */
export function endpointOf(provider: TokenProvider): string {
  if (provider.transport !== 'stdio') return provider.url ?? provider.transport;
  return [provider.command ?? '', ...(provider.args ?? [])].join(' ');
}

/** What decides where a token goes: the environment of a stdio provider too (it may name the url it calls). */
function endpointIdentity(provider: TokenProvider): unknown {
  if (provider.transport !== 'stdio') return [provider.transport, provider.url ?? ''];
  const env = Object.entries(provider.env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return [provider.transport, provider.command ?? '', provider.args ?? [], env];
}

/** The secret storage key of a provider's token: its id and endpoint, hashed (a command line can be long). */
export function tokenKey(provider: TokenProvider): string {
  const identity = JSON.stringify([provider.id, endpointIdentity(provider)]);
  return `acmp.endpointToken.${createHash('sha256').update(identity).digest('hex')}`;
}

/** Where tokens were stored by provider id alone: never read for a run, only to say the token must be set again. */
const legacyKey = (providerId: string): string => `acmp.providerToken.${providerId}`;

/** The keys of the tokens stored for a provider id, whatever their endpoints: to tell "set again" from "never set". */
const indexKey = (providerId: string): string => `acmp.endpointTokenKeys.${providerId}`;

export interface ProviderTokenSet {
  /** The tokens to hand over for a run, by provider id. */
  readonly tokens: Record<string, string>;
  /**
   * The providers that have a token stored for another endpoint (or by id alone, as earlier versions stored them) but
   * none for the endpoint configured now: nothing is sent to them, and the user is asked to set it again.
   */
  readonly notSent: readonly TokenProvider[];
}

export class TokenStore {
  constructor(private readonly secrets: Secrets) {}

  /**
   * The stored tokens of these providers, by provider id. A token goes to a provider only when it was stored for the
   * endpoint configured now, and only when every provider of that id has that endpoint: the run hands tokens over by
   * id, so two providers of one id with different endpoints get none.
   */
  async tokensFor(providers: readonly TokenProvider[]): Promise<ProviderTokenSet> {
    const keysById = new Map<string, Set<string>>();
    for (const provider of providers) {
      const keys = keysById.get(provider.id) ?? new Set<string>();
      keys.add(tokenKey(provider));
      keysById.set(provider.id, keys);
    }
    const tokens: Record<string, string> = {};
    const notSent: TokenProvider[] = [];
    for (const [id, keys] of keysById) {
      const [key] = keys;
      const token = keys.size === 1 ? await this.secrets.get(key!) : undefined;
      if (token !== undefined && token !== '') {
        tokens[id] = token;
        continue;
      }
      if ((await this.secrets.get(legacyKey(id))) !== undefined || (await this.storedKeys(id)).length > 0) {
        notSent.push(...providers.filter((provider) => provider.id === id));
      }
    }
    return { tokens, notSent };
  }

  /** Stores the token of a provider as configured now; the one stored by id alone, if any, is dropped. */
  async store(provider: TokenProvider, token: string): Promise<void> {
    const key = tokenKey(provider);
    await this.secrets.store(key, token);
    const keys = await this.storedKeys(provider.id);
    if (!keys.includes(key)) await this.secrets.store(indexKey(provider.id), JSON.stringify([...keys, key]));
    await this.secrets.delete(legacyKey(provider.id));
  }

  /** Removes the token of a provider as configured now (and the one stored by id alone). */
  async remove(provider: TokenProvider): Promise<void> {
    const key = tokenKey(provider);
    await this.secrets.delete(key);
    const keys = (await this.storedKeys(provider.id)).filter((stored) => stored !== key);
    if (keys.length > 0) await this.secrets.store(indexKey(provider.id), JSON.stringify(keys));
    else await this.secrets.delete(indexKey(provider.id));
    await this.secrets.delete(legacyKey(provider.id));
  }

  private async storedKeys(providerId: string): Promise<string[]> {
    const stored = await this.secrets.get(indexKey(providerId));
    try {
      const keys: unknown = stored === undefined ? [] : JSON.parse(stored);
      return Array.isArray(keys) ? keys.filter((key): key is string => typeof key === 'string') : [];
    } catch {
      return [];
    }
  }
}
