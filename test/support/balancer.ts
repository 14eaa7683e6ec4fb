// A TCP round-robin balancer on 127.0.0.1, as a cluster puts one in front of several workers: the engine knows one
// deployment address, and each connection it opens goes to the next worker that accepts it. Counts connections per
// backend.
import { type Server, type Socket, connect, createServer } from 'node:net';

export class Balancer {
  readonly connections = new Map<number, number>();
  private next = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly backends: readonly number[],
  ) {}

  static async start(backends: readonly number[]): Promise<Balancer> {
    const server = createServer();
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const balancer = new Balancer(server, (server.address() as { port: number }).port, backends);
    server.on('connection', (client) => balancer.forward(client, 0));
    return balancer;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Pipes `client` to the next backend; one that refuses is skipped, until every one refused. */
  private forward(client: Socket, tried: number): void {
    if (tried === this.backends.length) return void client.destroy();
    const port = this.backends[this.next++ % this.backends.length]!;
    const backend = connect(port, '127.0.0.1');
    let connected = false;
    backend.once('connect', () => {
      connected = true;
      this.connections.set(port, (this.connections.get(port) ?? 0) + 1);
      this.sockets.add(client).add(backend);
      client.pipe(backend).pipe(client);
      const close = () => {
        client.destroy();
        backend.destroy();
        this.sockets.delete(client);
        this.sockets.delete(backend);
      };
      client.once('close', close).on('error', close);
      backend.once('close', close).on('error', close);
    });
    backend.once('error', () => {
      if (!connected) this.forward(client, tried + 1);
    });
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((closed) => this.server.close(() => closed()));
  }
}
