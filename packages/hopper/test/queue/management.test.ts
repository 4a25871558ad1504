import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, type Job, JobActiveError } from '../../src/index.js';
import { collect, once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

async function finished(name: string, ok: number, bad: number): Promise<void> {
  const queue = env.queue(name);
  await queue.addBulk([
    ...Array.from({ length: ok }, (_, i) => ({ name: 'ok', data: { i }, opts: { removeOnComplete: false } })),
    ...Array.from({ length: bad }, (_, i) => ({ name: 'bad', data: { i } })),
  ]);
  const worker = env.worker(name, async (job) => {
    if (job.name === 'bad') throw new Error('boom');
  });
  await Promise.all([ok ? collect(worker, 'completed', ok) : undefined, bad ? collect(worker, 'failed', bad) : undefined]);
  await worker.close();
}

describe('Queue management', () => {
  it('drains jobs that have not started, delayed ones on request', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk(Array.from({ length: 2500 }, (_, i) => ({ name: 'w', data: { i } })));
    await queue.add('p', {}, { priority: 2 });
    await queue.add('d', {}, { delay: 1000 });
    await queue.drain();
    expect(await queue.getJobCounts('waiting', 'prioritized', 'delayed')).toEqual({ waiting: 0, prioritized: 0, delayed: 1 });
    await queue.drain(true);
    expect(await queue.getJobCounts('delayed')).toEqual({ delayed: 0 });
  });

  it('cleans finished jobs older than the grace period, up to a limit', async () => {
    const name = env.queueName();
    await finished(name, 5, 3);
    const queue = env.queue(name);
    const clock = env.clock!;
    // Nothing is older than 10 s yet.
    expect(await queue.clean(10_000, 0, 'completed')).toEqual([]);
    clock.advance(20_000);
    const cleaned = once(queue, 'cleaned');
    const removed = await queue.clean(10_000, 2, 'completed');
    expect(removed).toHaveLength(2);
    const [ids, type] = await cleaned;
    expect([ids, type]).toEqual([removed, 'completed']);
    expect(await queue.getCompletedCount()).toBe(3);
    expect(await queue.clean(10_000, 0, 'failed')).toHaveLength(3);
    expect(await queue.getFailedCount()).toBe(0);
    for (const id of removed) expect(await queue.getJob(id)).toBeUndefined();
  });

  it('cleans waiting, prioritized and delayed jobs by creation time', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const clock = env.clock!;
    await queue.addBulk(Array.from({ length: 3 }, (_, i) => ({ name: 'old', data: { i } })));
    await queue.add('old-p', {}, { priority: 1 });
    await queue.add('old-d', {}, { delay: 60_000 });
    clock.advance(5000);
    const fresh = await queue.add('fresh', {});
    expect(await queue.clean(1000, 0, 'wait')).toHaveLength(3);
    expect(await queue.clean(1000, 0, 'prioritized')).toHaveLength(1);
    expect(await queue.clean(1000, 0, 'delayed')).toHaveLength(1);
    expect((await queue.getWaiting()).map((j) => j.id)).toEqual([fresh.id]);
    await expect(queue.clean(0, 0, 'active')).rejects.toBeInstanceOf(JobActiveError);
    await expect(queue.clean(-1, 0, 'completed')).rejects.toBeInstanceOf(InvalidOptionsError);
  });

  it('removes a job in any state but active', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const waiting = await queue.add('w', {});
    const delayed = await queue.add('d', { big: 'x'.repeat(200) }, { delay: 5000 });
    await delayed.log('a line');
    expect(await queue.remove(waiting.id as string)).toBe(1);
    expect(await queue.remove(waiting.id as string)).toBe(0);
    await delayed.remove();
    expect(await queue.getJob(delayed.id as string)).toBeUndefined();
    expect(await queue.getJobLogs(delayed.id as string)).toEqual({ logs: [], count: 0 });
    const active = await queue.add('a', {});
    const release = signal();
    const worker = env.worker(name, () => release.promise);
    await once(worker, 'active');
    await expect(queue.remove(active.id as string)).rejects.toBeInstanceOf(JobActiveError);
    release.resolve();
    await once(worker, 'completed');
  });

  it('retries failed jobs in batches, only those finished before a timestamp', async () => {
    const name = env.queueName();
    await finished(name, 0, 5);
    const queue = env.queue(name);
    env.clock!.advance(10_000);
    await finished(name, 0, 2);
    const cutoff = env.clock!.now() - 5_000;
    await queue.retryJobs({ count: 2, timestamp: cutoff });
    expect(await queue.getJobCounts('waiting', 'failed')).toEqual({ waiting: 5, failed: 2 });
    await queue.retryJobs();
    expect(await queue.getJobCounts('waiting', 'failed')).toEqual({ waiting: 7, failed: 0 });
    const job = (await queue.getWaiting())[0];
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toBeUndefined();
    expect(job.finishedOn).toBeUndefined();
  });

  it('retries completed jobs when asked', async () => {
    const name = env.queueName();
    await finished(name, 3, 0);
    const queue = env.queue(name);
    await queue.retryJobs({ state: 'completed' });
    expect(await queue.getJobCounts('waiting', 'completed')).toEqual({ waiting: 3, completed: 0 });
  });

  it('promotes delayed jobs in batches', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk(Array.from({ length: 25 }, (_, i) => ({ name: 'd', data: { i }, opts: { delay: 60_000 + i } })));
    await queue.promoteJobs({ count: 10 });
    expect(await queue.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 25, delayed: 0 });
    expect((await queue.getWaiting(0, 0))[0].data).toEqual({ i: 0 });
  });

  it('obliterates a queue in batches, refusing while jobs are active unless forced', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk(Array.from({ length: 50 }, (_, i) => ({ name: 'x', data: { big: 'y'.repeat(100), i } })));
    const someJob = await queue.add('logged', {}, { delay: 100 });
    await someJob.log('line');
    const release = signal();
    const worker = env.worker(name, () => release.promise);
    await once(worker, 'active');
    await expect(queue.obliterate()).rejects.toBeInstanceOf(JobActiveError);
    await queue.obliterate({ force: true, count: 7 });
    expect(await queue.getJobCounts()).toEqual({
      waiting: 0,
      prioritized: 0,
      delayed: 0,
      active: 0,
      completed: 0,
      failed: 0,
      'waiting-children': 0,
    });
    expect(await queue.getJob(someJob.id as string)).toBeUndefined();
    release.resolve();
    await worker.close(true);
    expect(await queue.getJob('1')).toBeUndefined();
  });

  it('an obliterated queue is used again without a false dataset-reset report', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const errors: unknown[] = [];
    queue.on('error', (err) => errors.push(err));
    await queue.add('before', {});
    const worker = env.worker(name, async (job) => job.name);
    await once(worker, 'completed');
    await queue.obliterate({ force: true });
    // The same Queue and the still-running worker go on: the add reads the queue's epoch back and
    // the worker's lock renewal too; neither may report the obliteration as a dataset reset.
    const after = await queue.add('after', {});
    const [done] = await once<[Job]>(worker, 'completed');
    expect(done.id).toBe(after.id);
    await worker.close();
    expect(errors).toEqual([]);
  });

  it('trims the events stream', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    // One stream entry per add call: 500 calls, 500 entries.
    for (let i = 0; i < 500; i++) await queue.add('x', { i });
    const removed = await queue.trimEvents(10);
    expect(removed).toBeGreaterThan(300);
  });
});
