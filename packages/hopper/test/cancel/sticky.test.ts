/**
 * Cancellation is sticky (defect 4): a cancelled active job that leaves its worker without a
 * result (stall rescue, orphan release, close release) ends failed as cancelled, never back in
 * line; a retry clears the mark; the holder's moves refuse a cancelled job; a re-sent cancelJob
 * changes nothing twice. Orphan release (Redis-only: a SQLite call has no lost reply) is in
 * test/backend-redis/cancel-orphans.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { WriteCode } from '../../src/backend/backend.js';
import { CancelledError, CloseTimeoutError, RateLimitError, type Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once, signal } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });

function backendOf(queueName: string) {
  return env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName, role: 'command' }));
}

/** A worker (id `ghost`) that claimed the queue's next job by hand. */
async function ghostClaim(queueName: string, lockMs = 1000) {
  const backend = backendOf(queueName);
  const { jobs } = await backend.claim({ count: 1, lockMs, tokenPrefix: 'ghost:1:' }, env.clock!.backendNow());
  return { backend, claimed: jobs[0] };
}

async function expectCancelledFailure(queueName: string, id: string, reason: string): Promise<void> {
  const job = await env.queue(queueName).getJob(id);
  expect(await job?.getState()).toBe('failed');
  expect(job?.failedReason).toBe(`CancelledError: ${reason}`);
}

describe('sticky cancellation', () => {
  it('the stall rescue ends a cancelled active job failed as cancelled, not back in line', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('charge', {}, { jobId: 'pay', attempts: 3 });
    await ghostClaim(name);
    expect(await queue.cancelJob('pay', 'user cancelled')).toBe('signalled');
    const worker = env.worker(name, async () => 'charged', { autorun: false });
    env.clock!.advance(1001);
    const result = await worker.stallRescuer.runOnce(true);
    expect(result).toMatchObject({ rescued: [], failed: ['pay'] });
    await expectCancelledFailure(name, 'pay', 'user cancelled');
    expect((await queue.getJob('pay'))?.attemptsMade).toBe(1);
    // Reported as a cancellation, as when the processor itself ends a cancelled attempt.
    const { events } = await backendOf(name).readEvents('0-0', -1, 1000, false);
    expect(events.filter((e) => e.event === 'cancelled').map((e) => e.fields.jobId)).toEqual(['pay']);
  });

  it('a closing worker ends a cancelled job it releases failed as cancelled', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('charge', {}, { jobId: 'pay' });
    const aborted = signal<unknown>();
    // The processor ignores its signal: the close deadline releases the job.
    const worker = env.worker(
      name,
      async (_job, _token, abortSignal) => {
        abortSignal?.addEventListener('abort', () => aborted.resolve(abortSignal.reason));
        await new Promise(() => {});
      },
      { closeTimeout: 100 },
    );
    await once(worker, 'active');
    expect(await queue.cancelJob('pay', 'late')).toBe('signalled');
    // The lock renewal reports the cancel too (the pub/sub message may precede the subscription).
    await worker.lockRenewer.runOnce();
    expect(await aborted.promise).toBeInstanceOf(CancelledError);
    await expect(worker.close()).rejects.toBeInstanceOf(CloseTimeoutError);
    await expectCancelledFailure(name, 'pay', 'late');
  });

  it('retryJobs clears the cancel mark: the retried jobs run and complete', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('charge', {}, { jobId: 'waiting-one' });
    expect(await queue.cancelJob('waiting-one')).toBe('cancelled');
    await ghostClaim(name);
    await queue.add('charge', {}, { jobId: 'active-one' });
    const { claimed } = await ghostClaim(name);
    expect(await queue.cancelJob('active-one')).toBe('signalled');
    const backend = backendOf(name);
    const ack = await backend.complete(
      [{ id: 'active-one', token: claimed.token, attempt: claimed.attemptsStarted, returnvalue: '1', keep: { kind: 'keep' } }],
      { count: 0, lockMs: 1000, tokenPrefix: 'x' },
      env.clock!.backendNow(),
    );
    expect(ack.codes).toEqual([WriteCode.Cancelled]);
    await queue.retryJobs({ state: 'failed' });
    const worker = env.worker(name, async (job) => `ran ${job.id}`);
    const done = new Set<string>();
    await new Promise<void>((resolve) =>
      worker.on('completed', (job: Job) => {
        done.add(job.id as string);
        if (done.size === 2) resolve();
      }),
    );
    expect([...done].sort()).toEqual(['active-one', 'waiting-one']);
  });

  it("refuses the holder's moves on a cancelled job with a CancelledError, changing nothing", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('charge', {}, { jobId: 'pay' });
    const worker = env.worker(name, null);
    const job = (await worker.getNextJob('tok')) as Job;
    expect(await queue.cancelJob('pay')).toBe('signalled');
    await expect(job.moveToDelayed(env.clock!.now() + 1000, 'tok')).rejects.toBeInstanceOf(CancelledError);
    await expect(job.moveToWaitingChildren('tok')).rejects.toBeInstanceOf(CancelledError);
    const backend = backendOf(name);
    expect(await backend.moveToWait('pay', { token: 'tok', attempt: 1 })).toBe(WriteCode.RefusedCancelled);
    expect(await queue.getJobState('pay')).toBe('active');
  });

  it('a processor that throws RateLimitError on a cancelled job ends it as cancelled, not back in line', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('charge', {}, { jobId: 'pay' });
    const cancelled = signal();
    const worker = env.worker(name, async () => {
      expect(await queue.cancelJob('pay', 'no more')).toBe('signalled');
      cancelled.resolve();
      throw new RateLimitError();
    });
    await cancelled.promise;
    const [job, err] = await once<[Job, Error]>(worker, 'failed');
    expect(job.id).toBe('pay');
    expect(err).toBeInstanceOf(CancelledError);
    await expectCancelledFailure(name, 'pay', 'no more');
  });

  it('a re-sent cancelJob (same call run twice, as ioredis does after a lost reply) is applied once', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('b', {}, { jobId: 'active-one' });
    await ghostClaim(name);
    await queue.add('a', {}, { jobId: 'waiting-one' });
    const backend = backendOf(name);
    const cancelTwice = async (id: string) => [
      await backend.cancelJob(id, 'CancelledError: once', { kind: 'keep' }, env.clock!.backendNow()),
      await backend.cancelJob(id, 'CancelledError: once', { kind: 'keep' }, env.clock!.backendNow()),
    ];
    expect(await cancelTwice('waiting-one')).toEqual([{ kind: 'cancelled' }, { kind: 'cancelled' }]);
    expect(await cancelTwice('active-one')).toEqual([{ kind: 'signalled' }, { kind: 'signalled' }]);
    const events = await backend.readEvents('0-0', -1, 1000, false);
    const kinds = events.events.filter((e) => e.fields.jobId !== undefined).map((e) => `${e.event} ${e.fields.jobId}`);
    expect(kinds.filter((k) => k === 'failed waiting-one')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'cancelling active-one')).toHaveLength(1);
  });
});
