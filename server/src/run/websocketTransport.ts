// ACMP over WebSocket: one JSON-RPC 2.0 message per text frame, as an MCP SDK Transport over a `ws` socket, so the
// SDK's protocol layer (the initialize handshake included) runs over it as over stdio or Streamable HTTP.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import WebSocket from 'ws';

/** How long close() waits for the peer's side of the closing handshake before dropping the socket. */
const CLOSE_GRACE_MS = 1_000;

export class WebSocketTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly closed: Promise<void>;

  /** `socket` may still be connecting (a client's) or already open (one a WebSocketServer accepted). */
  constructor(private readonly socket: WebSocket) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  async start(): Promise<void> {
    const socket = this.socket;
    socket.on('message', (data, isBinary) => this.receive(data, isBinary));
    socket.on('error', (error) => this.onerror?.(error));
    socket.once('close', () => this.onclose?.());
    if (socket.readyState !== WebSocket.CONNECTING) return;
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) =>
      this.socket.send(JSON.stringify(message), (error) => (error ? reject(error) : resolve())),
    );
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    this.socket.close();
    const drop = setTimeout(() => this.socket.terminate(), CLOSE_GRACE_MS);
    await this.closed;
    clearTimeout(drop);
  }

  private receive(data: WebSocket.RawData, isBinary: boolean): void {
    if (isBinary) {
      this.onerror?.(new Error('received a binary frame, where each frame must be one JSON-RPC message as text'));
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse((data as Buffer).toString('utf8')));
    } catch (error) {
      this.onerror?.(new Error(`received a frame that is not a JSON-RPC message: ${(error as Error).message}`));
      return;
    }
    this.onmessage?.(message);
  }
}
