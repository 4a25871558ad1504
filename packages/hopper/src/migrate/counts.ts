/**
 * Per-state counts read from both sides, for the report's read-back check.
 */
import type { Queue } from '../api/queue.js';
import type { RedisClient } from '../backend/redis/connection.js';
import type { BullKeys } from './bullmq-keys.js';
import { emptyTally, type StateTally } from './report.js';

/** BullMQ's counts per state (waiting: the wait and paused lists; the moving set is not counted). */
export async function bullCounts(client: RedisClient, k: BullKeys): Promise<StateTally> {
  const p = client.pipeline();
  p.llen(k.wait);
  p.llen(k.paused);
  p.zcard(k.prioritized);
  p.zcard(k.delayed);
  p.zcard(k.waitingChildren);
  p.zcard(k.failed);
  p.zcard(k.completed);
  p.llen(k.active);
  const r = ((await p.exec()) ?? []).map((x) => Number(x[1] ?? 0));
  const t = emptyTally();
  t.waiting = r[0] + r[1];
  t.prioritized = r[2];
  t.delayed = r[3];
  t['waiting-children'] = r[4];
  t.failed = r[5];
  t.completed = r[6];
  t.active = r[7];
  return t;
}

/** Hopper's counts per state. */
export async function hopperCounts(queue: Queue): Promise<StateTally> {
  const c = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'waiting-children', 'failed', 'completed', 'active');
  const t = emptyTally();
  for (const key of Object.keys(t) as (keyof StateTally)[]) t[key] = c[key] ?? 0;
  return t;
}
