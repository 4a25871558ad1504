// A TCP fault proxy between one worker process and Redis, for the network rows: `partition()`
// holds every byte both ways (as a cut cable with TCP retransmitting: nothing is lost, nothing
// arrives) until `heal()` delivers it; `latency(ms)` delays every chunk; `reset()` drops every
// connection at once (the client sees the connection close and reconnects); `blackhole()` makes
// every connection half-open: bytes are dropped both ways and nothing is closed, as when a NAT or
// a firewall forgets a connection. Such a connection stays dead for good (its bytes are gone);
// `heal()` lets new connections through again.
import { createServer, connect } from 'node:net';

export class FaultProxy {
  constructor(targetPort) {
    this.targetPort = targetPort;
    this.pairs = new Set();
    this.partitioned = false;
    this.blackholed = false;
    this.delayMs = 0;
    this.server = createServer((client) => this.accept(client));
  }

  async start(port = 0) {
    await new Promise((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    this.port = this.server.address().port;
    return this;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  accept(client) {
    const upstream = connect(this.targetPort, '127.0.0.1');
    const pair = { client, upstream, held: [], dead: this.blackholed };
    this.pairs.add(pair);
    const forward = (to) => (chunk) => {
      if (pair.dead) return;
      if (this.partitioned) pair.held.push([to, chunk]);
      else if (this.delayMs) setTimeout(() => to.writable && to.write(chunk), this.delayMs);
      else to.write(chunk);
    };
    client.on('data', forward(upstream));
    upstream.on('data', forward(client));
    const close = () => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  }

  partition() {
    this.partitioned = true;
  }

  /** Drops every byte of every connection, open now or opened until heal(), and closes nothing. */
  blackhole() {
    this.blackholed = true;
    for (const pair of this.pairs) pair.dead = true;
  }

  heal() {
    this.blackholed = false;
    this.partitioned = false;
    this.delayMs = 0;
    for (const pair of this.pairs) {
      for (const [to, chunk] of pair.held) if (to.writable) to.write(chunk);
      pair.held = [];
    }
  }

  latency(ms) {
    this.delayMs = ms;
  }

  reset() {
    for (const pair of this.pairs) {
      pair.client.resetAndDestroy?.() ?? pair.client.destroy();
      pair.upstream.destroy();
    }
    this.pairs.clear();
  }

  async close() {
    this.reset();
    await new Promise((resolve) => this.server.close(() => resolve()));
  }
}
