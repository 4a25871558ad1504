/**
 * Automatic job ids on both sides of a live switch never meet: producers adding to BullMQ and to
 * Hopper at once each take ids from their own counter, and the bridge must never find a BullMQ
 * job "already in Hopper" because a Hopper add took its id (it would drop the BullMQ one).
 */
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { useHopper } from '../helpers/hopper.js';
import { migrateFromBullMQ } from '../../src/migrate/index.js';
import { bullKeys } from '../../src/migrate/bullmq-keys.js';
import { ID_ROOM } from '../../src/migrate/id-ranges.js';
import { loadBull, useBullPrefixes } from './bullmq-deployment.js';

const env = useHopper();
const newBullPrefix = useBullPrefixes(env);

describe('automatic ids across the switch', () => {
  it('Hopper adds take ids past BullMQ ones, with room; BullMQ jumps past Hopper when it nears them; every job moves', async () => {
    const bull = await loadBull(6);
    const bp = newBullPrefix();
    const name = env.queueName('ids');
    const conn = new Redis(env.url, { maxRetriesPerRequest: null });
    const bq = new bull.Queue(name, { connection: conn, prefix: bp });
    const k = bullKeys(bp, name);
    const queue = env.queue(name);
    try {
      // A Hopper producer moved early took id 1..2 already; BullMQ has given 1..3.
      const early = await queue.addBulk([
        { name: 'h', data: {} },
        { name: 'h', data: {} },
      ]);
      expect(early.map((j) => j.id)).toEqual(['1', '2']);
      for (let i = 0; i < 3; i++) await bq.add('b', { i }, { jobId: `b${i}` });
      await conn.set(k.id, '3');
      const first = await migrateFromBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix });
      expect(first.lost).toBe(0);
      // Hopper's next ids are past every id either side gave, with room for BullMQ's adds.
      const hopperAdd = await queue.add('h', {});
      expect(Number(hopperAdd.id)).toBe(3 + ID_ROOM + 1);
      // BullMQ's next ids are past the ids Hopper gave before the migration.
      const bullAdd = await bq.add('b', {});
      expect(Number(bullAdd.id)).toBe(4);
      const second = await migrateFromBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix });
      expect(second.moved.waiting).toBe(1);
      expect(second.alreadyThere).toBe(0);
      expect(await queue.getJobState(bullAdd.id!)).toBe('waiting');

      // BullMQ's adds near Hopper's range: the next run moves BullMQ's counter past Hopper's ids.
      await conn.set(k.id, String(3 + ID_ROOM - 10));
      const hopperCounterBefore = Number(hopperAdd.id);
      await migrateFromBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix });
      expect(Number(await conn.get(k.id))).toBe(hopperCounterBefore + ID_ROOM);
      expect(await conn.hgetall(k.idRanges)).toEqual({ high: 'bullmq', fence: String(hopperCounterBefore + ID_ROOM) });
      const later = await bq.add('b', {});
      expect(Number(later.id)).toBe(hopperCounterBefore + ID_ROOM + 1);
      const third = await migrateFromBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix });
      expect(third.moved.waiting).toBe(1);
      expect(third.alreadyThere).toBe(0);
      // Every job is in Hopper once: the two early ones, three moved, one Hopper add, two BullMQ adds.
      expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 8 });
    } finally {
      await bq.close();
      conn.disconnect();
    }
  });
});
