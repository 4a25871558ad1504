import { describe, expect, it } from 'vitest';
import { GroupMaxSizeExceededError, InvalidOptionsError, type Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

/** Takes jobs one at a time with a manual worker and completes each; returns their names in claim order. */
async function drainInOrder(queueName: string, count: number): Promise<string[]> {
  const worker = env.worker(queueName, null, { autorun: false });
  const order: string[] = [];
  for (let i = 0; i < count; i++) {
    const job = (await worker.getNextJob('tok')) as Job | undefined;
    if (!job) break;
    order.push(job.name);
    await job.moveToCompleted('ok', 'tok', false);
  }
  return order;
}

describe('groups: order and turns', () => {
  it('groups take turns, FIFO within a group, and jobs without a group take theirs as one group', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    for (let i = 1; i <= 3; i++) await queue.add(`a${i}`, {}, { group: { id: 'A' } });
    for (let i = 1; i <= 3; i++) await queue.add(`b${i}`, {}, { group: { id: 'B' } });
    for (let i = 1; i <= 3; i++) await queue.add(`u${i}`, {});
    const order = await drainInOrder(name, 9);
    // The ring starts ['', A, B]: the ungrouped jobs, then A, then B, in turn.
    expect(order).toEqual(['u1', 'a1', 'b1', 'u2', 'a2', 'b2', 'u3', 'a3', 'b3']);
  });

  it('priority orders jobs within a group; counts and getters include grouped jobs', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('low', {}, { group: { id: 'A' }, priority: 5 });
    await queue.add('plain', {}, { group: { id: 'A' } });
    await queue.add('high', {}, { group: { id: 'A' }, priority: 1 });
    expect(await queue.getJobCounts('waiting', 'prioritized')).toEqual({ waiting: 1, prioritized: 2 });
    expect((await queue.getWaiting()).map((j) => j.name)).toEqual(['plain']);
    expect((await queue.getPrioritized()).map((j) => j.name)).toEqual(['high', 'low']);
    expect((await queue.getGroupJobs('A')).map((j) => j.name)).toEqual(['plain', 'high', 'low']);
    expect(await queue.getGroupJobsCount('A')).toBe(3);
    expect(await drainInOrder(name, 3)).toEqual(['plain', 'high', 'low']);
  });

  it('weights give a proportional share of turns (deficit round-robin)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupOptions('heavy', { weight: 2 });
    const jobs = [];
    for (let i = 0; i < 30; i++) jobs.push({ name: 'h', data: {}, opts: { group: { id: 'heavy' } } });
    for (let i = 0; i < 30; i++) jobs.push({ name: 'l', data: {}, opts: { group: { id: 'light' } } });
    await queue.addBulk(jobs);
    const order = await drainInOrder(name, 30);
    expect(order.filter((n) => n === 'h').length).toBe(20);
    expect(order.filter((n) => n === 'l').length).toBe(10);
  });
});

describe('groups: backlog cap', () => {
  it('refuses an add beyond maxSize with a typed error and writes nothing', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupOptions('A', { maxSize: 2 });
    await queue.add('1', {}, { group: { id: 'A' } });
    await queue.add('2', {}, { group: { id: 'A' } });
    const err = await queue.add('3', {}, { group: { id: 'A' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GroupMaxSizeExceededError);
    expect(err).toMatchObject({ groupId: 'A', maxSize: 2, size: 2 });
    // A bulk add that would pass the cap writes nothing at all, not even the jobs that fit elsewhere.
    const bulk = await queue
      .addBulk([
        { name: 'other', data: {}, opts: { group: { id: 'B' } } },
        { name: '4', data: {}, opts: { group: { id: 'A' } } },
      ])
      .catch((e: unknown) => e);
    expect(bulk).toBeInstanceOf(GroupMaxSizeExceededError);
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 2 });
    // The add's own maxSize wins; the queue default applies to other groups.
    await queue.setGroupDefaults({ maxSize: 1 });
    await queue.add('c1', {}, { group: { id: 'C' } });
    await expect(queue.add('c2', {}, { group: { id: 'C' } })).rejects.toBeInstanceOf(GroupMaxSizeExceededError);
    await queue.add('c2', {}, { group: { id: 'C', maxSize: 5 } });
    expect(await queue.getGroupJobsCount('C')).toBe(2);
  });

  it('validates group options with clear errors', async () => {
    const queue = env.queue(env.queueName());
    await expect(queue.add('x', {}, { group: { id: '' } })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.add('x', {}, { group: { id: 'a', maxSize: 0 } })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.setGroupOptions('a', { concurrency: -1 })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.setGroupOptions('a', { limiter: { max: 1, duration: 0 } })).rejects.toThrow(/limiter.duration/);
    await expect(queue.setGroupOptions('a', { speed: 2 } as never)).rejects.toThrow(/Unknown group setting "speed"/);
  });
});

