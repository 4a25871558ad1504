/**
 * The SQLite backend's invariant audit (run after every test of the SQLite tier, as the Redis
 * audit on Redis).
 */
import { isJobState } from '../../job/states.js';
import type { SqliteStore } from './database.js';
import { groupInvariants } from './sqlite-group-reads.js';
import { schedulerInvariants } from './sqlite-scheduler-reads.js';

/**
 * The invariant audit, SQLite form: every job has a known state; a held (active) job has a
 * lock token and deadline, no other job holds a token; a prioritized job has a priority; a
 * sealed parent in waiting-children has a pending child (or a continue mark); a pending
 * dependency names a child that exists and names the parent; a deduplication id kept until its
 * job finishes points to an unfinished job of the queue.
 * A scheduler's pending run names its scheduler; a group with ready jobs is in turn, parked or
 * paused.
 */
export function checkInvariants(s: SqliteStore, qid: number): string[] {
  const problems: string[] = [];
  const rows = s.stmt('SELECT id, state, token, priority, score FROM jobs WHERE qid = ?').all(qid) as {
    id: string;
    state: string;
    token: string | null;
    priority: number;
    score: number;
  }[];
  for (const row of rows) {
    if (!isJobState(row.state)) problems.push(`job ${row.id} has unknown state "${row.state}"`);
    if (row.state === 'active' && !row.token) problems.push(`active job ${row.id} has no lock token`);
    if (row.state !== 'active' && row.token) problems.push(`job ${row.id} in state ${row.state} holds lock token ${row.token}`);
    if (row.state === 'prioritized' && row.priority <= 0) problems.push(`prioritized job ${row.id} has priority ${row.priority}`);
  }
  // A sealed parent with nothing to wait for should have moved on.
  const stuck = s
    .stmt(
      `SELECT j.id FROM jobs j WHERE j.qid = ? AND j.state = 'waiting-children' AND j.unsealed = 0 AND j.continue_flag = 0
       AND NOT EXISTS (SELECT 1 FROM deps d WHERE d.qid = j.qid AND d.id = j.id AND d.pending = 1)`,
    )
    .all(qid) as { id: string }[];
  for (const p of stuck) problems.push(`parent ${p.id} waits in waiting-children with no pending child`);
  // A pending dependency names an existing child that still names this parent.
  const orphans = s
    .stmt(
      `SELECT d.id, d.child_key FROM deps d LEFT JOIN jobs c ON c.qid = d.child_qid AND c.id = d.child_id
       WHERE d.qid = ? AND d.pending = 1 AND (c.id IS NULL OR c.parent_qid IS NOT d.qid OR c.parent_id IS NOT d.id)`,
    )
    .all(qid) as { id: string; child_key: string }[];
  for (const o of orphans) problems.push(`parent ${o.id} waits for child ${o.child_key}, which is gone or has another parent`);
  const dedups = s
    .stmt(
      `SELECT d.dedup_id, d.job_id, j.state FROM dedup d LEFT JOIN jobs j ON j.qid = d.qid AND j.id = d.job_id
       WHERE d.qid = ? AND d.expires_at IS NULL`,
    )
    .all(qid) as { dedup_id: string; job_id: string; state: string | null }[];
  for (const d of dedups) {
    if (d.state === null) problems.push(`deduplication id ${d.dedup_id} points to missing job ${d.job_id}`);
    else if (d.state === 'completed' || d.state === 'failed') {
      problems.push(`deduplication id ${d.dedup_id} still points to finished job ${d.job_id}`);
    }
  }
  problems.push(...schedulerInvariants(s, qid), ...groupInvariants(s, qid));
  return problems;
}
