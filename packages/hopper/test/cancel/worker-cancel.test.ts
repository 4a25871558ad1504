import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CancelledError, FakeClock, InvalidOptionsError, LockLostError, UnrecoverableError, type Job } from '../../src/index.js';
import { collect, once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';
import { withoutLockRenewal } from '../helpers/renewal.js';

const env = useHopper();

/** A processor that waits for its signal, then throws what `onAbort` makes of the reason. */
function waitsForAbort(seen: unknown[], onAbort: (reason: unknown) => Error = (reason) => new Error(`stopped: ${String(reason)}`)) {
  return (_job: Job, _token: string | undefined, abort?: AbortSignal) =>
    new Promise((_resolve, reject) => {
      abort?.addEventListener('abort', () => {
        seen.push(abort.reason);
        reject(onAbort(abort.reason));
      });
    });
}

describe('worker.cancelJob and cancelAllJobs (in-process, BullMQ)', () => {
  it("aborts the running job's signal with the reason; a plain Error is retried like any failure, nothing is marked cancelled", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { attempts: 2, removeOnComplete: false });
    const reasons: unknown[] = [];
    let attempt = 0;
    const worker = env.worker(name, (j, token, abort) =>
      ++attempt === 1 ? waitsForAbort(reasons)(j, token, abort) : Promise.resolve('second'),
    );
    await once(worker, 'active');
    const failed = once<[Job, Error]>(worker, 'failed');
    const completed = once<[Job, unknown]>(worker, 'completed');
    expect(worker.cancelJob(job.id as string, 'user asked')).toBe(true);
    // Again (already aborted): still running here, so true; the reason stays the first.
    expect(worker.cancelJob(job.id as string, 'again')).toBe(true);
    const [, error] = await failed;
    expect(error.message).toBe('stopped: user asked');
    expect(reasons).toEqual(['user asked']);
    const [, value] = await completed;
    expect(value).toBe('second');
    const stored = await queue.getJob(job.id as string);
    expect(await stored?.getState()).toBe('completed');
    expect(stored?.attemptsMade).toBe(2);
  });

  it('an UnrecoverableError thrown on abort fails the job for good, with its own message (not CancelledError)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { attempts: 3 });
    const reasons: unknown[] = [];
    const worker = env.worker(
      name,
      waitsForAbort(reasons, () => new UnrecoverableError('cancelled, do not retry')),
    );
    await once(worker, 'active');
    const failed = once<[Job, Error]>(worker, 'failed');
    expect(worker.cancelJob(job.id as string)).toBe(true);
    const [, error] = await failed;
    expect(error).toBeInstanceOf(UnrecoverableError);
    // Without a reason the signal carries the standard AbortError, as AbortController.abort() gives.
    expect((reasons[0] as Error).name).toBe('AbortError');
    const stored = await queue.getJob(job.id as string);
    expect(await stored?.getState()).toBe('failed');
    expect(stored?.failedReason).toBe('cancelled, do not retry');
    expect(stored?.attemptsMade).toBe(1);
  });

  it('a processor that ignores the aborted signal and returns completes (unlike queue.cancelJob)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { removeOnComplete: false });
    const release = signal();
    let sawAbort = false;
    const worker = env.worker(name, async (_job, _token, abort) => {
      await release.promise;
      sawAbort = abort?.aborted === true;
      return 'done anyway';
    });
    await once(worker, 'active');
    expect(worker.cancelJob(job.id as string, 'ignored')).toBe(true);
    const completed = once<[Job, unknown]>(worker, 'completed');
    release.resolve();
    expect((await completed)[1]).toBe('done anyway');
    expect(sawAbort).toBe(true);
    expect(await (await queue.getJob(job.id as string))?.getState()).toBe('completed');
  });

  it('returns false for a job not running on this worker: unknown, finished, run by another worker, or after close', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const done = await queue.add('done', {});
    const idle = env.worker(name, async () => 'ok');
    await once(idle, 'completed');
    expect(idle.cancelJob(done.id as string)).toBe(false);
    expect(idle.cancelJob('no-such-job')).toBe(false);
    await idle.close();
    expect(idle.cancelJob(done.id as string)).toBe(false);

    const release = signal();
    let abortedThere = false;
    const busy = env.worker(name, async (_job, _token, abort) => {
      await release.promise;
      abortedThere = abort?.aborted === true;
      return 'ok';
    });
    const other = env.worker(name, async () => 'ok', { autorun: false });
    // Listening before the add: the worker may take the job before `add` returns.
    const busyActive = once(busy, 'active');
    const running = await queue.add('running', {});
    await busyActive;
    // Another worker of the queue does not run it: false, and the runner's signal is untouched.
    expect(other.cancelJob(running.id as string)).toBe(false);
    const completed = once(busy, 'completed');
    release.resolve();
    await completed;
    expect(abortedThere).toBe(false);
  });

  it('cancelAllJobs aborts every job the worker runs, with the reason', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const reasons: unknown[] = [];
    const worker = env.worker(name, waitsForAbort(reasons), { concurrency: 3 });
    const active = collect(worker, 'active', 3);
    await queue.addBulk([1, 2, 3].map((i) => ({ name: 'x', data: { i } })));
    await active;
    const failed = collect<[Job, Error]>(worker, 'failed', 3);
    worker.cancelAllJobs('shutting down');
    const events = await failed;
    expect(events.map(([, error]) => error.message)).toEqual([
      'stopped: shutting down',
      'stopped: shutting down',
      'stopped: shutting down',
    ]);
    expect(reasons).toEqual(['shutting down', 'shutting down', 'shutting down']);
    // Nothing left to cancel.
    worker.cancelAllJobs();
  });

  it('refuses a non-string job id or a reason that is neither a string nor an Error, aborting nothing', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    const release = signal();
    let aborted = false;
    const worker = env.worker(name, async (_job, _token, abort) => {
      await release.promise;
      aborted = abort?.aborted === true;
    });
    await once(worker, 'active');
    expect(() => worker.cancelJob(42 as unknown as string)).toThrow(InvalidOptionsError);
    expect(() => worker.cancelJob(job.id as string, { why: 'x' } as unknown as string)).toThrow(InvalidOptionsError);
    expect(() => worker.cancelAllJobs(7 as unknown as string)).toThrow(InvalidOptionsError);
    const completed = once(worker, 'completed');
    release.resolve();
    await completed;
    expect(aborted).toBe(false);
  });

  it('queue.cancelJob wins over a worker-level cancel: the attempt ends cancelled, not retried', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { attempts: 3 });
    const release = signal();
    const reasons: unknown[] = [];
    const worker = env.worker(name, async (_job, _token, abort) => {
      await release.promise;
      reasons.push(abort?.reason);
      throw new Error('stopped');
    });
    await once(worker, 'active');
    expect(worker.cancelJob(job.id as string, 'local')).toBe(true);
    expect(await queue.cancelJob(job.id as string, 'for good')).toBe('signalled');
    const failed = once<[Job, Error]>(worker, 'failed');
    release.resolve();
    const [, error] = await failed;
    expect(error).toBeInstanceOf(CancelledError);
    // The signal kept the first reason it was aborted with.
    expect(reasons).toEqual(['local']);
    const stored = await queue.getJob(job.id as string);
    expect(await stored?.getState()).toBe('failed');
    expect(stored?.failedReason).toBe('CancelledError: for good');
    expect(stored?.attemptsMade).toBe(1);
  });

  it('a job cancelled with queue.cancelJob still answers true to worker.cancelJob, and keeps its CancelledError', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    const aborted = signal<unknown>();
    const release = signal();
    const worker = env.worker(name, async (_job, _token, abort) => {
      await new Promise((resolve) => abort?.addEventListener('abort', resolve));
      aborted.resolve(abort?.reason);
      await release.promise;
      throw new Error('stopped');
    });
    await once(worker, 'active');
    expect(await queue.cancelJob(job.id as string, 'for good')).toBe('signalled');
    expect(await aborted.promise).toBeInstanceOf(CancelledError);
    expect(worker.cancelJob(job.id as string, 'local')).toBe(true);
    const failed = once<[Job, Error]>(worker, 'failed');
    release.resolve();
    expect((await failed)[1]).toBeInstanceOf(CancelledError);
    expect((await queue.getJob(job.id as string))?.failedReason).toBe('CancelledError: for good');
  });

  it('emits lockRenewalFailed with the ids of lost locks; cancelJob in it still finds the attempt (its signal carries LockLostError)', async () => {
    const clock = new FakeClock();
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    const reasons: unknown[] = [];
    let attempt = 0;
    const worker = withoutLockRenewal(
      env.worker(
        name,
        (j, token, abort) =>
          ++attempt === 1 ? waitsForAbort(reasons, () => new Error('lost'))(j, token, abort) : Promise.resolve('second'),
        {
          clock,
          lockDuration: 1000,
          stalledInterval: 1_000_000,
        },
      ),
    );
    await once(worker, 'active');
    const answers: boolean[] = [];
    const lost = once<[string[]]>(worker, 'lockRenewalFailed');
    worker.on('lockRenewalFailed', (ids: string[]) => ids.forEach((id) => answers.push(worker.cancelJob(id))));
    clock.advance(1001);
    await worker.stallRescuer.runOnce(true);
    await worker.lockRenewer.runOnce();
    expect((await lost)[0]).toEqual([job.id]);
    expect(answers).toEqual([true]);
    expect(reasons[0]).toBeInstanceOf(LockLostError);
    await once(worker, 'completed');
  });
});

