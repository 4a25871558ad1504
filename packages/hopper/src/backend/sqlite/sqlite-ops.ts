/**
 * The SQLite backend's shared steps, run inside one write transaction (a `Tx`): the ready and
 * delayed structures (rows of `jobs` ordered by `state` and `score`), events, retention, the
 * claim. The counterpart of the Lua includes (backend/redis/scripts/includes/*.lua), whose
 * contracts they follow.
 *
 * Ordering (the `score` column, by state): waiting: a per-queue counter, negated for a push to
 * the head; prioritized: priority * 2^32 + counter (0 within its priority for the head);
 * delayed: the due time; active: the lock deadline; completed, failed: when it finished. Ties
 * are broken by rowid (insertion order).
 */
import type { AddRequest, ClaimRequest, ClaimResult, ClaimedJob, Retention } from '../backend.js';
import type { SqliteStore } from './database.js';
import { childRemoved, notifyParent } from './sqlite-flows.js';
import { allowClaim, recordStarts, recordWeights, roomIn, takeWeighted } from './sqlite-limits.js';
import { newWeights, recordGroupedWeights } from './sqlite-group-weights.js';
import { fireOccurrence } from './sqlite-schedulers.js';
import { groupsOn, nextReopen, recordGroupStarts, takeGrouped, wakeGroup } from './sqlite-groups.js';
import { addKeptJob, forgetKept } from './sqlite-runs.js';
import type { JobRow } from './sqlite-rows.js';
import { noteCount, type NotedCounts, type Outcome } from './sqlite-metrics.js';

/** Rows and records: sqlite-rows.ts (re-exported for the backend's other modules). */
export { failKeepOf, rankWindow, toRecord, type JobRow } from './sqlite-rows.js';

const PRIO_SHIFT = 4294967296;
/** Most delayed jobs one claim promotes (as the Lua claim). */
const PROMOTE_BATCH = 1000;
/** Most jobs one claim takes. */
const CLAIM_MAX = 1000;

/** One write transaction on one queue: the store, the queue's row id, the time it runs at, and what to announce after commit. */
export class Tx {
  readonly s: SqliteStore;
  readonly qid: number;
  readonly now: number;
  /** The in-process wake-ups to send after commit (`work:<qid>`, `events:<qid>`), shared by every queue of the call. */
  readonly announce: Set<string>;
  /** The outcomes counted so far, written to the counters before commit (sqlite-metrics.ts flushCounts). */
  readonly counts: NotedCounts;
  emitted = 0;
  signalled = false;
  /** A scheduler's occurrence fell due in this transaction: its scheduler needs advancing (ClaimResult.schedulersDue). */
  schedulersDue = false;

  constructor(s: SqliteStore, qid: number, now: number, announce: Set<string> = new Set(), counts: NotedCounts = new Map()) {
    this.s = s;
    this.qid = qid;
    this.now = now;
    this.announce = announce;
    this.counts = counts;
  }

  /** The same transaction on another queue (flows cross queues). */
  on(qid: number): Tx {
    return qid === this.qid ? this : new Tx(this.s, qid, this.now, this.announce, this.counts);
  }

  /** Counts one job of name `name` with `outcome` in this queue's exact counters (includes/counters.lua countOutcome). */
  count(outcome: Outcome, name: string): void {
    noteCount(this.counts, this.qid, outcome, name);
  }

  private queueRow: { prefix: string; name: string; childFailure: string } | undefined;
  private readonly queueIds = new Map<string, number>();

  /** The queue's prefix, name and child failure setting (read once per transaction). */
  queue(): { prefix: string; name: string; childFailure: string } {
    if (this.queueRow) return this.queueRow;
    const row = this.s.stmt('SELECT prefix, name, child_failure FROM queues WHERE qid = ?').get(this.qid) as {
      prefix: string;
      name: string;
      child_failure: string;
    };
    this.queueRow = { prefix: row.prefix, name: row.name, childFailure: row.child_failure };
    return this.queueRow;
  }

  /** The row id of queue `name` under this queue's prefix (created if needed). */
  queueIdOf(name: string): number {
    const known = this.queueIds.get(name);
    if (known !== undefined) return known;
    const { prefix } = this.queue();
    this.s.stmt('INSERT OR IGNORE INTO queues (prefix, name) VALUES (?, ?)').run(prefix, name);
    const qid = (this.s.stmt('SELECT qid FROM queues WHERE prefix = ? AND name = ?').get(prefix, name) as { qid: number }).qid;
    this.queueIds.set(name, qid);
    return qid;
  }

