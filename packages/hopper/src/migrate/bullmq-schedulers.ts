/**
 * BullMQ's job schedulers and legacy repeatable jobs, moved to Hopper job schedulers with the same
 * ids. BullMQ keeps each in the `repeat` sorted set (score: the next occurrence's instant) with a
 * hash `repeat:<id>` (a scheduler: name, pattern or every, offset, tz, startDate, endDate, limit,
 * data, opts, `ic` the occurrences created; a legacy repeatable of late 5.x: name and its repeat
 * options; an older legacy one: no hash, its options spelled in the key
 * `name:jobId:endDate:tz:pattern|every`), and one planned occurrence, the delayed job
 * `repeat:<id>:<instant>`. That occurrence becomes the Hopper scheduler's next one: BullMQ's job is
 * taken out of its delayed set first (so no BullMQ worker runs it), the Hopper scheduler is
 * created with its last instant just before it (upsertScheduler's seed), then BullMQ's scheduler
 * and job are deleted. A scheduler already in Hopper wins.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../backend/redis/connection.js';
import type { Queue } from '../api/queue.js';
import { JobSchedulers, type JobSchedulerTemplate } from '../api/job-schedulers.js';
import type { LegacyRepeatOptions } from '../schedule/repeat-options.js';
import { validateRepeat } from '../schedule/validate-repeat.js';
import type { BullKeys } from './bullmq-keys.js';
import { DEDUP_LEASE_MS } from './bullmq-dedup.js';
import { FINISH, FINISH_SCHEDULER, runBullScript, TAKE_ONE } from './bullmq-scripts.js';

/** A BullMQ scheduler as it will be written to Hopper. */
export interface PlannedScheduler {
  id: string;
  legacy: boolean;
  /** Its next occurrence's instant in BullMQ (ms). */
  next: number;
  /** Occurrences BullMQ created so far (its `ic`; 0 when unknown). */
  created: number;
  repeat: LegacyRepeatOptions;
  template: JobSchedulerTemplate<unknown>;
  /** Ids its planned occurrence may have in BullMQ's delayed set. */
  occurrenceIds: string[];
}

/** A scheduler that cannot move, and why. */
export interface RefusedScheduler {
  id: string;
  why: string;
}

const SHORT_NAMES: Record<string, string> = { de: 'deduplication', kl: 'keepLogs', fpof: 'failParentOnFailure' };

function numberOf(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** The options of an old legacy repeatable, read from its key `name:jobId:endDate:tz:pattern|every`. */
function parseLegacyKey(id: string): { name: string; repeat: LegacyRepeatOptions } | undefined {
  const parts = id.split(':');
  if (parts.length < 5) return undefined;
  const last = parts.slice(-4);
  const name = parts.slice(0, -4).join(':');
  const [jobId, endDate, tz, rule] = last;
  const repeat: LegacyRepeatOptions = /^\d+$/.test(rule) ? { every: Number(rule) } : { pattern: rule };
  if (tz) repeat.tz = tz;
  if (endDate && /^\d+$/.test(endDate)) repeat.endDate = Number(endDate);
  if (jobId) repeat.jobId = jobId;
  return { name, repeat };
}

/** Reads BullMQ's schedulers of queue `k` and plans each (or says why it cannot move). */
export async function readSchedulers(
  client: RedisClient,
  k: BullKeys,
  now: number,
): Promise<{ planned: PlannedScheduler[]; refused: RefusedScheduler[] }> {
  const planned: PlannedScheduler[] = [];
  const refused: RefusedScheduler[] = [];
  for (let start = 0; ; start += 500) {
    const flat = await client.zrange(k.repeat, start, start + 499, 'WITHSCORES');
    if (flat.length === 0) break;
    const ids: string[] = [];
    const scores: number[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      ids.push(flat[i]);
      scores.push(Number(flat[i + 1]));
    }
    const pipeline = client.pipeline();
    for (const id of ids) pipeline.hgetall(k.scheduler(id));
    const hashes = ((await pipeline.exec()) ?? []).map((r) => (r[1] ?? {}) as Record<string, string>);
    for (let i = 0; i < ids.length; i++) {
      const result = await planOne(client, k, ids[i], scores[i], hashes[i], now);
      if ('why' in result) refused.push(result);
      else planned.push(result);
    }
    if (flat.length < 1000) break;
  }
  return { planned, refused };
}

async function planOne(
  client: RedisClient,
  k: BullKeys,
  id: string,
  next: number,
  h: Record<string, string>,
  now: number,
): Promise<PlannedScheduler | RefusedScheduler> {
  const md5 = createHash('md5').update(id).digest('hex');
  const occurrenceIds = [`repeat:${id}:${next}`, `repeat:${md5}:${next}`];
  let name: string;
  let repeat: LegacyRepeatOptions;
  let legacy: boolean;
  let template: JobSchedulerTemplate<unknown> = {};
  if (h.pattern !== undefined || h.every !== undefined) {
    legacy = h.ic === undefined;
    name = h.name ?? id;
    repeat = h.pattern !== undefined ? { pattern: h.pattern } : { every: Number(h.every) };
    const offset = numberOf(h.offset);
    if (h.every !== undefined && offset !== undefined && offset > 0) repeat.offset = offset % Number(h.every);
    if (h.tz) repeat.tz = h.tz;
    const startDate = numberOf(h.startDate);
    const endDate = numberOf(h.endDate);
    const limit = numberOf(h.limit);
    if (startDate !== undefined) repeat.startDate = startDate;
    if (endDate !== undefined) repeat.endDate = endDate;
    if (limit !== undefined) repeat.limit = limit;
  } else {
    const parsed = parseLegacyKey(id);
    if (!parsed)
      return { id, why: `its BullMQ record (${k.scheduler(id)}) has neither a pattern nor an every, and its key cannot be read` };
    legacy = true;
    name = parsed.name;
    repeat = parsed.repeat;
  }
  try {
    if (h.data !== undefined) template.data = JSON.parse(h.data) as unknown;
    if (h.opts !== undefined) {
      const opts: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(JSON.parse(h.opts) as Record<string, unknown>)) opts[SHORT_NAMES[key] ?? key] = value;
      template.opts = opts;
    }
  } catch {
    return { id, why: 'its template is not valid JSON' };
  }
  if (legacy) {
    // A legacy repeatable keeps its data and options on its occurrences: read them from the planned one.
    const pipeline = client.pipeline();
    for (const occ of occurrenceIds) pipeline.hmget(k.job(occ), 'data', 'opts');
    const rows = ((await pipeline.exec()) ?? []).map((r) => r[1] as (string | null)[]);
    const row = rows.find((r) => r[0] !== null);
    if (row) {
      try {
        template.data = JSON.parse(row[0] as string) as unknown;
        const opts = row[1] ? (JSON.parse(row[1]) as Record<string, unknown>) : {};
        for (const key of ['repeat', 'jobId', 'delay', 'timestamp', 'prevMillis', 'repeatJobKey', 'attempts'] as const) {
          if (key !== 'attempts' || opts.attempts === 0) delete opts[key];
        }
        if (Object.keys(opts).length > 0) template.opts = opts;
      } catch {
        return { id, why: 'its planned occurrence holds data or options that are not valid JSON' };
      }
    }
  }
  template = { name, ...template };
  try {
    // Hopper's own checks, before anything is taken: a refused scheduler stays in BullMQ whole.
    const { key: _key, jobId: _jobId, count: _count, prevMillis: _prev, ...checked } = repeat;
    validateRepeat(checked, { now });
  } catch (err) {
    return { id, why: `Hopper refuses its schedule: ${(err as Error).message}` };
  }
  return { id, legacy, next, created: numberOf(h.ic) ?? 0, repeat, template, occurrenceIds };
}

