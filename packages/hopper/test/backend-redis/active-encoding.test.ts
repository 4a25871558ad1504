/**
 * A claim adding a large batch of locks to a listpack `active` set converts it to a skiplist first
 * (includes/claim.lua preferSkiplist): a listpack insert scans every member, a skiplist insert is
 * O(log n). The conversion adds and removes a member too long for a listpack: nothing of it may be
 * left, every claimed job must hold its lock, and small claims leave a small set alone.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { queueKeys } from '../../src/backend/redis/keys.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

describe('the active set', () => {
  it('becomes a skiplist when a large claim joins a listpack, holding exactly the claimed jobs', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk(Array.from({ length: 100 }, (_, i) => ({ name: 'n', data: { i } })));
    const client = new Redis(env.url);
    env.track({ close: async () => void client.disconnect() });
    const active = queueKeys(env.prefix, name).active;
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    const claim = async (count: number, seq: number) =>
      (await backend.claim({ count, lockMs: 30_000, tokenPrefix: `w:${seq}:` }, env.clock!.backendNow())).jobs;

    // Small claims into a small set: left a listpack (cheaper below a few dozen members).
    expect(await claim(5, 1)).toHaveLength(5);
    expect(await claim(5, 2)).toHaveLength(5);
    expect(await client.object('ENCODING', active)).toBe('listpack');
    // 10 running + 40 more: converted before the ZADD.
    const big = await claim(40, 3);
    expect(big).toHaveLength(40);
    expect(await client.object('ENCODING', active)).toBe('skiplist');
    const members = await client.zrange(active, 0, -1);
    expect(members).toHaveLength(50);
    expect(members.every((m) => /^\d+$/.test(m))).toBe(true);
    // Each claimed job holds its lock under its own token.
    for (const [i, job] of big.entries())
      expect(await client.hget(`${queueKeys(env.prefix, name).base}j:${job.id}`, 'tk')).toBe(`w:3:${i + 1}`);
    // The queue's own audit agrees (counts, locks, states).
    expect(await backend.checkInvariants()).toEqual([]);
  });
});
