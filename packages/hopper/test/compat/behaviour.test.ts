/**
 * Behaviour a user migrating from BullMQ relies on (issue 13): stalled-job failures, the
 * step-job pattern, pause and run, manual fetching, job.delay, rate-limit getters, priority
 * bounds, event arguments and listener errors.
 */
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import {
  DelayedError,
  InvalidJobIdError,
  InvalidNameError,
  InvalidOptionsError,
  LockLostError,
  MAX_PRIORITY,
  Queue,
  WaitingError,
  Worker,
  type Job,
} from '../../src/index.js';
import { once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

/** A worker that claimed jobs and died: claims through the seam, never renews or finishes. */
async function ghostClaim(queueName: string, count = 1, lockMs = 1000) {
  const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName, role: 'command' }));
  return backend.claim({ count, lockMs, tokenPrefix: 'ghost:1:' }, env.clock!.backendNow());
}

describe('stalled jobs, as BullMQ reports them', () => {
  it("a job failed for too many stalls emits the worker's failed with BullMQ's reason", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    const worker = env.worker(name, null, { autorun: false, maxStalledCount: 0 });
    await ghostClaim(name);
    env.clock!.advance(1001);
    const failed = once<[Job | undefined, Error, string]>(worker, 'failed');
    const stalled = once<[string, string]>(worker, 'stalled');
    await worker.stallRescuer.runOnce(true);
    expect(await stalled).toEqual([job.id, 'active']);
    const [failedJob, err, prev] = await failed;
    expect(err.message).toBe('job stalled more than allowable limit');
    expect(prev).toBe('active');
    expect(failedJob?.id).toBe(job.id);
    expect(failedJob?.stalledCounter).toBe(1);
    expect(failedJob?.finishedOn).toBeTypeOf('number');
  });

  it('a job removed on failure still emits failed (without the job)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {}, { removeOnFail: true });
    const worker = env.worker(name, null, { autorun: false, maxStalledCount: 0 });
    await ghostClaim(name);
    env.clock!.advance(1001);
    const failed = once<[Job | undefined, Error, string]>(worker, 'failed');
    await worker.stallRescuer.runOnce(true);
    const [failedJob, err] = await failed;
    expect(failedJob).toBeUndefined();
    expect(err.message).toBe('job stalled more than allowable limit');
  });

  it("a rescued job's stalledCounter is loaded on the job its processor gets", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {});
    const worker = env.worker(name, async (job) => job.stalledCounter, { autorun: false, maxStalledCount: 2 });
    await ghostClaim(name);
    env.clock!.advance(1001);
    await worker.stallRescuer.runOnce(true);
    const completed = once<[Job, number]>(worker, 'completed');
    void worker.run();
    const [done, result] = await completed;
    expect(result).toBe(1);
    expect(done.stalledCounter).toBe(1);
  });
});

describe("BullMQ's step-job pattern", () => {
  it('moveToDelayed, then updateData, then DelayedError: the next attempt runs the next step', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const moved = signal();
    const worker = env.worker<{ step: number }>(
      name,
      async (job, token) => {
        if (job.data.step === 0) {
          await job.moveToDelayed(env.clock!.now() + 1000, token);
          await job.updateData({ step: 1 });
          await job.updateProgress(50);
          moved.resolve();
          throw new DelayedError();
        }
        return job.data.step;
      },
      { autorun: false },
    );
    const job = await queue.add('steps', { step: 0 });
    void worker.run();
    await moved.promise;
    expect(await job.getState()).toBe('delayed');
    expect((await queue.getJob(job.id as string))?.data).toEqual({ step: 1 });
    const completed = once<[Job, number]>(worker, 'completed');
    env.clock!.advance(1000);
    const [done, result] = await completed;
    expect(result).toBe(1);
    expect(done.attemptsMade).toBe(1);
    expect(done.attemptsStarted).toBe(2);
  });

  it('moveToWait, then updateData, then WaitingError: runs again at once, no attempt spent', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker<{ step: number }>(name, async (job, token) => {
      if (job.data.step === 0) {
        await job.moveToWait(token);
        await job.updateData({ step: 1 });
        throw new WaitingError();
      }
      return job.data.step;
    });
    const completed = once<[Job, number]>(worker, 'completed');
    await queue.add('steps', { step: 0 });
    const [done, result] = await completed;
    expect(result).toBe(1);
    expect(done.attemptsMade).toBe(1);
    expect(done.attemptsStarted).toBe(2);
  });

  it('a moved job takes no write from its old attempt once another attempt holds it', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', { v: 0 });
    const worker = env.worker(name, null, { autorun: false });
    const first = await worker.getNextJob('t1');
    await first!.moveToWait('t1');
    const second = await worker.getNextJob('t2');
    expect(second?.id).toBe(first?.id);
    await expect(first!.updateData({ v: 1 })).rejects.toThrow(/no longer holds/);
    await second!.updateData({ v: 2 });
    expect((await queue.getJob(first!.id as string))?.data).toEqual({ v: 2 });
    await second!.moveToCompleted('ok', 't2');
  });
});

