/**
 * A start that failed recovers when the server comes back (issue 34): Queue, Worker, QueueEvents
 * and FlowProducer kept the rejection of their first start for good (a fresh one worked). Now a
 * failed start is tried again in the background; calls made meanwhile reject with a typed error
 * within the start bound (the connection's connectTimeout); a Worker begins processing by itself.
 * Redis is down past connectTimeout at start, or answers BUSY (a script running too long).
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ConnectionError, FlowProducer, Queue, QueueEvents, Worker, type Job } from '../../src/index.js';
import { freePort, startRedisServer } from '../helpers/redis-server.js';
import { useHopper } from '../helpers/hopper.js';
import { once, until } from '../helpers/wait.js';

const env = useHopper();

describe('a failed start recovers', () => {
  it('Redis down past connectTimeout at start: calls reject with a typed error in time, then everything works once it is up', async () => {
    env.expectErrors((err) => err instanceof ConnectionError);
    const port = await freePort();
    const connection = { host: '127.0.0.1', port, connectTimeout: 300 };
    const name = env.queueName();
    const opts = { connection, prefix: env.prefix };
    const queue = env.track(new Queue(name, opts));
    const worker = env.track(new Worker(name, async (job: Job<{ n: number }>) => `done ${job.data.n}`, opts));
    const events = env.track(new QueueEvents(name, opts));
    const flows = env.track(new FlowProducer(opts));

    // Rejected with the typed error within the bound (connectTimeout, plus scheduling).
    const started = Date.now();
    await expect(queue.waitUntilReady()).rejects.toBeInstanceOf(ConnectionError);
    await expect(queue.add('x', { n: 0 })).rejects.toBeInstanceOf(ConnectionError);
    await expect(flows.waitUntilReady()).rejects.toBeInstanceOf(ConnectionError);
    await expect(events.waitUntilReady()).rejects.toBeInstanceOf(ConnectionError);
    expect(Date.now() - started).toBeLessThan(3_000);

    const server = await startRedisServer([], port);
    env.track({ close: () => server.stop() });
    const eventsReady = once(events, 'ready', () => true, 20_000);
    const completed = once<[Job, unknown]>(worker, 'completed', () => true, 20_000);
    // The queue recovers: its next call waits for the attempt under way.
    await until(
      () =>
        queue.waitUntilReady().then(
          () => true,
          () => false,
        ),
      'the queue started again',
      20_000,
      100,
    );
    await eventsReady;
    const seen = once<[{ jobId: string; returnvalue: unknown }]>(events, 'completed', () => true, 20_000);
    const job = await queue.add('x', { n: 1 });
    // The worker started by itself and processes it; the events reader reads it.
    const [done, result] = await completed;
    expect(done.id).toBe(job.id);
    expect(result).toBe('done 1');
    expect((await seen)[0]).toMatchObject({ jobId: job.id, returnvalue: 'done 1' });
    const flow = await flows.add({ name: 'parent', queueName: `${name}-flow`, children: [{ name: 'child', queueName: `${name}-flow` }] });
    expect(flow.children).toHaveLength(1);
  });

  it('Redis answering BUSY at start: the start fails with a typed error, and recovers once the script ends', async () => {
    env.expectErrors((err) => err instanceof ConnectionError && /BUSY/.test(err.message));
    const server = await startRedisServer(['--busy-reply-threshold', '100']);
    env.track({ close: () => server.stop() });
    const blocker = new Redis(server.url);
    const admin = new Redis(server.url);
    env.track({ close: async () => void (blocker.disconnect(), admin.disconnect()) });
    // Both connected (their ready checks done) before Redis turns busy.
    await Promise.all([blocker.ping(), admin.ping()]);
    blocker.on('error', () => undefined);
    admin.on('error', () => undefined);
    blocker.eval('while true do end', 0).catch(() => undefined);
    await until(
      () =>
        admin.ping().then(
          () => false,
          (err: Error) => /BUSY/.test(err.message),
        ),
      'Redis answers BUSY',
    );
    const name = env.queueName();
    const opts = { connection: server.url, prefix: env.prefix };
    const queue = env.track(new Queue(name, opts));
    const worker = env.track(new Worker(name, async () => 'ok', opts));
    const err = await queue.waitUntilReady().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).message).toMatch(/BUSY.*SCRIPT KILL/);
    // Still refused while busy: a later call tries again (and says why).
    await expect(queue.add('x', {})).rejects.toThrow(/BUSY/);
    await admin.call('SCRIPT', 'KILL');
    const completed = once(worker, 'completed', () => true, 20_000);
    await until(
      () =>
        queue.waitUntilReady().then(
          () => true,
          () => false,
        ),
      'the queue started again',
      20_000,
      100,
    );
    await queue.add('y', {});
    await completed;
  });
});
