/**
 * The SQLite backend's hot path: add, claim, complete and fail (each with the next claim in the
 * same transaction, as the Lua scripts), lock renewal, worker registration and stall rescue.
 */
import type {
  AckResult,
  AddOutcome,
  AddCharge,
  AddRequest,
  AddResult,
  ClaimRequest,
  ClaimResult,
  Completion,
  Failure,
  Fence,
  NewJob,
  RescueOptions,
  RescueResult,
  Retention,
} from '../backend.js';
import { WriteCode, writeApplied } from '../requests.js';
import { failKeepOf, Tx, type JobRow } from './sqlite-ops.js';
import { notifyParent } from './sqlite-flows.js';
import { readLimits } from './sqlite-limits.js';
import { deadLetter } from './sqlite-deadletters.js';
import { checkGroupCaps, groupOfOpts, releaseSlots } from './sqlite-groups.js';
import { SqliteQueueWriter } from './sqlite-writer.js';
import { AddCosts, keepForActive, type Refusal } from './sqlite-runs.js';
import { admitNames } from './sqlite-metrics.js';

/** An add's result as recorded for a re-sent call: refused jobs as codes (errors are rebuilt after the write). */
type StoredAddResult = Omit<AddResult, 'refused'> & { refusals?: (Refusal | null)[] };

/** Adding jobs, claiming and acknowledging them, locks and stall rescue on SQLite. */
export abstract class SqliteQueueLifecycle extends SqliteQueueWriter {
  async initQueue(settings: {
    maxEvents: number;
    epoch: string;
    childFailure?: 'fail' | 'wait';
  }): Promise<{ epoch: string; created: boolean }> {
    return this.write(undefined, (tx) => {
      if (settings.childFailure !== undefined)
        tx.s.stmt('UPDATE queues SET child_failure = ? WHERE qid = ?').run(settings.childFailure, tx.qid);
      const row = tx.s.stmt('SELECT epoch FROM queues WHERE qid = ?').get(tx.qid) as { epoch: string | null };
      if (settings.maxEvents >= 0) tx.s.stmt('UPDATE queues SET max_events = ? WHERE qid = ?').run(settings.maxEvents, tx.qid);
      if (row.epoch) return { epoch: row.epoch, created: false };
      tx.s.stmt('UPDATE queues SET epoch = ? WHERE qid = ?').run(settings.epoch, tx.qid);
      return { epoch: settings.epoch, created: true };
    });
  }

