import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/index.js';
import { once, until } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('deduplication', () => {
  it('simple mode: one job per id until it finishes', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const first = await queue.add('sync', { v: 1 }, { deduplication: { id: 'user-7' } });
    const deduplicated = once<[{ jobId: string; deduplicationId: string }]>(events, 'deduplicated');
    const local = once(queue, 'deduplicated');
    const second = await queue.add('sync', { v: 2 }, { deduplication: { id: 'user-7' } });
    expect(second.id).toBe(first.id);
    expect(second.data).toEqual({ v: 1 });
    const [event] = await deduplicated;
    expect(event).toMatchObject({ jobId: first.id, deduplicationId: 'user-7' });
    await local;
    expect(await queue.getDeduplicationJobId('user-7')).toBe(first.id);
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 1 });

    const worker = env.worker(name, async () => 'done');
    await once(worker, 'completed');
    // Finished: the id is free again.
    expect(await queue.getDeduplicationJobId('user-7')).toBeUndefined();
    const third = await queue.add('sync', { v: 3 }, { deduplication: { id: 'user-7' } });
    expect(third.id).not.toBe(first.id);
  });

  it('simple mode: removing the job frees the id; removeDeduplicationKey frees it by hand', async () => {
    const queue = env.queue(env.queueName());
    const job = await queue.add('x', {}, { deduplication: { id: 'a' } });
    await job.remove();
    expect(await queue.getDeduplicationJobId('a')).toBeUndefined();
    await queue.add('x', {}, { deduplication: { id: 'b' } });
    expect(await queue.removeDeduplicationKey('b')).toBe(1);
    const fresh = await queue.add('x', {}, { deduplication: { id: 'b' } });
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 2 });
    expect(await queue.getDeduplicationJobId('b')).toBe(fresh.id);
  });

  it('throttle mode: the id stays taken for ttl even after the job finished (real time)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const first = await queue.add('t', {}, { deduplication: { id: 'throttle', ttl: 300 } });
    const worker = env.worker(name, async () => 'done');
    await once(worker, 'completed');
    expect((await queue.add('t', {}, { deduplication: { id: 'throttle', ttl: 300 } })).id).toBe(first.id);
    // The ttl is Redis's own key expiry, which emits no event: wait until the id is free.
    await until(async () => (await queue.getDeduplicationJobId('throttle')) === undefined, 'the throttle id expires', 2000);
    expect((await queue.add('t', {}, { deduplication: { id: 'throttle', ttl: 300 } })).id).not.toBe(first.id);
  });

  it('debounce mode: extend keeps the id taken, replace keeps the last data and delay', async () => {
    const queue = env.queue(env.queueName());
    const opts = { delay: 5000, deduplication: { id: 'debounce', ttl: 5000, extend: true, replace: true } };
    const first = await queue.add('d', { v: 1 }, opts);
    await queue.add('d', { v: 2 }, opts);
    const last = await queue.add('d', { v: 3 }, { ...opts, delay: 8000 });
    expect(last.id).toBe(first.id);
    const stored = await queue.getJob(first.id as string);
    expect(stored?.data).toEqual({ v: 3 });
    expect(stored?.delay).toBe(8000);
    expect(await queue.getJobCounts('delayed')).toEqual({ delayed: 1 });
  });

  it('refuses malformed deduplication options', async () => {
    const queue = env.queue(env.queueName());
    await expect(queue.add('x', {}, { deduplication: { id: '' } })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.add('x', {}, { deduplication: { id: 'a', ttl: -1 } })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.add('x', {}, { deduplication: { id: 'a', extend: true } })).rejects.toBeInstanceOf(InvalidOptionsError);
  });
});
