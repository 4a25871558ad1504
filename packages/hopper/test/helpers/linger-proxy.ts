/**
 * A TCP proxy in front of Redis that can keep a closed connection open on Redis's side: while
 * lingering, a client that closes its connection has its end of the proxy closed at once, but the
 * connection to Redis stays open until `release()`. Redis then still sees the client (a blocked
 * BLPOP, commands queued behind it) after the client gave it up: the window in which a wake-up
 * can still reach a connection its worker already left.
 * `seen(marker)` resolves once Redis has replied to a chunk holding `marker` (on any connection).
 */
import { connect, type Server, type Socket } from 'node:net';
import { startProxyServer } from './proxy-server.js';

export class LingerProxy {
  private lingering = false;
  private readonly kept: Socket[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly watches: { marker: string; resolve: () => void }[] = [];

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<LingerProxy> {
    return startProxyServer(
      (server, port) => new LingerProxy(server, port),
      (proxy, client) => proxy.accept(client, targetPort),
    );
  }

  private accept(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1');
    this.sockets.add(client).add(upstream);
    // Watches waiting for Redis's reply to a chunk this connection sent.
    const awaitingReply: (() => void)[] = [];
    client.on('data', (chunk) => {
      for (let i = this.watches.length - 1; i >= 0; i--) {
        if (chunk.includes(this.watches[i].marker)) awaitingReply.push(this.watches.splice(i, 1)[0].resolve);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      for (const resolve of awaitingReply.splice(0)) resolve();
      if (!client.destroyed) client.write(chunk);
    });
    const closeBoth = (): void => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', () => undefined);
    client.on('close', () => {
      if (this.lingering && !upstream.destroyed) {
        this.sockets.delete(client);
        this.kept.push(upstream);
      } else closeBoth();
    });
    upstream.on('error', closeBoth).on('close', closeBoth);
  }

  /** From now on, a connection its client closes stays open on Redis's side until release(). */
  linger(): void {
    this.lingering = true;
  }

  /** Closes the connections kept open, and stops keeping them. */
  release(): void {
    this.lingering = false;
    for (const upstream of this.kept.splice(0)) upstream.destroy();
  }

  /** Resolves once Redis has answered a chunk that holds `marker`, sent after this call. */
  seen(marker: string): Promise<void> {
    return new Promise((resolve) => this.watches.push({ marker, resolve }));
  }

  async close(): Promise<void> {
    this.release();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
