import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, type Job, type JobType } from '../../src/index.js';
import { collect, once, until } from '../helpers/wait.js';
import { TEST_BACKEND, useHopper } from '../helpers/hopper.js';

const env = useHopper();

const ids = (jobs: Job[]): (string | undefined)[] => jobs.map((j) => j.id);

describe('Queue getters', () => {
  it('lists jobs per state in BullMQ order, with ranges', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([1, 2, 3, 4].map((i) => ({ name: 'w', data: { i } })));
    await queue.add('d', {}, { delay: 50_000, jobId: 'late' });
    await queue.add('d', {}, { delay: 10_000, jobId: 'early' });
    await queue.add('p', {}, { priority: 3, jobId: 'p3' });
    await queue.add('p', {}, { priority: 1, jobId: 'p1' });

    expect(ids(await queue.getWaiting())).toEqual(['1', '2', '3', '4']);
    expect(ids(await queue.getWaiting(1, 2))).toEqual(['2', '3']);
    expect(ids(await queue.getJobs('waiting', 0, 1, false))).toEqual(['4', '3']);
    expect(ids(await queue.getJobs(['wait'], 0, -1, true))).toEqual(['1', '2', '3', '4']);
    expect(ids(await queue.getDelayed())).toEqual(['early', 'late']);
    expect(ids(await queue.getPrioritized())).toEqual(['p1', 'p3']);
    expect(ids(await queue.getJobs(['delayed', 'prioritized'], 0, 0, true))).toEqual(['early', 'p1']);
    expect(await queue.getWaitingCount()).toBe(4);
    expect(await queue.getDelayedCount()).toBe(2);
    expect(await queue.getPrioritizedCount()).toBe(2);
    expect(await queue.getJobCountByTypes('waiting', 'delayed')).toBe(6);
    expect(await queue.count()).toBe(8);
    expect(await queue.getWaitingChildren()).toEqual([]);
    expect(await queue.getWaitingChildrenCount()).toBe(0);
    await expect(queue.getJobs(JSON.parse('["nonsense"]') as JobType[])).rejects.toBeInstanceOf(InvalidOptionsError);
  });

  it('lists active, completed (newest first) and failed jobs', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk(['ok1', 'ok2', 'ok3', 'bad'].map((n) => ({ name: n, data: {}, opts: { removeOnComplete: false } })));
    const worker = env.worker(name, async (job) => {
      if (job.name === 'bad') throw new Error('no');
      return job.name;
    });
    await Promise.all([collect(worker, 'completed', 3), once(worker, 'failed')]);
    const completed = await queue.getCompleted();
    expect(completed.map((j) => j.returnvalue)).toHaveLength(3);
    expect(completed.map((j) => j.finishedOn)).toEqual([...completed.map((j) => j.finishedOn)].sort((a, b) => (b ?? 0) - (a ?? 0)));
    expect((await queue.getFailed()).map((j) => j.failedReason)).toEqual(['no']);
    expect(await queue.getCompletedCount()).toBe(3);
    expect(await queue.getFailedCount()).toBe(1);
    expect(await queue.getActiveCount()).toBe(0);
    expect(await queue.getActive()).toEqual([]);
  });

  it('reads job logs oldest or newest first', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    for (const line of ['a', 'b', 'c', 'd']) await job.log(line);
    expect(await queue.getJobLogs(job.id as string)).toEqual({ logs: ['a', 'b', 'c', 'd'], count: 4 });
    expect(await queue.getJobLogs(job.id as string, 1, 2)).toEqual({ logs: ['b', 'c'], count: 4 });
    expect(await queue.getJobLogs(job.id as string, 0, 1, false)).toEqual({ logs: ['d', 'c'], count: 4 });
  });

  it('keeps at most keepLogs log lines', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { keepLogs: 2 });
    for (const line of ['a', 'b', 'c']) await job.log(line);
    expect(await queue.getJobLogs(job.id as string)).toEqual({ logs: ['b', 'c'], count: 2 });
  });

  it('lists the live workers of the queue, and forgets closed ones', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const a = env.worker(name, async () => undefined, { name: 'mailer-a', concurrency: 3 });
    const b = env.worker(name, async () => undefined, { name: 'mailer-b' });
    await Promise.all([a.waitUntilReady(), b.waitUntilReady()]);
    let workers: Awaited<ReturnType<typeof queue.getWorkers>> = [];
    await until(async () => (workers = await queue.getWorkers()).length === 2, 'both workers have registered');
    expect(workers.map((w) => w.name).sort()).toEqual(['mailer-a', 'mailer-b']);
    expect(workers.find((w) => w.name === 'mailer-a')).toMatchObject({ id: a.id, concurrency: 3, pid: process.pid });
    await b.close();
    expect((await queue.getWorkers()).map((w) => w.id)).toEqual([a.id]);
    expect(await queue.getWorkersCount()).toBe(1);
  });

  it("records the Redis client id of a worker's connection, what BullMQ's getWorkers() calls id", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, async () => undefined, { name: 'with-client-id' });
    await worker.waitUntilReady();
    let workers: Awaited<ReturnType<typeof queue.getWorkers>> = [];
    await until(async () => (workers = await queue.getWorkers()).length === 1, 'the worker has registered');
    if (TEST_BACKEND === 'redis') {
      const client = (await worker.client) as { client(sub: 'ID'): Promise<number> };
      expect(workers[0].clientId).toBe(String(await client.client('ID')));
      expect(workers[0].clientId).toMatch(/^\d+$/);
      // A connection passed in may serve other components too: it names no worker.
      const other = env.worker(name, async () => undefined, { connection: await queue.client, name: 'on-shared' });
      await other.waitUntilReady();
      await until(async () => (workers = await queue.getWorkers()).length === 2, 'the second worker has registered');
      const listed = workers.find((w) => w.name === 'on-shared');
      expect(listed?.id).toBe(other.id);
      expect(listed).not.toHaveProperty('clientId');
      await other.close();
    } else {
      // SQLite has no connection to name.
      expect(workers[0]).not.toHaveProperty('clientId');
    }
    expect(workers[0].id).toBe(worker.id);
  });

  it("lists a worker from ready on, running or not (autorun: false, manual), with BullMQ's rawname", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const idle = env.worker(name, async () => undefined, { autorun: false, name: 'idle' });
    await once(idle, 'ready');
    expect((await queue.getWorkers()).map((w) => w.id)).toEqual([idle.id]);
    const manual = env.worker(name, null);
    await manual.waitUntilReady();
    const workers = await queue.getWorkers();
    expect(workers.map((w) => w.id).sort()).toEqual([idle.id, manual.id].sort());
    expect(workers.find((w) => w.id === idle.id)?.rawname).toBe(`${env.prefix}:${name}:w:idle`);
    expect(workers.find((w) => w.id === manual.id)?.rawname).toBe(`${env.prefix}:${name}`);
    // Another queue's workers are not listed.
    const other = env.worker(env.queueName(), null, { name: 'elsewhere' });
    await other.waitUntilReady();
    expect(await queue.getWorkersCount()).toBe(2);
    await idle.close();
    expect((await queue.getWorkers()).map((w) => w.id)).toEqual([manual.id]);
  });

  it('reports its meta and version', async () => {
    // The key layout the queue was created with: 2 on Redis (side keys marked, includes/base.lua),
    // 1 on SQLite.
    const version = TEST_BACKEND === 'redis' ? 'hopper:2' : 'hopper:1';
    const queue = env.queue(env.queueName(), { streams: { events: { maxLen: 500 } } });
    await queue.pause();
    expect(await queue.getMeta()).toEqual({ paused: true, maxLenEvents: 500, version });
    expect(await queue.getVersion()).toBe(version);
    // The global limits, as BullMQ's getMeta reports them.
    await queue.setGlobalConcurrency(3);
    await queue.setGlobalRateLimit(10, 500);
    expect(await queue.getMeta()).toEqual({ paused: true, maxLenEvents: 500, version, concurrency: 3, max: 10, duration: 500 });
    await queue.removeGlobalConcurrency();
    // As BullMQ: the number of settings removed (max and duration), 0 once there is none.
    expect(await queue.removeGlobalRateLimit()).toBe(2);
    expect(await queue.getMeta()).toEqual({ paused: true, maxLenEvents: 500, version });
    expect(await queue.removeGlobalRateLimit()).toBe(0);
  });
});
