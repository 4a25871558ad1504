/**
 * A TCP proxy in front of Redis that can make every connection half-open: `blackhole()` drops
 * every byte both ways, on the connections open now and on those opened until `heal()`, and
 * closes nothing, as a NAT or a firewall that forgot the connections would. A blackholed
 * connection stays dead for good (its bytes are gone); `heal()` lets new connections through.
 * `sentIntoVoid` tells which connections' client sent bytes that were dropped (a command that
 * will never be answered), so a test waits for that instead of sleeping.
 */
import { connect, type Server, type Socket } from 'node:net';
import { startProxyServer } from './proxy-server.js';

interface Pair {
  id: number;
  client: Socket;
  upstream: Socket;
  dead: boolean;
}

export class BlackholeProxy {
  private readonly pairs = new Set<Pair>();
  private blackholed = false;
  private nextId = 0;
  /** Ids of the connections (in accept order) whose client sent bytes into the blackhole. */
  readonly sentIntoVoid = new Set<number>();
  /** Ids of the connections whose client sent a SUBSCRIBE through (not into the blackhole). */
  readonly subscribed = new Set<number>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<BlackholeProxy> {
    return startProxyServer(
      (server, port) => new BlackholeProxy(server, port),
      (proxy, client) => proxy.accept(client, targetPort, targetHost),
    );
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Connections accepted so far (open or not). */
  get accepted(): number {
    return this.nextId;
  }

  private accept(client: Socket, targetPort: number, targetHost: string): void {
    const upstream = connect(targetPort, targetHost);
    const pair: Pair = { id: this.nextId++, client, upstream, dead: this.blackholed };
    this.pairs.add(pair);
    const forward =
      (to: Socket) =>
      (chunk: Buffer): void => {
        if (pair.dead) {
          if (to === upstream) this.sentIntoVoid.add(pair.id);
          return;
        }
        if (to === upstream && /subscribe/i.test(chunk.toString('latin1'))) this.subscribed.add(pair.id);
        to.write(chunk);
      };
    client.on('data', forward(upstream));
    upstream.on('data', forward(client));
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  }

  /** Every connection, open now or opened until heal(), goes silent; nothing is closed. */
  blackhole(): void {
    this.blackholed = true;
    for (const pair of this.pairs) pair.dead = true;
  }

  /** New connections get through again; the blackholed ones stay dead. */
  heal(): void {
    this.blackholed = false;
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
