// Stored provider tokens go only to the endpoint they were stored for: a workspace that redefines a provider id with
// its own url or command gets no token, and a token stored by id alone (as earlier versions did) is never sent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Secrets, type TokenProvider, TokenStore, endpointOf, tokenKey } from '../../client/src/tokenStore';

/** VS Code's SecretStorage as far as the store uses it: a map of strings. */
function secretStorage(initial: Record<string, string> = {}): Secrets & { readonly entries: Map<string, string> } {
  const entries = new Map(Object.entries(initial));
  return {
    entries,
    get: (key) => Promise.resolve(entries.get(key)),
    store: (key, value) => {
      entries.set(key, value);
      return Promise.resolve();
    },
    delete: (key) => {
      entries.delete(key);
      return Promise.resolve();
    },
  };
}

const cloud: TokenProvider = { id: 'cloud', transport: 'http', url: 'https://compute.example.com/acmp/v1' };
const local: TokenProvider = {
  id: 'ref',
  transport: 'stdio',
  command: 'python3',
  args: ['provider.py'],
  env: { A: '1', B: '2' },
};

test('a token goes to the provider it was stored for, and not to the same id at another endpoint', async () => {
  const secrets = secretStorage();
  const store = new TokenStore(secrets);
  await store.store(cloud, 'secret-cloud');
  assert.deepEqual(await store.tokensFor([cloud]), { tokens: { cloud: 'secret-cloud' }, notSent: [] });

  const redefined: TokenProvider = { ...cloud, url: 'https://attacker.example/acmp' };
  const { tokens, notSent } = await store.tokensFor([redefined]);
  assert.deepEqual(tokens, {});
  assert.deepEqual(notSent, [redefined], 'the user is asked to set it again');
  // Other transports to the same url are other endpoints too.
  assert.deepEqual((await store.tokensFor([{ ...cloud, transport: 'websocket' }])).tokens, {});
});

test('a stdio provider is keyed by its command, arguments and environment', async () => {
  const store = new TokenStore(secretStorage());
  await store.store(local, 'secret-local');
  // The order the environment is written in does not matter.
  assert.deepEqual((await store.tokensFor([{ ...local, env: { B: '2', A: '1' } }])).tokens, { ref: 'secret-local' });
  for (const changed of [
    { ...local, command: 'node' },
    { ...local, args: ['other.py'] },
    { ...local, env: { A: '1', B: '2', PROVIDER_URL: 'https://attacker.example' } },
  ]) {
    assert.deepEqual((await store.tokensFor([changed])).tokens, {}, JSON.stringify(changed));
  }
  // What does not decide where the token goes leaves the key alone.
  assert.equal(tokenKey({ ...local, capabilities: ['x'], tokenEnv: 'T' } as TokenProvider), tokenKey(local));
  assert.equal(endpointOf(local), 'python3 provider.py');
});

test('two providers of one id at different endpoints get no token: a run hands tokens over by id', async () => {
  const store = new TokenStore(secretStorage());
  await store.store(cloud, 'secret-cloud');
  const second: TokenProvider = { ...cloud, url: 'https://attacker.example/acmp' };
  const { tokens, notSent } = await store.tokensFor([cloud, second]);
  assert.deepEqual(tokens, {});
  assert.deepEqual(notSent, [cloud, second]);
});

test('a token stored by provider id alone is never sent; storing it again replaces it', async () => {
  const secrets = secretStorage({ 'acmp.providerToken.cloud': 'old-secret' });
  const store = new TokenStore(secrets);
  assert.deepEqual(await store.tokensFor([cloud]), { tokens: {}, notSent: [cloud] });
  await store.store(cloud, 'new-secret');
  assert.deepEqual(await store.tokensFor([cloud]), { tokens: { cloud: 'new-secret' }, notSent: [] });
  assert.equal(secrets.entries.has('acmp.providerToken.cloud'), false, 'the old token is gone from the storage');
});

test('a provider that never had a token is not asked for one; a removed token is gone', async () => {
  const secrets = secretStorage();
  const store = new TokenStore(secrets);
  assert.deepEqual(await store.tokensFor([cloud, local]), { tokens: {}, notSent: [] });
  await store.store(cloud, 'secret-cloud');
  await store.remove(cloud);
  assert.deepEqual(await store.tokensFor([cloud]), { tokens: {}, notSent: [] });
  assert.deepEqual([...secrets.entries.keys()], []);
});
