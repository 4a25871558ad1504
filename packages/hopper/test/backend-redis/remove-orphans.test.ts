/**
 * queue.removeOrphanedJobs (BullMQ's migration helper, issue 13): orphans are made here by
 * damaging the Redis data directly, since Hopper's scripts never leave one.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { queueKeys } from '../../src/backend/redis/keys.js';
import { InvalidOptionsError } from '../../src/index.js';
import { assertInvariants, useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('BullMQ API: removeOrphanedJobs', () => {
  it('finds nothing on a healthy queue, whatever the states of its jobs', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    expect(await queue.removeOrphanedJobs()).toBe(0);
    await queue.add('w', {});
    await queue.add('d', {}, { delay: 60_000 });
    await queue.add('p', {}, { priority: 5 });
    await queue.add('g', {}, { group: { id: 'tenant-1' } });
    await env.flows().add({ name: 'parent', queueName: name, children: [{ name: 'child', queueName: env.queueName(), data: {} }] });
    expect(await queue.removeOrphanedJobs()).toBe(0);
    expect(await queue.getJobCounts('waiting', 'delayed', 'prioritized', 'waiting-children')).toEqual({
      waiting: 2,
      delayed: 1,
      prioritized: 1,
      'waiting-children': 1,
    });
  });

  it('deletes jobs no state holds (damaged outside Hopper), with their keys, and leaves the rest', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const lost = await queue.add('lost', {}, { deduplication: { id: 'once' } });
    const kept = await queue.add('kept', {});
    const late = await queue.add('late', {}, { delay: 60_000 });
    await lost.log('a line');
    const redis = new Redis(env.url);
    const k = queueKeys(env.prefix, name);
    try {
      await redis.lrem(k.wait, 0, lost.id!);
      await redis.zrem(k.delayed, late.id!);
      await expect(assertInvariants(env.url, env.prefix)).rejects.toThrow('is in no state structure');
      expect(await queue.removeOrphanedJobs(10, 0)).toBe(2);
      expect(await redis.exists(k.job(lost.id!), k.logs(lost.id!), k.job(late.id!))).toBe(0);
    } finally {
      redis.disconnect();
    }
    expect(await queue.getJob(lost.id!)).toBeUndefined();
    expect(await queue.getDeduplicationJobId('once')).toBeUndefined();
    expect((await queue.getJob(kept.id!))?.name).toBe('kept');
    expect(await queue.removeOrphanedJobs()).toBe(0);
  });

  it('stops once the limit is reached, and refuses bad arguments', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const jobs = await queue.addBulk([1, 2, 3].map((i) => ({ name: 'j', data: { i } })));
    const redis = new Redis(env.url);
    try {
      await redis.del(queueKeys(env.prefix, name).wait);
    } finally {
      redis.disconnect();
    }
    expect(await queue.removeOrphanedJobs(1, 1)).toBe(1);
    expect(await queue.removeOrphanedJobs(1000, 0)).toBe(2);
    expect(await queue.getJob(jobs[2].id!)).toBeUndefined();
    await expect(queue.removeOrphanedJobs(0)).rejects.toThrow(InvalidOptionsError);
    await expect(queue.removeOrphanedJobs(10, -1)).rejects.toThrow(InvalidOptionsError);
  });
});
