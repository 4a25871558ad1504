// Found by the fault suite (test/faults, rows network-half-open-defaults and network-half-open): a
// worker whose connections went half-open (every byte dropped, nothing closed, as when a NAT or a
// firewall forgets them) waited for ever on replies that would never come, and took no job again
// after the network healed. With the user's socketTimeout it resumed, but late: a reconnect made
// during the outage waited a whole timeout more in its set-up, and the idle wait's connection,
// unused during the outage, was found dead only by the next wait. Hopper's connections now have
// a reply deadline by default, a short set-up deadline, and reopen their idle connections when
// the command connection was reopened.
// The deadlines themselves, and the cancel subscription's reopening, are tested in
// test/backend-redis/connection-deadlines.test.ts.
import { describe, expect, it } from 'vitest';
import type { Job, Worker } from '../../src/index.js';
import { BlackholeProxy } from '../helpers/blackhole-proxy.js';
import { useHopper } from '../helpers/hopper.js';
import { once, until } from '../helpers/wait.js';

const env = useHopper();

/** Hopper's defaults (src/backend/redis/connection.ts): the reply deadline, the set-up deadline. */
const DEFAULT_SOCKET_TIMEOUT_MS = 10_000;
const HANDSHAKE_TIMEOUT_MS = 3_000;

/** The shared Redis's address, for a proxy in front of it. */
function target(): { host: string; port: number } {
  const url = new URL(env.url);
  return { host: url.hostname, port: Number(url.port) };
}

async function blackholeProxy(): Promise<BlackholeProxy> {
  const { host, port } = target();
  return env.track(await BlackholeProxy.start(port, host));
}

/**
 * Cuts an idle worker's connections until its command connection has sent a command into the
 * void (a heartbeat or a stall check: the idle wait's connection is then as dead, with its
 * blocking pop pending), and heals at once. Returns when it healed.
 */
async function cut(proxy: BlackholeProxy, name: string, worker: Worker): Promise<number> {
  const queue = env.queue(name);
  await queue.add('before', {});
  await once(worker, 'completed', (job: Job) => job.name === 'before');
  proxy.blackhole();
  await until(async () => proxy.sentIntoVoid.size > 0, 'the worker to send a command into the blackhole', 20_000);
  proxy.heal();
  return performance.now();
}

describe('half-open connections', () => {
  it('a worker with the default connection options takes work again after its connections went half-open', async () => {
    env.expectErrors(/Socket timeout/); // each dead connection is reported once, then reopened
    const proxy = await blackholeProxy();
    const name = env.queueName();
    const worker = env.worker(name, async () => 'ok', { connection: proxy.url, drainDelay: 1, lockDuration: 4_000 });
    const healedAt = await cut(proxy, name, worker);
    await env.queue(name).add('after', {});
    await once(worker, 'completed', (job: Job) => job.name === 'after', 30_000);
    const resumedMs = performance.now() - healedAt;
    // Within a reply deadline (the heartbeat that went into the void), a set-up and a reconnect.
    expect(resumedMs).toBeLessThan(DEFAULT_SOCKET_TIMEOUT_MS + HANDSHAKE_TIMEOUT_MS + 3_000);
  }, 40_000);

  it("keeps the user's socketTimeout, and reopens the idle wait with the command connection", async () => {
    env.expectErrors(/Socket timeout/);
    const proxy = await blackholeProxy();
    const name = env.queueName();
    const { host } = target();
    // The command connection's deadline is the user's 2 s (a stall check every second goes into
    // the void); the idle wait's is drainDelay (5 s, the default) plus 5 s from its last BLPOP,
    // sent as the cut began.
    const worker = env.worker(name, async () => 'ok', {
      connection: { host, port: proxy.port, socketTimeout: 2_000 },
      stalledInterval: 1_000,
    });
    const healedAt = await cut(proxy, name, worker);
    // The command connection is found dead within the user's deadline (Hopper's default is 10 s)
    // and reopened; the worker's first claim then finds nothing.
    await once(worker, 'drained', undefined, 15_000);
    expect(performance.now() - healedAt).toBeLessThan(7_000);
    // A job added now can only wake the worker through its idle wait: on a new connection, at
    // once (the old one would be found dead by its own deadline only about 10 s after the cut).
    const at = performance.now();
    await env.queue(name).add('after', {});
    await once(worker, 'completed', (job: Job) => job.name === 'after', 15_000);
    expect(performance.now() - at).toBeLessThan(3_000);
  }, 40_000);
});
