/**
 * Retry delays are bounded: whatever a backoff computes (a strategy returning Infinity, an
 * exponential backoff that doubles past any date), the retry is due at most MAX_RETRY_DELAY_MS
 * (100 years, the bound of `delay`) later, never at an infinite score. A strategy that returns
 * NaN or a non-number fails the job for good with a reason that says so; a negative delay fails
 * it for good (BullMQ's meaning). A strategy that is not a function is refused at construction.
 */
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, MAX_RETRY_DELAY_MS, Worker, type Job } from '../../src/index.js';
import { once } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

describe('bounded retry delays', () => {
  it('refuses a backoffStrategy that is not a function, before connecting', () => {
    expect(
      () => new Worker('q', async () => 1, { connection: env.url, prefix: env.prefix, settings: { backoffStrategy: 5 as never } }),
    ).toThrow(InvalidOptionsError);
  });

  it('refuses backoff: 1e308 at add', async () => {
    const queue = env.queue(env.queueName());
    await expect(queue.add('x', {}, { attempts: 2, backoff: 1e308 })).rejects.toThrow(InvalidOptionsError);
    await expect(queue.add('x', {}, { attempts: 2, backoff: { type: 'fixed', delay: Infinity } })).rejects.toThrow(InvalidOptionsError);
  });

  for (const [what, returned] of [
    ['Infinity', Infinity],
    ['1e308', 1e308],
  ] as const) {
    it(`a backoffStrategy returning ${what} retries after MAX_RETRY_DELAY_MS, not never`, async () => {
      const name = env.queueName();
      const queue = env.queue(name, { backoffTypes: ['custom'] });
      const clock = env.clock!;
      const job = await queue.add('x', {}, { attempts: 2, backoff: { type: 'custom' }, removeOnFail: false, removeOnComplete: false });
      let runs = 0;
      const worker = env.worker(
        name,
        async () => {
          if (++runs === 1) throw new Error('first');
          return 'second';
        },
        { settings: { backoffStrategy: () => returned } },
      );
      await once(worker, 'failed');
      const stored = await queue.getJob(job.id as string);
      expect(await stored?.getState()).toBe('delayed');
      expect(stored?.delay).toBe(MAX_RETRY_DELAY_MS);
      clock.advance(MAX_RETRY_DELAY_MS - 1);
      expect(await job.getState()).toBe('delayed');
      const completed = once(worker, 'completed');
      clock.advance(1);
      await completed;
      expect(runs).toBe(2);
    });
  }

  it('an exponential backoff that doubles past the bound is capped at MAX_RETRY_DELAY_MS', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const clock = env.clock!;
    const delay = MAX_RETRY_DELAY_MS / 2 + 1;
    const job = await queue.add('x', {}, { attempts: 3, backoff: { type: 'exponential', delay }, removeOnFail: false });
    const worker = env.worker(name, async () => {
      throw new Error('always');
    });
    await once(worker, 'failed');
    expect((await queue.getJob(job.id as string))?.delay).toBe(delay);
    const second = once(worker, 'failed');
    clock.advance(delay);
    await second;
    // 2 * delay is past the bound.
    const stored = await queue.getJob(job.id as string);
    expect(await stored?.getState()).toBe('delayed');
    expect(stored?.delay).toBe(MAX_RETRY_DELAY_MS);
  });

  for (const [what, returned, reason] of [
    ['NaN', NaN, /backoffStrategy returned NaN/],
    ['a string', '100', /backoffStrategy returned 100/],
    ['-1', -1, /^first$/],
  ] as const) {
    it(`a backoffStrategy returning ${what} fails the job for good, saying why`, async () => {
      const name = env.queueName();
      const queue = env.queue(name, { backoffTypes: ['custom'] });
      const job = await queue.add('x', {}, { attempts: 5, backoff: { type: 'custom' }, removeOnFail: false });
      const worker = env.worker(
        name,
        async () => {
          throw new Error('first');
        },
        { settings: { backoffStrategy: () => returned as number } },
      );
      const [failed] = await once<[Job]>(worker, 'failed');
      expect(failed.id).toBe(job.id);
      const stored = await queue.getJob(job.id as string);
      expect(await stored?.getState()).toBe('failed');
      expect(stored?.attemptsMade).toBe(1);
      expect(stored?.failedReason).toMatch(reason);
    });
  }
});
