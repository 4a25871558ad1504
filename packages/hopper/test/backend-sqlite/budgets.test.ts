/**
 * The SQLite backend refuses tenant budgets and weighted rate limits (queue, worker and group) with BackendUnsupportedError
 * (they are Redis-only, docs/backends.md), before writing anything; the `cost` option alone is
 * kept on the job.
 */
import { describe, expect, it } from 'vitest';
import { BackendUnsupportedError, Queue, Worker } from '../../src/index.js';

describe('SQLite: budgets and weighted limits', () => {
  it('refuses a budgeted add, getBudget and a weighted limiter; keeps a plain cost', async () => {
    const connection = 'sqlite::memory:';
    const queue = new Queue<{ tenant: string }>('sqlite-budget', {
      connection,
      budget: { key: (d: { tenant: string }) => d.tenant, limit: 10, window: 1000 },
    });
    try {
      const err = await queue.add('x', { tenant: 't' }, { cost: 1 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BackendUnsupportedError);
      expect((err as Error).message).toMatch(/tenant budgets/);
      await expect(queue.getBudget('t')).rejects.toBeInstanceOf(BackendUnsupportedError);
      await expect(queue.setGlobalRateLimit(10, 1000, { weighted: true })).rejects.toBeInstanceOf(BackendUnsupportedError);
      const weightedGroup = { limiter: { max: 10, duration: 1000, weight: 'cost' as const } };
      await expect(queue.setGroupOptions('g', weightedGroup)).rejects.toThrow(/weighted group rate limits/);
      await expect(queue.setGroupDefaults(weightedGroup)).rejects.toThrow(/weighted group rate limits/);
      expect(await queue.count()).toBe(0);
      const job = await queue.add('y', { tenant: 't' }); // no cost: not charged, accepted
      expect(job.id).toBeDefined();
      const worker = new Worker('sqlite-budget', null, {
        connection,
        autorun: false,
        limiter: { max: 10, duration: 1000, weight: 'cost' },
      });
      await expect(worker.getNextJob('tk', { block: false })).rejects.toBeInstanceOf(BackendUnsupportedError);
      await worker.close();
    } finally {
      await queue.close();
    }
  });
});
