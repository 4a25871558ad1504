/**
 * The Redis side of the way back (backend/import-records.ts, ExportOperations): exportTake.lua,
 * exportTakePending.lua, exportFinish.lua and exportGiveBack.lua, and the read of the jobs in
 * the moving set (one pipeline: the hash, large data, logs, steps, dependency records and the
 * deduplication key's time left).
 */
import type { ExportedJob, ExportSource, ExportTake } from '../import-records.js';
import type { RedisClient } from './connection.js';
import type { QueueKeys } from './keys.js';
import { timeArg, toRecord } from './replies.js';
import { runScript } from './script-runner.js';
import { SCRIPTS } from './scripts.generated.js';

/** exportTake.lua: see ExportOperations.exportTake. */
export async function exportTake(
  client: RedisClient,
  k: QueueKeys,
  source: ExportSource,
  offset: number,
  count: number,
  now?: number,
): Promise<ExportTake> {
  let key: string;
  let kind: 'list' | 'zset' | 'active' = 'zset';
  if (source.group !== undefined) key = k.groupQueue(source.group);
  else if (source.state === 'waiting') {
    key = k.wait;
    kind = 'list';
  } else if (source.state === 'stalled') {
    key = k.active;
    kind = 'active';
  } else {
    const sets = {
      prioritized: k.prio,
      delayed: k.delayed,
      failed: k.failed,
      completed: k.completed,
      'waiting-children': k.waitingChildren,
    };
    key = sets[source.state];
  }
  const reply = (await runScript(
    client,
    SCRIPTS.exportTake,
    { source: key, moving: k.exportMoving, info: k.exportInfo, seq: k.exportSeq },
    { now: timeArg(now), base: k.base, kind, state: source.state, offset, count, group: source.group ?? '' },
  )) as (string | number)[];
  const bar = reply.indexOf('|');
  return { examined: Number(reply[0]), taken: reply.slice(1, bar).map(String), skipped: reply.slice(bar + 1).map(String) };
}

/** exportTakePending.lua: see ExportOperations.exportTakePending. */
export async function exportTakePending(client: RedisClient, k: QueueKeys, schedulerId: string, id: string): Promise<boolean> {
  const reply = await runScript(
    client,
    SCRIPTS.exportTakePending,
    { delayed: k.delayed, moving: k.exportMoving, info: k.exportInfo, seq: k.exportSeq },
    { base: k.base, id, scheduler: schedulerId },
  );
  return Number(reply) === 1;
}

/** exportFinish.lua: see ExportOperations.exportFinish. */
export async function exportFinish(client: RedisClient, k: QueueKeys, ids: string[], now?: number): Promise<number> {
  if (ids.length === 0) return 0;
  return Number(
    await runScript(client, SCRIPTS.exportFinish, { moving: k.exportMoving, info: k.exportInfo }, { now: timeArg(now), base: k.base }, ids),
  );
}

/** exportGiveBack.lua: see ExportOperations.exportGiveBack. */
export async function exportGiveBack(client: RedisClient, k: QueueKeys, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  return Number(
    await runScript(
      client,
      SCRIPTS.exportGiveBack,
      {
        moving: k.exportMoving,
        info: k.exportInfo,
        wait: k.wait,
        prio: k.prio,
        prioCounter: k.prioCounter,
        delayed: k.delayed,
        failed: k.failed,
        completed: k.completed,
        marker: k.marker,
      },
      { base: k.base },
      ids,
    ),
  );
}

type Reply = [Error | null, unknown];

/** ExportOperations.exportRead: one pipeline per batch, then one for the deduplication keys held. */
export async function exportRead(
  client: RedisClient,
  k: QueueKeys,
  ids: string[],
  maxLogs: number,
  inPlace = false,
): Promise<(ExportedJob | undefined)[]> {
  if (ids.length === 0) return [];
  const p = client.pipeline();
  for (const id of ids) {
    p.hget(k.exportInfo, id);
    p.hgetall(k.job(id));
    p.get(k.data(id));
    p.lrange(k.logs(id), -maxLogs, -1);
    p.llen(k.logs(id));
    p.hlen(k.steps(id));
    p.scard(k.deps(id));
    p.hlen(k.processed(id));
    p.hlen(k.failedChildren(id));
    p.hlen(k.ignoredChildren(id));
  }
  const r = ((await p.exec()) ?? []) as Reply[];
  const per = 10;
  const out: (ExportedJob | undefined)[] = [];
  const dedupIds: [number, string, string][] = [];
  for (let i = 0; i < ids.length; i++) {
    const at = (n: number) => r[i * per + n]?.[1];
    const infoJson = at(0) as string | null;
    const hash = at(1) as Record<string, string> | null;
    const record = toRecord(ids[i], hash, at(2) as string | null);
    if ((!infoJson && !inPlace) || !record || !hash) {
      out.push(undefined);
      continue;
    }
    const inState = (record.state === 'active' ? 'stalled' : (record.state ?? 'waiting')) as ExportedJob['from'];
    const info = infoJson ? (JSON.parse(infoJson) as { s: ExportedJob['from']; sc: string }) : { s: inState, sc: '' };
    const job: ExportedJob = {
      record,
      from: info.s,
      score: info.sc,
      steps: Number(at(5) ?? 0),
      children: Number(at(6) ?? 0) + Number(at(7) ?? 0) + Number(at(8) ?? 0) + Number(at(9) ?? 0),
      logs: (at(3) as string[] | null) ?? [],
      logCount: Number(at(4) ?? 0),
    };
    if (hash.g !== undefined) job.group = hash.g;
    if (hash.ru !== undefined) job.runId = hash.ru;
    if (hash.bt !== undefined) job.budgetTenant = hash.bt;
    if (hash.sk !== undefined) job.schedulerId = hash.sk;
    // `de`: a deduplication id held until the job finishes; `dt`: one held for a ttl.
    const dedupId = hash.de ?? hash.dt;
    if (dedupId !== undefined) dedupIds.push([out.length, dedupId, hash.de !== undefined ? 'simple' : 'ttl']);
    out.push(job);
  }
  if (dedupIds.length > 0) {
    const q = client.pipeline();
    for (const [, dedupId] of dedupIds) q.get(k.dedup(dedupId)).pttl(k.dedup(dedupId));
    const d = ((await q.exec()) ?? []) as Reply[];
    dedupIds.forEach(([index, dedupId, mode], n) => {
      const job = out[index];
      const holder = d[2 * n]?.[1];
      const pttl = Number(d[2 * n + 1]?.[1]);
      if (!job || holder !== job.record.id) return;
      job.dedup = { id: dedupId, ttlMs: mode === 'simple' || pttl < 0 ? 0 : pttl };
    });
  }
  return out;
}
