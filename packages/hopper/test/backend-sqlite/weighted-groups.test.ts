/**
 * Weighted limits and groups on SQLite (docs/backends.md): a weighted queue limit runs there, but
 * weighted group limits and a weighted limit on a queue that uses groups are Redis-only: each is
 * refused with BackendUnsupportedError before anything is written.
 */
import { describe, expect, it } from 'vitest';
import { BackendUnsupportedError, Queue } from '../../src/index.js';

describe('SQLite: weighted limits with groups', () => {
  it('refuses weighted group limits, a weighted limit on a grouped queue and a grouped job under a weighted limit', async () => {
    const connection = 'sqlite::memory:';
    const grouped = new Queue('sqlite-wg-grouped', { connection });
    const weighted = new Queue('sqlite-wg-weighted', { connection });
    try {
      const weightedGroup = { limiter: { max: 10, duration: 1000, weight: 'cost' as const } };
      await expect(grouped.setGroupOptions('g', weightedGroup)).rejects.toThrow(/weighted group rate limits/);
      await expect(grouped.setGroupDefaults(weightedGroup)).rejects.toThrow(/weighted group rate limits/);
      // Unweighted group settings still run.
      await grouped.setGroupDefaults({ concurrency: 2 });
      await grouped.add('a', {}, { group: { id: 'g' } });
      await expect(grouped.setGlobalRateLimit(10, 1000, { weighted: true })).rejects.toBeInstanceOf(BackendUnsupportedError);
      // An unweighted queue limit on a grouped queue runs.
      await grouped.setGlobalRateLimit(10, 1000);

      await weighted.setGlobalRateLimit(10, 1000, { weighted: true });
      await expect(weighted.add('b', {}, { group: { id: 'g' }, cost: 1 })).rejects.toBeInstanceOf(BackendUnsupportedError);
      expect(await weighted.count()).toBe(0);
      await weighted.add('c', {}, { cost: 2 }); // no group: taken by the weighted limit
      expect(await weighted.count()).toBe(1);
    } finally {
      await grouped.close();
      await weighted.close();
    }
  });
});
