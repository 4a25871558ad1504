import { UnrecoverableError as BullMQUnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { DelayedError, InvalidOptionsError, UnrecoverableError, Worker, type Job } from '../../src/index.js';
import { collect, once, signal, until } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

/** A processor that fails `failures` times, then returns 'ok'; records each attempt's start. */
function flaky(failures: number) {
  const starts: number[] = [];
  return {
    starts,
    processor: async (job: Job) => {
      starts.push(job.processedOn ?? -1);
      if (starts.length <= failures) throw new Error(`boom ${starts.length}`);
      return 'ok';
    },
  };
}

describe('retries and backoff', () => {
  it('retries after a fixed delay, no sooner', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const clock = env.clock!;
    const job = await queue.add('x', {}, { attempts: 3, backoff: { type: 'fixed', delay: 1000 }, removeOnComplete: false });
    const { processor, starts } = flaky(2);
    const worker = env.worker(name, processor);
    await once(worker, 'failed');
    expect(await job.getState()).toBe('delayed');
    clock.advance(999);
    expect(await job.getState()).toBe('delayed');
    const failedAgain = once(worker, 'failed');
    clock.advance(1);
    await failedAgain;
    const completed = once(worker, 'completed');
    clock.advance(1000);
    await completed;
    expect(starts[1] - starts[0]).toBe(1000);
    expect(starts[2] - starts[1]).toBe(1000);
    const stored = await queue.getJob(job.id as string);
    expect(stored?.attemptsMade).toBe(3);
    expect(stored?.returnvalue).toBe('ok');
  });

  it('doubles exponential delays', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const clock = env.clock!;
    await queue.add('x', {}, { attempts: 4, backoff: { type: 'exponential', delay: 100 } });
    const { processor, starts } = flaky(3);
    const worker = env.worker(name, processor);
    for (const wait of [100, 200, 400]) {
      await once(worker, 'failed');
      clock.advance(wait - 1);
      const next = once(worker, 'active');
      clock.advance(1);
      await next;
    }
    await once(worker, 'completed');
    expect(starts.slice(1).map((t, i) => t - starts[i])).toEqual([100, 200, 400]);
  });

  it('uses the worker backoffStrategy for custom types', async () => {
    const name = env.queueName();
    const queue = env.queue(name, { backoffTypes: ['linear'] });
    const clock = env.clock!;
    await queue.add('x', {}, { attempts: 2, backoff: { type: 'linear', delay: 7 } });
    const calls: [number, string | undefined, string | undefined][] = [];
    const { processor, starts } = flaky(1);
    const worker = env.worker(name, processor, {
      settings: {
        backoffStrategy: (attemptsMade, type, err) => {
          calls.push([attemptsMade, type, err?.message]);
          return 1234;
        },
      },
    });
    await once(worker, 'failed');
    clock.advance(1234);
    await once(worker, 'completed');
    expect(calls).toEqual([[1, 'linear', 'boom 1']]);
    expect(starts[1] - starts[0]).toBe(1234);
  });

  it('fails for good when a custom backoff type has no strategy, saying why', async () => {
    const name = env.queueName();
    const queue = env.queue(name, { backoffTypes: ['linear'] });
    const job = await queue.add('x', {}, { attempts: 5, backoff: { type: 'linear' } });
    const worker = env.worker(name, flaky(10).processor);
    await once(worker, 'failed');
    const stored = await queue.getJob(job.id as string);
    expect(await stored?.getState()).toBe('failed');
    expect(stored?.failedReason).toContain('backoffStrategy');
  });

  it('fails at once on UnrecoverableError, from Hopper or from BullMQ', async () => {
    for (const ErrorClass of [UnrecoverableError, BullMQUnrecoverableError]) {
      const name = env.queueName();
      const queue = env.queue(name);
      const job = await queue.add('x', {}, { attempts: 5, backoff: 10 });
      const worker = env.worker(name, async () => {
        throw new ErrorClass('bad input');
      });
      await once(worker, 'failed');
      const stored = await queue.getJob(job.id as string);
      expect(await stored?.getState()).toBe('failed');
      expect(stored?.attemptsMade).toBe(1);
      expect(stored?.failedReason).toBe('bad input');
    }
  });

  it('fails for good when attempts are exhausted, with retries-exhausted and stack traces', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const job = await queue.add('x', {}, { attempts: 3, stackTraceLimit: 2 });
    const exhausted = once(events, 'retries-exhausted');
    const failedEvent = once(events, 'failed');
    env.worker(name, flaky(10).processor);
    const [{ jobId, attemptsMade }] = (await exhausted) as [{ jobId: string; attemptsMade: number }];
    expect(jobId).toBe(job.id);
    expect(attemptsMade).toBe(3);
    const [failed] = (await failedEvent) as [{ failedReason: string }];
    expect(failed.failedReason).toBe('boom 3');
    const stored = await queue.getJob(job.id as string);
    expect(stored?.attemptsMade).toBe(3);
    expect(stored?.stacktrace).toHaveLength(2);
    expect(stored?.stacktrace[0]).toContain('boom 3');
    expect(stored?.stacktrace[1]).toContain('boom 2');
  });

  it('fails the attempt when the return value cannot be stored', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    const worker = env.worker(name, async () => ({ big: 10n }));
    await once(worker, 'failed');
    const stored = await queue.getJob(job.id as string);
    expect(stored?.failedReason).toContain('BigInt');
  });
});

