/**
 * Large addBulk calls (issue 12, defect 6): a bulk of any size is added atomically, or refused
 * before anything is written. Lua's `unpack` fails past ~8,000 values; an addBulk of more than
 * that used to fail after writing its job records, leaving them in no list, and re-adding them
 * reported them as duplicates, so they never ran.
 */
import { describe, expect, it } from 'vitest';
import { GroupMaxSizeExceededError, type Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { until } from '../helpers/wait.js';

const env = useHopper();

const N = 9_500;
const bulk = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => ({ name: 'j', data: { i }, opts: { jobId: `${prefix}-${i}` } }));

describe('addBulk beyond the unpack limit', () => {
  it(`adds ${N} jobs with custom ids in one call, and every one runs exactly once`, async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const added = await queue.addBulk(bulk(N, 'order'));
    expect(added).toHaveLength(N);
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: N });
    expect(await queue.getJobState('order-0')).toBe('waiting');
    expect(await queue.getJobState(`order-${N - 1}`)).toBe('waiting');
    // Line order is add order across the chunked RPUSH.
    expect((await queue.getWaiting(0, 2)).map((j) => j.id)).toEqual(['order-0', 'order-1', 'order-2']);
    expect((await queue.getWaiting(N - 1, N - 1)).map((j) => j.id)).toEqual([`order-${N - 1}`]);

    // Re-adding them all: every one is a duplicate, nothing new is written.
    let duplicated = 0;
    const events = env.events(name);
    events.on('duplicated', () => duplicated++);
    await events.waitUntilReady();
    await queue.addBulk(bulk(N, 'order'));
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: N });
    await until(async () => duplicated === N, `${N} duplicated events`);

    const runs = new Map<string, number>();
    env.worker(
      name,
      async (job: Job) => {
        runs.set(job.id as string, (runs.get(job.id as string) ?? 0) + 1);
      },
      { concurrency: 500 },
    );
    await until(async () => runs.size === N, `${N} jobs run`, 60_000, 50);
    await until(async () => (await queue.getJobCounts('active', 'waiting')).active === 0, 'no job active');
    expect(runs.size).toBe(N);
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
  });

  it('applies duplicates and deduplication ids within one large call in order: the first wins', async () => {
    const queue = env.queue(env.queueName());
    const jobs = [
      ...bulk(N, 'x'),
      { name: 'again', data: { i: -1 }, opts: { jobId: 'x-5' } },
      { name: 'd1', data: { i: -2 }, opts: { deduplication: { id: 'dd' } } },
      { name: 'd2', data: { i: -3 }, opts: { deduplication: { id: 'dd' } } },
    ];
    const added = await queue.addBulk(jobs);
    expect(added[N].id).toBe('x-5');
    expect(added[N + 2].id).toBe(added[N + 1].id);
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: N + 1 });
    expect((await queue.getJob('x-5'))?.name).toBe('j');
    expect((await queue.getJob(added[N + 1].id as string))?.name).toBe('d1');
  });

  it('refuses a large call over a group cap before writing anything', async () => {
    const queue = env.queue(env.queueName());
    const jobs = Array.from({ length: N }, (_, i) => ({
      name: 'g',
      data: { i },
      opts: { jobId: `g-${i}`, group: { id: 'tenant', maxSize: N - 1 } },
    }));
    await expect(queue.addBulk(jobs)).rejects.toBeInstanceOf(GroupMaxSizeExceededError);
    expect(await queue.getJob('g-0')).toBeUndefined();
    expect(await queue.getJobCounts()).toMatchObject({ waiting: 0, prioritized: 0, delayed: 0 });
  });
});
