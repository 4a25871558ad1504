/**
 * Queue-wide limits on SQLite: the global concurrency (`gcc`), the sliding-window rate limit
 * (the worker's `limiter`, else the queue's `lmax`/`ldur`) and the manual rate limit
 * (`rateLimit(ms)`, BullMQ's worker.rateLimit). The counterpart of the limit part of
 * includes/claim.lua: the limits live in the queue row's `settings` (JSON), the window's starts
 * in `rate_window` (one row per start, dropped once out of every window).
 */
import type { ClaimRequest } from '../backend.js';
import type { SqliteStore } from './database.js';
import type { Tx } from './sqlite-ops.js';

/** The limits a queue row keeps in its `settings` column. */
export interface QueueLimits {
  /** Global concurrency: at most this many active jobs across all workers. */
  gcc?: number;
  /** The queue's rate limit: at most `lmax` starts in any `ldur` ms. */
  lmax?: number;
  ldur?: number;
  /** The queue's rate limit is weighted: each job counts its `cost` option (default 1). */
  lwt?: number;
  /**
   * The manual rate limit's end, on the process clock (Date.now(), never a fake `now`): like the
   * Redis key with a PX expiry it stands for, it runs out in real time.
   */
  limitedUntil?: number;
  /** Group defaults (sqlite-groups.ts): concurrency, rate limit, maxSize, weight. */
  gcon?: number;
  glm?: number;
  gld?: number;
  gms?: number;
  gwt?: number;
  /** The group default limiter is weighted (1). */
  glw?: number;
}

/** Reads a queue's limits. */
export function readLimits(s: SqliteStore, qid: number): QueueLimits {
  const row = s.stmt('SELECT settings FROM queues WHERE qid = ?').get(qid) as { settings: string } | undefined;
  return row ? (JSON.parse(row.settings) as QueueLimits) : {};
}

/** Writes a queue's limits. */
export function writeLimits(tx: Tx, limits: QueueLimits): void {
  tx.s.stmt('UPDATE queues SET settings = ? WHERE qid = ?').run(JSON.stringify(limits), tx.qid);
}

/** What a claim may take: `want` jobs, or none for `limitedFor` ms; `window` when its starts are recorded. */
export interface ClaimAllowance {
  want: number;
  /** The queue's limits as read (group defaults among them). */
  limits: QueueLimits;
  limitedFor: number;
  window: { duration: number } | undefined;
  /** A weighted limit: jobs are taken one by one while their cost fits in the window's room (`use` taken now). */
  weighted?: { max: number; duration: number; use: number };
}

/** Judges a claim of `count` jobs against the queue's limits (reads, and drops starts out of the window). */
export function allowClaim(tx: Tx, request: ClaimRequest, count: number): ClaimAllowance {
  const limits = readLimits(tx.s, tx.qid);
  let limitedFor = limits.limitedUntil !== undefined ? Math.max(limits.limitedUntil - Date.now(), 0) : 0;
  const max = request.limiter?.max ?? limits.lmax;
  const duration = request.limiter?.duration ?? limits.ldur;
  let want = count;
  const weighted = (request.limiter ? request.limiter.weighted === true : limits.lwt === 1) && max !== undefined && max > 0;
  if (weighted && duration !== undefined) {
    if (limitedFor > 0) return { want: 0, limitedFor, window: undefined, limits };
    const use = want > 0 ? weightedUse(tx, duration) : 0;
    if (want > 0 && limits.gcc !== undefined) want = Math.min(want, Math.max(limits.gcc - activeCount(tx), 0));
    return { want, limitedFor: 0, window: undefined, limits, weighted: { max, duration, use } };
  }
  const window = max !== undefined && max > 0 && duration !== undefined ? { duration } : undefined;
  if (limitedFor <= 0 && want > 0 && window && max !== undefined) {
    tx.s.stmt('DELETE FROM rate_window WHERE qid = ? AND at <= ?').run(tx.qid, tx.now - window.duration);
    const { used, first } = tx.s.stmt('SELECT COUNT(*) AS used, MIN(at) AS first FROM rate_window WHERE qid = ?').get(tx.qid) as {
      used: number;
      first: number | null;
    };
    if (used >= max) limitedFor = Math.max((first ?? tx.now) + window.duration - tx.now, 1);
    else want = Math.min(want, max - used);
  }
  if (limitedFor > 0) return { want: 0, limitedFor, window, limits };
  if (want > 0 && limits.gcc !== undefined) want = Math.min(want, Math.max(limits.gcc - activeCount(tx), 0));
  return { want, limitedFor: 0, window, limits };
}

function activeCount(tx: Tx): number {
  return (tx.s.stmt("SELECT COUNT(*) AS active FROM jobs WHERE qid = ? AND state = 'active'").get(tx.qid) as { active: number }).active;
}

/** The weight taken in the weighted window's last `duration` ms (entries out of it are dropped first). */
function weightedUse(tx: Tx, duration: number): number {
  tx.s.stmt('DELETE FROM weighted_window WHERE qid = ? AND at <= ?').run(tx.qid, tx.now - duration);
  return (tx.s.stmt('SELECT TOTAL(weight) AS use FROM weighted_window WHERE qid = ?').get(tx.qid) as { use: number }).use;
}