describe('pause, run and manual fetching, as BullMQ', () => {
  it('pause() lets run() resolve and isRunning() turn false; resume() goes on', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, async () => 'ok', { autorun: false });
    const running = worker.run();
    expect(worker.isRunning()).toBe(true);
    await worker.pause();
    await running;
    expect(worker.isRunning()).toBe(false);
    await queue.add('x', {});
    const completed = once(worker, 'completed');
    worker.resume();
    expect(worker.isRunning()).toBe(true);
    await completed;
  });

  it('run() rejects without a processor, and when already running', async () => {
    const name = env.queueName();
    const manual = env.worker(name, null, { autorun: false });
    await expect(manual.run()).rejects.toThrow('No process function is defined.');
    await expect(manual.run()).rejects.toBeInstanceOf(InvalidOptionsError);
    const worker = env.worker(name, async () => 'ok', { autorun: false });
    void worker.run();
    await expect(worker.run()).rejects.toThrow('Worker is already running.');
  });

  it('getNextJob returns nothing while the worker is paused, and a resumed manual worker claims nothing by itself', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, null, { autorun: false });
    await queue.add('x', {});
    void worker.pause();
    expect(await worker.getNextJob('t', { block: false })).toBeUndefined();
    worker.resume();
    expect(await queue.getJobCounts('waiting', 'active')).toEqual({ waiting: 1, active: 0 });
    const job = await worker.getNextJob('t', { block: false });
    expect(await job?.isActive()).toBe(true);
    await job!.moveToCompleted('ok', 't');
  });

  it('getNextJob blocks by default once the queue was found drained', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, null, { autorun: false });
    // The first call finds the queue empty and returns at once (BullMQ's drained state).
    expect(await worker.getNextJob('t')).toBeUndefined();
    // The next call waits for a job, and emits active (as BullMQ).
    const active = once<[Job, string]>(worker, 'active');
    const next = worker.getNextJob('t');
    const added = await queue.add('x', {});
    expect(added.returnvalue).toBeNull();
    const job = await next;
    expect(await job?.isActive()).toBe(true);
    expect((await active)[0].id).toBe(job?.id);
    await job!.moveToCompleted('ok', 't');
  });
});

