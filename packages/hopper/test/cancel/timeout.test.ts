import { describe, expect, it } from 'vitest';
import { TimeoutError, type Job } from '../../src/index.js';
import { once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

describe('job timeouts', () => {
  it('aborts the signal at the deadline; the attempt fails with TimeoutError and is retried', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('slow', {}, { timeout: 1000, attempts: 2, removeOnComplete: false });
    let attempt = 0;
    const reasons: unknown[] = [];
    const worker = env.worker(name, async (_job, _token, abort) => {
      attempt++;
      if (attempt === 1) {
        await new Promise<void>((resolve) => abort?.addEventListener('abort', () => resolve()));
        reasons.push(abort?.reason);
        throw abort?.reason;
      }
      return 'second time lucky';
    });
    await once(worker, 'active');
    const failed = once<[Job, Error]>(worker, 'failed');
    env.clock!.advance(999);
    expect(reasons).toEqual([]);
    env.clock!.advance(1);
    const [, error] = await failed;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(reasons[0]).toBeInstanceOf(TimeoutError);
    await once(worker, 'completed');
    const stored = await queue.getJob(job.id as string);
    expect(stored?.returnvalue).toBe('second time lucky');
    expect(stored?.attemptsMade).toBe(2);
  });

  it('a processor that ignores its signal keeps its slot until the grace period ends; its late result is rejected', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('stubborn', {}, { timeout: 1000, attempts: 2, removeOnComplete: false });
    const firstAttemptGoesOn = signal<string>();
    let attempt = 0;
    const worker = env.worker(
      name,
      async () => {
        attempt++;
        if (attempt === 1) return firstAttemptGoesOn.promise; // ignores the signal
        return 'retry result';
      },
      { concurrency: 1, timeoutGrace: 2000 },
    );
    await once(worker, 'active');
    env.clock!.advance(1000); // timed out: signal aborted...
    env.clock!.advance(1999); // ...but within the grace period the slot stays taken: no retry yet
    expect(attempt).toBe(1);
    expect(await job.getState()).toBe('active');
    const failed = once<[Job, Error]>(worker, 'failed');
    env.clock!.advance(1); // grace over: the attempt fails, the slot frees, the retry runs
    const [, error] = await failed;
    expect(error).toBeInstanceOf(TimeoutError);
    await once(worker, 'completed');
    expect(attempt).toBe(2);
    // The first attempt finally returns: too late, fenced off.
    firstAttemptGoesOn.resolve('late result');
    // A given-up attempt writes nothing when it settles: flushing the microtasks that settle it
    // is enough for a write, had there been one, to have been sent before the read below.
    await new Promise((r) => setImmediate(r));
    const stored = await queue.getJob(job.id as string);
    expect(stored?.returnvalue).toBe('retry result');
    expect(stored?.attemptsMade).toBe(2);
  });

  it('refuses a bad timeout', async () => {
    const queue = env.queue(env.queueName());
    await expect(queue.add('x', {}, { timeout: 0 })).rejects.toThrow(/timeout must be a positive integer/);
  });
});
