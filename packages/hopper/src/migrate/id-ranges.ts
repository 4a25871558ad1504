/**
 * Automatic job ids on both sides of a live switch. BullMQ and Hopper each give automatic ids
 * from a counter of their own (`<prefix>:<queue>:id` there, the queue's `id` key here); while
 * producers add on both sides, two jobs would get the same id, and the bridge would find the
 * BullMQ one "already in Hopper" (a different job) and drop it. So the migration keeps the two
 * counters in ranges that do not meet: at its first run, Hopper's counter moves past every id
 * either side gave, with `ID_ROOM` ids of room for BullMQ's adds; at each pass, when the side
 * below comes within half the room of the other's range, it jumps past the other's counter with
 * the same room (and the roles swap). The record (which side is above, where its range starts)
 * lives beside BullMQ's keys, so a re-run after a crash goes on from it.
 */
import type { RedisClient } from '../backend/redis/connection.js';
import type { BullKeys } from './bullmq-keys.js';
import { RAISE_COUNTER, runBullScript } from './bullmq-scripts.js';
import type { ImportingBackend } from './mover.js';

/** Ids of room between the two sides' ranges. */
export const ID_ROOM = 10_000_000;

export class IdRanges {
  constructor(
    private readonly src: RedisClient,
    private readonly k: BullKeys,
    private readonly backend: ImportingBackend,
  ) {}

  /** Checks the two counters and moves one when its range would meet the other's. */
  async keep(): Promise<void> {
    const record = await this.src.hmget(this.k.idRanges, 'high', 'fence');
    const bull = await this.raiseBull(0);
    const hopper = await this.backend.reserveJobIds(0);
    if (record[0] !== 'hopper' && record[0] !== 'bullmq') {
      // First run: BullMQ's next ids must pass the ids Hopper already gave, and Hopper's range
      // starts past both, with room.
      const top = Math.max(bull, hopper);
      await this.raiseBull(top);
      await this.save('hopper', await this.backend.reserveJobIds(top + ID_ROOM));
      return;
    }
    const high = record[0];
    const fence = Number(record[1]);
    const low = high === 'hopper' ? bull : hopper;
    if (fence - low >= ID_ROOM / 2) return;
    // The side below nears the other's range: it jumps past the other's ids, with room.
    const target = (high === 'hopper' ? hopper : bull) + ID_ROOM;
    if (high === 'hopper') await this.save('bullmq', await this.raiseBull(target));
    else await this.save('hopper', await this.backend.reserveJobIds(target));
  }

  private async raiseBull(atLeast: number): Promise<number> {
    return Number(await runBullScript(this.src, RAISE_COUNTER, [this.k.id], [atLeast]));
  }

  private async save(high: 'hopper' | 'bullmq', fence: number): Promise<void> {
    await this.src.hset(this.k.idRanges, 'high', high, 'fence', String(fence));
  }
}
