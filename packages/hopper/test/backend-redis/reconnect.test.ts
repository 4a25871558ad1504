/**
 * Reconnects (DESIGN, "Reconnects"): ioredis re-sends a command whose reply was lost. A re-sent
 * claim must not leave jobs active with no holder, and a re-sent add must be applied once.
 * Redis-backend specific, so it may use the backend's internals (the operations' function names).
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LIBRARY, SCRIPTS } from '../../src/backend/redis/scripts.generated.js';
import { Queue, Worker, type Job } from '../../src/index.js';
import { CutProxy } from '../helpers/cut-proxy.js';
import { useHopper } from '../helpers/hopper.js';
import { signal, until } from '../helpers/wait.js';

const env = useHopper();

async function withProxy(): Promise<{ proxy: CutProxy; admin: Redis }> {
  const url = new URL(env.url);
  const admin = new Redis(env.url);
  // The library loaded beforehand: the first call is the FCALL (no load round trip for the proxy to hold).
  await admin.call('FUNCTION', 'LOAD', LIBRARY.source).catch((err: Error) => {
    if (!/already exists/.test(err.message)) throw err;
  });
  const proxy = await CutProxy.start(Number(url.port));
  env.track(proxy);
  env.track({ close: async () => void admin.disconnect() });
  return { proxy, admin };
}

describe('reconnects', () => {
  it('a claim whose reply was lost leaves no orphaned active job', async () => {
    const { proxy } = await withProxy();
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk(Array.from({ length: 6 }, (_, i) => ({ name: 'n', data: { i }, opts: { removeOnComplete: false } })));
    const runs = new Map<number, number>();
    const allDone = signal();
    let completed = 0;
    const worker = env.track(
      new Worker(
        name,
        async (job: Job<{ i: number }>) => {
          runs.set(job.data.i, (runs.get(job.data.i) ?? 0) + 1);
        },
        // No stall rescue: only the reconnect handling can bring orphaned jobs back.
        { connection: { host: '127.0.0.1', port: proxy.port }, prefix: env.prefix, concurrency: 2, autorun: false, skipStalledCheck: true },
      ),
    );
    worker.on('error', () => undefined);
    worker.on('completed', () => ++completed === 6 && allDone.resolve());
    const held = proxy.arm(SCRIPTS.claim.fn);
    void worker.run();
    await held;
    // The claim ran (two jobs active), but its reply is held back: drop the connection.
    await until(async () => (await queue.getJobCounts('active')).active === 2, 'the claim to run');
    proxy.cut();
    await allDone.promise;
    expect([...runs.keys()].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    const jobs = await Promise.all(['1', '2', '3', '4', '5', '6'].map((id) => queue.getJob(id)));
    expect(jobs.map((j) => j?.stalledCounter)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(await queue.getJobCounts('active', 'completed')).toEqual({ active: 0, completed: 6 });
  });

  it('an add whose reply was lost is applied once', async () => {
    const { proxy } = await withProxy();
    const name = env.queueName();
    const queue = env.track(new Queue(name, { connection: { host: '127.0.0.1', port: proxy.port }, prefix: env.prefix }));
    const observer = env.queue(name);
    await queue.waitUntilReady();
    const held = proxy.arm(SCRIPTS.addJobs.fn);
    const adding = queue.add('once', { v: 1 });
    await held;
    await until(async () => (await observer.getJobCounts('waiting')).waiting === 1, 'the add to run');
    proxy.cut();
    const job = await adding;
    expect(job.id).toBe('1');
    expect(await observer.getJobCounts('waiting')).toEqual({ waiting: 1 });
    const second = await queue.add('twice', { v: 2 });
    expect(second.id).toBe('2');
  });
});
