import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { WriteCode } from '../../src/backend/backend.js';
import { LockLostError, type Job } from '../../src/index.js';
import { once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';
import { withoutLockRenewal } from '../helpers/renewal.js';

const env = useHopper({ fakeClock: true });

/** A worker that claimed jobs and died: claims through the seam, never renews or finishes. */
async function ghostClaim(queueName: string, count = 1, lockMs = 1000) {
  const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName, role: 'command' }));
  const result = await backend.claim({ count, lockMs, tokenPrefix: 'ghost:1:' }, env.clock!.backendNow());
  return { backend, jobs: result.jobs };
}

describe('stalled jobs (injected clock)', () => {
  it('returns a job whose lock expired to waiting, then another worker completes it', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { removeOnComplete: false });
    const { jobs } = await ghostClaim(name);
    expect(jobs[0].id).toBe(job.id);
    expect(await job.getState()).toBe('active');

    const worker = env.worker(name, async () => 'rescued', { autorun: false, stalledInterval: 5000 });
    // Not yet expired: nothing to rescue.
    expect((await worker.stallRescuer.runOnce(true)).rescued).toEqual([]);
    env.clock!.advance(1001);
    const stalled = once(worker, 'stalled');
    expect((await worker.stallRescuer.runOnce(true)).rescued).toEqual([job.id]);
    await stalled;
    expect(await job.getState()).toBe('waiting');
    const stored = await queue.getJob(job.id as string);
    expect(stored?.stalledCounter).toBe(1);

    void worker.run();
    await once(worker, 'completed');
    const done = await queue.getJob(job.id as string);
    expect(done?.returnvalue).toBe('rescued');
    expect(done?.attemptsStarted).toBe(2);
  });

  it('fails a job that stalls more than maxStalledCount times', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    const worker = env.worker(name, null, { autorun: false, maxStalledCount: 1 });
    for (let crash = 1; crash <= 2; crash++) {
      await ghostClaim(name);
      env.clock!.advance(1001);
      await worker.stallRescuer.runOnce(true);
    }
    const stored = await queue.getJob(job.id as string);
    expect(await stored?.getState()).toBe('failed');
    expect(stored?.failedReason).toBe('job stalled more than allowable limit');
    expect(stored?.stalledCounter).toBe(2);
  });

  it('runs the stall check at most once per interval across workers', async () => {
    const name = env.queueName();
    const a = env.worker(name, null, { autorun: false, stalledInterval: 10_000 });
    const b = env.worker(name, null, { autorun: false, stalledInterval: 10_000 });
    expect((await a.stallRescuer.runOnce()).ran).toBe(true);
    expect((await b.stallRescuer.runOnce()).ran).toBe(false);
  });
});

