import { describe, expect, it } from 'vitest';
import type { JobsOptions } from '../../src/index.js';
import { once } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

const keepLast = (id: string, extra: JobsOptions = {}): JobsOptions => ({ ...extra, deduplication: { id, keepLastIfActive: true } });

describe('deduplication.keepLastIfActive', () => {
  it('keeps the last add made while the job runs and adds it when the job completes', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const worker = env.worker(name, null);
    const first = await queue.add('sync', { v: 1 }, keepLast('k'));
    const active = await worker.getNextJob('t');
    expect(active?.id).toBe(first.id);

    const deduplicated = once<[{ jobId: string; deduplicationId: string }]>(events, 'deduplicated');
    const second = await queue.add('sync', { v: 2 }, keepLast('k'));
    const third = await queue.add('sync', { v: 3 }, keepLast('k', { jobId: 'custom-3', priority: 4 }));
    expect(second.id).toBe(first.id);
    expect(third.id).toBe(first.id);
    expect((await deduplicated)[0]).toMatchObject({ jobId: first.id, deduplicationId: 'k' });
    // Nothing new while the first runs: at most one job per id exists unfinished.
    expect(await queue.getJobCounts('waiting', 'prioritized', 'active')).toEqual({ waiting: 0, prioritized: 0, active: 1 });

    await active!.moveToCompleted('done', 't', false);
    // The last add (data, custom id and priority) is now a job holding the id.
    const next = await queue.getJob('custom-3');
    expect(next?.data).toEqual({ v: 3 });
    expect(await next?.getState()).toBe('prioritized');
    expect(await queue.getDeduplicationJobId('k')).toBe('custom-3');
    // While it waits, adds are plain deduplicated adds (nothing kept).
    expect((await queue.add('sync', { v: 4 }, keepLast('k'))).id).toBe('custom-3');
    const taken = await worker.getNextJob('t');
    expect(taken?.id).toBe('custom-3');
    await taken!.moveToCompleted('done', 't', false);
    expect(await queue.getDeduplicationJobId('k')).toBeUndefined();
    expect(await queue.getJobCounts('waiting', 'prioritized', 'completed')).toEqual({ waiting: 0, prioritized: 0, completed: 2 });
  });

  it('adds the kept job only once the active job fails for good, with its own delay', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, null);
    const first = await queue.add('sync', { v: 1 }, keepLast('f', { attempts: 2 }));
    let active = await worker.getNextJob('t');
    await queue.add('sync', { v: 2 }, keepLast('f', { delay: 60_000 }));
    // A failure with an attempt left retries the same job: the kept add waits.
    await active!.moveToFailed(new Error('boom'), 't', false);
    expect(await queue.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 1, delayed: 0 });
    active = await worker.getNextJob('t');
    expect(active?.id).toBe(first.id);
    await active!.moveToFailed(new Error('boom'), 't', false);
    expect(await first.getState()).toBe('failed');
    const nextId = await queue.getDeduplicationJobId('f');
    expect(nextId).toBeDefined();
    expect(nextId).not.toBe(first.id);
    const next = await queue.getJob(nextId as string);
    expect(next?.data).toEqual({ v: 2 });
    expect(await next?.getState()).toBe('delayed');
  });

  it('holds the id past its ttl while the job runs', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, null);
    const opts: JobsOptions = { deduplication: { id: 't', ttl: 1, keepLastIfActive: true } };
    const first = await queue.add('sync', { v: 1 }, opts);
    const active = await worker.getNextJob('t');
    // keepLastIfActive ignores the ttl: the id is held until the job finishes.
    expect(await queue.getDeduplicationJobId('t')).toBe(first.id);
    expect((await queue.add('sync', { v: 2 }, opts)).id).toBe(first.id);
    await active!.moveToCompleted('done', 't', false);
    const next = await queue.getJob((await queue.getDeduplicationJobId('t')) as string);
    expect(next?.data).toEqual({ v: 2 });
  });

  it('runs the kept job after the active one when a worker processes them, never both at once', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    let running = 0;
    let most = 0;
    const seen: unknown[] = [];
    const worker = env.worker(
      name,
      async (job) => {
        running++;
        most = Math.max(most, running);
        seen.push(job.data);
        if (seen.length === 1) await queue.add('sync', { v: 2 }, keepLast('w'));
        running--;
      },
      { concurrency: 4 },
    );
    const two = new Promise<void>((resolve) => {
      let n = 0;
      worker.on('completed', () => ++n === 2 && resolve());
    });
    await queue.add('sync', { v: 1 }, keepLast('w'));
    await two;
    expect(seen).toEqual([{ v: 1 }, { v: 2 }]);
    expect(most).toBe(1);
  });

  it('forgets the kept add when the deduplication key is removed', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, null);
    await queue.add('sync', { v: 1 }, keepLast('r'));
    const active = await worker.getNextJob('t');
    await queue.add('sync', { v: 2 }, keepLast('r'));
    expect(await queue.removeDeduplicationKey('r')).toBe(1);
    await active!.moveToCompleted('done', 't', false);
    expect(await queue.getJobCounts('waiting', 'completed')).toEqual({ waiting: 0, completed: 1 });
  });

  it('refuses a keepLastIfActive that is not a boolean', async () => {
    const queue = env.queue(env.queueName());
    await expect(queue.add('x', {}, { deduplication: { id: 'a', keepLastIfActive: 'yes' as unknown as boolean } })).rejects.toThrow(
      /keepLastIfActive must be a boolean/,
    );
  });
});
