// HTTP to a Restate engine, the one way every part of the project reaches it. A local engine (`acmp-dag engine start`)
// listens only on unix sockets in a 0700 folder, so the file system lets its owner in and nobody else, and no web page
// can reach it; a remote one is an http(s) URL, reached with the bearer token in ACMP_ENGINE_TOKEN (never a setting).
// Every answer is read up to a bound: an engine, or something posing as one, cannot fill the reader's memory.
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { dirname, isAbsolute, join } from 'node:path';

/** The environment variable holding the bearer token of a remote engine. */
export const ENGINE_TOKEN_ENV = 'ACMP_ENGINE_TOKEN';

/** Above the engine's own 32 MiB message limit: only a misbehaving engine answers more. */
export const MAX_ENGINE_ANSWER_BYTES = 40 * 1024 * 1024;

/** The engine did not answer: exit code 3, with its address and how to start one. */
export class EngineUnreachable extends Error {}

/** The engine answered more than MAX_ENGINE_ANSWER_BYTES. */
export class EngineAnswerTooLarge extends Error {}

/** An engine address that cannot be used (not a unix: or http(s): URL, credentials in it, a token over plain HTTP). */
export class EngineAddressError extends Error {}

/** Where an engine's ingress or admin API is: a unix socket, or an http(s) URL. */
export interface EngineAddress {
  /** As shown to the user: `unix:/abs/path.sock`, or the URL without a trailing slash. */
  readonly text: string;
  readonly socketPath?: string;
  readonly url?: URL;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/;

/** Reads `unix:/abs/ingress.sock` or an http(s) URL; EngineAddressError for anything else. */
export function parseEngineAddress(text: string): EngineAddress {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new EngineAddressError(
      `"${text}" is not an engine address (unix:/path/to/ingress.sock, as \`acmp-dag engine start\` prints, or an http(s) URL)`,
    );
  }
  if (url.protocol === 'unix:') {
    const socketPath = decodeURIComponent(url.pathname);
    if (!isAbsolute(socketPath)) throw new EngineAddressError(`"${text}" needs an absolute socket path after unix:`);
    return { text: `unix:${socketPath}`, socketPath };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EngineAddressError(`"${text}" is neither a unix: socket nor an http(s) URL`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new EngineAddressError(`an engine address holds no credentials: set ${ENGINE_TOKEN_ENV} instead`);
  }
  const address = { text: url.toString().replace(/\/$/, ''), url };
  authorization(address);
  return address;
}

/** The admin API beside an ingress: the socket next to a local engine's, else `recorded` or the host's port 9070. */
export function adminAddressFor(ingress: EngineAddress, recorded?: string): EngineAddress {
  if (ingress.socketPath !== undefined)
    return parseEngineAddress(`unix:${join(dirname(ingress.socketPath), 'admin.sock')}`);
  if (recorded !== undefined) return parseEngineAddress(recorded);
  const url = new URL(ingress.url!);
  url.port = '9070';
  return parseEngineAddress(url.toString());
}

export interface EngineAnswer {
  readonly status: number;
  readonly text: string;
}

export interface EngineRequest {
  readonly method?: 'GET' | 'POST';
  readonly body?: string;
  readonly timeoutMs?: number;
}

/** The Authorization header for a URL engine, from ACMP_ENGINE_TOKEN; refused over plain HTTP beyond loopback. */
function authorization(address: EngineAddress): Record<string, string> {
  const token = process.env[ENGINE_TOKEN_ENV];
  if (address.url === undefined || token === undefined || token === '') return {};
  if (address.url.protocol === 'http:' && !LOOPBACK.test(address.url.hostname)) {
    throw new EngineAddressError(
      `${ENGINE_TOKEN_ENV} is sent only over https (or to a loopback address), not to ${address.text}`,
    );
  }
  return { authorization: `Bearer ${token}` };
}

/** One request to the engine at `address`; EngineUnreachable when nothing answers, an error past the answer bound. */
export function engineRequest(address: EngineAddress, path: string, init: EngineRequest = {}): Promise<EngineAnswer> {
  const headers: Record<string, string> = {
    ...authorization(address),
    ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
  };
  return new Promise((resolve, reject) => {
    const onAnswer = (response: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > MAX_ENGINE_ANSWER_BYTES) {
          request.destroy();
          reject(
            new EngineAnswerTooLarge(
              `the engine at ${address.text} answered more than ${MAX_ENGINE_ANSWER_BYTES / 1024 / 1024} MiB to ${path}`,
            ),
          );
        } else chunks.push(chunk);
      });
      response.once('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      response.once('error', reject);
    };
    const target = `/${path.replace(/^\//, '')}`;
    const options = { method: init.method ?? (init.body === undefined ? 'GET' : 'POST'), headers };
    const request =
      address.socketPath !== undefined
        ? httpRequest({ ...options, socketPath: address.socketPath, path: target, host: 'localhost' }, onAnswer)
        : (address.url!.protocol === 'https:' ? httpsRequest : httpRequest)(
            new URL(`${address.url!.pathname.replace(/\/$/, '')}${target}`, address.url),
            options,
            onAnswer,
          );
    request.once('error', (error: NodeJS.ErrnoException) =>
      reject(new EngineUnreachable(`nothing answers at ${address.text} (${error.code ?? error.message})`)),
    );
    if (init.timeoutMs !== undefined) {
      request.setTimeout(init.timeoutMs, () => request.destroy(new Error('timed out')));
    }
    request.end(init.body);
  });
}
