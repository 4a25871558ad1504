import { describe, expect, it } from 'vitest';
import { CrossSlotError, InvalidOptionsError, ReplayRefusedError, UnrecoverableError, type Job } from '../../src/index.js';
import { collect, once, signal } from '../helpers/wait.js';
import { createBackend } from '../../src/backend/create.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

describe('dead-letter queue', () => {
  it('dead-letters a job that exhausts its attempts, in the same step it fails', async () => {
    const name = env.queueName();
    const dlqName = env.queueName('dlq');
    const queue = env.queue(name, { deadLetter: { queue: dlqName } });
    const dlq = env.queue(dlqName);
    const job = await queue.add('charge', { amount: 42 }, { attempts: 2, jobId: 'order-7' });
    const worker = env.worker(name, async () => {
      throw new Error('card declined');
    });
    await once(worker, 'failed', (j: Job) => j.attemptsMade === 2);
    // Failed as usual, so failure counts and alerts keep working...
    expect(await job.getState()).toBe('failed');
    // ...and dead-lettered with its origin.
    const [letter] = await dlq.getWaiting();
    expect(letter.id).toBe(`${name}:order-7:2`);
    expect(letter.name).toBe('charge');
    expect(letter.data).toEqual({ amount: 42 });
    expect(letter.failedReason).toBe('card declined');
    expect(letter.attemptsMade).toBe(2);
    expect(letter.stacktrace[0]).toContain('card declined');
    expect(letter.deadLetterOrigin).toMatchObject({ queue: name, jobId: 'order-7' });
  });

  it('dead-letters on UnrecoverableError and on too many stalls, never a cancelled job', async () => {
    const name = env.queueName();
    const dlqName = env.queueName('dlq');
    const queue = env.queue(name);
    const dlq = env.queue(dlqName);
    const opts = { deadLetter: { queue: dlqName }, attempts: 5 };
    await queue.add('bad', {}, { ...opts, jobId: 'u' });
    const worker = env.worker(name, async () => {
      throw new UnrecoverableError('invalid');
    });
    await once(worker, 'failed');
    await worker.close();
    // Stalls: claimed by a worker that dies, twice (maxStalledCount 1).
    await queue.add('stally', {}, { ...opts, jobId: 's' });
    const rescuer = env.worker(name, null, { autorun: false, maxStalledCount: 1 });
    const dead = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    for (let i = 0; i < 2; i++) {
      const { jobs } = await dead.claim({ count: 1, lockMs: 1000, tokenPrefix: `dead:${i}:` }, env.clock!.backendNow());
      expect(jobs.map((j) => j.id)).toEqual(['s']);
      env.clock!.advance(1001);
      await rescuer.stallRescuer.runOnce(true);
    }
    // Cancelled before it ran: failed, not dead-lettered.
    await queue.add('cancelled', {}, { ...opts, jobId: 'c' });
    expect(await queue.cancelJob('c', 'no longer needed')).toBe('cancelled');
    expect((await dlq.getWaiting()).map((j) => j.id).sort()).toEqual([`${name}:s:2`, `${name}:u:1`]);
    expect((await queue.getJob('c'))?.failedReason).toBe('CancelledError: no longer needed');
  });

  it('replays a dead letter into its origin queue under its id, with fresh attempts, once', async () => {
    const name = env.queueName();
    const dlqName = env.queueName('dlq');
    const queue = env.queue(name, { deadLetter: { queue: dlqName } });
    const dlq = env.queue(dlqName);
    await queue.add('charge', { amount: 1 }, { jobId: 'order-1', attempts: 1 });
    let fail = true;
    const worker = env.worker(name, async (job) => {
      if (fail) throw new Error('downstream down');
      return job.data;
    });
    await once(worker, 'failed');
    const [letter] = await dlq.getWaiting();
    fail = false;
    const completed = once<[Job]>(worker, 'completed');
    await letter.replay();
    const [done] = await completed;
    expect(done.id).toBe('order-1');
    expect(done.attemptsMade).toBe(1);
    expect(await dlq.getWaitingCount()).toBe(0);
    // A second replay of the same dead letter creates nothing.
    await expect(letter.replay()).rejects.toThrow(/no longer exists/);
    expect(await queue.getCompletedCount()).toBe(1);
  });

  it('refuses to replay over an origin job that is not failed', async () => {
    const name = env.queueName();
    const dlqName = env.queueName('dlq');
    const queue = env.queue(name, { deadLetter: { queue: dlqName } });
    const dlq = env.queue(dlqName);
    await queue.add('x', {}, { jobId: 'dup' });
    const worker = env.worker(name, async () => {
      throw new Error('boom');
    });
    await once(worker, 'failed');
    await worker.close();
    const [letter] = await dlq.getWaiting();
    // The failed origin job would be replaced; but someone has re-added it by hand meanwhile.
    await queue.remove('dup');
    await queue.add('x', {}, { jobId: 'dup' });
    await expect(letter.replay()).rejects.toBeInstanceOf(ReplayRefusedError);
    expect(await dlq.getWaitingCount()).toBe(1);
  });

  it('replays a large set in batches with filters and progress', async () => {
    const name = env.queueName();
    const dlqName = env.queueName('dlq');
    const queue = env.queue(name, { deadLetter: { queue: dlqName } });
    const dlq = env.queue(dlqName);
    const total = 2500;
    for (let i = 0; i < total; i += 500) {
      await queue.addBulk(Array.from({ length: 500 }, (_, j) => ({ name: (i + j) % 5 === 0 ? 'other' : 'charge', data: { i: i + j } })));
    }
    const release = signal();
    const worker = env.worker(
      name,
      async () => {
        await release.promise;
        throw new Error('gateway 502');
      },
      { concurrency: 50 },
    );
    release.resolve();
    await collect(worker, 'failed', total, 60_000);
    await worker.close();
    expect(await dlq.getWaitingCount()).toBe(total);
    const progress: number[] = [];
    const result = await dlq.replayDeadLetters({
      name: 'charge',
      failedReasonContains: '502',
      onProgress: (p) => progress.push(p.replayed),
    });
    expect(result).toEqual({ replayed: 2000, refused: [] });
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.at(-1)).toBe(2000);
    expect(await queue.getWaitingCount()).toBe(2000);
    expect(await dlq.getWaitingCount()).toBe(500);
    expect((await dlq.replayDeadLetters({ limit: 10 })).replayed).toBe(10);
  }, 90_000);

  it('refuses a dead-letter queue that is the queue itself', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await expect(queue.add('x', {}, { deadLetter: { queue: name } })).rejects.toBeInstanceOf(InvalidOptionsError);
    expect(CrossSlotError).toBeDefined();
  });
});
