// The deadlines of the connections Hopper opens (src/backend/redis/connection.ts): a default
// reply deadline (ioredis socketTimeout) that a user's own value replaces, blocking waits' deadlines
// fitted to their block, and a workaround for ioredis's stale socketTimeout timer. The worker-level
// behaviour they give under half-open connections: test/reliability/half-open.test.ts.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  BLOCKING_GRACE_MS,
  DEFAULT_SOCKET_TIMEOUT_MS,
  blockingSocketTimeout,
  closeClient,
  openClient,
} from '../../src/backend/redis/connection.js';
import type { Job } from '../../src/index.js';
import { BlackholeProxy } from '../helpers/blackhole-proxy.js';
import { CutProxy } from '../helpers/cut-proxy.js';
import { useHopper } from '../helpers/hopper.js';
import { once, until } from '../helpers/wait.js';

const env = useHopper();

describe('connection deadlines', () => {
  it('a connection reset does not leave a stale reply deadline that drops the next, healthy connection', async () => {
    const proxy = await CutProxy.start(Number(new URL(env.url).port));
    env.track(proxy);
    const handle = openClient({ host: '127.0.0.1', port: proxy.port, socketTimeout: 800 }, 'worker');
    env.track({ close: () => closeClient(handle) });
    const client = handle.client as Redis;
    const errors: string[] = [];
    client.on('error', (err: Error) => errors.push(err.message));
    await client.ping();
    // A reply pending (its deadline armed), then the connection is reset: ioredis reconnects.
    const marker = `half-open-${Math.random()}`;
    const held = proxy.arm(marker);
    const pending = client.call('ECHO', marker);
    await held;
    proxy.cut();
    expect(await pending).toBe(marker); // re-sent on the new connection
    // The new connection keeps answering past the old deadline: it is never dropped for it.
    const until = performance.now() + 1_600;
    let pings = 0;
    while (performance.now() < until) {
      await client.ping();
      pings++;
    }
    expect(pings).toBeGreaterThan(1);
    expect(errors.filter((m) => m.includes('Socket timeout'))).toEqual([]);
  });

  it('default deadlines: 10 s for replies; a blocking wait gets its block time plus a grace, the user value kept when longer', () => {
    const own = openClient({ host: '127.0.0.1', port: 1, lazyConnect: true }, 'worker');
    expect((own.client as Redis).options.socketTimeout).toBe(DEFAULT_SOCKET_TIMEOUT_MS);
    void closeClient(own);
    const users = openClient({ host: '127.0.0.1', port: 1, lazyConnect: true, socketTimeout: 20_000 }, 'command');
    expect((users.client as Redis).options.socketTimeout).toBe(20_000);
    void closeClient(users);
    // A client the user passed in is borrowed as it is.
    const borrowed = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true });
    expect(openClient(borrowed, 'worker')).toEqual({ client: borrowed, owned: false });
    expect(borrowed.options.socketTimeout).toBeUndefined();
    borrowed.disconnect();
    expect(blockingSocketTimeout(5_000, undefined)).toBe(5_000 + BLOCKING_GRACE_MS);
    expect(blockingSocketTimeout(5_000, 6_000)).toBe(5_000 + BLOCKING_GRACE_MS); // raised: 6 s would drop every wait
    expect(blockingSocketTimeout(5_000, 60_000)).toBe(60_000);
    expect(blockingSocketTimeout(0, 6_000)).toBeUndefined(); // a wait without end cannot have a deadline
    expect(blockingSocketTimeout(undefined, undefined)).toBe(DEFAULT_SOCKET_TIMEOUT_MS);
  });

  it('reopens the cancel subscription with the command connection after a half-open outage', async () => {
    env.expectErrors(/Socket timeout/);
    const target = new URL(env.url);
    const proxy = env.track(await BlackholeProxy.start(Number(target.port), target.hostname));
    const name = env.queueName();
    // A 2 min lock: within the test, only the subscription can bring a cancellation (the lock
    // renewal's fallback runs once a minute).
    const worker = env.worker(
      name,
      async (job, _token, signal) => {
        if (job.name !== 'long') return 'ok';
        await new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }));
        return 'aborted';
      },
      { connection: { host: target.hostname, port: proxy.port, socketTimeout: 2_000 }, stalledInterval: 1_000, lockDuration: 120_000 },
    );
    const queue = env.queue(name);
    await queue.add('before', {});
    await once(worker, 'completed', (job: Job) => job.name === 'before');
    await until(async () => proxy.subscribed.size > 0, 'the worker to subscribe to the cancel channel');
    proxy.blackhole();
    await until(async () => proxy.sentIntoVoid.size > 0, 'the worker to send a command into the blackhole', 20_000);
    proxy.heal();
    const healed = proxy.accepted;
    // The subscription is opened again, on a connection made after the heal.
    await until(async () => [...proxy.subscribed].some((id) => id >= healed), 'the cancel subscription to be opened again', 15_000);
    // Listening before the add: the worker may take the job before `add` returns.
    const longActive = once(worker, 'active', (job: Job) => job.name === 'long');
    const long = await queue.add('long', {});
    await longActive;
    const at = performance.now();
    expect(await queue.cancelJob(long.id as string, 'stop')).toBe('signalled');
    const [, err] = await once<[Job, Error]>(worker, 'failed', (job) => job.id === long.id, 15_000);
    expect(performance.now() - at).toBeLessThan(5_000);
    expect(err.message).toMatch(/cancelled/);
  }, 40_000);
});
