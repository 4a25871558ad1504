import { describe, expect, it } from 'vitest';
import { DatasetResetError, InvalidOptionsError, Queue, Worker } from '../../src/index.js';
import { createBackend } from '../../src/backend/create.js';
import { once } from '../helpers/wait.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('start-up checks and bad input', () => {
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

  it('accepts delays beyond 2^31-1 ms without one long timer', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('far', {}, { delay: 2 ** 31 + 10_000 });
    // The worker's first claim finds only the far delayed job: it drains, arming a capped timer.
    const worker = env.worker(name, async () => 'never', { autorun: false });
    const drained = once(worker, 'drained');
    void worker.run();
    await drained;
    expect(await job.getState()).toBe('delayed');
    expect(job.delay).toBe(2 ** 31 + 10_000);
  });

  it('refuses unknown backoff types at add, and accepts declared ones', async () => {
    const queue = env.queue(env.queueName());
    await expect(queue.add('x', {}, { backoff: { type: 'linaer' } })).rejects.toThrow(/Unknown backoff type "linaer"/);
    await expect(queue.add('x', {}, { backoff: { type: 'linaer' } })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.add('x', {}, { backoff: { type: 'custom' } })).resolves.toBeDefined();
    const declared = env.queue(env.queueName(), { backoffTypes: ['linear'] });
    await expect(declared.add('x', {}, { backoff: { type: 'linear', delay: 5 } })).resolves.toBeDefined();
    expect(() => env.queue(env.queueName(), { defaultJobOptions: { backoff: { type: 'nope' } } })).toThrow(InvalidOptionsError);
  });
});
