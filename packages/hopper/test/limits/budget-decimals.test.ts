/**
 * A tenant's budget charge corrected by `job.reportCost` with decimal costs: the charge the add
 * made (2.3) is replaced by the reported cost (0.1), exactly, on both backends.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });

const budget = { key: (data: { tenant: string }) => data.tenant, limit: 1000, window: 60_000 };

describe('budget charges with decimal costs', () => {
  for (const [estimate, actual] of [
    [2.3, 0.1],
    [0.1, 0.7],
    [1 / 3, 2.5],
    [123.456789, 7],
  ]) {
    it(`job.reportCost(${actual}) replaces an estimate of ${estimate}`, async () => {
      const name = env.queueName('dec');
      const queue = env.queue<{ tenant: string }>(name, { budget });
      await queue.add('gen', { tenant: 'acme' }, { cost: estimate });
      expect((await queue.getBudget('acme')).use).toBeCloseTo(estimate, 9);
      const worker = env.worker(name, async (job: Job) => {
        await job.reportCost(actual);
      });
      await once<[Job]>(worker, 'completed');
      await worker.close();
      expect((await queue.getBudget('acme')).use).toBeCloseTo(actual, 9);
      // The corrected charge leaves the window with the add's time.
      env.clock!.advance(60_001);
      expect((await queue.getBudget('acme')).use).toBe(0);
    });
  }
});
