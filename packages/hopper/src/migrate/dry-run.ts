/**
 * The dry run: reads every job and scheduler of a BullMQ queue and reports what would move, per
 * state, and what cannot (with why), writing nothing anywhere.
 */
import type { RedisClient } from '../backend/redis/connection.js';
import type { BullKeys } from './bullmq-keys.js';
import { translateJob, type RawJob, type TranslateContext } from './bullmq-jobs.js';
import type { PlannedScheduler, RefusedScheduler } from './bullmq-schedulers.js';
import type { Source } from './mover.js';
import type { LeftBehind, MigratedState, Refusal } from './report.js';

const PAGE = 500;

export interface DryRunResult {
  moved: Record<MigratedState, number>;
  left: LeftBehind;
  refusals: Refusal[];
  refusedCount: number;
}

/** Walks `sources` read-only. */
export async function dryRun(
  client: RedisClient,
  k: BullKeys,
  ctx: TranslateContext,
  sources: Source[],
  schedulers: { planned: PlannedScheduler[]; refused: RefusedScheduler[] },
): Promise<DryRunResult> {
  const out: DryRunResult = {
    moved: { waiting: 0, prioritized: 0, delayed: 0, 'waiting-children': 0, failed: 0, completed: 0 },
    left: { held: 0, waitingForParent: 0, refused: 0, history: 0 },
    refusals: [],
    refusedCount: 0,
  };
  const refuse = (r: Refusal) => {
    out.refusedCount++;
    out.left.refused++;
    if (out.refusals.length < 100) out.refusals.push(r);
  };
  const planned = new Set(schedulers.planned.flatMap((s) => s.occurrenceIds.map((id) => `${id}@${s.next}`)));
  for (const s of schedulers.refused) refuse({ id: s.id, state: 'scheduler', why: s.why });
  for (const source of sources) {
    for (let start = 0; ; start += PAGE) {
      const entries: [string, string][] = [];
      if (source.kind === 'zset') {
        const flat = await client.zrange(source.key, start, start + PAGE - 1, 'WITHSCORES');
        for (let i = 0; i < flat.length; i += 2) entries.push([flat[i], flat[i + 1]]);
      } else {
        for (const id of await client.lrange(source.key, start, start + PAGE - 1)) entries.push([id, '']);
      }
      if (entries.length === 0) break;
      const p = client.pipeline();
      for (const [id] of entries) {
        p.hgetall(k.job(id));
        p.exists(`${k.job(id)}:lock`);
      }
      const replies = ((await p.exec()) ?? []).map((r) => r[1]);
      const parents = client.pipeline();
      const hashes = entries.map((_, i) => (replies[2 * i] ?? {}) as Record<string, string>);
      for (const h of hashes) parents.hmget(h.parentKey ?? '-', 'name', 'finishedOn');
      const parentRows = ((await parents.exec()) ?? []).map((r) => r[1] as (string | null)[]);
      for (let i = 0; i < entries.length; i++) {
        const [id, score] = entries[i];
        const h = hashes[i];
        if (h.name === undefined) continue;
        if (source.kind === 'active' && replies[2 * i + 1] === 1) {
          out.left.held++;
          continue;
        }
        if (h.parentKey && parentRows[i][0] !== null && parentRows[i][1] === null) {
          out.left.waitingForParent++;
          continue;
        }
        if (source.state === 'delayed' && planned.has(`${id}@${Math.floor(Number(score) / 4096)}`)) continue;
        const flat = Object.entries(h).flat();
        const raw: RawJob = [JSON.stringify({ s: source.state, sc: score }), flat, [], 0, [], [], [], [], null, -2];
        const t = translateJob(ctx, id, raw);
        if (t.ok) out.moved[t.job.state]++;
        else refuse({ id, state: source.state, why: t.why });
      }
      if (entries.length < PAGE) break;
    }
  }
  return out;
}
