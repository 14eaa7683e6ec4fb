// The engine's request identity: Restate signs each request it sends to a worker with an Ed25519 key
// (`request-identity-private-key-pem-file`), and the worker accepts only requests signed with it (the SDK's
// `identityKeys`), so nothing else that reaches the worker's loopback port can make it run a DAG on the user's
// providers. The private key stays in the engine's folder; the public key is what a worker is given.
import bs58 from 'bs58';
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/** The engine's identity in the SDK's format: `publickeyv1_` and the raw public key in base58. */
export function identityKeyOf(privateKeyPem: string): string {
  const spki = createPublicKey(createPrivateKey(privateKeyPem)).export({ type: 'spki', format: 'der' });
  // An Ed25519 SPKI is a fixed 12-byte header and the 32-byte key.
  return `publickeyv1_${bs58.encode(spki.subarray(spki.length - 32))}`;
}

/** The key in `file`, made (0600) when there is none; returns its public identity. */
export function ensureIdentityKey(file: string): string {
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  }
  return identityKeyOf(readFileSync(file, 'utf8'));
}

/** Whether `text` has the form of a public identity key. */
export const isIdentityKey = (text: string): boolean => /^publickeyv1_[1-9A-HJ-NP-Za-km-z]{40,50}$/.test(text);
