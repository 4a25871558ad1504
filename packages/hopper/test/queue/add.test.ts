import { describe, expect, it } from 'vitest';
import { InvalidDataError, InvalidJobIdError, InvalidNameError, InvalidOptionsError, Queue, type Job } from '../../src/index.js';
import { once, waitFor } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('Queue.add', () => {
  it('adds a job with an auto id and reads it back', async () => {
    const queue = env.queue(env.queueName());
    const job = await queue.add('welcome', { userId: 'u1', tags: ['a', 'b'] });
    expect(job.id).toBe('1');
    expect(job.name).toBe('welcome');
    expect(job.timestamp).toBeGreaterThan(0);
    const stored = await queue.getJob('1');
    expect(stored?.data).toEqual({ userId: 'u1', tags: ['a', 'b'] });
    expect(stored?.name).toBe('welcome');
    expect(await stored?.getState()).toBe('waiting');
    expect(await queue.getJobCounts('waiting', 'wait', 'active')).toEqual({ waiting: 1, wait: 1, active: 0 });
  });

  it('numbers automatic ids in add order within a bulk, skipping custom ids, duplicates and deduplicated adds', async () => {
    const queue = env.queue(env.queueName());
    await queue.add('before', {}, { jobId: 'taken' });
    const jobs = await queue.addBulk([
      { name: 'a', data: {} },
      { name: 'custom', data: {}, opts: { jobId: 'mine' } },
      { name: 'b', data: {}, opts: { deduplication: { id: 'once' } } },
      { name: 'dup', data: {}, opts: { jobId: 'taken' } },
      { name: 'c', data: {}, opts: { deduplication: { id: 'once' } } },
      { name: 'd', data: {} },
    ]);
    // 'c' is deduplicated onto 'b' (same call): it takes no id of its own.
    expect(jobs.map((j) => j.id)).toEqual(['1', 'mine', '2', 'taken', '2', '3']);
    expect((await queue.add('next', {})).id).toBe('4');
    expect((await queue.getWaiting()).map((j) => j.name)).toEqual(['before', 'a', 'custom', 'b', 'd', 'next']);
  });

  it('stores large data outside the job hash and reads it back intact', async () => {
    const queue = env.queue(env.queueName());
    const data = { text: 'x'.repeat(5000), n: 42 };
    const job = await queue.add('big', data);
    expect((await queue.getJob(job.id as string))?.data).toEqual(data);
  });

  it('puts delayed and prioritized jobs in their states', async () => {
    const queue = env.queue(env.queueName());
    const delayed = await queue.add('d', {}, { delay: 60_000 });
    const prioritized = await queue.add('p', {}, { priority: 5 });
    expect(await delayed.getState()).toBe('delayed');
    expect(await prioritized.getState()).toBe('prioritized');
    expect(await queue.getJobCounts()).toMatchObject({ delayed: 1, prioritized: 1, waiting: 0 });
  });

  it('returns the existing job for a duplicate custom id and emits duplicated', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const first = await queue.add('welcome', { v: 1 }, { jobId: 'welcome:u1' });
    const duplicatedEvent = once(events, 'duplicated');
    const localEvent = once(queue, 'duplicated');
    const second = await queue.add('welcome', { v: 2 }, { jobId: 'welcome:u1' });
    expect(second.id).toBe('welcome:u1');
    expect(first.id).toBe('welcome:u1');
    expect(second.data).toEqual({ v: 1 });
    const [args] = (await duplicatedEvent) as [{ jobId: string }];
    expect(args.jobId).toBe('welcome:u1');
    await localEvent;
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 1 });
  });

  it('adds a bulk atomically: one invalid job writes nothing', async () => {
    const queue = env.queue(env.queueName());
    await expect(
      queue.addBulk([
        { name: 'a', data: {} },
        { name: 'b', data: {}, opts: { priority: -1 } },
      ]),
    ).rejects.toBeInstanceOf(InvalidOptionsError);
    expect(await queue.getJobCounts('waiting', 'prioritized')).toEqual({ waiting: 0, prioritized: 0 });
    const jobs = await queue.addBulk([
      { name: 'a', data: { i: 1 } },
      { name: 'b', data: { i: 2 }, opts: { jobId: 'custom-b' } },
      { name: 'c', data: { i: 3 }, opts: { delay: 1000 } },
    ]);
    expect(jobs.map((j) => j.id)).toEqual(['1', 'custom-b', '2']);
    expect(await queue.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 2, delayed: 1 });
  });

  it('groups concurrent adds into few calls, each add resolving with its own job', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const addedEvents: string[] = [];
    events.on('added', ({ jobId }: { jobId: string }) => addedEvents.push(jobId));
    const all = await Promise.all([
      ...Array.from({ length: 1200 }, (_, i) => queue.add('n', { i })),
      queue.add('bad', {}, { priority: -1 }).catch((err: unknown) => err),
    ]);
    const jobs = all.slice(0, 1200) as Job[];
    expect(all[1200]).toBeInstanceOf(InvalidOptionsError);
    expect(jobs.map((j) => j.id)).toEqual(Array.from({ length: 1200 }, (_, i) => String(i + 1)));
    expect(jobs.map((j) => (j.data as { i: number }).i)).toEqual(Array.from({ length: 1200 }, (_, i) => i));
    expect((await queue.getWaiting(0, 2)).map((j) => j.id)).toEqual(['1', '2', '3']);
    await waitFor(events, 'added', () => addedEvents.length === 1200);
    expect(addedEvents).toEqual(jobs.map((j) => j.id));
  });

  it('applies defaultJobOptions, with job options winning', async () => {
    const queue = env.queue(env.queueName(), { defaultJobOptions: { attempts: 5, priority: 3 } });
    const job = await queue.add('x', {}, { priority: 1 });
    const stored = await queue.getJob(job.id as string);
    expect(stored?.opts).toMatchObject({ attempts: 5, priority: 1 });
    expect(stored?.priority).toBe(1);
  });

  it('refuses bad input with typed errors before writing anything', async () => {
    const queue = env.queue(env.queueName());
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(queue.add('x', { n: 10n })).rejects.toBeInstanceOf(InvalidDataError);
    await expect(queue.add('x', circular)).rejects.toBeInstanceOf(InvalidDataError);
    await expect(queue.add('x', { f: () => 1 })).rejects.toBeInstanceOf(InvalidDataError);
    await expect(queue.add('x', {}, { jobId: '123' })).rejects.toBeInstanceOf(InvalidJobIdError);
    await expect(queue.add('x', {}, { jobId: 'a'.repeat(256) })).rejects.toBeInstanceOf(InvalidJobIdError);
    await expect(queue.add('x', {}, { delay: -1 })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.add('x', {}, { delay: Number.NaN })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.add('x', {}, { priority: 2 ** 21 + 1 })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.add('x', {}, { priority: 1.5 })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.add('x', {}, { attempts: -1 })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.add('x', {}, { backoff: { type: 'fixed', jitter: 2 } })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.add('x', {}, { removeOnComplete: -3 })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.add('x', { big: 'y'.repeat(100) }, { sizeLimit: 50 })).rejects.toBeInstanceOf(InvalidDataError);
    expect(await queue.getJobCounts()).toMatchObject({ waiting: 0, delayed: 0, prioritized: 0 });
  });

  it('refuses queue names that would break keys', () => {
    for (const bad of ['', 'a:b', 'a{b}', 'with space', 'star*']) {
      expect(() => new Queue(bad, { connection: env.url, prefix: env.prefix })).toThrow(InvalidNameError);
    }
  });

  it('accepts custom ids with colons that would look like other keys', async () => {
    const queue = env.queue(env.queueName());
    await queue.add('a', { big: 'z'.repeat(200) }, { jobId: 'x' });
    await queue.add('b', { v: 2 }, { jobId: 'x:d' });
    expect((await queue.getJob('x'))?.data).toEqual({ big: 'z'.repeat(200) });
    expect((await queue.getJob('x:d'))?.data).toEqual({ v: 2 });
  });

  it('pauses and resumes', async () => {
    const queue = env.queue(env.queueName());
    expect(await queue.isPaused()).toBe(false);
    await queue.pause();
    expect(await queue.isPaused()).toBe(true);
    await queue.resume();
    expect(await queue.isPaused()).toBe(false);
  });
});
