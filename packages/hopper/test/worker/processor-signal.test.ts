/**
 * A processor that cannot read its abort signal (its third argument) gets none, and its attempts
 * create no AbortController; cancellation and timeouts still end them exactly as before. One that
 * can read it (three parameters, `arguments`, a bound function...) gets a real signal.
 */
import { describe, expect, it } from 'vitest';
import { CancelledError, TimeoutError, type Job } from '../../src/index.js';
import { mayReadSignal } from '../../src/runtime/processor-signal.js';
import { once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

describe('mayReadSignal: whether a processor can see its third argument', () => {
  it('is false only for plain sources with at most two simple parameters', () => {
    const cannot: ((...args: never[]) => unknown)[] = [
      async () => undefined,
      async (job: Job) => job.id,
      (job: Job, token?: string) => [job, token],
      async function named(job: Job) {
        return job.id;
      },
      function (job: Job, token?: string) {
        return [job, token];
      },
      {
        async process(this: void, job: Job) {
          return job.id;
        },
      }.process,
    ];
    for (const fn of cannot) expect(mayReadSignal(fn), String(fn)).toBe(false);
  });

  it('is true for anything that could read it, or that it cannot tell', () => {
    const can: ((...args: never[]) => unknown)[] = [
      async (_job: Job, _token?: string, abort?: AbortSignal) => abort?.aborted,
      async (...args: unknown[]) => args[2],
      async (job: Job, token = 'x') => [job, token],
      async ({ id }: Job) => id,
      function (this: unknown) {
        // eslint-disable-next-line prefer-rest-params -- what is tested: reading the signal through `arguments`
        return arguments[2] as unknown;
      },
      function (job: Job) {
        return job;
      }.bind(null),
      new Proxy(async () => undefined, {}),
      (_job: Job) => eval('_job') as unknown,
    ];
    for (const fn of can) expect(mayReadSignal(fn), String(fn)).toBe(true);
  });
});

describe('processors without a signal parameter', () => {
  const env = useHopper({ fakeClock: true });

  it('a timed-out attempt still fails with TimeoutError once its grace ends, and is retried', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('slow', {}, { timeout: 1000, attempts: 2, removeOnComplete: false });
    let attempt = 0;
    const forever = signal<string>();
    const worker = env.worker(name, async (_job: Job) => (++attempt === 1 ? forever.promise : 'second'), { timeoutGrace: 500 });
    await once(worker, 'active');
    const failed = once<[Job, Error]>(worker, 'failed');
    const completed = once<[Job, unknown]>(worker, 'completed');
    env.clock!.advance(1000);
    env.clock!.advance(499);
    expect(attempt).toBe(1);
    env.clock!.advance(1);
    const [, error] = await failed;
    expect(error).toBeInstanceOf(TimeoutError);
    const [done] = await completed;
    expect(done.returnvalue).toBe('second');
    expect((await queue.getJob(job.id as string))?.attemptsMade).toBe(2);
  });

  it('worker.cancelJob answers true and the attempt ends as its processor decides', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { removeOnComplete: false });
    const release = signal<string>();
    const worker = env.worker(name, (_job: Job) => release.promise);
    await once(worker, 'active');
    expect(worker.cancelJob(job.id as string, 'not heard')).toBe(true);
    expect(worker.cancelJob(job.id as string, 'again')).toBe(true);
    const completed = once<[Job, unknown]>(worker, 'completed');
    release.resolve('done anyway');
    const [, value] = await completed;
    expect(value).toBe('done anyway');
  });

  it('queue.cancelJob on an active job ends it cancelled, whatever the processor returns', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { attempts: 3 });
    const release = signal<string>();
    const worker = env.worker(name, (_job: Job) => release.promise);
    await once(worker, 'active');
    const failed = once<[Job, Error]>(worker, 'failed');
    expect(await queue.cancelJob(job.id as string)).toBe('signalled');
    // Whether the worker heard of it before the processor returns or the completion finds the mark, it ends cancelled.
    release.resolve('returned');
    const [, error] = await failed;
    expect(error).toBeInstanceOf(CancelledError);
    expect(await queue.getJob(job.id as string).then((j) => j?.getState())).toBe('failed');
  });
});

describe('processors that can read their signal', () => {
  const env = useHopper();

  it('one that reads `arguments[2]` gets a real signal, aborted by worker.cancelJob with the reason', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    const worker = env.worker(name, function (_job: Job) {
      // eslint-disable-next-line prefer-rest-params -- what is tested: reading the signal through `arguments`
      const abort = arguments[2] as AbortSignal;
      return new Promise((_resolve, reject) =>
        abort.addEventListener('abort', () => reject(new Error(`stopped: ${String(abort.reason)}`))),
      );
    });
    await once(worker, 'active');
    const failed = once<[Job, Error]>(worker, 'failed');
    expect(worker.cancelJob(job.id as string, 'user asked')).toBe(true);
    const [, error] = await failed;
    expect(error.message).toBe('stopped: user asked');
  });

  it('a bound processor gets a signal too', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {});
    const seen: unknown[] = [];
    const holder = {
      seen,
      process(this: { seen: unknown[] }, _job: Job) {
        // eslint-disable-next-line prefer-rest-params -- what is tested: reading the signal through `arguments`
        this.seen.push(arguments[2] instanceof AbortSignal);
        return Promise.resolve('ok');
      },
    };
    const worker = env.worker(name, holder.process.bind(holder));
    await once(worker, 'completed');
    expect(seen).toEqual([true]);
  });
});
