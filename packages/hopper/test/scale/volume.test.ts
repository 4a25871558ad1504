/**
 * Full-size runs (npm run test:scale, not part of npm test): many jobs through several workers,
 * each exactly once, with the invariants holding afterwards.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { signal } from '../helpers/wait.js';

const env = useHopper();

describe('volume', () => {
  it('processes 200,000 jobs across 4 workers exactly once', async () => {
    const name = env.queueName('scale');
    const queue = env.queue(name);
    const total = 200_000;
    for (let i = 0; i < total; i += 1000) {
      await queue.addBulk(Array.from({ length: 1000 }, (_, j) => ({ name: 'n', data: { i: i + j }, opts: { removeOnComplete: true } })));
    }
    const seen = new Uint8Array(total);
    const done = signal();
    let completed = 0;
    for (let w = 0; w < 4; w++) {
      const worker = env.worker(
        name,
        async (job: Job<{ i: number }>) => {
          seen[job.data.i]++;
        },
        { concurrency: 50 },
      );
      worker.on('completed', () => ++completed === total && done.resolve());
    }
    await done.promise;
    expect(seen.every((n) => n === 1)).toBe(true);
    expect(await queue.getJobCounts('waiting', 'active', 'completed')).toEqual({ waiting: 0, active: 0, completed: 0 });
  });
});
