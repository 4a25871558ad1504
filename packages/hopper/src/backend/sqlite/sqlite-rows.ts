/**
 * The SQLite backend's job rows: their stored shape (`JobRow`), the record the seam returns
 * (`toRecord`), the retention a row's options give a job failed by the backend itself, and
 * Redis-style rank windows over ordered rows. Pure functions over rows, no transaction.
 */
import type { JobRecord, Retention } from '../backend.js';
import { isJobState } from '../../job/states.js';
import { originOf } from './sqlite-deadletters.js';
import type { Tx } from './sqlite-ops.js';

/** A job row as stored. */
export interface JobRow {
  id: string;
  name: string;
  data: string;
  opts: string;
  state: string;
  score: number;
  ts: number;
  attempts_made: number;
  attempts_started: number;
  stalled_counter: number;
  priority: number;
  delay: number;
  progress: string | null;
  processed_on: number | null;
  processed_by: string | null;
  finished_on: number | null;
  returnvalue: string | null;
  failed_reason: string | null;
  stacktrace: string | null;
  token: string | null;
  /** The token of the holder that moved the job out of active itself (it still writes as that attempt: checkFence in includes/fence.lua). */
  moved_token: string | null;
  dedup_id: string | null;
  dedup_ttl_id: string | null;
  /** A child's parent: its queue's row id and its id (null: no parent). */
  parent_qid: number | null;
  parent_id: string | null;
  /** What the child's failure does to its parent (ChildFailurePolicy). */
  policy: string;
  /** A parent added in chunks whose children are not all added yet (`us`). */
  unsealed: number;
  /** A child with continueParentOnFailure failed: the parent moves on (`cf`). */
  continue_flag: number;
  /** A child with failParentOnFailure failed before this parent waited for children (`ff`). */
  fail_mark: string | null;
  /** Set when the job was cancelled (`cx`): the cancel reason. */
  cancel_reason: string | null;
  /** A dead letter's origin (JSON, sqlite-deadletters.ts); null for any other job. */
  origin: string | null;
  /** A scheduler's occurrence: its scheduler's id and its instant (sqlite-schedulers.ts); null for any other job. */
  sched_id: string | null;
  sched_instant: number | null;
  /** The job's group (the job option `group`, sqlite-groups.ts); null without one. */
  grp: string | null;
  /** keepLastIfActive: an add is kept for when this active job finishes (`dk`; sqlite-runs.ts). */
  dedup_keep?: number;
  /** The parent's queue name, joined by reads. */
  parent_queue?: string | null;
}

/** The retention of a job failed by the backend itself: its own removeOnFail, else `fallback`. */
export function failKeepOf(opts: string, fallback: Retention): Retention {
  if (opts === '' || !opts.includes('removeOnFail')) return fallback;
  try {
    const spec = (JSON.parse(opts) as { removeOnFail?: unknown }).removeOnFail;
    if (spec === true) return { kind: 'remove' };
    if (spec === false) return { kind: 'keep' };
    if (typeof spec === 'number') return { kind: 'limit', count: spec, ageMs: -1 };
    if (typeof spec === 'object' && spec !== null) {
      const o = spec as { count?: number; age?: number };
      return { kind: 'limit', count: typeof o.count === 'number' ? o.count : -1, ageMs: typeof o.age === 'number' ? o.age * 1000 : -1 };
    }
  } catch {
    // Options not written by Hopper: the default applies.
  }
  return fallback;
}

/** Builds a JobRecord from a row. */
export function toRecord(row: JobRow | undefined): JobRecord | undefined {
  if (!row) return undefined;
  return {
    id: row.id,
    name: row.name,
    data: row.data,
    opts: row.opts === '' ? undefined : row.opts,
    state: isJobState(row.state) ? row.state : undefined,
    timestamp: row.ts,
    attemptsMade: row.attempts_made,
    attemptsStarted: row.attempts_started,
    stalledCounter: row.stalled_counter,
    priority: row.priority,
    delay: row.delay,
    progress: row.progress ?? undefined,
    processedOn: row.processed_on ?? undefined,
    processedBy: row.processed_by ?? undefined,
    finishedOn: row.finished_on ?? undefined,
    returnvalue: row.returnvalue ?? undefined,
    failedReason: row.failed_reason ?? undefined,
    stacktrace: row.stacktrace ?? undefined,
    token: row.token ?? undefined,
    deduplicationId: row.dedup_id ?? undefined,
    origin: originOf(row),
    parent: row.parent_id !== null && row.parent_queue ? { queue: row.parent_queue, id: row.parent_id } : undefined,
    awaitingSeal: row.unsealed === 1,
  };
}

/** Redis-style rank range (negative ranks count from the end) as offset and limit over `length` items. */
export function rankWindow(length: number, start: number, end: number): { offset: number; limit: number } | undefined {
  const from = start < 0 ? Math.max(length + start, 0) : start;
  const to = end < 0 ? length + end : Math.min(end, length - 1);
  if (to < from || from >= length) return undefined;
  return { offset: from, limit: to - from + 1 };
}

/**
 * The first `limit` ready jobs of group `g` (null: the jobs without a group) in claim order:
 * waiting first, then prioritized ones by score.
 */
export function readyHead(tx: Tx, g: string | null, limit: number): JobRow[] {
  const where = g === null ? 'grp IS NULL' : 'grp = ?';
  const args = g === null ? [tx.qid] : [tx.qid, g];
  const rows = tx.s
    .stmt(`SELECT * FROM jobs WHERE qid = ? AND ${where} AND state = 'waiting' ORDER BY score, rowid LIMIT ?`)
    .all(...args, limit) as JobRow[];
  if (rows.length < limit) {
    rows.push(
      ...(tx.s
        .stmt(`SELECT * FROM jobs WHERE qid = ? AND ${where} AND state = 'prioritized' ORDER BY score, rowid LIMIT ?`)
        .all(...args, limit - rows.length) as JobRow[]),
    );
  }
  return rows;
}
