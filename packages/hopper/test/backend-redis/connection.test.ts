/**
 * Connections: a borrowed ioredis client is used and never closed; server checks at start; a
 * worker whose Redis server is gone still closes, within closeTimeout.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { CloseTimeoutError, Queue, UnsupportedRedisError, Worker } from '../../src/index.js';
import { checkServer } from '../../src/api/queue-base.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { useHopper } from '../helpers/hopper.js';
import { once, signal } from '../helpers/wait.js';

const env = useHopper();

describe('connections', () => {
  it('uses an ioredis instance it is given and leaves it open', async () => {
    const shared = new Redis(env.url);
    env.track({ close: async () => void shared.disconnect() });
    const name = env.queueName();
    const queue = new Queue(name, { connection: shared, prefix: env.prefix });
    const worker = new Worker(name, async () => 'ok', { connection: shared, prefix: env.prefix });
    await queue.add('x', {});
    await once(worker, 'completed');
    await worker.close();
    await queue.close();
    expect(shared.status).toBe('ready');
    expect(await shared.ping()).toBe('PONG');
  });

  it('a worker opens its idle-wait connection while starting (a ready worker then waits for work at once)', async () => {
    const name = env.queueName();
    const worker = env.worker(name, null, { autorun: false });
    await worker.waitUntilReady();
    // The Redis backend's blocking client for waitForWork (internal: this suite may look inside the backend).
    const waitClient = (worker.backend as unknown as { waitClient?: Redis }).waitClient;
    expect(waitClient).toBeDefined();
    expect(['connect', 'connecting', 'ready']).toContain(waitClient?.status);
  });

  it('accepts a redis:// URL and ioredis options', async () => {
    const url = new URL(env.url);
    const byUrl = env.queue(env.queueName(), { connection: env.url });
    const byOptions = env.queue(env.queueName(), { connection: { host: url.hostname, port: Number(url.port) } });
    await byUrl.add('a', {});
    await byOptions.add('b', {});
    expect(await byUrl.getJobCounts('waiting')).toEqual({ waiting: 1 });
    expect(await byOptions.getJobCounts('waiting')).toEqual({ waiting: 1 });
  });

  it('refuses Redis older than 7 with a clear error', () => {
    expect(() => checkServer({ version: '6.2.14', maxmemoryPolicy: 'noeviction' })).toThrow(UnsupportedRedisError);
    expect(() => checkServer({ version: '6.2.14', maxmemoryPolicy: 'noeviction' })).toThrow(/Redis 7\.0 or newer/);
    expect(() => checkServer({ version: '7.0.15', maxmemoryPolicy: 'noeviction' })).not.toThrow();
    expect(() => checkServer({ version: '7.2.4', maxmemoryPolicy: undefined })).not.toThrow();
  });

  it('warns loudly when the server may evict keys (own server: this changes settings)', async () => {
    const server = await startRedisServer(['--maxmemory-policy', 'allkeys-lru']);
    env.track({ close: () => server.stop() });
    const warned = new Promise<Error>((resolve) => {
      const onWarning = (warning: Error & { code?: string }): void => {
        if (warning.code !== 'HOPPER_EVICTION_POLICY') return;
        process.off('warning', onWarning);
        resolve(warning);
      };
      process.on('warning', onWarning);
    });
    const queue = new Queue(env.queueName(), { connection: server.url, prefix: env.prefix });
    await queue.waitUntilReady();
    await queue.close();
    const warning = await warned;
    expect(warning.message).toContain('allkeys-lru');
    expect(warning.message).toContain('noeviction');
  });

  // Redis-only: it stops the Redis server under a worker (moved from test/reliability/crash.test.ts).
  it('close() does not hang when Redis is gone: it gives up after closeTimeout and says so', async () => {
    const server = await startRedisServer();
    env.track({ close: () => server.stop() });
    const name = env.queueName();
    const queue = new Queue(name, { connection: server.url, prefix: env.prefix });
    await queue.add('x', {});
    await queue.close();
    const started = signal();
    const release = signal();
    const worker = new Worker(
      name,
      async () => {
        started.resolve();
        await release.promise;
      },
      { connection: server.url, prefix: env.prefix, closeTimeout: 300 },
    );
    const errors: unknown[] = [];
    worker.on('error', (err) => errors.push(err));
    await started.promise;
    await server.stop();
    release.resolve();
    const t0 = Date.now();
    await expect(worker.close()).rejects.toBeInstanceOf(CloseTimeoutError);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(worker.isRunning()).toBe(false);
  });
});