describe('job fields a migrating user reads', () => {
  it('job.delay is the backoff delay after a failed attempt, and 0 once a delayed job is due', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, async () => {
      throw new Error('boom');
    });
    const failed = once<[Job, Error]>(worker, 'failed');
    const job = await queue.add('x', {}, { attempts: 2, backoff: 300 });
    const [failedJob] = await failed;
    expect(failedJob.delay).toBe(300);
    expect((await queue.getJob(job.id as string))?.delay).toBe(300);
    await worker.close();

    const delayed = await queue.add('later', {}, { delay: 500 });
    const manual = env.worker(name, null, { autorun: false });
    env.clock!.advance(500);
    const taken: (Job | undefined)[] = [];
    for (let i = 0; i < 2; i++) taken.push(await manual.getNextJob(`t${i}`, { block: false }));
    const later = taken.find((j) => j?.id === delayed.id);
    expect(later?.delay).toBe(0);
    for (const [i, j] of taken.entries()) await j?.moveToCompleted('ok', `t${i}`);
  });

  it("processedBy is the worker's name; an attempt sees the previous attempt's failedReason", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const seen: { by?: string; reason?: string }[] = [];
    const worker = env.worker(
      name,
      async (job) => {
        seen.push({ by: job.processedBy, reason: job.failedReason });
        if (job.attemptsMade === 0) throw new Error('first try');
        return 'ok';
      },
      { name: 'mailer-1' },
    );
    const completed = once(worker, 'completed');
    const job = await queue.add('x', {}, { attempts: 2, removeOnComplete: false });
    await completed;
    expect(seen).toEqual([
      { by: 'mailer-1', reason: undefined },
      { by: 'mailer-1', reason: 'first try' },
    ]);
    expect((await queue.getJob(job.id as string))?.processedBy).toBe('mailer-1');
  });
});

describe('rate limits, as BullMQ reads them', () => {
  it('getRateLimitTtl is -2 without any limit, the manual limit after queue.rateLimit, and honours maxJobs', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    expect(await queue.getRateLimitTtl()).toBe(-2);
    await queue.rateLimit(5000);
    const ttl = await queue.getRateLimitTtl();
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(5000);
    const again = await queue.getRateLimitTtl(1);
    expect(again).toBeGreaterThan(0);
    expect(again).toBeLessThanOrEqual(ttl);
    await queue.add('x', {});
    const worker = env.worker(name, null, { autorun: false, limiter: { max: 2, duration: 60_000 } });
    expect(await worker.getNextJob('t', { block: false })).toBeUndefined();
    await queue.removeRateLimitKey();
    expect(await queue.getRateLimitTtl()).toBe(-2);
    const job = await worker.getNextJob('t', { block: false });
    expect(job).toBeDefined();
    expect(await queue.getRateLimitTtl(2)).toBe(0);
    const windowTtl = await queue.getRateLimitTtl(1);
    expect(windowTtl).toBeGreaterThan(0);
    expect(windowTtl).toBeLessThanOrEqual(60_000);
    await job!.moveToCompleted('ok', 't');
    await expect(queue.rateLimit(0)).rejects.toBeInstanceOf(InvalidOptionsError);
  });
});

