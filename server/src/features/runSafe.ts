// One guard around every feature's handlers: an unexpected throw becomes a logged error answer, the server goes on.
import { type Connection, ErrorCodes, ResponseError } from 'vscode-languageserver';

type Handler = (...args: never[]) => unknown;

/**
 * `handler`, answering an unexpected throw or rejection with an InternalError after logging it (the pattern of
 * vscode-json-languageservice's runSafe). A ResponseError is an answer the feature chose: it passes through.
 */
export function runSafe(log: (message: string) => void, name: string, handler: Handler): Handler {
  const failed = (error: unknown): ResponseError => {
    if (error instanceof ResponseError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    log(`${name} failed: ${error instanceof Error ? (error.stack ?? message) : message}`);
    return new ResponseError(ErrorCodes.InternalError, `${name} failed: ${message}`);
  };
  return (...args) => {
    try {
      const result = handler(...args);
      return result instanceof Promise ? result.catch(failed) : result;
    } catch (error) {
      return failed(error);
    }
  };
}

/** The connection whose `on…` registrations (onHover, onRequest, …) wrap each handler they are given in runSafe. */
export function guardHandlers(connection: Connection): Connection {
  const log = (message: string) => connection.console.error(message);
  return new Proxy(connection, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || !property.startsWith('on') || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        // onRequest and onNotification name their method first; the others are named by what they register.
        const name = typeof args[0] === 'string' ? args[0] : property.slice(2);
        const guarded = args.map((arg) => (typeof arg === 'function' ? runSafe(log, name, arg as Handler) : arg));
        return (value as (...registration: unknown[]) => unknown).apply(target, guarded);
      };
    },
  });
}
