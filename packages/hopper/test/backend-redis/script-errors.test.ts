/**
 * A worker never stops because one batch's script fails inside Redis (issue 12, defect 11): the
 * scripts validate and read before their first write, so a failed batch changed nothing; the
 * dispatcher retries its jobs one by one, reports the job that still fails (a ScriptError naming
 * it) and keeps processing the others. It used to retry the whole batch every second, forever.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ScriptError, type Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { collect, signal, until } from '../helpers/wait.js';

const env = useHopper();

describe('a batch whose script fails', () => {
  it('is retried job by job: the bad job is reported, the others complete, the worker goes on', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const admin = env.track(Object.assign(new Redis(env.url), { close: async () => void (await admin.quit()) }));
    env.expectErrors((err) => err instanceof ScriptError);
    const reported = () => env.errors().filter((err): err is ScriptError => err instanceof ScriptError);
    await queue.addBulk(['a', 'bad', 'b', 'c'].map((n) => ({ name: n, data: {}, opts: { jobId: n } })));
    const allStarted = signal();
    let started = 0;
    const jobKey = (id: string) => `${env.prefix}:{${name}}:j:${id}`;
    const worker = env.worker(
      name,
      async (job: Job) => {
        if (++started === 4) allStarted.resolve();
        await allStarted.promise;
        // A record another client broke while the job ran: the completion script fails on it.
        if (job.name === 'bad') await admin.multi().del(jobKey('bad')).set(jobKey('bad'), 'not a hash').exec();
        return job.name;
      },
      { concurrency: 4 },
    );
    const done = await collect<[Job]>(worker, 'completed', 3);
    expect(done.map(([job]) => job.id).sort()).toEqual(['a', 'b', 'c']);
    await until(async () => reported().length > 0, 'the bad job reported');
    expect(reported()[0].jobId).toBe('bad');
    expect(reported()[0].message).toMatch(/job bad/);
    // The worker keeps processing.
    await queue.addBulk([1, 2].map((i) => ({ name: 'later', data: { i } })));
    expect(await collect(worker, 'completed', 2)).toHaveLength(2);
    // Clean up the broken record so the audit sees a consistent queue.
    await admin.del(jobKey('bad'));
    await admin.zrem(`${env.prefix}:{${name}}:active`, 'bad');
  });
});
