// The end of a provider connection, shared by the in-process built-in provider and the MCP transports.
import { TransportError } from '../protocol/acmpMessages';

/**
 * The end of a connection. Once it failed or closed, every invoke in flight and every later call gets the same
 * TransportError at once, without waiting for the transport to wind down.
 */
export class Ending {
  error: TransportError | undefined;
  private reject!: (error: TransportError) => void;
  private readonly ended = new Promise<never>((_, reject) => {
    this.reject = reject;
  });

  constructor() {
    // Only races await this promise; an end with none in flight is no unhandled rejection.
    this.ended.catch(() => undefined);
  }

  /** Records the end, unless the connection had already ended: returns the error it ended with. */
  end(error: TransportError): TransportError {
    if (this.error !== undefined) return this.error;
    this.error = error;
    this.reject(error);
    return error;
  }

  /** What `send` returns, unless the connection ends first; once it has ended, nothing is sent. */
  race<T>(send: () => Promise<T>): Promise<T> {
    return this.error !== undefined ? Promise.reject(this.error) : Promise.race([send(), this.ended]);
  }
}