describe('lock renewal', () => {
  it('reports a lost lock once when two renewals overlap', async () => {
    const clock = new FakeClock();
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {});
    const reasons: unknown[] = [];
    let attempt = 0;
    const worker = withoutLockRenewal(
      env.worker(
        name,
        (j, token, abort) =>
          ++attempt === 1 ? waitsForAbort(reasons, () => new Error('lost'))(j, token, abort) : Promise.resolve('second'),
        { clock, lockDuration: 1000, stalledInterval: 1_000_000 },
      ),
    );
    await once(worker, 'active');
    const reports: string[][] = [];
    worker.on('lockRenewalFailed', (ids: string[]) => reports.push(ids));
    clock.advance(1001);
    await worker.stallRescuer.runOnce(true);
    const [first, second] = await Promise.all([worker.lockRenewer.runOnce(), worker.lockRenewer.runOnce()]);
    expect(reports).toHaveLength(1);
    expect(first.length + second.length).toBe(1);
    await once(worker, 'completed');
  });
});

describe('worker.cancelJob with a sandboxed processor', () => {
  const file = fileURLToPath(new URL('../fixtures/sandbox/cancel-reason.mjs', import.meta.url));

  it.each([false, true])('passes a string reason to the child as that string (useWorkerThreads: %s)', async (useWorkerThreads) => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    const worker = env.worker(name, file, { useWorkerThreads });
    await once(worker, 'progress');
    const failed = once<[Job, Error]>(worker, 'failed');
    expect(worker.cancelJob(job.id as string, 'Custom cancellation reason')).toBe(true);
    const [, error] = await failed;
    expect(error.message).toBe('string: Custom cancellation reason');
  });
});