/** A job's weight under a weighted rate limit: its `cost` option, else 1 (jobCost in includes/window). */
export function jobCost(opts: string): number {
  if (!opts.includes('"cost":')) return 1;
  try {
    const cost = (JSON.parse(opts) as { cost?: unknown }).cost;
    return typeof cost === 'number' && Number.isFinite(cost) ? cost : 1;
  } catch {
    return 1;
  }
}

/** What a weighted claim takes: the jobs, each counted job's weight, and the ms until the head job fits (0: took some). */
export interface WeightedTake<R> {
  rows: R[];
  weights: Map<string, number>;
  /** Jobs heavier than the whole window: taken uncounted, for the worker to fail them. */
  heavy: Set<string>;
  limitedFor: number;
}

/**
 * A weighted claim (includes/claim.lua): the ready jobs from the head, one by one, taken while
 * their weight fits; the first that does not fit stays at the head (FIFO, so a heavy job is not
 * overtaken forever) and, when nothing was taken, the claim tells when it will fit.
 */
export function takeWeighted<R extends { id: string; opts: string }>(
  tx: Tx,
  limit: { max: number; duration: number; use: number },
  candidates: R[],
  want: number,
): WeightedTake<R> {
  const take: WeightedTake<R> = { rows: [], weights: new Map(), heavy: new Set(), limitedFor: 0 };
  let use = limit.use;
  for (const row of candidates) {
    if (take.rows.length >= want) break;
    const w = jobCost(row.opts);
    if (w > limit.max) {
      take.heavy.add(row.id);
    } else if (use + w > limit.max) {
      if (take.rows.length === 0) take.limitedFor = roomIn(tx, limit, use, w);
      break;
    } else {
      use += w;
      take.weights.set(row.id, w);
    }
    take.rows.push(row);
  }
  return take;
}

/** When the window, holding `use`, has room for `w` more (windowRoomIn): walks its oldest 100 entries. */
export function roomIn(tx: Tx, limit: { max: number; duration: number }, use: number, w: number): number {
  const oldest = tx.s.stmt('SELECT at, weight FROM weighted_window WHERE qid = ? ORDER BY at LIMIT 100').all(tx.qid) as {
    at: number;
    weight: number;
  }[];
  return windowRoomIn(tx.now, oldest, use, w, limit.max, limit.duration);
}

/**
 * In how many ms (at least 1) a weighted window of `max` per `duration` ms, holding `use`, has
 * room for `w` more, given its `oldest` entries in order: when enough of them have left it; past
 * them all, when the last one given leaves. Shared by the queue's window and a group's.
 */
export function windowRoomIn(
  now: number,
  oldest: { at: number; weight: number }[],
  use: number,
  w: number,
  max: number,
  duration: number,
): number {
  let at = now;
  for (const entry of oldest) {
    use -= entry.weight;
    at = entry.at;
    if (use + w <= max) break;
  }
  return Math.max(at + duration - now, 1);
}

/** Records the weights of a weighted claim's counted starts (`expires_at` on the process clock, as recordStarts). */
export function recordWeights(tx: Tx, duration: number, starts: { member: string; weight: number }[]): void {
  for (const { member, weight } of starts) {
    tx.s
      .stmt('INSERT INTO weighted_window (qid, at, expires_at, member, weight) VALUES (?, ?, ?, ?, ?)')
      .run(tx.qid, tx.now, Date.now() + duration, member, weight);
  }
}

/**
 * Records the starts of a claim in the sliding window: `at` on the database's clock (judged by
 * claims), `expires_at` on the process clock (the window's time left, as the Redis window key's
 * PTTL).
 */
export function recordStarts(tx: Tx, window: { duration: number }, starts: string[]): void {
  for (const member of starts) {
    tx.s
      .stmt('INSERT INTO rate_window (qid, at, expires_at, member) VALUES (?, ?, ?, ?)')
      .run(tx.qid, tx.now, Date.now() + window.duration, member);
  }
}

/**
 * The time left of a queue's rate limit (Queue.getRateLimitTtl, as the Redis backend reads it):
 * with `maxJobs`, the manual limit, else the window's time left once it holds `maxJobs` starts;
 * without, -2 when the queue has neither limit, else the longer of the manual limit and a full
 * queue-wide window's wait.
 */
export function rateLimitTtl(s: SqliteStore, qid: number, now: number, maxJobs: number | undefined): number {
  const limits = readLimits(s, qid);
  const manual = limits.limitedUntil !== undefined && limits.limitedUntil > now ? limits.limitedUntil - now : -2;
  if (maxJobs !== undefined) {
    if (manual > 0) return manual;
    const { started, last } = s
      .stmt('SELECT COUNT(*) AS started, MAX(expires_at) AS last FROM rate_window WHERE qid = ? AND expires_at > ?')
      .get(qid, now) as {
      started: number;
      last: number | null;
    };
    return started >= maxJobs && last !== null ? last - now : 0;
  }
  if (limits.lmax === undefined || limits.ldur === undefined) return manual;
  let ttl = Math.max(manual, 0);
  const { recent, first } = s
    .stmt('SELECT COUNT(*) AS recent, MIN(at) AS first FROM rate_window WHERE qid = ? AND at > ?')
    .get(qid, now - limits.ldur) as {
    recent: number;
    first: number | null;
  };
  if (recent >= limits.lmax && first !== null) ttl = Math.max(ttl, first + limits.ldur - now);
  return ttl;
}
