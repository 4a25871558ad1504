import { describe, expect, it } from 'vitest';
import { DelayedError, JobNotFoundError, LockLostError, RateLimitError, WaitingChildrenError, Worker } from '../../src/index.js';
import { once } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

describe('manual processing', () => {
  it('takes jobs with getNextJob and finishes them with moveToCompleted, fetching the next', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk(
      [
        { name: 'a', data: { n: 1 } },
        { name: 'b', data: { n: 2 } },
      ].map((j) => ({ ...j, opts: { removeOnComplete: false } })),
    );
    const worker = env.worker(name, null, { autorun: false });
    const token = 'my-token';
    const first = await worker.getNextJob(token);
    expect(first?.name).toBe('a');
    expect(await first?.getState()).toBe('active');
    const reply = await first!.moveToCompleted('one', token, true);
    const second = reply.job;
    expect(second?.name).toBe('b');
    // BullMQ's shape: [next job's stored form, its id, limitUntil, delayUntil].
    expect(reply[1]).toBe(second?.id);
    expect(reply[0]).toMatchObject({ name: 'b' });
    expect((await queue.getJob(first!.id as string))?.returnvalue).toBe('one');
    expect(await second!.moveToCompleted('two', token)).toEqual([]);
    expect(await worker.getNextJob(token)).toBeUndefined();
    expect(await queue.getJobCounts('completed', 'active')).toEqual({ completed: 2, active: 0 });
  });

  it('moveToFailed retries per attempts and backoff, then fails for good', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { attempts: 2, backoff: { type: 'fixed', delay: 100 } });
    const worker = env.worker(name, null, { autorun: false });
    const taken = await worker.getNextJob('t');
    await taken!.moveToFailed(new Error('first'), 't');
    expect(await job.getState()).toBe('delayed');
    env.clock!.advance(100);
    const again = await worker.getNextJob('t');
    expect(again?.attemptsMade).toBe(1);
    await again!.moveToFailed(new Error('second'), 't');
    const stored = await queue.getJob(job.id as string);
    expect(await stored?.getState()).toBe('failed');
    expect(stored?.failedReason).toBe('second');
  });

  it('rejects moves with a token that does not hold the job, and extends locks', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {});
    const worker = env.worker(name, null, { autorun: false, lockDuration: 1000 });
    const job = await worker.getNextJob('owner');
    await expect(job!.moveToCompleted('x', 'thief')).rejects.toBeInstanceOf(LockLostError);
    await expect(job!.extendLock('thief', 5000)).rejects.toBeInstanceOf(LockLostError);
    expect(await job!.extendLock('owner', 5000)).toBe(1);
    env.clock!.advance(2000);
    // Extended to 5 s: not stalled after 2 s.
    expect((await worker.stallRescuer.runOnce(true)).rescued).toEqual([]);
    await job!.moveToCompleted('done', 'owner');
  });

  it('moveToDelayed + DelayedError reschedules without spending an attempt', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { removeOnComplete: false });
    let runs = 0;
    const worker = env.worker(name, async (j, token) => {
      runs++;
      if (runs === 1) {
        await j.moveToDelayed(env.clock!.now() + 500, token);
        throw new DelayedError();
      }
      return 'later';
    });
    await once(worker, 'drained');
    expect(await job.getState()).toBe('delayed');
    env.clock!.advance(500);
    await once(worker, 'completed');
    const stored = await queue.getJob(job.id as string);
    expect(stored?.attemptsMade).toBe(1);
    expect(stored?.attemptsStarted).toBe(2);
  });

  it('moveToWaitingChildren is false for a job without children (no flows yet), WaitingChildrenError is recognised', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {});
    const worker = env.worker(name, async (j, token) => {
      const waiting = await j.moveToWaitingChildren(token);
      if (waiting) throw new WaitingChildrenError();
      return waiting;
    });
    const [, result] = await once<[unknown, boolean]>(worker, 'completed');
    expect(result).toBe(false);
  });

  it('RateLimitError puts the job back without an attempt and the queue waits out worker.rateLimit', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const job = await queue.add('x', {}, { removeOnComplete: false });
    let runs = 0;
    const backToWaiting = once<[{ jobId: string; prev: string }]>(events, 'waiting', (e) => e.prev === 'active');
    const worker = env.worker(name, async () => {
      runs++;
      if (runs === 1) {
        await worker.rateLimit(60_000);
        throw Worker.RateLimitError();
      }
      return 'ok';
    });
    expect((await backToWaiting)[0].jobId).toBe(job.id);
    expect(Worker.RateLimitError()).toBeInstanceOf(RateLimitError);
    // Rate-limited (a Redis key expiry, so real time): the job waits, not failed, no attempt spent.
    expect(await job.getState()).toBe('waiting');
    expect((await queue.getJob(job.id as string))?.attemptsMade).toBe(0);
    expect(runs).toBe(1);
  });

  it("a rate-limited job that cannot be put back (removed meanwhile) is an error event with BullMQ's phrase", async () => {
    env.expectErrors(/moveJobFromActiveToWait/);
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, async () => {
      await queue.obliterate({ force: true });
      throw Worker.RateLimitError();
    });
    const job = await queue.add('x', {});
    const [err] = await once<[Error]>(worker, 'error');
    expect(err).toBeInstanceOf(JobNotFoundError);
    expect(err.message).toMatch(new RegExp(`^Missing key for job ${job.id}\\. moveJobFromActiveToWait`));
    expect(await job.getState()).toBe('unknown');
  });
});
