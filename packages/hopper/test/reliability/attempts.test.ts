/**
 * Two attempts of one job (defect 9): the executor keys running attempts by lock token, the old
 * attempt is aborted when its lock is lost, ending it never touches the new attempt, and lock
 * renewal is fenced per attempt (token AND attempt number).
 */
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { LockLostError, type Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once, signal } from '../helpers/wait.js';
import { withoutLockRenewal } from '../helpers/renewal.js';

const env = useHopper({ fakeClock: true });

describe('two attempts of one job', () => {
  it('on one worker: the stale attempt is aborted, its end leaves the new attempt running and renewed', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('work', {}, { jobId: 'X', removeOnComplete: false });
    const aborted = signal<unknown>();
    const releaseFirst = signal();
    const secondStarted = signal();
    const finishSecond = signal();
    const firstReturns = signal();
    const worker = withoutLockRenewal(
      env.worker(
        name,
        async (j, _token, abortSignal) => {
          if (j.attemptsStarted === 1) {
            // Ignores its signal until told to return.
            abortSignal?.addEventListener('abort', () => aborted.resolve(abortSignal.reason));
            await releaseFirst.promise;
            firstReturns.resolve();
            return 'first';
          }
          secondStarted.resolve();
          await finishSecond.promise;
          return 'second';
        },
        { concurrency: 2, lockDuration: 1000, stalledInterval: 1_000_000 },
      ),
    );
    await once(worker, 'active');
    // Attempt 1's lock expires (a long pause); the rescue puts the job back; this worker takes it again.
    env.clock!.advance(1001);
    expect((await worker.stallRescuer.runOnce(true)).rescued).toEqual(['X']);
    await secondStarted.promise;
    expect(await aborted.promise).toBeInstanceOf(LockLostError);
    // Attempt 1 returns late: its result is dropped, attempt 2's entry is untouched.
    releaseFirst.resolve();
    await firstReturns.promise;
    await queue.getJobCounts(); // a round trip: attempt 1 has settled by now
    // Renewal renews attempt 2 and reports nothing lost.
    env.clock!.advance(900);
    expect(await worker.lockRenewer.runOnce()).toEqual([]);
    env.clock!.advance(900);
    expect(await worker.lockRenewer.runOnce()).toEqual([]);
    // Its lock still holds: a stall check now rescues nothing.
    expect((await worker.stallRescuer.runOnce(true)).rescued).toEqual([]);
    finishSecond.resolve();
    const [done, value] = await once<[Job, unknown]>(worker, 'completed');
    expect([done.id, value]).toEqual(['X', 'second']);
    const stored = await queue.getJob(job.id as string);
    expect(stored?.returnvalue).toBe('second');
    expect(stored?.attemptsStarted).toBe(2);
  });

  it('extendLocks renews only the attempt that holds the job: same token AND same attempt number', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('work', {}, { jobId: 'M' });
    // Manual processing reuses one token for every attempt.
    const worker = env.worker(name, null, { lockDuration: 1000, maxStalledCount: 5 });
    const first = (await worker.getNextJob('tok')) as Job;
    env.clock!.advance(1001);
    await worker.stallRescuer.runOnce(true);
    const second = (await worker.getNextJob('tok')) as Job;
    expect([first.attemptsStarted, second.attemptsStarted]).toEqual([1, 2]);
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    const stale = await backend.extendLocks([{ id: 'M', token: 'tok', attempt: 1 }], 60_000, undefined, env.clock!.backendNow());
    expect(stale.lost).toEqual(['tok']);
    // The stale attempt did not push the holder's deadline: it expires on its own lock.
    env.clock!.advance(1001);
    expect((await worker.stallRescuer.runOnce(true)).rescued).toEqual(['M']);
    const third = (await worker.getNextJob('tok')) as Job;
    const held = await backend.extendLocks([{ id: 'M', token: 'tok', attempt: 3 }], 60_000, undefined, env.clock!.backendNow());
    expect(held.lost).toEqual([]);
    await expect(first.extendLock('tok', 60_000)).rejects.toBeInstanceOf(LockLostError);
    expect(await third.extendLock('tok', 60_000)).toBe(1);
  });
});
