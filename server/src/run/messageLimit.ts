// The largest message a provider may send: what one read of stdio, one WebSocket frame or one HTTP answer (an SSE
// event, or a whole other body, an error answer's included) may hold before the connection is given up instead of
// buffering without end.

/** The MCP SDK's stdio default, kept for every transport so that a provider behaves the same over each. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** What an error says of the limit, in the user's terms. */
export const OVERSIZED = `sent a message over the ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB limit`;

/** Whether an error of the MCP SDK's stdio transports is its read buffer's overflow, which it tells only in text. */
export const isStdioOverflow = (error: Error): boolean => error.message.startsWith('ReadBuffer exceeded maximum size');

const LF = 0x0a;
const CR = 0x0d;

/**
 * A fetch whose answers stop with an error once a message in them exceeds `limit` bytes: an SSE event of a successful
 * answer (the bytes since the last blank line), or a whole other body, an error answer's included (the SDK reads that
 * whole to quote it). `onExceeded` is told first, for the SDK passes body errors on only as text.
 */
export function limitedFetch(limit: number, onExceeded: () => void): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (response.body === null) return response;
    const perEvent = response.ok && response.headers.get('content-type')?.includes('text/event-stream') === true;
    let messageBytes = 0;
    let lineBytes = 0;
    const count = (chunk: Uint8Array): void => {
      if (!perEvent) {
        messageBytes += chunk.length;
        return;
      }
      for (let start = 0; start < chunk.length;) {
        const end = chunk.indexOf(LF, start);
        const stop = end === -1 ? chunk.length : end;
        // A CR before the LF belongs to the line ending, not to its content.
        lineBytes += stop - start - (end !== -1 && stop > start && chunk[stop - 1] === CR ? 1 : 0);
        messageBytes += stop - start;
        if (end === -1) break;
        if (lineBytes === 0) messageBytes = 0;
        lineBytes = 0;
        start = end + 1;
      }
    };
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          count(chunk);
          if (messageBytes <= limit) return controller.enqueue(chunk);
          onExceeded();
          controller.error(new Error(`a message over ${limit} bytes`));
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
