/**
 * Reads of job schedulers on SQLite (sqlite-schedulers.ts holds the writes and the table's
 * layout): a scheduler, the ids by next due time, the due ones, and the audit's part.
 */
import type { SchedulerRecord } from '../backend.js';
import type { SqliteStore } from './database.js';
import type { SchedulerRow } from './sqlite-schedulers.js';

/** A scheduler as stored, for reads (getScheduler). */
export function readScheduler(s: SqliteStore, qid: number, id: string): SchedulerRecord | undefined {
  const row = s.stmt('SELECT * FROM schedulers WHERE qid = ? AND id = ?').get(qid, id) as SchedulerRow | undefined;
  if (!row || row.spec === '') return undefined;
  // A scheduler held by a ready pending run is scored at the hold's end; its next run is that ready one.
  const shown = row.hold !== '' ? row.due : row.score;
  return {
    id,
    spec: row.spec,
    template: row.tpl,
    paused: row.paused === 1,
    last: row.last,
    nextDue: shown ?? undefined,
    pendingId: row.pid,
    fired: row.fired,
    skipped: row.skipped,
    missed: row.missed,
    created: row.created,
    limit: row.lim,
    createdAt: row.created_at,
  };
}

/** Scheduler ids by next due time (rank range, +inf last), as the Redis `schedulers` sorted set. */
export function schedulerIds(s: SqliteStore, qid: number, start: number, end: number, asc: boolean): string[] {
  const { n } = s.stmt('SELECT COUNT(*) AS n FROM schedulers WHERE qid = ?').get(qid) as { n: number };
  const from = start < 0 ? Math.max(n + start, 0) : start;
  const to = end < 0 ? n + end : Math.min(end, n - 1);
  if (to < from || from >= n) return [];
  const order = asc ? 'score IS NULL, score, id' : 'score IS NULL DESC, score DESC, id DESC';
  const rows = s.stmt(`SELECT id FROM schedulers WHERE qid = ? ORDER BY ${order} LIMIT ? OFFSET ?`).all(qid, to - from + 1, from) as {
    id: string;
  }[];
  return rows.map((r) => r.id);
}

export function schedulersCount(s: SqliteStore, qid: number): number {
  return (s.stmt('SELECT COUNT(*) AS n FROM schedulers WHERE qid = ?').get(qid) as { n: number }).n;
}

/** The earliest due time of a pending occurrence (or a hold's end), or null. */
export function nextSchedulerDue(s: SqliteStore, qid: number): number | null {
  return (s.stmt('SELECT MIN(score) AS due FROM schedulers WHERE qid = ?').get(qid) as { due: number | null }).due;
}

/** Schedulers marked due at or before `now`, earliest first. */
export function dueSchedulers(s: SqliteStore, qid: number, limit: number, now: number): string[] {
  const rows = s
    .stmt('SELECT id FROM schedulers WHERE qid = ? AND due_at IS NOT NULL AND due_at <= ? ORDER BY due_at, id LIMIT ?')
    .all(qid, now, limit) as { id: string }[];
  return rows.map((r) => r.id);
}

/** The scheduler tables' part of the invariant audit: each pending run exists and names its scheduler. */
export function schedulerInvariants(s: SqliteStore, qid: number): string[] {
  const problems: string[] = [];
  const rows = s.stmt("SELECT id, pid FROM schedulers WHERE qid = ? AND pid != ''").all(qid) as { id: string; pid: string }[];
  for (const r of rows) {
    const job = s.stmt('SELECT sched_id FROM jobs WHERE qid = ? AND id = ?').get(qid, r.pid) as { sched_id: string | null } | undefined;
    if (job && job.sched_id !== r.id) problems.push(`scheduler ${r.id}: pending run ${r.pid} names scheduler ${job.sched_id ?? '(none)'}`);
  }
  return problems;
}