  /** A job's public key, as BullMQ spells it: `<prefix>:<queue>:<id>`. */
  publicKey(id: string): string {
    const { prefix, name } = this.queue();
    return `${prefix}:${name}:${id}`;
  }

  job(id: string): JobRow | undefined {
    return this.s.stmt('SELECT * FROM jobs WHERE qid = ? AND id = ?').get(this.qid, id) as JobRow | undefined;
  }

  exists(id: string): boolean {
    return this.s.stmt('SELECT 1 FROM jobs WHERE qid = ? AND id = ?').get(this.qid, id) !== undefined;
  }

  /** Sets columns of a job. */
  set(id: string, fields: Record<string, string | number | null>): void {
    const names = Object.keys(fields);
    const sql = `UPDATE jobs SET ${names.map((n) => `${n} = ?`).join(', ')} WHERE qid = ? AND id = ?`;
    this.s.stmt(sql).run(...names.map((n) => fields[n]), this.qid, id);
  }

  /** The queue's next value of its ordering counter. */
  counter(): number {
    return (this.s.stmt('UPDATE queues SET counter = counter + 1 WHERE qid = ? RETURNING counter').get(this.qid) as { counter: number })
      .counter;
  }

  /** Appends an event (fields as in the Redis stream entries). */
  emit(event: string, fields: Record<string, string | number> = {}): void {
    const all: Record<string, string> = { event };
    for (const [k, v] of Object.entries(fields)) all[k] = String(v);
    this.s.stmt('INSERT INTO events (qid, at, event, fields) VALUES (?, ?, ?, ?)').run(this.qid, this.now, event, JSON.stringify(all));
    this.emitted++;
    this.announce.add(`events:${this.qid}`);
  }

  /** The next automatic job id of this queue. */
  nextJobId(): string {
    const row = this.s.stmt('UPDATE queues SET next_id = next_id + 1 WHERE qid = ? RETURNING next_id').get(this.qid) as { next_id: number };
    return String(row.next_id);
  }

  /** The result an add request already got (a re-sent call is applied once), if any. */
  previousResult<T>(request: AddRequest | undefined): T | undefined {
    if (!request) return undefined;
    const previous = this.s
      .stmt('SELECT result FROM requests WHERE qid = ? AND producer = ? AND seq = ?')
      .get(this.qid, request.producerId, request.seq) as { result: string } | undefined;
    return previous ? (JSON.parse(previous.result) as T) : undefined;
  }

  /** Records an add request's result, forgetting the producer's requests older than its `keep`. */
  recordResult(request: AddRequest | undefined, result: unknown): void {
    if (!request) return;
    this.s
      .stmt('INSERT OR REPLACE INTO requests (qid, producer, seq, result) VALUES (?, ?, ?, ?)')
      .run(this.qid, request.producerId, request.seq, JSON.stringify(result));
    this.s
      .stmt('DELETE FROM requests WHERE qid = ? AND producer = ? AND seq <= ?')
      .run(this.qid, request.producerId, request.seq - Math.max(request.keep, 1));
  }

  /** Tells idle workers that work may be ready (the marker of the Redis backend). */
  signalWork(): void {
    if (this.signalled) return;
    this.s.stmt('UPDATE queues SET signal = signal + 1 WHERE qid = ?').run(this.qid);
    this.signalled = true;
    this.announce.add(`work:${this.qid}`);
  }

  settings(): { paused: boolean; maxEvents: number } {
    const row = this.s.stmt('SELECT paused, max_events FROM queues WHERE qid = ?').get(this.qid) as
      { paused: number; max_events: number } | undefined;
    return { paused: row?.paused === 1, maxEvents: row?.max_events ?? 10_000 };
  }

  /**
   * Puts a job in the ready structure of its priority; returns its new state. A grouped job's
   * group joins the ring if it was idle; `group` (null: none) saves reading the job's.
   */
  pushReady(id: string, priority: number, front: boolean, group?: string | null): 'waiting' | 'prioritized' {
    let state: 'waiting' | 'prioritized' = 'waiting';
    if (priority > 0) {
      const score = front ? priority * PRIO_SHIFT : priority * PRIO_SHIFT + (this.counter() % PRIO_SHIFT);
      this.set(id, { state: 'prioritized', score });
      state = 'prioritized';
    } else {
      const c = this.counter();
      this.set(id, { state: 'waiting', score: front ? -c : c });
    }
    const g =
      group !== undefined
        ? group
        : (this.s.stmt('SELECT grp FROM jobs WHERE qid = ? AND id = ?').get(this.qid, id) as { grp: string | null } | undefined)?.grp;
    if (g !== null && g !== undefined) wakeGroup(this, g);
    return state;
  }

