// The engine's addresses as the CLI takes them: --engine (the ingress: a local engine's unix socket, or a remote
// engine's URL) or ACMP_ENGINE_URL, and what only `worker` needs: the admin API (to register itself) and the engine's
// public identity key (to check who calls it).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { EngineAddressError, adminAddressFor, parseEngineAddress } from '../run/durable/engineHttp';
import { IDENTITY_PUBLIC_FILE } from '../run/durable/engineProcess';
import { isIdentityKey } from '../run/durable/requestIdentity';
import { DEFAULT_ENGINE_DIR, type EngineRecord, readEngineRecord } from './engine';
import { UsageError } from './usage';

/** The environment variable naming the engine's public identity key for a worker (a remote engine's). */
export const IDENTITY_KEY_ENV = 'ACMP_ENGINE_IDENTITY_KEY';

/** The --engine address (the ingress), or ACMP_ENGINE_URL; a usage error without either, or for a wrong one. */
export function engineOption(value: string | undefined): string {
  const address = value ?? process.env.ACMP_ENGINE_URL;
  if (address === undefined || address === '') {
    throw new UsageError(
      "this command needs --engine ADDRESS (the ingress `acmp-dag engine start` prints, unix:/.../ingress.sock, or a remote engine's URL) or ACMP_ENGINE_URL",
    );
  }
  return addressOption(address, '--engine');
}

/** An address option's value, normalized; a usage error naming the option when it is not an address. */
export function addressOption(value: string, option: string): string {
  try {
    return parseEngineAddress(value).text;
  } catch (error) {
    throw new UsageError(`${option}: ${(error as EngineAddressError).message}`);
  }
}

/** The record of the engine `engine start` ran in DEFAULT_ENGINE_DIR, when it is the one at `ingress`. */
function recordedEngine(ingress: string): EngineRecord | undefined {
  const record = readEngineRecord(resolve(DEFAULT_ENGINE_DIR));
  return record?.ingress === ingress ? record : undefined;
}

/** The admin API of the engine at `ingress`: beside a local engine's socket, else recorded, else port 9070. */
export function adminUrlFor(ingress: string): string {
  return adminAddressFor(parseEngineAddress(ingress), recordedEngine(ingress)?.admin).text;
}

/**
 * The engine's public identity key: --identity-key, ACMP_ENGINE_IDENTITY_KEY, or the one a local engine's folder
 * names (its sockets are in DIR/<node>/); a usage error when none is found, for a worker must not take unsigned calls.
 */
export function identityKeyFor(ingress: string, given: string | undefined): string {
  const key =
    given ?? process.env[IDENTITY_KEY_ENV] ?? localIdentityKey(ingress) ?? recordedEngine(ingress)?.identity_key;
  if (key === undefined || key === '') {
    throw new UsageError(
      `the worker needs the engine's public identity key to check that calls come from it: pass --identity-key KEY (\`acmp-dag engine start\` prints it) or set ${IDENTITY_KEY_ENV}`,
    );
  }
  if (!isIdentityKey(key)) throw new UsageError(`"${key}" is not an identity key (publickeyv1_...)`);
  return key;
}

function localIdentityKey(ingress: string): string | undefined {
  const socketPath = parseEngineAddress(ingress).socketPath;
  if (socketPath === undefined) return undefined;
  const file = join(dirname(dirname(socketPath)), IDENTITY_PUBLIC_FILE);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}
