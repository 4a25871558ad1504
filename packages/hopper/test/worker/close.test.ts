/**
 * worker.close(): finishes or releases every job the worker claimed, including the jobs of a
 * claim whose reply arrives after close began (defect 3), and never hangs: after closeTimeout
 * the jobs still running are released for another worker at once and close rejects with a
 * CloseTimeoutError naming them.
 */
import { describe, expect, it } from 'vitest';
import { CloseTimeoutError, InvalidOptionsError, Worker, type Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once, signal } from '../helpers/wait.js';

const env = useHopper();

describe('worker.close()', () => {
  it('finishes the job brought by an acknowledge-and-claim call in flight when close began', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([1, 2, 3].map((i) => ({ name: 'j', data: { i }, opts: { removeOnComplete: false } })));
    let running = 0;
    const runs: string[] = [];
    const worker = env.worker(
      name,
      async (job) => {
        runs.push(job.id as string);
        running++;
        await Promise.resolve();
        running--;
        return job.id;
      },
      { concurrency: 1 },
    );
    let closing: Promise<void> | undefined;
    // 'completed' is emitted from the reply of the call that acknowledged job 1, which also
    // claimed job 2: close begins before that job reaches the executor.
    worker.on('completed', () => void (closing ??= worker.close()));
    await once(worker, 'completed');
    await closing;
    expect(running).toBe(0);
    expect(runs).toEqual(['1', '2']);
    expect(await queue.getJobCounts('active', 'completed', 'waiting')).toEqual({ active: 0, completed: 2, waiting: 1 });
  });

  it('waits for a failure whose backoff is still being computed (in neither the executor nor the completer)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('j', {}, { attempts: 2, backoff: { type: 'custom' } });
    const backoffAsked = signal();
    const backoffAnswer = signal<number>();
    const worker = env.worker(
      name,
      async () => {
        throw new Error('boom');
      },
      {
        settings: {
          backoffStrategy: () => {
            backoffAsked.resolve();
            return backoffAnswer.promise;
          },
        },
      },
    );
    await backoffAsked.promise;
    let closed = false;
    // The state read the moment close resolves: the failure must be recorded by then.
    const closing = worker.close().then(() => {
      closed = true;
      return queue.getJobState(job.id as string);
    });
    await queue.getJobCounts();
    expect(closed).toBe(false);
    backoffAnswer.resolve(60_000);
    expect(await closing).toBe('delayed');
    const stored = await queue.getJob(job.id as string);
    expect(stored?.attemptsMade).toBe(1);
    expect(stored?.failedReason).toBe('boom');
  });

  it('after closeTimeout releases a job whose processor ignores its signal, at once, and rejects naming it', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('stuck', {});
    const aborted = signal<unknown>();
    const worker = env.worker(
      name,
      async (_job, _token, abortSignal) => {
        abortSignal?.addEventListener('abort', () => aborted.resolve(abortSignal.reason));
        await new Promise(() => {});
      },
      { closeTimeout: 200, lockDuration: 60_000 },
    );
    await once(worker, 'active');
    const error = await worker.close().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(CloseTimeoutError);
    expect((error as CloseTimeoutError).jobIds).toEqual([job.id]);
    expect((error as Error).message).toContain('closeTimeout (200 ms)');
    expect(await aborted.promise).toBeInstanceOf(CloseTimeoutError);
    // Back in line at once (its 60 s lock is not waited for), no stall counted, no attempt spent.
    const stored = await queue.getJob(job.id as string);
    expect(await stored?.getState()).toBe('waiting');
    expect(stored?.stalledCounter).toBe(0);
    expect(stored?.attemptsMade).toBe(0);
    const other = env.worker(name, async () => 'done');
    const [done] = await once<[Job, unknown]>(other, 'completed');
    expect(done.id).toBe(job.id);
  });

  it('close(true) releases the jobs of a claim whose reply arrives after close began, unstarted', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([1, 2].map((i) => ({ name: 'j', data: { i }, opts: { removeOnComplete: false } })));
    const runs: string[] = [];
    const worker = env.worker(name, async (job) => void runs.push(job.id as string), { concurrency: 1 });
    let closing: Promise<void> | undefined;
    worker.on('completed', () => void (closing ??= worker.close(true)));
    await once(worker, 'completed');
    await closing;
    expect(runs).toEqual(['1']);
    const second = await queue.getJob('2');
    expect(await second?.getState()).toBe('waiting');
    // It never started here: no attempt start is counted.
    expect(second?.attemptsStarted).toBe(0);
  });

  it('validates closeTimeout', () => {
    const base = { connection: env.url, prefix: env.prefix };
    for (const closeTimeout of [0, -1, 1.5, Number.NaN]) {
      expect(() => new Worker('q', null, { ...base, closeTimeout })).toThrow(InvalidOptionsError);
    }
    expect(() => new Worker('q', null, { ...base, closeTimeout: 0 })).toThrow(/closeTimeout must be greater than 0/);
  });
});