  /** Schedules a delayed job; wakes idle workers if it is now the earliest (they re-arm their timer). */
  pushDelayed(id: string, due: number): void {
    this.set(id, { state: 'delayed', score: due });
    const first = this.s.stmt("SELECT id FROM jobs WHERE qid = ? AND state = 'delayed' ORDER BY score, rowid LIMIT 1").get(this.qid) as
      { id: string } | undefined;
    if (first?.id === id) this.signalWork();
  }

  /** Deletes a job, its logs, its durable steps and (as a parent) its dependency records. */
  deleteJob(id: string): void {
    this.s.stmt('DELETE FROM jobs WHERE qid = ? AND id = ?').run(this.qid, id);
    this.s.stmt('DELETE FROM logs WHERE qid = ? AND job_id = ?').run(this.qid, id);
    this.s.stmt('DELETE FROM deps WHERE qid = ? AND id = ?').run(this.qid, id);
    this.s.stmt('DELETE FROM steps WHERE qid = ? AND job_id = ?').run(this.qid, id);
    this.s.stmt('DELETE FROM outputs WHERE qid = ? AND job_id = ?').run(this.qid, id);
  }

  /** Deletes a finished job trimmed by retention: a failed child no longer blocks its parent (a removed child). */
  private dropFinished(id: string, state: 'completed' | 'failed'): void {
    if (state === 'failed') {
      const row = this.job(id);
      if (row && row.parent_id !== null && row.parent_qid !== null)
        childRemoved(this.on(row.parent_qid), row.parent_id, this.publicKey(id));
    }
    this.deleteJob(id);
  }

  /**
   * Frees the job's deduplication id (simple mode) while it still points to the job; a job that
   * finished (not removed) then hands it to the add kept for it (keepLastIfActive), if any.
   */
  releaseDedup(row: JobRow, finished = true): void {
    if (row.dedup_id === null) return;
    const freed = this.s
      .stmt('DELETE FROM dedup WHERE qid = ? AND dedup_id = ? AND job_id = ?')
      .run(this.qid, row.dedup_id, row.id).changes;
    if (freed === 0 || row.dedup_keep !== 1) return;
    if (finished) addKeptJob(this, row.dedup_id);
    else forgetKept(this, row.dedup_id);
  }

  /** Frees a ttl deduplication id pointing to the job (on removal). */
  releaseTtlDedup(row: JobRow): void {
    if (row.dedup_ttl_id === null) return;
    this.s.stmt('DELETE FROM dedup WHERE qid = ? AND dedup_id = ? AND job_id = ?').run(this.qid, row.dedup_ttl_id, row.id);
  }

  /**
   * Ends a job in `state` (completed or failed) under retention `keep`, with its final fields;
   * trims the finished jobs of that state (at most 2 per finished job). Returns true if kept.
   */
  finish(id: string, state: 'completed' | 'failed', keep: Retention, fields: Record<string, string | number | null>): boolean {
    if (keep.kind === 'remove' || (keep.kind === 'limit' && keep.count === 0)) {
      this.deleteJob(id);
      return false;
    }
    this.set(id, { ...fields, state, score: this.now, finished_on: this.now, token: '' });
    if (keep.kind === 'limit') {
      let budget = 2;
      if (keep.count > 0) {
        const { n } = this.s.stmt('SELECT COUNT(*) AS n FROM jobs WHERE qid = ? AND state = ?').get(this.qid, state) as { n: number };
        const excess = Math.min(n - keep.count, budget);
        if (excess > 0) {
          const old = this.s
            .stmt('SELECT id FROM jobs WHERE qid = ? AND state = ? ORDER BY score, rowid LIMIT ?')
            .all(this.qid, state, excess) as { id: string }[];
          for (const o of old) this.dropFinished(o.id, state);
          budget -= old.length;
        }
      }
      if (keep.ageMs >= 0 && budget > 0) {
        const old = this.s
          .stmt('SELECT id FROM jobs WHERE qid = ? AND state = ? AND score <= ? ORDER BY score, rowid LIMIT ?')
          .all(this.qid, state, this.now - keep.ageMs, budget) as { id: string }[];
        for (const o of old) this.dropFinished(o.id, state);
      }
    }
    return this.exists(id);
  }

