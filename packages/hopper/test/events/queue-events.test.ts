import { describe, expect, it } from 'vitest';
import { JobNotFoundError, QueueEvents, WaitTimeoutError, type Job } from '../../src/index.js';
import { collect, once, signal, waitFor } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('QueueEvents', () => {
  it('reports the lifecycle of a job: added, waiting, active, progress, completed, drained', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const seen: string[] = [];
    for (const event of ['added', 'waiting', 'active', 'progress', 'completed', 'drained']) {
      events.on(event, () => seen.push(event));
    }
    const completed = once(events, 'completed');
    const job = await queue.add('x', { a: 1 });
    env.worker(name, async (j) => {
      await j.updateProgress(30);
      return { ok: true };
    });
    const [args] = (await completed) as [{ jobId: string; returnvalue: unknown }];
    expect(args).toEqual({ jobId: job.id, returnvalue: { ok: true }, prev: 'active' });
    // drained fires once the worker finished the job and found nothing else (it may be read after completed's waiter).
    await waitFor(events, 'drained', () => seen.includes('drained'));
    expect(seen).toEqual(['added', 'waiting', 'active', 'progress', 'completed', 'drained']);
  });

  it('emits drained, as BullMQ, when the jobs are finished, not when the last one is claimed', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const seen: string[] = [];
    for (const event of ['active', 'completed', 'failed', 'drained']) events.on(event, () => seen.push(event));
    const release = signal();
    env.worker(
      name,
      async (job: Job) => {
        await release.promise;
        if (job.name === 'fail') throw new Error('for good');
      },
      { concurrency: 4 },
    );
    const active = collect(events, 'active', 4);
    await queue.addBulk(['a', 'b', 'c', 'fail'].map((n) => ({ name: n, data: {} })));
    await active;
    const drained = once(events, 'drained');
    release.resolve();
    await drained;
    // Every job finished before drained; and it came once (the stream is read in order).
    expect(seen.slice(0, 4)).toEqual(['active', 'active', 'active', 'active']);
    expect(seen.slice(4, -1).sort()).toEqual(['completed', 'completed', 'completed', 'failed']);
    expect(seen.at(-1)).toBe('drained');
    expect(await queue.getJobCounts('completed', 'failed', 'active')).toEqual({ completed: 3, failed: 1, active: 0 });
  });

  it('emits active and completed once per job, in order, when a completion claims the next job in the same call', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const seen: string[] = [];
    for (const event of ['active', 'completed']) {
      events.on(event, (args: { jobId: string; returnvalue?: unknown }) =>
        seen.push(event === 'completed' ? `completed ${args.jobId} ${JSON.stringify(args.returnvalue)}` : `active ${args.jobId}`),
      );
    }
    const jobs = await queue.addBulk(['a', 'b', 'c'].map((n) => ({ name: n, data: {} })));
    const drained = once(events, 'drained');
    // Concurrency 1: each completion hands its slot to the next job in the same call.
    env.worker(name, async (job: Job) => `done ${job.name}`);
    await drained;
    const [a, b, c] = jobs.map((j) => j.id);
    expect(seen).toEqual([
      `active ${a}`,
      `completed ${a} "done a"`,
      `active ${b}`,
      `completed ${b} "done b"`,
      `active ${c}`,
      `completed ${c} "done c"`,
    ]);
  });

  it('does not emit drained after a retry (the job is not finished)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const seen: string[] = [];
    for (const event of ['failed', 'completed', 'drained']) events.on(event, () => seen.push(event));
    const job = await queue.add('x', {}, { attempts: 2 });
    const drained = once(events, 'drained');
    env.worker(name, async (j: Job) => {
      if (j.attemptsMade === 0) throw new Error('retry me');
    });
    await drained;
    await waitFor(events, 'completed', () => seen.includes('completed'));
    expect(seen).toEqual(['completed', 'drained']);
    expect(await queue.getJobCounts('completed')).toEqual({ completed: 1 });
    expect((await queue.getJob(job.id as string))?.attemptsMade).toBe(2);
  });

  it('reports delayed, failed, retries-exhausted, paused and resumed', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const delayed = once(events, 'delayed');
    await queue.add('later', {}, { delay: 60_000 });
    const [{ delay }] = (await delayed) as [{ delay: number }];
    expect(delay).toBeGreaterThan(Date.now());

    const paused = once(events, 'paused');
    await queue.pause();
    await paused;
    const resumed = once(events, 'resumed');
    await queue.resume();
    await resumed;

    const failed = once(events, 'failed');
    const exhausted = once(events, 'retries-exhausted');
    const job = await queue.add('bad', {});
    env.worker(name, async () => {
      throw new Error('nope');
    });
    const [f] = (await failed) as [{ jobId: string; failedReason: string }];
    expect(f).toMatchObject({ jobId: job.id, failedReason: 'nope' });
    await exhausted;
  });

  it('resumes from lastEventId after a restart without missing events', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const first = env.events(name);
    await first.waitUntilReady();
    const added = once(first, 'added');
    await queue.add('a', {});
    await added;
    const resumeFrom = first.lastEventId;
    await first.close();
    await queue.add('b', {});
    await queue.add('c', {});
    const second = env.events(name, { lastEventId: resumeFrom });
    const names: string[] = [];
    second.on('added', ({ name: jobName }: { name: string }) => names.push(jobName));
    await once(second, 'added', () => names.length === 2);
    expect(names).toEqual(['b', 'c']);
  });

  it('emits gap when a reader fell behind the stream cap', async () => {
    const name = env.queueName();
    const queue = env.queue(name, { streams: { events: { maxLen: 10 } } });
    const first = env.events(name);
    await first.waitUntilReady();
    const added = once(first, 'added');
    await queue.add('a', {});
    await added;
    const resumeFrom = first.lastEventId;
    await first.close();
    // One stream entry per add call: 300 calls overflow the cap of 10 entries.
    for (let i = 0; i < 300; i++) await queue.add('n', { i });
    const reader = new QueueEvents(name, { connection: env.url, prefix: env.prefix, lastEventId: resumeFrom, autorun: false });
    env.track(reader);
    const gap = once(reader, 'gap');
    void reader.run();
    const [info] = (await gap) as [{ after: string }];
    expect(info.after).toBe(resumeFrom);
  });

  it('waitUntilFinished resolves with the return value, rejects with the failure, and works after the fact', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    env.worker(name, async (job) => {
      if (job.name === 'bad') throw new Error('broken');
      return job.data;
    });
    const good = await queue.add('good', { v: 7 }, { removeOnComplete: false });
    const bad = await queue.add('bad', {});
    expect(await good.waitUntilFinished(events)).toEqual({ v: 7 });
    await expect(bad.waitUntilFinished(events)).rejects.toThrow('broken');
    // Already finished: answered from the stored state.
    expect(await good.waitUntilFinished(events)).toEqual({ v: 7 });
  });

  it('waitUntilFinished of a job removed on completion: its unread event answers, else it rejects as missing', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, async () => 'done');
    const job = await queue.add('x', {}, { removeOnComplete: true });
    await once(worker, 'completed');
    expect(await queue.getJob(job.id as string)).toBeUndefined();
    // A reader that has not read the completion yet reads up to the stream's end before answering.
    const late = env.events(name, { autorun: false, lastEventId: '0-0' });
    void late.run();
    expect(await job.waitUntilFinished(late)).toBe('done');
    // Once the event is behind the reader, the job is missing (BullMQ's message).
    const missing = job.waitUntilFinished(late);
    await expect(missing).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(missing).rejects.toThrow(`Missing key for job ${queue.toKey(job.id as string)}. isFinished`);
    // waitForJob by id waits for a job not added yet.
    const future = late.waitForJob('later');
    await queue.add('later', {}, { jobId: 'later' });
    expect(await future).toBe('done');
  });

  it('run() when already running rejects (it does not throw), and the first run resolves on close', async () => {
    const events = env.events(env.queueName(), { autorun: false });
    const running = events.run();
    await expect(events.run()).rejects.toThrow('Queue Events is already running.');
    await events.close();
    await expect(running).resolves.toBeUndefined();
  });

  it('waitUntilFinished gives up after ttl', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const job = await queue.add('never', {});
    await expect(job.waitUntilFinished(events, 50)).rejects.toBeInstanceOf(WaitTimeoutError);
  });
});