  async addJobs(jobs: NewJob[], request: AddRequest | undefined, now?: number, charge?: AddCharge): Promise<AddResult> {
    const written = await this.write(now, (tx) => {
      const previous = tx.previousResult<StoredAddResult>(request);
      if (previous) return previous;
      const epoch = this.epochOf(tx);
      const groups = jobs.map((job) => groupOfOpts(job.opts));
      if (groups.some((g) => g !== undefined)) this.checkCaps(tx, jobs, groups);
      const result: StoredAddResult = { now: tx.now, epoch, ids: [], outcomes: [] };
      // Costs: the queue's weighted limit and the tenants' budgets (sqlite-runs.ts), only when a job has a cost.
      const costs = AddCosts.needed(jobs) ? new AddCosts(tx, jobs, charge) : undefined;
      const added: string[] = [];
      const names: string[] = [];
      const states: string[] = [];
      const dues: number[] = [];
      let anyReady = false;
      for (const [j, job] of jobs.entries()) {
        const group = groups[j]?.id ?? null;
        const d = job.dedup;
        const existing = d ? this.dedupTarget(tx, d.id) : undefined;
        if (d && existing !== undefined) {
          const row = tx.job(existing);
          if (d.replace && row?.state === 'delayed') {
            // Debounce with replace: the delayed job takes the new data, options and delay.
            tx.set(existing, { data: job.data, opts: job.opts, delay: job.delay });
            tx.pushDelayed(existing, tx.now + job.delay);
          }
          const keep = d.keepLast === true && row?.state === 'active';
          // keepLastIfActive onto an active job: the add is kept for when that job finishes.
          if (keep) keepForActive(tx, existing, d.id, job);
          if (d.extend && d.ttl > 0 && !keep)
            tx.s.stmt('UPDATE dedup SET expires_at = ? WHERE qid = ? AND dedup_id = ?').run(tx.now + d.ttl, tx.qid, d.id);
          tx.emit('deduplicated', { jobId: existing, deduplicationId: d.id, deduplicatedJobId: job.customId });
          tx.count('deduplicated', job.name);
          result.ids.push(existing);
          result.outcomes.push('deduplicated');
          continue;
        }
        if (job.customId !== '' && tx.exists(job.customId)) {
          tx.emit('duplicated', { jobId: job.customId });
          result.ids.push(job.customId);
          result.outcomes.push('duplicated');
          continue;
        }
        const refusal = costs?.judge(j);
        if (refusal && charge?.allOrNothing) throw AddCosts.error(this.queueName, jobs, charge, j, refusal);
        if (refusal) {
          (result.refusals ??= [])[j] = refusal;
          result.ids.push('');
          result.outcomes.push('refused');
          continue;
        }
        const id = job.customId !== '' ? job.customId : tx.nextJobId();
        if (d) {
          tx.s
            .stmt('INSERT OR REPLACE INTO dedup (qid, dedup_id, job_id, expires_at) VALUES (?, ?, ?, ?)')
            .run(tx.qid, d.id, id, d.ttl > 0 ? tx.now + d.ttl : null);
        }
        tx.s
          .stmt(
            `INSERT INTO jobs (qid, id, name, data, opts, state, ts, priority, delay, dedup_id, dedup_ttl_id, grp)
             VALUES (?, ?, ?, ?, ?, 'waiting', ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            tx.qid,
            id,
            job.name,
            job.data,
            job.opts,
            job.timestamp === 0 ? tx.now : job.timestamp,
            job.priority,
            job.delay > 0 ? job.delay : 0,
            d && d.ttl <= 0 ? d.id : null,
            d && d.ttl > 0 ? d.id : null,
            group,
          );
        costs?.charged(j, id);
        let state: string;
        let due = 0;
        if (job.delay > 0) {
          due = tx.now + job.delay;
          tx.pushDelayed(id, due);
          state = 'delayed';
        } else {
          anyReady = true;
          state = tx.pushReady(id, job.priority, job.lifo && job.priority === 0, group);
        }
        added.push(id);
        names.push(job.name);
        states.push(state);
        dues.push(due);
        result.ids.push(id);
        result.outcomes.push('added' satisfies AddOutcome);
      }
      if (added.length > 0) {
        if (anyReady) tx.signalWork();
        if (states.every((s) => s === 'waiting')) tx.emit('added', { ids: JSON.stringify(added), names: JSON.stringify(names) });
        else
          tx.emit('added', {
            ids: JSON.stringify(added),
            names: JSON.stringify(names),
            states: JSON.stringify(states),
            delays: JSON.stringify(dues),
          });
      }
      admitNames(tx, names);
      tx.recordResult(request, result);
      return result;
    });
    const { refusals, ...result } = written;
    if (!refusals) return result;
    const refused = jobs.map((_, j) => (refusals[j] ? AddCosts.error(this.queueName, jobs, charge, j, refusals[j]) : undefined));
    return { ...result, refused };
  }

  /** Refuses (before any write) an add that would take a group past its backlog cap: only new ready jobs count. */
  private checkCaps(tx: Tx, jobs: NewJob[], groups: ({ id: string; maxSize: number | undefined } | undefined)[]): void {
    const adds: { group: string; maxSize: number | undefined }[] = [];
    jobs.forEach((job, i) => {
      const g = groups[i];
      if (!g || job.delay > 0) return;
      if (job.dedup && this.peekDedup(tx, job.dedup.id)) return;
      if (job.customId !== '' && tx.exists(job.customId)) return;
      adds.push({ group: g.id, maxSize: g.maxSize });
    });
    checkGroupCaps(tx, adds, readLimits(tx.s, tx.qid));
  }

  /** Whether a deduplication id holds a job now (read only). */
  private peekDedup(tx: Tx, dedupId: string): boolean {
    const row = tx.s.stmt('SELECT expires_at FROM dedup WHERE qid = ? AND dedup_id = ?').get(tx.qid, dedupId) as
      { expires_at: number | null } | undefined;
    return row !== undefined && (row.expires_at === null || row.expires_at > tx.now);
  }

  private dedupTarget(tx: Tx, dedupId: string): string | undefined {
    const row = tx.s.stmt('SELECT job_id, expires_at FROM dedup WHERE qid = ? AND dedup_id = ?').get(tx.qid, dedupId) as
      { job_id: string; expires_at: number | null } | undefined;
    if (!row) return undefined;
    if (row.expires_at !== null && row.expires_at <= tx.now) {
      tx.s.stmt('DELETE FROM dedup WHERE qid = ? AND dedup_id = ?').run(tx.qid, dedupId);
      return undefined;
    }
    return row.job_id;
  }

  async claim(request: ClaimRequest, now?: number): Promise<ClaimResult> {
    return this.write(now, (tx) => {
      const claimed = tx.claimJobs(request, tx.settings().paused);
      this.seenSignal = this.readSignal(tx.s, tx.qid);
      return claimed;
    });
  }

  async complete(batch: Completion[], next: ClaimRequest, now?: number): Promise<AckResult> {
    return this.write(now, (tx) => {
      const rows = batch.map((c) => tx.job(c.id));
      const codes = batch.map((c, i): WriteCode => {
        const code = this.fenceCode(rows[i], c);
        return code === WriteCode.Done && rows[i]?.cancel_reason ? WriteCode.Cancelled : code;
      });
      const done: string[] = [];
      const values: string[] = [];
      batch.forEach((c, i) => {
        const row = rows[i];
        if (codes[i] === WriteCode.Cancelled && row) {
          // Cancelled while running: it ends as cancelled (failed), not completed.
          const reason = row.cancel_reason ?? 'cancelled';
          tx.releaseDedup(row);
          tx.finish(c.id, 'failed', { kind: 'keep' }, { failed_reason: reason, attempts_made: row.attempts_made + 1 });
          tx.emit('failed', { jobId: c.id, failedReason: reason, prev: 'active', cancelled: '1' });
          notifyParent(tx, row, 'failed', reason);
          tx.count('cancelled', row.name);
          return;
        }
        if (codes[i] !== WriteCode.Done || !row) return;
        tx.releaseDedup(row);
        tx.finish(c.id, 'completed', c.keep, { returnvalue: c.returnvalue, attempts_made: row.attempts_made + 1 });
        notifyParent(tx, row, 'completed', c.returnvalue);
        tx.count('completed', row.name);
        done.push(c.id);
        values.push(c.returnvalue);
      });
      if (done.length > 0) tx.emit('completed', { ids: JSON.stringify(done), returnvalues: `[${values.join(',')}]` });
      releaseSlots(tx, rows);
      // A slot of the global concurrency freed: an idle worker may claim now.
      if (codes.some(writeApplied) && readLimits(tx.s, tx.qid).gcc !== undefined) tx.signalWork();
      const claimed = tx.claimJobs(next, tx.settings().paused);
      this.seenSignal = this.readSignal(tx.s, tx.qid);
      if (claimed.jobs.length === 0 && done.length > 0) tx.emitIfDrained();
      return { now: tx.now, codes, next: claimed };
    });
  }

  async fail(batch: Failure[], next: ClaimRequest, now?: number): Promise<AckResult> {
    return this.write(now, (tx) => {
      const rows = batch.map((f) => tx.job(f.id));
      const codes: WriteCode[] = batch.map((f, i) => {
        const code = this.fenceCode(rows[i], f);
        if (code !== WriteCode.Done) return code;
        // Cancelled while running: no retry, and the cancel reason is the failed reason.
        if (rows[i]?.cancel_reason) return WriteCode.Cancelled;
        return f.retryDelay >= 0 ? WriteCode.Done : WriteCode.FailedForGood;
      });
      // An immediate retry goes behind the delayed jobs already due (as the Lua fail).
      if (batch.some((f, i) => codes[i] === WriteCode.Done && f.retryDelay === 0)) tx.promoteDue();
      let failedForGood = false;
      batch.forEach((f, i) => {
        const row = rows[i];
        if (!row || !writeApplied(codes[i])) return;
        const made = row.attempts_made + 1;
        const stacktrace = appendStack(row.stacktrace, f.stack, f.stackTraceLimit);
        if (stacktrace !== undefined) tx.set(f.id, { stacktrace });
        if (f.timedOut) tx.count('timed-out', row.name);
        if (codes[i] === WriteCode.Done) {
          tx.count('retried', row.name);
          tx.set(f.id, { token: null, attempts_made: made, failed_reason: f.reason });
          if (f.retryDelay > 0) {
            // The backoff is the job's delay now (job.delay, as BullMQ).
            tx.set(f.id, { delay: f.retryDelay });
            tx.pushDelayed(f.id, tx.now + f.retryDelay);
            tx.emit('delayed', { jobId: f.id, delay: tx.now + f.retryDelay, prev: 'active' });
          } else {
            const state = tx.pushReady(f.id, row.priority, false, row.grp);
            tx.signalWork();
            tx.emit('waiting', { jobId: f.id, prev: 'active', state });
          }
          return;
        }
        failedForGood = true;
        const reason = row.cancel_reason ?? f.reason;
        tx.releaseDedup(row);
        if (deadLetter(tx, row, made, reason)) tx.count('dead-lettered', row.name);
        tx.count(row.cancel_reason ? 'cancelled' : 'failed', row.name);
        const kept = tx.finish(f.id, 'failed', f.keep, { failed_reason: reason, attempts_made: made });
        tx.emit('failed', { jobId: f.id, failedReason: reason, prev: 'active', attemptsMade: made });
        if (row.cancel_reason) tx.emit('cancelled', { jobId: f.id, reason });
        else if (f.retryDelay === -2) tx.emit('retries-exhausted', { jobId: f.id, attemptsMade: made });
        // A child failed for good: its parent's side follows the child's failure policy.
        notifyParent(tx, row, 'failed', reason, !kept);
      });
      if (codes.some(writeApplied) && readLimits(tx.s, tx.qid).gcc !== undefined) tx.signalWork();
      releaseSlots(tx, rows);
      const claimed = tx.claimJobs(next, tx.settings().paused);
      this.seenSignal = this.readSignal(tx.s, tx.qid);
      if (claimed.jobs.length === 0 && failedForGood) tx.emitIfDrained();
      return { now: tx.now, codes, next: claimed };
    });
  }

  async extendLocks(
    locks: ({ id: string } & Fence)[],
    lockMs: number,
    worker: { id: string; info: string; ttlMs: number } | undefined,
    now?: number,
  ): Promise<{ now: number; epoch: string; lost: string[]; cancelled: string[] }> {
    return this.write(now, (tx) => {
      const deadline = tx.now + lockMs;
      const lost: string[] = [];
      const cancelled: string[] = [];
      for (const lock of locks) {
        const row = tx.s
          .stmt('SELECT token, attempts_started, state, cancel_reason FROM jobs WHERE qid = ? AND id = ?')
          .get(tx.qid, lock.id) as
          { token: string | null; attempts_started: number; state: string; cancel_reason: string | null } | undefined;
        if (row && row.token === lock.token && row.attempts_started === lock.attempt) {
          if (row.state === 'active') tx.set(lock.id, { score: deadline });
          // The fallback of the cancel notifications (in-process at once, other processes by the cancel signal's poll).
          if (row.cancel_reason !== null) cancelled.push(lock.id);
        } else {
          lost.push(lock.token);
        }
      }
      if (worker && worker.info !== '') {
        tx.s
          .stmt('INSERT OR REPLACE INTO workers (qid, worker_id, info, expires_at) VALUES (?, ?, ?, ?)')
          .run(tx.qid, worker.id, worker.info, tx.now + worker.ttlMs);
        // Forget workers that stopped beating (crashed without unregistering).
        tx.s.stmt('DELETE FROM workers WHERE qid = ? AND expires_at <= ?').run(tx.qid, tx.now);
      }
      return { now: tx.now, epoch: this.epochOf(tx), lost, cancelled };
    });
  }

  async unregisterWorker(workerId: string): Promise<void> {
    await this.write(undefined, (tx) => {
      tx.s.stmt('DELETE FROM workers WHERE qid = ? AND worker_id = ?').run(tx.qid, workerId);
    });
  }

  async rescueStalled(options: RescueOptions, now?: number): Promise<RescueResult> {
    return this.write(now, (tx) => {
      const check = (tx.s.stmt('SELECT stalled_check FROM queues WHERE qid = ?').get(tx.qid) as { stalled_check: number }).stalled_check;
      // The check's interval runs on the process clock, never a fake `now`: like the Redis key with a
      // PX expiry it stands for (stalledCheck), it runs out in real time.
      if (!options.force && check > Date.now()) return { now: tx.now, ran: false, rescued: [], failed: [], expired: 0 };
      const expired = tx.s
        .stmt("SELECT * FROM jobs WHERE qid = ? AND state = 'active' AND score <= ? ORDER BY score, rowid LIMIT ?")
        .all(tx.qid, tx.now, Math.min(options.limit, 500)) as JobRow[];
      if (!options.force) tx.s.stmt('UPDATE queues SET stalled_check = ? WHERE qid = ?').run(Date.now() + options.intervalMs, tx.qid);
      const rescued: string[] = [];
      const failed: string[] = [];
      for (const row of expired) {
        const stalls = row.stalled_counter + 1;
        tx.set(row.id, { stalled_counter: stalls, token: null });
        if (row.cancel_reason !== null) {
          // Cancelled while it ran: it ends as cancelled, not back in line.
          tx.endCancelled(row, failKeepOf(row.opts, options.failKeep), true);
          failed.push(row.id);
        } else if (stalls > options.maxStalledCount) {
          const reason = 'job stalled more than allowable limit';
          const made = row.attempts_made + 1;
          tx.releaseDedup(row);
          if (deadLetter(tx, row, made, reason)) tx.count('dead-lettered', row.name);
          tx.count('stalled', row.name);
          tx.count('failed', row.name);
          const kept = tx.finish(row.id, 'failed', failKeepOf(row.opts, options.failKeep), { failed_reason: reason, attempts_made: made });
          tx.emit('failed', { jobId: row.id, failedReason: reason, prev: 'active', attemptsMade: made });
          notifyParent(tx, row, 'failed', reason, !kept);
          failed.push(row.id);
        } else {
          const state = tx.pushReady(row.id, row.priority, true);
          tx.emit('stalled', { jobId: row.id, prev: 'active' });
          tx.count('stalled', row.name);
          tx.emit('waiting', { jobId: row.id, prev: 'active', state });
          rescued.push(row.id);
        }
      }
      if (rescued.length + failed.length > 0) tx.signalWork();
      if (options.eventsMaxAgeMs > 0) {
        tx.s.stmt('DELETE FROM events WHERE qid = ? AND at < ?').run(tx.qid, tx.now - options.eventsMaxAgeMs);
      }
      return { now: tx.now, ran: true, rescued, failed, expired: expired.length };
    });
  }

  async releaseOrphans(_workerId: string, _known: string[], _failKeep: Retention, _now?: number): Promise<number> {
    // An orphan is a claim whose reply was lost on the network; a SQLite call has no network, so there are none.
    return Promise.resolve(0);
  }

  async releaseJobs(jobs: ({ id: string; started: boolean } & Fence)[], failKeep: Retention, now?: number): Promise<WriteCode[]> {
    return this.write(now, (tx) => {
      const codes = jobs.map((j): WriteCode => {
        const row = tx.job(j.id);
        const code = this.fenceCode(row, j);
        return code === WriteCode.Done && row?.cancel_reason ? WriteCode.Cancelled : code;
      });
      jobs.forEach((j, i) => {
        if (codes[i] === WriteCode.Cancelled) {
          const row = tx.job(j.id) as JobRow;
          tx.set(j.id, { token: null });
          tx.endCancelled(row, failKeepOf(row.opts, failKeep), j.started);
          return;
        }
        if (codes[i] !== WriteCode.Done) return;
        const row = tx.job(j.id) as JobRow;
        // Given back without spending a start when its processor never ran here.
        tx.set(j.id, { token: null, attempts_started: j.started ? row.attempts_started : Math.max(row.attempts_started - 1, 0) });
        const state = tx.pushReady(j.id, row.priority, true);
        tx.emit('waiting', { jobId: j.id, prev: 'active', state });
      });
      if (codes.includes(WriteCode.Done)) tx.signalWork();
      return codes;
    });
  }
}

/** This attempt's stack trace added in front of the stored ones (JSON list of at most `limit`); undefined: unchanged. */
function appendStack(stored: string | null, stack: string, limit: number): string | undefined {
  if (stack === '' || limit <= 0) return undefined;
  let list: string[] = [];
  if (stored) {
    try {
      const decoded = JSON.parse(stored) as unknown;
      if (Array.isArray(decoded)) list = decoded as string[];
    } catch {
      // Not written by Hopper: started afresh.
    }
  }
  list.unshift(stack);
  return JSON.stringify(list.slice(0, limit));
}