  /**
   * Ends an active job cancelled while it ran (includes/cancel.lua): failed with its cancel
   * reason, kept per `keep`, never retried; `started`: its processor ran (the attempt counts).
   */
  endCancelled(row: JobRow, keep: Retention, started: boolean): void {
    const reason = row.cancel_reason ?? 'cancelled';
    const made = row.attempts_made + (started ? 1 : 0);
    this.releaseDedup(row);
    const kept = this.finish(row.id, 'failed', keep, { failed_reason: reason, attempts_made: made });
    this.emit('failed', { jobId: row.id, failedReason: reason, prev: 'active', cancelled: '1', attemptsMade: made });
    this.emit('cancelled', { jobId: row.id, reason });
    this.count('cancelled', row.name);
    notifyParent(this, row, 'failed', reason, !kept);
  }

  /** Moves due delayed jobs to ready (at most PROMOTE_BATCH); returns how many. */
  promoteDue(): number {
    const due = this.s
      .stmt("SELECT * FROM jobs WHERE qid = ? AND state = 'delayed' AND score <= ? ORDER BY score, rowid LIMIT ?")
      .all(this.qid, this.now, PROMOTE_BATCH) as JobRow[];
    for (const job of due) {
      if (job.sched_id !== null && job.attempts_started === 0 && job.processed_on === null) {
        // A scheduler's occurrence (never started: a retry is an ordinary job): its scheduler's policies decide.
        fireOccurrence(this, job, job.score);
        this.schedulersDue = true;
        continue;
      }
      // Its delay is over (job.delay reads 0 from now on, as BullMQ).
      this.set(job.id, { delay: 0 });
      const state = this.pushReady(job.id, job.priority, false, job.grp);
      this.emit('waiting', { jobId: job.id, prev: 'delayed', state });
    }
    if (due.length > 0) this.signalWork();
    return due.length;
  }

  /** Whether nothing is ready or active (BullMQ's global `drained`). */
  emitIfDrained(): void {
    const busy = this.s.stmt("SELECT 1 FROM jobs WHERE qid = ? AND state IN ('active', 'waiting', 'prioritized') LIMIT 1").get(this.qid);
    if (busy === undefined) this.emit('drained');
  }

  /** The due time of the queue's next delayed job, or null when none is delayed. */
  private nextDelayedDue(): number | null {
    const first = this.s.stmt("SELECT MIN(score) AS due FROM jobs WHERE qid = ? AND state = 'delayed'").get(this.qid) as {
      due: number | null;
    };
    return first.due;
  }