describe('fencing', () => {
  it('rejects every write from a stale attempt', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { removeOnComplete: false });
    const { backend, jobs } = await ghostClaim(name);
    const stale = jobs[0];
    env.clock!.advance(1001);
    const worker = env.worker(name, null, { autorun: false });
    await worker.stallRescuer.runOnce(true);
    // A second attempt takes the job.
    const second = await backend.claim({ count: 1, lockMs: 30_000, tokenPrefix: 'live:1:' }, env.clock!.backendNow());
    expect(second.jobs[0].attemptsStarted).toBe(2);

    const staleFence = { token: stale.token, attempt: stale.attemptsStarted };
    expect(await backend.updateProgress(job.id as string, '50', staleFence)).toBe(WriteCode.StaleAttempt);
    expect((await backend.addLog(job.id as string, 'late', staleFence, 0)).code).toBe(WriteCode.StaleAttempt);
    const ack = await backend.complete(
      [{ id: job.id as string, ...staleFence, returnvalue: '"stale"', keep: { kind: 'keep' } }],
      { count: 0, lockMs: 1000, tokenPrefix: 'ghost:2:' },
      env.clock!.backendNow(),
    );
    expect(ack.codes).toEqual([WriteCode.StaleAttempt]);
    const failAck = await backend.fail(
      [{ id: job.id as string, ...staleFence, reason: 'stale', stack: '', stackTraceLimit: 10, retryDelay: -1, keep: { kind: 'keep' } }],
      { count: 0, lockMs: 1000, tokenPrefix: 'ghost:3:' },
      env.clock!.backendNow(),
    );
    expect(failAck.codes).toEqual([WriteCode.StaleAttempt]);

    const stored = await queue.getJob(job.id as string);
    expect(await stored?.getState()).toBe('active');
    expect(stored?.progress).toBe(0);
    expect(stored?.returnvalue).toBeNull();
    // The live attempt finishes normally.
    const live = await backend.complete(
      [{ id: job.id as string, token: second.jobs[0].token, attempt: 2, returnvalue: '"live"', keep: { kind: 'keep' } }],
      { count: 0, lockMs: 1000, tokenPrefix: 'live:2:' },
      env.clock!.backendNow(),
    );
    expect(live.codes).toEqual([WriteCode.Done]);
    expect((await queue.getJob(job.id as string))?.returnvalue).toBe('live');
  });

  it("makes a stale processor's job methods throw LockLostError", async () => {
    env.expectErrors(/LockLostError/); // the stale attempt's result is refused, and reported
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {});
    const firstAttempt = signal<Job>();
    const release = signal();
    let attempt = 0;
    const worker = withoutLockRenewal(
      env.worker(
        name,
        async (job) => {
          attempt++;
          if (attempt === 1) {
            firstAttempt.resolve(job);
            await release.promise;
          }
          return attempt;
        },
        { lockDuration: 1000, concurrency: 2 },
      ),
    );
    const staleJob = await firstAttempt.promise;
    env.clock!.advance(1001);
    await worker.stallRescuer.runOnce(true);
    await once(worker, 'completed');
    await expect(staleJob.updateProgress(10)).rejects.toBeInstanceOf(LockLostError);
    await expect(staleJob.log('late')).rejects.toBeInstanceOf(LockLostError);
    release.resolve();
  });

  it('aborts the signal of a job whose lock was lost, and records only the new attempt', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { removeOnComplete: false });
    const aborted = signal<unknown>();
    let attempt = 0;
    let firstToken: string | undefined;
    const worker = withoutLockRenewal(
      env.worker(
        name,
        async (_job, token, abort) => {
          attempt++;
          if (attempt === 1) {
            firstToken = token;
            await new Promise<void>((resolve) => abort?.addEventListener('abort', () => resolve()));
            aborted.resolve(abort?.reason);
            return 'first';
          }
          return 'second';
        },
        { lockDuration: 1000, stalledInterval: 1_000_000 },
      ),
    );
    await once(worker, 'active');
    env.clock!.advance(1001);
    await worker.stallRescuer.runOnce(true);
    // Lost locks are reported by attempt (token): another attempt of the job may run beside it.
    expect(await worker.lockRenewer.runOnce()).toEqual([firstToken]);
    expect(await aborted.promise).toBeInstanceOf(LockLostError);
    await once(worker, 'completed');
    const stored = await queue.getJob(job.id as string);
    expect(stored?.returnvalue).toBe('second');
    expect(stored?.attemptsStarted).toBe(2);
  });

  it('renews locks in one call so a long job is not rescued', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    const release = signal();
    const worker = env.worker(name, () => release.promise, { lockDuration: 1000 });
    await once(worker, 'active');
    for (let i = 0; i < 6; i++) {
      env.clock!.advance(500); // the renewer fires every lockDuration / 2 on the injected clock
      expect(await worker.lockRenewer.runOnce()).toEqual([]);
    }
    expect((await worker.stallRescuer.runOnce(true)).rescued).toEqual([]);
    expect(await job.getState()).toBe('active');
    release.resolve();
    await once(worker, 'completed');
  });
});
