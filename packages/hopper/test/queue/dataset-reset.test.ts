/**
 * A Redis dataset reset (a FLUSHALL, a restart without persistence) under a running app is reported
 * (DatasetResetError) instead of being taken for an empty queue. Redis-only capability: it flushes a
 * redis-server of its own, so it is not in the SQLite tier (a SQLite database is not reset under its
 * users); kept apart from startup.test.ts so that file's checks run on both backends and the
 * SQLite tier needs no Redis.
 */
import { describe, expect, it } from 'vitest';
import { DatasetResetError, Queue, Worker } from '../../src/index.js';
import { createBackend } from '../../src/backend/create.js';
import { once } from '../helpers/wait.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('start-up checks', () => {
  it('detects a dataset reset instead of taking it for an empty queue (own server: it is flushed)', async () => {
    env.expectErrors(/DatasetResetError/); // the flush is reported by the queue and the worker
    const server = await startRedisServer();
    env.track({ close: () => server.stop() });
    const name = env.queueName();
    const queue = env.track(new Queue(name, { connection: server.url, prefix: env.prefix }));
    const worker = env.track(new Worker(name, async () => 'ok', { connection: server.url, prefix: env.prefix, lockRenewTime: 100 }));
    const errors: unknown[] = [];
    queue.on('error', (err) => errors.push(err));
    await queue.add('before', {});
    await once(worker, 'completed');
    const workerSaw = once<[unknown]>(worker, 'error', (err) => err instanceof DatasetResetError, 5000);

    // Flush the server under the running app, as a restart without persistence would.
    const admin = createBackend({ connection: server.url, prefix: env.prefix, queueName: name, role: 'command' });
    await admin.connect();
    await (admin as unknown as { client: { flushall(): Promise<string> } }).client.flushall();
    await admin.close();

    const completedAfter = once(worker, 'completed');
    await queue.add('after', {});
    expect(errors.some((err) => err instanceof DatasetResetError)).toBe(true);
    expect(String((errors[0] as Error).message)).toContain('flushed or restarted without persistence');
    const [workerError] = await workerSaw;
    expect(workerError).toBeInstanceOf(DatasetResetError);
    // Re-initialised: work goes on, and the next add is not reported again.
    await completedAfter;
    await queue.add('later', {});
    expect(errors.filter((err) => err instanceof DatasetResetError)).toHaveLength(1);
  });
});