  /** Takes up to `request.count` ready jobs for a worker (see includes/claim.lua). */
  claimJobs(request: ClaimRequest, paused: boolean): ClaimResult {
    const count = Math.min(request.count, CLAIM_MAX);
    this.promoteDue();
    const result: ClaimResult = { now: this.now, paused, nextDue: null, limitedFor: 0, schedulersDue: this.schedulersDue, jobs: [] };
    if (paused) {
      // Due delayed jobs still become waiting while the queue is paused: an idle worker wakes then.
      result.nextDue = this.nextDelayedDue();
      return result;
    }
    const allowed = allowClaim(this, request, count);
    if (allowed.limitedFor > 0 && count > 0) {
      result.limitedFor = allowed.limitedFor;
      return result;
    }
    const want = allowed.want;
    let rows: JobRow[] = [];
    const grouped = groupsOn(this);
    const windowed = new Map<string, number>();
    // With groups, weighted limits are judged in the walk (sqlite-group-weights.ts).
    const gweights = grouped ? newWeights() : undefined;
    if (want > 0 && gweights) {
      const w = allowed.weighted;
      const qw = w ? { use: w.use, max: w.max, dur: w.duration } : undefined;
      const took = takeGrouped(this, want, allowed.limits, windowed, qw, gweights);
      rows.push(...took.rows);
      if (w && qw && took.blocked !== undefined && rows.length === 0) {
        result.limitedFor = roomIn(this, w, qw.use, took.blocked);
        return result;
      }
    } else if (want > 0) {
      rows.push(
        ...(this.s.stmt("SELECT * FROM jobs WHERE qid = ? AND state = 'waiting' ORDER BY score LIMIT ?").all(this.qid, want) as JobRow[]),
      );
      if (rows.length < want) {
        rows.push(
          ...(this.s
            .stmt("SELECT * FROM jobs WHERE qid = ? AND state = 'prioritized' ORDER BY score, rowid LIMIT ?")
            .all(this.qid, want - rows.length) as JobRow[]),
        );
      }
    }
    // A weighted limit (sqlite-limits.ts): the head jobs, taken while their cost fits.
    const weighted = !grouped && allowed.weighted && takeWeighted(this, allowed.weighted, rows, want);
    if (weighted) {
      if (weighted.limitedFor > 0 && count > 0) {
        result.limitedFor = weighted.limitedFor;
        return result;
      }
      rows = weighted.rows;
    }
    if (rows.length < count || count === 0) {
      result.nextDue = this.nextDelayedDue();
      // A group parked by its rate limit reopens then: wake for it too.
      const reopen = grouped ? nextReopen(this) : null;
      if (reopen !== null && (result.nextDue === null || reopen < result.nextDue)) result.nextDue = reopen;
    }
    const deadline = this.now + request.lockMs;
    const ids: string[] = [];
    rows.forEach((row, i) => {
      const token = request.exact ? request.tokenPrefix : request.tokenPrefix + (i + 1);
      const started = row.attempts_started + 1;
      this.set(row.id, {
        state: 'active',
        score: deadline,
        token,
        attempts_started: started,
        processed_on: this.now,
        ...(request.by ? { processed_by: request.by } : {}),
      });
      ids.push(row.id);
      const job: ClaimedJob = {
        id: row.id,
        name: row.name,
        data: row.data,
        opts: row.opts,
        timestamp: row.ts,
        attemptsMade: row.attempts_made,
        attemptsStarted: started,
        priority: row.priority,
        delay: row.delay,
        progress: row.progress ?? '',
        stalledCounter: row.stalled_counter,
        failedReason: row.failed_reason ?? undefined,
        token,
      };
      if (weighted && weighted.heavy.has(row.id)) job.overweight = `${allowed.weighted?.max}:${allowed.weighted?.duration}`;
      const heavy = gweights?.heavy.get(row.id);
      if (heavy !== undefined) job.overweight = heavy;
      result.jobs.push(job);
    });
    if (ids.length > 0) this.emit('active', { ids: JSON.stringify(ids) });
    if (windowed.size > 0) {
      recordGroupStarts(
        this,
        rows.map((row, i) => ({ id: row.id, grp: row.grp, started: result.jobs[i].attemptsStarted })),
        windowed,
      );
    }
    if (weighted && allowed.weighted) {
      recordWeights(
        this,
        allowed.weighted.duration,
        result.jobs
          .filter((j) => weighted.weights.has(j.id))
          .map((j) => ({ member: `${j.id}:${j.attemptsStarted}`, weight: weighted.weights.get(j.id) ?? 1 })),
      );
    }
    if (gweights && rows.length > 0) recordGroupedWeights(this, result.jobs, gweights, allowed.weighted?.duration);
    if (allowed.window && rows.length > 0) {
      recordStarts(
        this,
        allowed.window,
        result.jobs.map((j) => `${j.id}:${j.attemptsStarted}`),
      );
    }
    return result;
  }

  /** Keeps the events table near its cap (trimmed in batches, as XADD MAXLEN ~). */
  trimEvents(): void {
    const { maxEvents } = this.settings();
    const row = this.s.stmt('SELECT COUNT(*) AS n FROM events WHERE qid = ?').get(this.qid) as { n: number };
    const excess = row.n - maxEvents;
    if (excess <= 0) return;
    this.dropOldestEvents(excess);
  }

  dropOldestEvents(n: number): number {
    const last = this.s.stmt('SELECT seq FROM events WHERE qid = ? ORDER BY seq LIMIT 1 OFFSET ?').get(this.qid, n - 1) as
      { seq: number } | undefined;
    if (!last) return 0;
    const removed = this.s.stmt('DELETE FROM events WHERE qid = ? AND seq <= ?').run(this.qid, last.seq).changes;
    this.s.stmt('UPDATE queues SET events_trimmed = MAX(events_trimmed, ?) WHERE qid = ?').run(last.seq, this.qid);
    return removed;
  }
}
