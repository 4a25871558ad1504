/**
 * Very high worker concurrency (issue 12, defect 7): a claim takes at most 1,000 jobs per call
 * (the dispatcher asks again while calls return full), so no claim reaches Lua's `unpack` limit
 * (~8,000 values), which used to fail the claim script after it had popped the jobs: they were
 * left active in no structure, invisible to stall rescue.
 */
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import type { Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { until } from '../helpers/wait.js';

const env = useHopper();
const N = 9_000;
const jobs = (n: number) => Array.from({ length: n }, (_, i) => ({ name: 'j', data: { i }, opts: { jobId: `c-${i}` } }));

describe('claims at very high concurrency', () => {
  it('a claim for 10,000 jobs takes at most 1,000, all locked in the active set', async () => {
    const queueName = env.queueName();
    const queue = env.queue(queueName);
    await queue.addBulk(jobs(N));
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName, role: 'command' }));
    const first = await backend.claim({ count: 10_000, lockMs: 30_000, tokenPrefix: 'big:1:' });
    expect(first.jobs).toHaveLength(1000);
    expect(await queue.getJobCounts('active', 'waiting')).toEqual({ active: 1000, waiting: N - 1000 });
    // The calls that follow take the rest, 1,000 at a time.
    const sizes: number[] = [];
    for (let call = 2; ; call++) {
      const next = await backend.claim({ count: 10_000, lockMs: 30_000, tokenPrefix: `big:${call}:` });
      if (next.jobs.length === 0) break;
      sizes.push(next.jobs.length);
    }
    expect(sizes).toEqual([1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000]);
    expect(await queue.getJobCounts('active', 'waiting')).toEqual({ active: N, waiting: 0 });
    // The invariant audit after the test checks every active job is in the active set with a token.
  });

  it('a worker with concurrency 20,000 runs 9,000 jobs, each once, with no error', async () => {
    const queueName = env.queueName();
    const queue = env.queue(queueName);
    await queue.addBulk(jobs(N));
    const runs = new Map<string, number>();
    env.worker(
      queueName,
      async (job: Job) => {
        runs.set(job.id as string, (runs.get(job.id as string) ?? 0) + 1);
      },
      { concurrency: 20_000 },
    );
    await until(async () => runs.size === N, `${N} jobs run`, 60_000, 50);
    await until(async () => (await queue.getJobCounts('active')).active === 0, 'no job active');
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
  });
});