describe('retry order', () => {
  it('puts an immediate retry behind the delayed jobs already due, as BullMQ', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const clock = env.clock!;
    const first = await queue.add('first', {}, { attempts: 2 });
    await queue.addBulk([0, 1, 2].map((i) => ({ name: `delayed-${i}`, data: {}, opts: { delay: 200 } })));
    const release = signal();
    const order: string[] = [];
    const worker = env.worker(
      name,
      async (job: Job) => {
        order.push(`${job.name}#${job.attemptsMade}`);
        if (job.id === first.id && job.attemptsMade === 0) {
          await release.promise;
          throw new Error('not yet');
        }
      },
      { concurrency: 1 },
    );
    await once(worker, 'active');
    // The delayed jobs fall due while the first job runs; it then fails and is retried at once.
    clock.advance(200);
    const done = collect(worker, 'completed', 4);
    release.resolve();
    await done;
    expect(order).toEqual(['first#0', 'delayed-0#0', 'delayed-1#0', 'delayed-2#0', 'first#1']);
  });
});

describe('maxStartedAttempts', () => {
  it("fails a job taken beyond it for good, without running it, with BullMQ's reason", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const clock = env.clock!;
    const job = await queue.add('step', {}, { attempts: 3 });
    let runs = 0;
    const worker = env.worker(
      name,
      async (j: Job, token?: string) => {
        runs++;
        await j.moveToDelayed(clock.now() + 100, token);
        throw new DelayedError();
      },
      { maxStartedAttempts: 1 },
    );
    const failed = once<[Job, Error]>(worker, 'failed');
    await until(async () => (await job.getState()) === 'delayed', 'the job is delayed');
    clock.advance(100);
    const [failedJob, err] = await failed;
    expect(err.message).toBe('job started more than allowable limit');
    expect(failedJob.attemptsStarted).toBe(2);
    expect(failedJob.attemptsMade).toBe(1);
    expect(runs).toBe(1);
    const stored = await queue.getJob(job.id as string);
    expect(await stored?.getState()).toBe('failed');
    expect(stored?.failedReason).toBe('job started more than allowable limit');
  });

  it('in manual processing, getNextJob fails a job taken beyond it and returns the next one', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const first = await queue.add('first', {}, { attempts: 2 });
    const worker = env.worker(name, null, { autorun: false, maxStartedAttempts: 1 });
    const taken = await worker.getNextJob('t');
    expect(taken?.id).toBe(first.id);
    await taken!.moveToFailed(new Error('retry me'), 't');
    const second = await queue.add('second', {});
    const next = await worker.getNextJob('t', { block: false });
    expect(next?.id).toBe(second.id);
    const stored = await queue.getJob(first.id as string);
    expect(await stored?.getState()).toBe('failed');
    expect(stored?.failedReason).toBe('job started more than allowable limit');
    expect(stored?.attemptsStarted).toBe(2);
  });

  it("must be an integer >= 0 (BullMQ's phrase)", () => {
    const base = { connection: env.url, prefix: env.prefix };
    for (const bad of [-1, 1.5, Number.NaN]) {
      expect(() => new Worker(env.queueName(), null, { ...base, maxStartedAttempts: bad })).toThrow(
        'maxStartedAttempts must be greater or equal than 0',
      );
      expect(() => new Worker(env.queueName(), null, { ...base, maxStartedAttempts: bad })).toThrow(InvalidOptionsError);
    }
  });
});

describe('retention', () => {
  it('removes completed jobs with removeOnComplete: true and keeps a count', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const removed = await queue.add('x', { i: 0 }, { removeOnComplete: true });
    const kept = await queue.addBulk([1, 2, 3, 4].map((i) => ({ name: 'x', data: { i }, opts: { removeOnComplete: 2 } })));
    const worker = env.worker(name, async () => 'done');
    for (let i = 0; i < 5; i++) await once(worker, 'completed');
    expect(await queue.getJob(removed.id as string)).toBeUndefined();
    const remaining = await Promise.all(kept.map((j) => queue.getJob(j.id as string)));
    expect(remaining.map((j) => j?.id)).toEqual([undefined, undefined, kept[2].id, kept[3].id]);
    expect(await queue.getJobCounts('completed')).toEqual({ completed: 2 });
  });

  it('removes completed jobs older than age (seconds) on later completions', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const clock = env.clock!;
    const old = await queue.add('x', {}, { removeOnComplete: { age: 10 } });
    const worker = env.worker(name, async () => 'done');
    await once(worker, 'completed');
    clock.advance(11_000);
    const fresh = await queue.add('x', {}, { removeOnComplete: { age: 10 } });
    await once(worker, 'completed');
    expect(await queue.getJob(old.id as string)).toBeUndefined();
    expect(await queue.getJob(fresh.id as string)).toBeDefined();
  });

  it('keeps the last 1,000 completed jobs by default and all failed ones', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    const bad = await queue.add('y', {});
    const worker = env.worker(name, async (j) => {
      if (j.name === 'y') throw new Error('no');
    });
    await once(worker, 'failed');
    expect(await (await queue.getJob(job.id as string))?.getState()).toBe('completed');
    expect(await (await queue.getJob(bad.id as string))?.getState()).toBe('failed');
  });

  it('applies removeOnFail from the job, then from the worker', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const byJob = await queue.add('x', {}, { removeOnFail: true });
    const byWorker = await queue.add('x', {});
    const worker = env.worker(
      name,
      async () => {
        throw new Error('no');
      },
      { removeOnFail: true },
    );
    await once(worker, 'failed');
    await once(worker, 'failed');
    expect(await queue.getJob(byJob.id as string)).toBeUndefined();
    expect(await queue.getJob(byWorker.id as string)).toBeUndefined();
    expect(await queue.getJobCounts('failed')).toEqual({ failed: 0 });
  });
});
