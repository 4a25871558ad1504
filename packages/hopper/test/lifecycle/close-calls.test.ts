/**
 * While a Worker closes gracefully, the jobs it still runs keep working: their progress, logs and
 * data writes go through (the start's retries stop at close, not the calls of a started worker).
 */
import { describe, expect, it } from 'vitest';
import { once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('a closing worker', () => {
  it('lets the jobs it still runs report progress and logs until they finish', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const release = signal();
    const worker = env.worker(name, async (job) => {
      await release.promise;
      await job.updateProgress(50);
      await job.log('still here');
      return 'finished';
    });
    const active = once(worker, 'active');
    const job = await queue.add('x', {});
    await active;
    const closed = worker.close();
    release.resolve();
    await closed;
    const stored = await queue.getJob(job.id as string);
    expect(stored?.returnvalue).toBe('finished');
    expect(stored?.progress).toBe(50);
    expect((await queue.getJobLogs(job.id as string)).logs).toEqual(['still here']);
  });
});
