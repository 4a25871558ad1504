/**
 * The reads of fair groups on SQLite (sqlite-groups.ts holds the writes and the claim's walk):
 * the group getters, the ids, a group's ready jobs, and the groups' part of the invariant audit.
 */
import type { GroupRecord, GroupStatus } from '../backend.js';
import type { SqliteStore } from './database.js';
import { readLimits } from './sqlite-limits.js';
import { hasSettings, type GroupRow } from './sqlite-groups.js';

const STATUS: Record<string, GroupStatus> = { r: 'ready', c: 'maxed', l: 'limited', p: 'paused' };

/** Groups as the getters report them, leaving out those that hold nothing. */
export function readGroups(s: SqliteStore, qid: number, ids: string[]): GroupRecord[] {
  const out: GroupRecord[] = [];
  for (const id of ids) {
    const row = s.stmt('SELECT * FROM groups WHERE qid = ? AND id = ?').get(qid, id) as GroupRow | undefined;
    const counts = s
      .stmt(
        `SELECT SUM(state = 'waiting') AS waiting, SUM(state = 'prioritized') AS prioritized, SUM(state = 'active') AS active
         FROM jobs WHERE qid = ? AND grp = ? AND state IN ('waiting', 'prioritized', 'active')`,
      )
      .get(qid, id) as { waiting: number | null; prioritized: number | null; active: number | null };
    let status: GroupStatus = (row && STATUS[row.st]) || 'idle';
    if (status === 'maxed' && row) {
      // Parked at its concurrency: it goes on at the next claim once a slot is free.
      const conc = row.c ?? readLimits(s, qid).gcon;
      if (conc === undefined || (counts.active ?? 0) < conc)
        status = (counts.waiting ?? 0) + (counts.prioritized ?? 0) > 0 ? 'ready' : 'idle';
    }
    const record: GroupRecord = {
      id,
      status,
      waiting: counts.waiting ?? 0,
      prioritized: counts.prioritized ?? 0,
      active: counts.active ?? 0,
      concurrency: row?.c ?? undefined,
      limiter:
        row && row.lm !== null ? { max: row.lm, duration: row.ld ?? 0, ...(row.lwt === 1 ? { weight: 'cost' as const } : {}) } : undefined,
      maxSize: row?.ms ?? undefined,
      weight: row?.w ?? undefined,
    };
    const holds =
      record.status !== 'idle' || record.active > 0 || record.waiting + record.prioritized > 0 || (row !== undefined && hasSettings(row));
    if (holds) out.push(record);
  }
  return out;
}

/** Every known group's id, in id order (the Redis `gs` set). */
export function groupIds(s: SqliteStore, qid: number): string[] {
  return (s.stmt("SELECT id FROM groups WHERE qid = ? AND id != '' ORDER BY id").all(qid) as { id: string }[]).map((r) => r.id);
}

/** A group's ready job ids in the order they will run (rank range). */
export function groupJobIds(s: SqliteStore, qid: number, g: string, start: number, end: number): string[] {
  const rows = s
    .stmt(
      `SELECT id FROM jobs WHERE qid = ? AND grp = ? AND state IN ('waiting', 'prioritized')
       ORDER BY state = 'prioritized', score, rowid`,
    )
    .all(qid, g) as { id: string }[];
  const from = start < 0 ? Math.max(rows.length + start, 0) : start;
  const to = end < 0 ? rows.length + end : end;
  return rows.slice(from, to + 1).map((r) => r.id);
}

/** The groups' part of the invariant audit: a group with a backlog is in the ring, parked or paused. */
export function groupInvariants(s: SqliteStore, qid: number): string[] {
  const rows = s
    .stmt(
      `SELECT DISTINCT j.grp AS grp, g.st AS st FROM jobs j LEFT JOIN groups g ON g.qid = j.qid AND g.id = j.grp
       WHERE j.qid = ? AND j.grp IS NOT NULL AND j.state IN ('waiting', 'prioritized')`,
    )
    .all(qid) as { grp: string; st: string | null }[];
  const problems: string[] = [];
  for (const r of rows) {
    if (r.st === null || r.st === '') problems.push(`group ${r.grp} has ready jobs but is ${r.st === null ? 'unknown' : 'idle'}`);
  }
  if (rows.length > 0 && s.stmt("SELECT 1 FROM groups WHERE qid = ? AND id = ''").get(qid) === undefined) {
    problems.push('grouped jobs are ready but groups are not on (no ring entry for the jobs without a group)');
  }
  return problems;
}
