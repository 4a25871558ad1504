import { describe, expect, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('deduplication: removing the job', () => {
  it('frees an id held with a ttl while it still points to the job (as in BullMQ)', async () => {
    const queue = env.queue(env.queueName());
    const opts = { deduplication: { id: 'a1', ttl: 60_000 } };
    const first = await queue.add('x', { v: 1 }, opts);
    expect((await queue.add('x', { v: 2 }, opts)).id).toBe(first.id);
    await first.remove();
    expect(await queue.getDeduplicationJobId('a1')).toBeUndefined();
    const second = await queue.add('x', { v: 3 }, opts);
    expect(second.id).not.toBe(first.id);
    expect(await queue.getDeduplicationJobId('a1')).toBe(second.id);
    // A job the id no longer points to leaves it alone when removed.
    await queue.removeDeduplicationKey('a1');
    const third = await queue.add('x', { v: 4 }, opts);
    await second.remove();
    expect(await queue.getDeduplicationJobId('a1')).toBe(third.id);
  });

  it('keeps a ttl id when the job completes (throttle)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { deduplication: { id: 't', ttl: 60_000 } });
    const worker = env.worker(name, null);
    const active = await worker.getNextJob('t');
    await active!.moveToCompleted('ok', 't', false);
    expect(await queue.getDeduplicationJobId('t')).toBe(job.id);
  });
});
