/**
 * A TCP proxy in front of Redis that can lose a reply on purpose: once armed with a marker, it
 * holds every server reply on the connection that sent the marker, and `cut()` then drops that
 * connection with the replies unread. The command ran; the client never heard back, so ioredis
 * reconnects and re-sends it: the situation Hopper's reconnect handling must survive.
 */
import { connect, type Server, type Socket } from 'node:net';
import { startProxyServer } from './proxy-server.js';

export class CutProxy {
  private armedMarker: string | undefined;
  private holding: { client: Socket; upstream: Socket } | undefined;
  private readonly sockets = new Set<Socket>();
  private onHold: (() => void) | undefined;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<CutProxy> {
    return startProxyServer(
      (server, port) => new CutProxy(server, port),
      (proxy, client) => proxy.accept(client, targetPort),
    );
  }

  private accept(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1');
    this.sockets.add(client).add(upstream);
    let held = false;
    client.on('data', (chunk) => {
      if (this.armedMarker !== undefined && chunk.includes(this.armedMarker)) {
        this.armedMarker = undefined;
        held = true;
        this.holding = { client, upstream };
        this.onHold?.();
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!held) client.write(chunk);
    });
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  }

  /** Holds replies on the next connection that sends `marker`; resolves once it has been sent. */
  arm(marker: string): Promise<void> {
    this.armedMarker = marker;
    return new Promise((resolve) => (this.onHold = resolve));
  }

  /** Drops the held connection; its pending replies are lost. */
  cut(): void {
    if (!this.holding) throw new Error('CutProxy.cut(): nothing is held; call arm() and wait for it first.');
    this.holding.client.destroy();
    this.holding.upstream.destroy();
    this.holding = undefined;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
