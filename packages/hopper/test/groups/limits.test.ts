/**
 * Queue-wide limits and the manual rate limit, in one process on real time: global concurrency
 * (read back, removed), the queue's rate limit against a worker's own limiter, a group's limiter
 * parking and reopening the group, and `worker.rateLimit` + `RateLimitError` putting a job (a
 * grouped one too) back without spending an attempt.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Worker, type Job } from '../../src/index.js';
import { collect, waitFor } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';
import { maxOverlap, type Interval } from './records.js';

const env = useHopper();

/** A processor that works `ms` and records its run. */
function timed(runs: Interval[], ms = 5) {
  return async (): Promise<null> => {
    const start = performance.now();
    await new Promise((resolve) => setTimeout(resolve, ms));
    runs.push({ start, end: performance.now() });
    return null;
  };
}

describe('global concurrency', () => {
  it('caps the active jobs of the queue across workers; it reads back, and removing it lifts the cap', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    expect(await queue.getGlobalConcurrency()).toBeNull();
    await queue.setGlobalConcurrency(2);
    expect(await queue.getGlobalConcurrency()).toBe(2);
    const runs: Interval[] = [];
    const completed = countCompleted([
      env.worker(name, timed(runs), { concurrency: 6 }),
      env.worker(name, timed(runs), { concurrency: 6 }),
    ]);
    await queue.addBulk(Array.from({ length: 16 }, (_, i) => ({ name: 'x', data: { i }, opts: i % 2 ? { group: { id: 'g' } } : {} })));
    await completed.reach(16);
    expect(maxOverlap(runs)).toBe(2);

    await queue.removeGlobalConcurrency();
    expect(await queue.getGlobalConcurrency()).toBeNull();
    runs.length = 0;
    await queue.addBulk(Array.from({ length: 16 }, (_, i) => ({ name: 'y', data: { i } })));
    await completed.reach(32);
    expect(maxOverlap(runs)).toBeGreaterThan(2);
  });
});

describe('rate limits', () => {
  it("the queue's rate limit reads back and applies to a worker without a limiter; a worker's own limiter takes precedence; removing it lifts it", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    expect(await queue.getGlobalRateLimit()).toBeNull();
    await queue.setGlobalRateLimit(2, 60_000);
    expect(await queue.getGlobalRateLimit()).toEqual({ max: 2, duration: 60_000 });
    await queue.addBulk(Array.from({ length: 5 }, (_, i) => ({ name: 'x', data: { i }, opts: { group: { id: `g${i % 2}` } } })));
    const plain = env.worker(name, null, { autorun: false });
    const first = (await plain.getNextJob('t1')) as Job;
    const second = (await plain.getNextJob('t2')) as Job;
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    // Two starts in this minute: the queue's limit is reached.
    expect(await plain.getNextJob('t3')).toBeUndefined();
    // A worker with its own limiter judges the same starts by its own limit.
    const own = env.worker(name, null, { autorun: false, limiter: { max: 3, duration: 60_000 } });
    const third = (await own.getNextJob('t3')) as Job;
    expect(third).toBeDefined();
    expect(await own.getNextJob('t4')).toBeUndefined();
    await queue.removeGlobalRateLimit();
    expect(await queue.getGlobalRateLimit()).toBeNull();
    const fourth = (await plain.getNextJob('t4')) as Job;
    const fifth = (await plain.getNextJob('t5')) as Job;
    expect(new Set([first, second, third, fourth, fifth].map((j) => j.id)).size).toBe(5);
    for (const [job, token] of [
      [first, 't1'],
      [second, 't2'],
      [third, 't3'],
      [fourth, 't4'],
      [fifth, 't5'],
    ] as const)
      await job.moveToCompleted('ok', token, false);
    expect(await queue.getCompletedCount()).toBe(5);
  });

  it("a group's limiter parks the group ('limited') while others go on; lifting it puts the group back in turn", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupRateLimit('A', 2, 60_000);
    for (const n of ['a1', 'a2', 'a3', 'b1', 'b2']) await queue.add(n, {}, { group: { id: n[0].toUpperCase() } });
    const worker = env.worker(name, null, { autorun: false });
    const taken: Job[] = [];
    for (let i = 0; i < 5; i++) {
      const job = (await worker.getNextJob(`t${i}`)) as Job | undefined;
      if (!job) break;
      taken.push(job);
    }
    expect(taken.map((j) => j.name)).toEqual(['a1', 'b1', 'a2', 'b2']);
    expect((await queue.getGroup('A'))?.status).toBe('limited');
    expect(await queue.getGroupJobsCount('A')).toBe(1);
    await queue.setGroupOptions('A', { limiter: null });
    expect((await queue.getGroup('A'))?.status).toBe('ready');
    const last = (await worker.getNextJob('t4')) as Job;
    expect(last.name).toBe('a3');
    for (const [i, job] of [...taken, last].entries()) await job.moveToCompleted('ok', i === 4 ? 't4' : `t${i}`, false);
    expect(await queue.getCompletedCount()).toBe(5);
  });
});

describe('manual rate limit: worker.rateLimit + RateLimitError', () => {
  it.each([
    ['a job without a group', undefined],
    ['a grouped job (group at concurrency 1)', 'A'],
  ])('%s goes back first in line without spending an attempt, and runs once the limit expires', async (_label, group) => {
    const name = env.queueName();
    const queue = env.queue(name);
    if (group) await queue.setGroupConcurrency(group, 1);
    const opts = { removeOnComplete: false, ...(group ? { group: { id: group } } : {}) };
    const first = await queue.add('first', {}, opts);
    await queue.add('second', {}, opts);
    const runs: { name: string; attemptsMade: number }[] = [];
    const at: number[] = [];
    const worker = env.worker(name, async (job: Job) => {
      runs.push({ name: job.name, attemptsMade: job.attemptsMade });
      at.push(performance.now());
      if (runs.length === 1) {
        await worker.rateLimit(150);
        throw Worker.RateLimitError();
      }
      return job.name;
    });
    const completed = collect<[Job]>(worker, 'completed', 2);
    let failed = 0;
    worker.on('failed', () => failed++);
    await completed;
    // The limited job went back first in line (its group's line), so it ran again before the other.
    expect(runs).toEqual([
      { name: 'first', attemptsMade: 0 },
      { name: 'first', attemptsMade: 0 },
      { name: 'second', attemptsMade: 0 },
    ]);
    expect(failed).toBe(0);
    // Nothing started while the limit lived (a Redis key expiry: a lower bound, not a speed check).
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(145);
    // With the default of one attempt, a spent attempt would have failed it for good.
    const stored = (await queue.getJob(first.id as string))!;
    expect(await stored.getState()).toBe('completed');
    expect(stored.attemptsMade).toBe(1);
    if (group) expect((await queue.getGroup(group))?.active).toBe(0);
  });
});

/** Counts the completions of `workers`; `reach(n)` resolves once there were `n`. */
function countCompleted(workers: Worker[]) {
  const events = new EventEmitter();
  let count = 0;
  for (const worker of workers) {
    worker.on('completed', () => {
      count++;
      events.emit('completed');
    });
  }
  return { reach: (n: number) => waitFor(events, 'completed', () => count >= n) };
}
