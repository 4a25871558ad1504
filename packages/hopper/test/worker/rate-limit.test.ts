import { describe, expect, it } from 'vitest';
import type { FakeClock } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { collect, once } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });

describe('rate limits and global concurrency', () => {
  it('a worker limiter lets at most max jobs start per window (sliding, on the clock)', async () => {
    const clock = env.clock as FakeClock;
    const name = env.queueName();
    const queue = env.queue(name);
    const starts: number[] = [];
    const worker = env.worker(
      name,
      async () => {
        starts.push(clock.now());
      },
      { limiter: { max: 2, duration: 1000 }, concurrency: 5 },
    );
    await worker.waitUntilReady();
    const firstTwo = collect(worker, 'completed', 2);
    await queue.addBulk([1, 2, 3, 4, 5].map((i) => ({ name: 'x', data: { i } })));
    await firstTwo;
    // The window is full: the rest wait for it to slide.
    expect(await queue.getRateLimitTtl(2)).toBeGreaterThan(0);
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 3 });
    const nextTwo = collect(worker, 'completed', 2);
    clock.advance(1000);
    await nextTwo;
    const last = once(worker, 'completed');
    clock.advance(1000);
    await last;
    expect(starts.filter((t) => t === starts[0])).toHaveLength(2);
    expect(starts.filter((t) => t === starts[0] + 1000)).toHaveLength(2);
    expect(starts[4]).toBe(starts[0] + 2000);
  });

  it('a queue-wide rate limit applies to every worker; removing it frees them', async () => {
    const clock = env.clock as FakeClock;
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGlobalRateLimit(1, 60_000);
    expect(await queue.getGlobalRateLimit()).toEqual({ max: 1, duration: 60_000 });
    // A worker waiting out a limit sleeps until the limit's end, at most maximumRateLimitDelay.
    const a = env.worker(name, async () => 'a', { concurrency: 3, maximumRateLimitDelay: 1000 });
    const b = env.worker(name, async () => 'b', { concurrency: 3, maximumRateLimitDelay: 1000 });
    await Promise.all([a.waitUntilReady(), b.waitUntilReady()]);
    const first = Promise.race([once(a, 'completed'), once(b, 'completed')]);
    await queue.addBulk([1, 2, 3].map((i) => ({ name: 'x', data: { i } })));
    await first;
    expect(await queue.getJobCounts('waiting', 'completed')).toEqual({ waiting: 2, completed: 1 });
    let done = 0;
    const rest = new Promise<void>((resolve) => {
      const count = (): void => {
        if (++done === 2) resolve();
      };
      a.on('completed', count);
      b.on('completed', count);
    });
    await queue.removeGlobalRateLimit();
    await queue.removeRateLimitKey();
    clock.advance(1000); // a worker waiting out the window wakes (an idle one was woken by the removal)
    await rest;
  });

  it('global concurrency caps the active jobs across workers', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGlobalConcurrency(1);
    let running = 0;
    let most = 0;
    const processor = async (): Promise<void> => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      running--;
    };
    const a = env.worker(name, processor, { concurrency: 4 });
    const b = env.worker(name, processor, { concurrency: 4 });
    await Promise.all([a.waitUntilReady(), b.waitUntilReady()]);
    let done = 0;
    const all = new Promise<void>((resolve) => {
      const count = (): void => {
        if (++done === 6) resolve();
      };
      a.on('completed', count);
      b.on('completed', count);
    });
    await queue.addBulk([1, 2, 3, 4, 5, 6].map((i) => ({ name: 'x', data: { i } })));
    await all;
    expect(most).toBe(1);
    expect(await queue.isMaxed()).toBe(false);
  });
});
