/**
 * Weighted rate limits do not apply to queues that use groups (docs/limits.md): the claim refuses
 * them before anything is written. Its own file because it needs groups (the job option `group`),
 * a capability the SQLite backend does not have yet (docs/backends.md): list it in
 * SQLITE_TEST_FILES once it does.
 */
import { describe, expect, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('weighted rate limits and groups', () => {
  it('a weighted limit on a queue that uses groups is refused by the claim, before anything is written', async () => {
    const name = env.queueName('groups');
    const queue = env.queue(name);
    await queue.add('grouped', {}, { group: { id: 'g1' }, cost: 1 });
    const worker = env.worker(name, null, { autorun: false, limiter: { max: 10, duration: 1000, weight: 'cost' } });
    await expect(worker.getNextJob('t', { block: false })).rejects.toThrow(/do not apply to a queue that uses groups/);
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 1 });
  });
});