/**
 * Moves one planned scheduler: takes its planned occurrence out of BullMQ's delayed set, creates
 * the Hopper scheduler (seeded so that occurrence is its next), then deletes BullMQ's scheduler
 * and occurrence. Returns whether Hopper already had it.
 */
export async function moveScheduler(client: RedisClient, k: BullKeys, queue: Queue, s: PlannedScheduler): Promise<'moved' | 'exists'> {
  let taken: string | undefined;
  // Taken by a run that stopped before finishing it: it is still ours to re-create.
  for (const occ of s.occurrenceIds) if (taken === undefined && (await client.zscore(k.moving, occ)) !== null) taken = occ;
  for (const occ of taken === undefined ? s.occurrenceIds : []) {
    const info = JSON.stringify({ s: 'scheduled', sc: String(s.next), sched: s.id });
    if ((await runBullScript(client, TAKE_ONE, [k.delayed, k.moving, k.movingInfo, k.movingSeq], [occ, info])) === 1) {
      taken = occ;
      break;
    }
  }
  // Taken from delayed: Hopper creates it again at the same instant. Elsewhere (due, running, or
  // gone): that run is BullMQ's or is moved as a job, and Hopper plans the ones after it.
  const inBullmq = taken === undefined && (await existsAny(client, k, s.occurrenceIds));
  const seed =
    taken !== undefined || !inBullmq ? { last: s.next - 1, created: Math.max(0, s.created - 1) } : { last: s.next, created: s.created };
  const schedulers = new JobSchedulers(queue, () => ({}), customBackoff(s.template));
  const { result } = await schedulers.write(
    s.id,
    s.repeat,
    s.template,
    s.legacy ? { repeat: { ...s.repeat, key: s.id }, countBase: 0 } : undefined,
    seed,
  );
  if (taken !== undefined) {
    await runBullScript(client, FINISH, [k.moving, k.movingInfo, k.movedParents, k.dedupLeases], [k.base, k.prefix, DEDUP_LEASE_MS, taken]);
  }
  await runBullScript(client, FINISH_SCHEDULER, [k.repeat, k.scheduler(s.id)], [s.id]);
  return result === 'unchanged' ? 'exists' : 'moved';
}

async function existsAny(client: RedisClient, k: BullKeys, ids: string[]): Promise<boolean> {
  for (const id of ids) if ((await client.exists(k.job(id))) === 1) return true;
  return false;
}

function customBackoff(template: JobSchedulerTemplate<unknown>): string[] {
  const type = (template.opts?.backoff as { type?: unknown } | undefined)?.type;
  return typeof type === 'string' ? [type] : [];
}
