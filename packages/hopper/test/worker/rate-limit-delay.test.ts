import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, type FakeClock } from '../../src/index.js';
import type { ClaimResult } from '../../src/backend/backend.js';
import { useHopper } from '../helpers/hopper.js';
import { once, until } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });

describe('maximumRateLimitDelay', () => {
  it('caps how long a rate-limited worker waits, so a limit lifted early is noticed', async () => {
    const clock = env.clock as FakeClock;
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, async () => 'done', { maximumRateLimitDelay: 1000 });
    // Watch the worker's claims (through the backend it uses).
    const limited: number[] = [];
    const claim = worker.backend.claim.bind(worker.backend);
    worker.backend.claim = async (...args) => {
      const result: ClaimResult = await claim(...args);
      if (result.limitedFor > 0) limited.push(result.limitedFor);
      return result;
    };
    await worker.waitUntilReady();
    await worker.rateLimit(3_600_000);
    await queue.add('x', {});
    await until(async () => limited.length >= 1, 'a claim saw the rate limit');
    expect(limited[0]).toBeGreaterThan(1000);
    await queue.removeRateLimitKey();
    const done = once(worker, 'completed');
    clock.advance(1000); // without the option, the worker would sleep for the hour
    await done;
  });

  it('refuses a value that is not a positive integer', () => {
    expect(() => env.worker(env.queueName(), null, { maximumRateLimitDelay: -1 })).toThrow(InvalidOptionsError);
  });
});
