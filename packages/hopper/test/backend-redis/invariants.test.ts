/** The invariant audit itself: it must notice corrupted state (or every other test proves nothing). */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { queueKeys } from '../../src/backend/redis/keys.js';
import { assertInvariants } from '../helpers/hopper.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

async function corrupt(fn: (redis: Redis, keys: ReturnType<typeof queueKeys>) => Promise<unknown>): Promise<void> {
  const name = env.queueName();
  const queue = env.queue(name);
  await queue.addBulk([
    { name: 'a', data: {} },
    { name: 'b', data: {} },
  ]);
  await assertInvariants(env.url, env.prefix); // sound before
  const redis = new Redis(env.url);
  try {
    await fn(redis, queueKeys(env.prefix, name));
  } finally {
    redis.disconnect();
  }
  env.skipInvariants();
}

describe('invariant audit', () => {
  it('reports a job that is in no state structure', async () => {
    await corrupt((redis, k) => redis.lrem(k.wait, 0, '1'));
    await expect(assertInvariants(env.url, env.prefix)).rejects.toThrow('job 1 (state waiting) is in no state structure');
  });

  it('reports a job in two structures', async () => {
    await corrupt((redis, k) => redis.zadd(k.delayed, 1, '2'));
    await expect(assertInvariants(env.url, env.prefix)).rejects.toThrow('job 2 is in 2 structures');
  });

  it('reports a stored state that disagrees with the structure', async () => {
    await corrupt((redis, k) => redis.hset(k.job('1'), 's', 'delayed'));
    await expect(assertInvariants(env.url, env.prefix)).rejects.toThrow('job 1 stores state delayed but is in wait');
  });

  it('reports an id whose job hash is missing, and an active job without a token', async () => {
    await corrupt(async (redis, k) => {
      await redis.rpush(k.wait, '99');
      await redis.lrem(k.wait, 0, '2');
      await redis.zadd(k.active, 1, '2');
      await redis.hset(k.job('2'), 's', 'active');
    });
    const failure = assertInvariants(env.url, env.prefix);
    await expect(failure).rejects.toThrow('job 99 is in wait but its hash is missing');
    await expect(assertInvariants(env.url, env.prefix)).rejects.toThrow('active job 2 has no lock token');
  });
});