describe("validation and refusals keep BullMQ's key phrases", () => {
  it('priority bounds are 0..2097151, with the key phrases', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    expect(MAX_PRIORITY).toBe(2097151);
    await expect(queue.add('x', {}, { priority: 2097152 })).rejects.toThrow('Priority should be between 0 and 2097151');
    await expect(queue.add('x', {}, { priority: 1.5 })).rejects.toThrow('Priority should not be float');
    await expect(queue.addBulk([{ name: 'x', data: {}, opts: { priority: -1 } }])).rejects.toBeInstanceOf(InvalidOptionsError);
    expect((await queue.add('x', {}, { priority: 2097151 })).priority).toBe(2097151);
  });

  it('job ids, queue names, deduplication and worker options', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    // An empty jobId is refused (BullMQ ignores it): see docs/compatibility.md.
    await expect(queue.add('x', {}, { jobId: '' })).rejects.toBeInstanceOf(InvalidJobIdError);
    await expect(queue.add('x', {}, { jobId: '7' })).rejects.toThrow('Custom Id cannot be integers');
    await expect(queue.add('x', {}, { jobId: '7' })).rejects.toBeInstanceOf(InvalidJobIdError);
    await expect(queue.add('x', {}, { deduplication: { id: '' } })).rejects.toThrow('Deduplication id must be provided');
    const parent = await queue.add('p', {});
    await expect(
      queue.add('c', {}, { parent: { id: parent.id as string, queue: `${env.prefix}:${name}` }, deduplication: { id: 'd' } }),
    ).rejects.toThrow('Deduplication and parent options cannot be used together');
    const base = { connection: env.url, prefix: env.prefix };
    expect(() => new Queue('', base)).toThrow('Queue name must be provided');
    expect(() => new Queue('a:b', base)).toThrow('Queue name cannot contain :');
    expect(() => new Queue('a:b', base)).toThrow(InvalidNameError);
    expect(() => new Worker(name, null, { ...base, concurrency: 0 })).toThrow(
      expect.objectContaining({ message: 'concurrency must be a finite number greater than 0' }),
    );
    expect(() => new Worker(name, null, { ...base, concurrency: NaN })).toThrow('concurrency must be a finite number greater than 0');
    expect(() => new Worker(name, null, { ...base, stalledInterval: 0 })).toThrow('stalledInterval must be greater than 0');
    expect(() => new Worker(name, null, { ...base, drainDelay: 0 })).toThrow('drainDelay must be greater than 0');
    expect(() => new Worker(name, null, { ...base, maxStalledCount: -1 })).toThrow('maxStalledCount must be greater or equal than 0');
  });

  it("retry, manual moves and obliterate refusals start with BullMQ's phrases", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { attempts: 2 });
    await expect(job.retry()).rejects.toThrow(`Job ${job.id} is not in the failed state. reprocessJob`);
    await expect(job.retry('completed')).rejects.toThrow(`Job ${job.id} is not in the completed state. reprocessJob`);
    const worker = env.worker(name, null, { autorun: false });
    const taken = await worker.getNextJob('t');
    await expect(queue.obliterate()).rejects.toThrow('Cannot obliterate queue with active jobs');
    await taken!.moveToDelayed(env.clock!.now() + 1000, 't');
    await expect(taken!.moveToFailed(new Error('x'), 't')).rejects.toThrow(`Job ${job.id} is not in the active state. retryJob`);
    await expect(taken!.moveToWaitingChildren('t')).rejects.toThrow(`Missing lock for job ${job.id}. moveToWaitingChildren`);
    await expect(taken!.moveToWaitingChildren('t')).rejects.toBeInstanceOf(LockLostError);
    await job.remove();
    await expect(job.retry()).rejects.toThrow(`Missing key for job ${job.id}. reprocessJob`);
  });
});

describe('events, as BullMQ emits them', () => {
  it("QueueEvents' paused and resumed carry ({}, eventId)", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await once(events, 'ready');
    const paused = once<[object, string]>(events, 'paused');
    const resumed = once<[object, string]>(events, 'resumed');
    await queue.pause();
    await queue.resume();
    const [pausedArgs, pausedId] = await paused;
    expect(pausedArgs).toEqual({});
    expect(pausedId).toBeTypeOf('string');
    const [resumedArgs, resumedId] = await resumed;
    expect(resumedArgs).toEqual({});
    expect(resumedId).toBeTypeOf('string');
  });

  it('a listener that throws becomes an error event; the job is still recorded', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, async () => 'ok');
    env.expectErrors(/listener broke/);
    worker.once('completed', () => {
      throw new Error('listener broke');
    });
    const error = once<[Error]>(worker, 'error');
    await queue.add('x', {}, { removeOnComplete: false });
    const [err] = await error;
    expect(err.message).toBe('listener broke');
    const drained = await queue.getJobCounts('completed');
    expect(drained.completed).toBe(1);
  });

  it('getQueueEvents lists the QueueEvents reading the queue; isMaxed reads the global concurrency', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    // Listed as soon as it is ready (its reading connection is opened while starting).
    const readers = await queue.getQueueEvents();
    expect(readers).toHaveLength(1);
    expect(readers[0].name).toBe(name);
    expect(readers[0].rawname).toMatch(/^hopper:.*:qe$/);
    expect(await env.queue(env.queueName()).getQueueEvents()).toEqual([]);

    expect(await queue.isMaxed()).toBe(false);
    await queue.setGlobalConcurrency(1);
    await queue.add('x', {});
    const worker = env.worker(name, null, { autorun: false });
    const job = await worker.getNextJob('t');
    expect(await queue.isMaxed()).toBe(true);
    await job!.moveToCompleted('ok', 't');
    expect(await queue.isMaxed()).toBe(false);
  });
});
