import { describe, expect, it } from 'vitest';
import { InvalidDataError, InvalidStateError, Job, JobActiveError, LockLostError } from '../../src/index.js';
import { collect, once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';
import { withoutLockRenewal } from '../helpers/renewal.js';

const env = useHopper({ fakeClock: true });

describe('Job methods', () => {
  it('creates and fetches jobs (Job.create, Job.fromId)', async () => {
    const queue = env.queue(env.queueName());
    const job = await Job.create(queue, 'made', { v: 1 }, { priority: 4 });
    const fetched = await Job.fromId(queue, job.id as string);
    expect(fetched?.data).toEqual({ v: 1 });
    expect(fetched?.priority).toBe(4);
    expect(await Job.fromId(queue, 'nope')).toBeUndefined();
  });

  it('updates data, moving it between inline and separate storage', async () => {
    const queue = env.queue(env.queueName());
    const job = await queue.add('x', { small: 1 });
    await job.updateData({ big: 'z'.repeat(500) });
    expect((await queue.getJob(job.id as string))?.data).toEqual({ big: 'z'.repeat(500) });
    await job.updateData({ small: 2 });
    expect((await queue.getJob(job.id as string))?.data).toEqual({ small: 2 });
    const limited = await queue.add('y', {}, { sizeLimit: 20 });
    await expect(limited.updateData({ text: 'way too long for the limit' })).rejects.toBeInstanceOf(InvalidDataError);
  });

  it('round-trips data of every size through add, claim and update (inline, chunked, own key)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    // Multibyte text, so 64-byte chunk boundaries fall inside characters.
    const sizes = [10, 63, 64, 65, 200, 1023, 1024, 1025, 5000];
    const datas = sizes.map((n) => ({ text: 'é€😀'.repeat(n).slice(0, n) }));
    const jobs = await queue.addBulk(datas.map((data) => ({ name: 'sized', data, opts: { removeOnComplete: false } })));
    for (const [i, job] of jobs.entries()) expect((await queue.getJob(job.id as string))?.data).toEqual(datas[i]);
    const seen: unknown[] = [];
    const worker = env.worker(name, async (job) => {
      seen.push(job.data);
    });
    await collect(worker, 'completed', sizes.length);
    expect(seen).toEqual(datas);
    // Updates move data between the three storages and leave nothing stale behind.
    const job = jobs[4];
    for (const n of [5000, 10, 300, 2000, 70]) {
      await job.updateData({ text: 'x'.repeat(n) });
      expect((await queue.getJob(job.id as string))?.data).toEqual({ text: 'x'.repeat(n) });
    }
  });

  it('fences updateData from a processor to its attempt', async () => {
    env.expectErrors(/LockLostError/); // the stale attempt's result is refused, and reported
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', { step: 0 });
    const held = signal<Job>();
    const release = signal();
    let attempt = 0;
    const worker = withoutLockRenewal(
      env.worker(
        name,
        async (job: Job<{ step: number }>) => {
          attempt++;
          if (attempt === 1) {
            await job.updateData({ step: 1 });
            held.resolve(job);
            await release.promise;
          }
          return job.data.step;
        },
        { lockDuration: 1000, concurrency: 2 },
      ),
    );
    const stale = await held.promise;
    env.clock!.advance(1001);
    await worker.stallRescuer.runOnce(true);
    const [, result] = await once<[Job, number]>(worker, 'completed');
    expect(result).toBe(1);
    await expect(stale.updateData({ step: 99 })).rejects.toBeInstanceOf(LockLostError);
    release.resolve();
  });

  it('retries a failed or completed job, and refuses other states', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const bad = await queue.add('bad', {});
    const good = await queue.add('good', {}, { removeOnComplete: false });
    const worker = env.worker(name, async (job) => {
      if (job.name === 'bad') throw new Error('boom');
      return 'ok';
    });
    await Promise.all([once(worker, 'failed'), once(worker, 'completed')]);
    await worker.close();
    const failedJob = (await queue.getJob(bad.id as string))!;
    await failedJob.retry();
    expect(await failedJob.getState()).toBe('waiting');
    expect(failedJob.failedReason).toBeNull(); // as BullMQ leaves it after a retry
    await expect(failedJob.retry()).rejects.toBeInstanceOf(InvalidStateError);
    const completedJob = (await queue.getJob(good.id as string))!;
    await completedJob.retry('completed', { resetAttemptsMade: true });
    expect((await queue.getJob(good.id as string))?.attemptsMade).toBe(0);
  });

  it('promotes, changes delay and changes priority', async () => {
    const queue = env.queue(env.queueName());
    const delayed = await queue.add('d', {}, { delay: 10_000 });
    await delayed.changeDelay(60_000);
    expect(await delayed.isDelayed()).toBe(true);
    await delayed.promote();
    expect(await delayed.isWaiting()).toBe(true);
    await expect(delayed.promote()).rejects.toBeInstanceOf(InvalidStateError);
    await expect(delayed.changeDelay(5)).rejects.toBeInstanceOf(InvalidStateError);

    const a = await queue.add('a', {});
    const b = await queue.add('b', {});
    await b.changePriority({ priority: 0, lifo: true });
    expect((await queue.getWaiting()).map((j) => j.id)).toEqual([b.id, delayed.id, a.id]);
    await a.changePriority({ priority: 7 });
    expect(await a.getState()).toBe('prioritized');
    expect((await queue.getPrioritized()).map((j) => j.id)).toEqual([a.id]);
    // lifo with a priority: the head of the jobs of that priority, behind higher priorities.
    const c = await queue.add('c', {}, { priority: 7 });
    const urgent = await queue.add('u', {}, { priority: 1 });
    await c.changePriority({ priority: 7, lifo: true });
    expect((await queue.getPrioritized()).map((j) => j.id)).toEqual([urgent.id, c.id, a.id]);
  });

  it('answers the is* questions', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { removeOnComplete: false });
    expect([await job.isWaiting(), await job.isActive(), await job.isCompleted()]).toEqual([true, false, false]);
    const worker = env.worker(name, async () => 'done');
    await once(worker, 'completed');
    expect([await job.isCompleted(), await job.isFailed(), await job.isDelayed(), await job.isWaitingChildren()]).toEqual([
      true,
      false,
      false,
      false,
    ]);
  });

  it('discard() makes the failure final despite remaining attempts', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { attempts: 5 });
    const worker = env.worker(name, async (j) => {
      j.discard();
      throw new Error('give up');
    });
    await once(worker, 'failed');
    expect(await job.getState()).toBe('failed');
  });

  it('refuses to remove an active job', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    const release = signal();
    const worker = env.worker(name, () => release.promise);
    await once(worker, 'active');
    await expect(job.remove()).rejects.toBeInstanceOf(JobActiveError);
    release.resolve();
    await once(worker, 'completed');
  });
});
