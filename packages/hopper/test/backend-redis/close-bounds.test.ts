/**
 * Every close() settles within its bound whatever the server does (issue 34): QueueEvents.close()
 * never returned once Redis refused connections for a while (150 s+): ioredis leaves a client
 * disconnected between two reconnect attempts 'reconnecting' for ever, with its queued commands
 * (the start's) unsettled, and close waited for the start. Bounds: Queue, QueueEvents and
 * FlowProducer close within CLOSE_GRACE_MS (1 s) plus the reader's end (1 s); a Worker within
 * closeTimeout plus about 2 s (docs/limits-and-errors.md).
 */
import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConnectionError, ConnectionTimeoutError, FlowProducer, Queue, QueueEvents, Worker } from '../../src/index.js';
import { freePort } from '../helpers/redis-server.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

/** Closes every component at once; returns how long the slowest took (ms). */
async function closeAll(components: { close(): Promise<void> }[]): Promise<number> {
  const started = performance.now();
  await Promise.all(components.map((c) => c.close().catch(() => undefined)));
  return performance.now() - started;
}

describe('close() is bounded', () => {
  it('on a refused port, after the start failed and while reconnecting', async () => {
    env.expectErrors((err) => err instanceof ConnectionError);
    const connection = { host: '127.0.0.1', port: await freePort(), connectTimeout: 200 };
    const name = env.queueName();
    const events = new QueueEvents(name, { connection, prefix: env.prefix });
    const queue = new Queue(name, { connection, prefix: env.prefix });
    const worker = new Worker(name, async () => undefined, { connection, prefix: env.prefix, closeTimeout: 500 });
    const flows = new FlowProducer({ connection, prefix: env.prefix });
    for (const c of [events, queue, worker, flows]) env.track(c);
    // Past the start's bound (connectTimeout): the clients are between two reconnect attempts.
    for (const c of [events, queue, worker, flows]) await expect(c.waitUntilReady()).rejects.toThrow(/no connection for/);
    expect(await closeAll([events, queue, worker, flows])).toBeLessThan(3_000);
  });

  it('on a server that accepts connections and never answers', async () => {
    env.expectErrors((err) => err instanceof ConnectionTimeoutError || err instanceof ConnectionError);
    const sockets = new Set<import('node:net').Socket>();
    const silent: Server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    env.track({
      close: async () => {
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => silent.close(() => resolve()));
      },
    });
    const { port } = silent.address() as import('node:net').AddressInfo;
    const connection = { host: '127.0.0.1', port, connectTimeout: 300 };
    const name = env.queueName();
    const queue = env.track(new Queue(name, { connection, prefix: env.prefix }));
    const events = env.track(new QueueEvents(name, { connection, prefix: env.prefix }));
    // A call gets the typed error within the bound: the server accepts but does not answer.
    const started = performance.now();
    await expect(queue.add('x', {})).rejects.toBeInstanceOf(ConnectionTimeoutError);
    await expect(queue.waitUntilReady()).rejects.toThrow(/accepts connections but sends no reply/);
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(await closeAll([events, queue])).toBeLessThan(3_000);
  });
});