describe('groups: pause and resume', () => {
  it('a paused group is skipped until resumed; others run', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('a1', {}, { group: { id: 'A' } });
    await queue.add('b1', {}, { group: { id: 'B' } });
    await queue.add('b2', {}, { group: { id: 'B' } });
    expect(await queue.pauseGroup('A')).toBe(true);
    expect(await queue.pauseGroup('A')).toBe(false);
    expect((await queue.getGroup('A'))?.status).toBe('paused');
    expect(await drainInOrder(name, 3)).toEqual(['b1', 'b2']);
    expect(await queue.resumeGroup('A')).toBe(true);
    expect(await queue.resumeGroup('A')).toBe(false);
    expect(await drainInOrder(name, 1)).toEqual(['a1']);
  });
});

describe('groups: concurrency', () => {
  it('a group at its concurrency waits for a slot; other groups go on', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupConcurrency('A', 1);
    expect(await queue.getGroupConcurrency('A')).toBe(1);
    for (const n of ['a1', 'a2', 'b1', 'b2']) await queue.add(n, {}, { group: { id: n[0].toUpperCase() } });
    const worker = env.worker(name, null, { autorun: false });
    const first = (await worker.getNextJob('t1')) as Job;
    const second = (await worker.getNextJob('t2')) as Job;
    const third = (await worker.getNextJob('t3')) as Job;
    expect([first.name, second.name, third.name]).toEqual(['a1', 'b1', 'b2']);
    expect((await queue.getGroup('A'))?.status).toBe('maxed');
    expect(await worker.getNextJob('t4')).toBeUndefined();
    await first.moveToCompleted('ok', 't1', false);
    const fourth = (await worker.getNextJob('t4')) as Job;
    expect(fourth.name).toBe('a2');
    for (const [job, token] of [
      [second, 't2'],
      [third, 't3'],
      [fourth, 't4'],
    ] as const)
      await job.moveToCompleted('ok', token, false);
    expect((await queue.getGroups()).map((g) => [g.id, g.active])).toEqual([['A', 0]]);
  });
});

describe('groups: fairness', () => {
  it("a tenant with 50,000 queued jobs does not hold back another's 10: they all start before its next 50", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const bulk = [];
    for (let i = 0; i < 50_000; i++) bulk.push({ name: 'a', data: i, opts: { group: { id: 'A' } } });
    for (let i = 0; i < bulk.length; i += 1000) await queue.addBulk(bulk.slice(i, i + 1000));
    // Processor start times on one monotonic clock, in start order.
    const starts: { name: string; at: number }[] = [];
    let bAddedAt = Infinity;
    let bStarted = 0;
    let resolveB!: () => void;
    const bDone = new Promise<void>((resolve) => (resolveB = resolve));
    let resolveWarm!: () => void;
    const warm = new Promise<void>((resolve) => (resolveWarm = resolve));
    env.worker(
      name,
      async (job) => {
        starts.push({ name: job.name, at: performance.now() });
        if (starts.length === 200) resolveWarm();
        if (job.name === 'b' && ++bStarted === 10) resolveB();
      },
      { concurrency: 10, removeOnComplete: true },
    );
    await warm;
    bAddedAt = performance.now();
    await queue.addBulk(Array.from({ length: 10 }, (_, i) => ({ name: 'b', data: i, opts: { group: { id: 'B' } } })));
    await bDone;
    const lastB = Math.max(...starts.filter((s) => s.name === 'b').map((s) => s.at));
    const aBetween = starts.filter((s) => s.name === 'a' && s.at > bAddedAt && s.at <= lastB).length;
    expect(starts.filter((s) => s.name === 'b')).toHaveLength(10);
    expect(aBetween).toBeLessThan(50);
    await queue.drain();
  }, 60_000);
});

describe('queue-wide rate limit: reading and lifting it', () => {
  it('getRateLimitTtl tells how long the window stays full; removeRateLimitKey lifts it and a manual limit', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGlobalRateLimit(2, 60_000);
    expect(await queue.getGlobalRateLimit()).toEqual({ max: 2, duration: 60_000 });
    for (let i = 0; i < 4; i++) await queue.add(`j${i}`, {});
    const worker = env.worker(name, null, { autorun: false });
    expect(await queue.getRateLimitTtl()).toBe(0);
    const taken = [await worker.getNextJob('t1'), await worker.getNextJob('t2')];
    expect(taken.map((j) => j?.name)).toEqual(['j0', 'j1']);
    expect(await worker.getNextJob('t3')).toBeUndefined();
    const ttl = await queue.getRateLimitTtl();
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(await queue.removeRateLimitKey()).toBe(1);
    expect(await queue.getRateLimitTtl()).toBe(0);
    expect((await worker.getNextJob('t3'))?.name).toBe('j2');
    await worker.rateLimit(5000);
    const manual = await queue.getRateLimitTtl();
    expect(manual).toBeGreaterThan(0);
    expect(manual).toBeLessThanOrEqual(5000);
    expect(await worker.getNextJob('t4')).toBeUndefined();
    await queue.removeRateLimitKey();
    await queue.removeGlobalRateLimit();
    expect(await queue.getGlobalRateLimit()).toBeNull();
    expect((await worker.getNextJob('t4'))?.name).toBe('j3');
  });
});
