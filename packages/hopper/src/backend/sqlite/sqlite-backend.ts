/**
 * The SQLite implementation of the backend seam (phase 1: see docs/backends.md for the
 * operations it supports). Each write is one IMMEDIATE transaction (sqlite-ops.ts), the
 * counterpart of one Lua script; reads are in sqlite-reads.ts. Operations not implemented yet
 * throw a BackendUnsupportedError naming them.
 *
 * Clock: one per database. A write uses the `now` it is given (tests pass a fake clock's time),
 * else the process's `Date.now()`: every process sharing a file database runs on the same
 * machine, so they read the same clock.
 */
import type {
  AckResult,
  AddFlowResult,
  AddOutcome,
  AddRequest,
  AddCharge,
  AddResult,
  BoundedStep,
  ClaimRequest,
  ClaimResult,
  CleanableState,
  Completion,
  ExactMetricsRecord,
  Failure,
  Fence,
  FlowNodeWrite,
  NewJob,
  OccurrencePlan,
  OutputEntry,
  OutputWait,
  QueueBackend,
  RemoveJobResult,
  RescueOptions,
  RescueResult,
  Retention,
  RunRecord,
  SchedulerWrite,
  ServerInfo,
} from '../backend.js';
import { WriteCode } from '../requests.js';
import { BackendUnsupportedError } from '../../job/errors.js';
import { failKeepOf, Tx, type JobRow } from './sqlite-ops.js';
import { addFlow, moveToWaitingChildren, removeChildDependency, sealParent } from './sqlite-flow-writes.js';
import { childRemoved, notifyParent, readTree, removeTree, restoreDependency } from './sqlite-flows.js';
import { SqliteQueueReads } from './sqlite-reads.js';

/** Emits between two checks of the events cap (the table is trimmed in batches, as XADD MAXLEN ~). */
const TRIM_EVERY = 64;

/** Options of a SQLite backend: the `sqlite:` URL, the prefix and the queue. */
export interface SqliteBackendOptions {
  url: string;
  prefix: string;
  queueName: string;
}

function unsupported(operation: string): never {
  throw new BackendUnsupportedError(operation);
}

/** The features of a job's options the SQLite backend does not run yet (refused at add, before any write). */
function refuseUnsupportedOpts(job: NewJob): void {
  if (job.dedup?.keepLast) unsupported('deduplication.keepLastIfActive');
  if (job.opts === '') return;
  if (job.opts.includes('"group":')) unsupported('groups (the job option group)');
  if (job.opts.includes('"deadLetter":')) unsupported('dead letters (the job option deadLetter)');
}

export class SqliteQueueBackend extends SqliteQueueReads implements QueueBackend {
  constructor(options: SqliteBackendOptions) {
    super(options);
  }

  sibling(name: string): QueueBackend {
    return new SqliteQueueBackend({ url: this.url, prefix: this.prefix, queueName: name });
  }

  async connect(): Promise<ServerInfo> {
    const s = await this.store();
    const { v } = s.stmt('SELECT sqlite_version() AS v').get() as { v: string };
    return { version: v, maxmemoryPolicy: undefined, kind: 'sqlite' };
  }

  /** Runs `fn` in one write transaction of this queue, then announces what it did (wake-ups, events). */
  protected async write<T>(now: number | undefined, fn: (tx: Tx) => T): Promise<T> {
    const s = await this.store();
    const qid = this.queueId(s);
    let tx!: Tx;
    const result = s.write(() => {
      tx = new Tx(s, qid, now ?? Date.now());
      const value = fn(tx);
      if (tx.emitted > 0) {
        this.sinceTrim += tx.emitted;
        if (this.sinceTrim >= TRIM_EVERY) {
          this.sinceTrim = 0;
          tx.trimEvents();
        }
      }
      return value;
    });
    for (const wake of tx.announce) s.hub.emit(wake);
    return result;
  }

  private sinceTrim = 0;

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
    // The cost option alone is kept on the job (job.opts.cost); charging it to a budget is Redis-only.
    if (charge?.budget && jobs.some((job) => job.cost !== undefined)) unsupported('tenant budgets (the Queue option budget)');
    for (const job of jobs) refuseUnsupportedOpts(job);
    return this.write(now, (tx) => {
      if (request) {
        const previous = tx.s
          .stmt('SELECT result FROM requests WHERE qid = ? AND producer = ? AND seq = ?')
          .get(tx.qid, request.producerId, request.seq) as { result: string } | undefined;
        if (previous) return JSON.parse(previous.result) as AddResult;
      }
      const epoch = this.epochOf(tx);
      const result: AddResult = { now: tx.now, epoch, ids: [], outcomes: [] };
      const added: string[] = [];
      const names: string[] = [];
      const states: string[] = [];
      const dues: number[] = [];
      let anyReady = false;
      for (const job of jobs) {
        const d = job.dedup;
        const existing = d ? this.dedupTarget(tx, d.id) : undefined;
        if (d && existing !== undefined) {
          const row = tx.job(existing);
          if (d.replace && row?.state === 'delayed') {
            // Debounce with replace: the delayed job takes the new data, options and delay.
            tx.set(existing, { data: job.data, opts: job.opts, delay: job.delay });
            tx.pushDelayed(existing, tx.now + job.delay);
          }
          if (d.extend && d.ttl > 0)
            tx.s.stmt('UPDATE dedup SET expires_at = ? WHERE qid = ? AND dedup_id = ?').run(tx.now + d.ttl, tx.qid, d.id);
          tx.emit('deduplicated', { jobId: existing, deduplicationId: d.id, deduplicatedJobId: job.customId });
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
        const id = job.customId !== '' ? job.customId : this.nextId(tx);
        if (d) {
          tx.s
            .stmt('INSERT OR REPLACE INTO dedup (qid, dedup_id, job_id, expires_at) VALUES (?, ?, ?, ?)')
            .run(tx.qid, d.id, id, d.ttl > 0 ? tx.now + d.ttl : null);
        }
        tx.s
          .stmt(
            `INSERT INTO jobs (qid, id, name, data, opts, state, ts, priority, delay, dedup_id, dedup_ttl_id)
             VALUES (?, ?, ?, ?, ?, 'waiting', ?, ?, ?, ?, ?)`,
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
          );
        let state: string;
        let due = 0;
        if (job.delay > 0) {
          due = tx.now + job.delay;
          tx.pushDelayed(id, due);
          state = 'delayed';
        } else {
          anyReady = true;
          state = tx.pushReady(id, job.priority, job.lifo && job.priority === 0);
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
      if (request) {
        tx.s
          .stmt('INSERT OR REPLACE INTO requests (qid, producer, seq, result) VALUES (?, ?, ?, ?)')
          .run(tx.qid, request.producerId, request.seq, JSON.stringify(result));
        tx.s
          .stmt('DELETE FROM requests WHERE qid = ? AND producer = ? AND seq <= ?')
          .run(tx.qid, request.producerId, request.seq - Math.max(request.keep, 1));
      }
      return result;
    });
  }

  private nextId(tx: Tx): string {
    const row = tx.s.stmt('UPDATE queues SET next_id = next_id + 1 WHERE qid = ? RETURNING next_id').get(tx.qid) as { next_id: number };
    return String(row.next_id);
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

  private epochOf(tx: Tx): string {
    return (tx.s.stmt('SELECT epoch FROM queues WHERE qid = ?').get(tx.qid) as { epoch: string | null }).epoch ?? '';
  }

  async claim(request: ClaimRequest, now?: number): Promise<ClaimResult> {
    if (request.limiter) unsupported('rate limits (the worker option limiter)');
    return this.write(now, (tx) => {
      const claimed = tx.claimJobs(request, tx.settings().paused);
      this.seenSignal = this.readSignal(tx.s, tx.qid);
      return claimed;
    });
  }

  /** Checks a fenced holder's job: the code of the fence check (Done when it holds the job). */
  private fenceCode(row: JobRow | undefined, fence: Fence): WriteCode {
    if (!row) return WriteCode.Missing;
    if (row.state !== 'active') return WriteCode.NotActive;
    if (row.token !== fence.token || row.attempts_started !== fence.attempt) return WriteCode.StaleAttempt;
    return WriteCode.Done;
  }

  async complete(batch: Completion[], next: ClaimRequest, now?: number): Promise<AckResult> {
    if (next.limiter) unsupported('rate limits (the worker option limiter)');
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
          return;
        }
        if (codes[i] !== WriteCode.Done || !row) return;
        tx.releaseDedup(row);
        tx.finish(c.id, 'completed', c.keep, { returnvalue: c.returnvalue, attempts_made: row.attempts_made + 1 });
        notifyParent(tx, row, 'completed', c.returnvalue);
        done.push(c.id);
        values.push(c.returnvalue);
      });
      if (done.length > 0) tx.emit('completed', { ids: JSON.stringify(done), returnvalues: `[${values.join(',')}]` });
      const claimed = tx.claimJobs(next, tx.settings().paused);
      this.seenSignal = this.readSignal(tx.s, tx.qid);
      if (claimed.jobs.length === 0 && done.length > 0) tx.emitIfDrained();
      return { now: tx.now, codes, next: claimed };
    });
  }

  async fail(batch: Failure[], next: ClaimRequest, now?: number): Promise<AckResult> {
    if (next.limiter) unsupported('rate limits (the worker option limiter)');
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
        if (!row || codes[i] < 0) return;
        const made = row.attempts_made + 1;
        const stacktrace = appendStack(row.stacktrace, f.stack, f.stackTraceLimit);
        if (stacktrace !== undefined) tx.set(f.id, { stacktrace });
        if (codes[i] === WriteCode.Done) {
          tx.set(f.id, { token: null, attempts_made: made, failed_reason: f.reason });
          if (f.retryDelay > 0) {
            // The backoff is the job's delay now (job.delay, as BullMQ).
            tx.set(f.id, { delay: f.retryDelay });
            tx.pushDelayed(f.id, tx.now + f.retryDelay);
            tx.emit('delayed', { jobId: f.id, delay: tx.now + f.retryDelay, prev: 'active' });
          } else {
            const state = tx.pushReady(f.id, row.priority, false);
            tx.signalWork();
            tx.emit('waiting', { jobId: f.id, prev: 'active', state });
          }
          return;
        }
        failedForGood = true;
        const reason = row.cancel_reason ?? f.reason;
        tx.releaseDedup(row);
        const kept = tx.finish(f.id, 'failed', f.keep, { failed_reason: reason, attempts_made: made });
        tx.emit('failed', { jobId: f.id, failedReason: reason, prev: 'active', attemptsMade: made });
        if (row.cancel_reason) tx.emit('cancelled', { jobId: f.id, reason });
        else if (f.retryDelay === -2) tx.emit('retries-exhausted', { jobId: f.id, attemptsMade: made });
        // A child failed for good: its parent's side follows the child's failure policy.
        notifyParent(tx, row, 'failed', reason, !kept);
      });
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
          // The fallback of the in-process cancel notification (other processes learn it here).
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
      if (!options.force && check > tx.now) return { now: tx.now, ran: false, rescued: [], failed: [], expired: 0 };
      const expired = tx.s
        .stmt("SELECT * FROM jobs WHERE qid = ? AND state = 'active' AND score <= ? ORDER BY score, rowid LIMIT ?")
        .all(tx.qid, tx.now, Math.min(options.limit, 500)) as JobRow[];
      if (!options.force) tx.s.stmt('UPDATE queues SET stalled_check = ? WHERE qid = ?').run(tx.now + options.intervalMs, tx.qid);
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
          const kept = tx.finish(row.id, 'failed', failKeepOf(row.opts, options.failKeep), { failed_reason: reason, attempts_made: made });
          tx.emit('failed', { jobId: row.id, failedReason: reason, prev: 'active', attemptsMade: made });
          notifyParent(tx, row, 'failed', reason, !kept);
          failed.push(row.id);
        } else {
          const state = tx.pushReady(row.id, row.priority, true);
          tx.emit('stalled', { jobId: row.id, prev: 'active' });
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

  async pause(): Promise<boolean> {
    return this.write(undefined, (tx) => {
      if (tx.settings().paused) return false;
      tx.s.stmt('UPDATE queues SET paused = 1 WHERE qid = ?').run(tx.qid);
      tx.emit('paused');
      return true;
    });
  }

  async resume(): Promise<boolean> {
    return this.write(undefined, (tx) => {
      if (!tx.settings().paused) return false;
      tx.s.stmt('UPDATE queues SET paused = 0 WHERE qid = ?').run(tx.qid);
      tx.emit('resumed');
      tx.signalWork();
      return true;
    });
  }

  async removeJob(id: string, now?: number, withChildren = false): Promise<RemoveJobResult> {
    return this.write(now, (tx) => {
      const row = tx.job(id);
      if (!row) return { code: 0, detail: '' };
      if (row.state === 'active') return { code: -4, detail: '' };
      const nodes = withChildren ? readTree(tx, id, row.state) : [{ tx, id, state: row.state, key: tx.publicKey(id) }];
      if (!Array.isArray(nodes)) return nodes;
      removeTree(nodes);
      return { code: 1, detail: String(nodes.length) };
    });
  }

  /**
   * Removes one not-running job for drain and clean: a child no longer blocks its parent, and a
   * parent of this queue it releases is taken too when `takes` says so (and so on up: a drained
   * queue does not run a parent without the children just removed; includes/tree.lua). Returns
   * the ids removed.
   */
  private removeRow(tx: Tx, row: JobRow, takes: (parent: JobRow) => boolean, depth = 0): string[] {
    tx.releaseDedup(row);
    tx.releaseTtlDedup(row);
    tx.deleteJob(row.id);
    const removed = [row.id];
    if (row.parent_id === null || row.parent_qid === null) return removed;
    childRemoved(tx.on(row.parent_qid), row.parent_id, tx.publicKey(row.id));
    if (row.parent_qid !== tx.qid || depth >= 64) return removed;
    const parent = tx.job(row.parent_id);
    if (parent && takes(parent)) removed.push(...this.removeRow(tx, parent, takes, depth + 1));
    return removed;
  }

  async drain(includeDelayed: boolean, limit: number, _cursor: string): Promise<BoundedStep & { removed: number }> {
    return this.write(undefined, (tx) => {
      const states = includeDelayed ? "('waiting', 'prioritized', 'delayed')" : "('waiting', 'prioritized')";
      const rows = tx.s.stmt(`SELECT * FROM jobs WHERE qid = ? AND state IN ${states} LIMIT ?`).all(tx.qid, limit) as JobRow[];
      const ready = new Set(includeDelayed ? ['waiting', 'prioritized', 'delayed'] : ['waiting', 'prioritized']);
      let removed = 0;
      for (const row of rows) {
        // A parent taken with an earlier row of this batch is gone already.
        if (tx.exists(row.id)) removed += this.removeRow(tx, row, (parent) => ready.has(parent.state)).length;
      }
      if (removed > 0) tx.emit('drained-queue', { count: removed });
      return { removed, visitedGroups: 0, cursor: rows.length < limit ? null : '' };
    });
  }

  async clean(
    state: CleanableState,
    graceMs: number,
    limit: number,
    _cursor: string,
    now?: number,
  ): Promise<BoundedStep & { ids: string[] }> {
    return this.write(now, (tx) => {
      const before = tx.now - graceMs;
      // Finished jobs by when they finished; others by when they were created.
      const finished = state === 'completed' || state === 'failed';
      const rows = tx.s
        .stmt(`SELECT * FROM jobs WHERE qid = ? AND state = ? AND ${finished ? 'score' : 'ts'} <= ? ORDER BY score, rowid LIMIT ?`)
        .all(tx.qid, state, before, limit) as JobRow[];
      const ids: string[] = [];
      for (const row of rows) {
        if (tx.exists(row.id)) ids.push(...this.removeRow(tx, row, (parent) => parent.state === state && !finished && parent.ts <= before));
      }
      if (ids.length > 0) tx.emit('cleaned', { count: ids.length, state });
      return { ids, visitedGroups: 0, cursor: rows.length < limit ? null : String(rows.length) };
    });
  }

  async obliterate(force: boolean, count: number, cursor: string): Promise<{ cursor: string; deleted: number } | 'active'> {
    return this.write(undefined, (tx) => {
      if (cursor === '0') {
        tx.s.stmt('UPDATE queues SET paused = 1 WHERE qid = ?').run(tx.qid);
        if (!force && tx.s.stmt("SELECT 1 FROM jobs WHERE qid = ? AND state = 'active' LIMIT 1").get(tx.qid)) return 'active';
      }
      const ids = tx.s.stmt('SELECT id FROM jobs WHERE qid = ? LIMIT ?').all(tx.qid, count) as { id: string }[];
      for (const { id } of ids) tx.deleteJob(id);
      if (ids.length === count) return { cursor: '1', deleted: ids.length };
      // Everything else of the queue; its row stays with only its epoch (an obliteration is not a dataset reset).
      for (const table of ['events', 'logs', 'dedup', 'requests', 'workers', 'deps', 'steps', 'cancel_children']) {
        tx.s.stmt(`DELETE FROM ${table} WHERE qid = ?`).run(tx.qid);
      }
      tx.s
        .stmt("UPDATE queues SET paused = 0, counter = 0, next_id = 0, signal = 0, stalled_check = 0, settings = '{}' WHERE qid = ?")
        .run(tx.qid);
      return { cursor: '0', deleted: ids.length };
    });
  }

  async retryJobs(
    state: 'failed' | 'completed',
    options: { count: number; timestamp: number; ids?: string[]; resetAttemptsMade?: boolean; resetAttemptsStarted?: boolean },
  ): Promise<number[]> {
    return this.write(undefined, (tx) => {
      const explicit = options.ids !== undefined;
      const ids =
        options.ids ??
        (
          tx.s
            .stmt('SELECT id FROM jobs WHERE qid = ? AND state = ? AND score <= ? ORDER BY score, rowid LIMIT ?')
            .all(tx.qid, state, options.timestamp, options.count) as { id: string }[]
        ).map((r) => r.id);
      const out: number[] = [];
      for (const id of ids) {
        const row = tx.job(id);
        if (!row || row.state !== state) {
          out.push(0);
          continue;
        }
        // A retry lifts a cancellation.
        tx.set(id, { finished_on: null, processed_on: null, returnvalue: null, failed_reason: null, token: null, cancel_reason: null });
        restoreDependency(tx, row, state);
        if (options.resetAttemptsMade) tx.set(id, { attempts_made: 0 });
        if (options.resetAttemptsStarted) tx.set(id, { attempts_started: 0, stalled_counter: 0 });
        const next = tx.pushReady(id, row.priority, false);
        tx.emit('waiting', { jobId: id, prev: state, state: next });
        out.push(1);
      }
      const moved = out.reduce((a, b) => a + b, 0);
      if (moved > 0) tx.signalWork();
      return explicit ? out : [moved];
    });
  }

  async promoteJobs(options: { count: number; ids?: string[] }): Promise<number[]> {
    return this.write(undefined, (tx) => {
      const explicit = options.ids !== undefined;
      const ids =
        options.ids ??
        (
          tx.s.stmt("SELECT id FROM jobs WHERE qid = ? AND state = 'delayed' ORDER BY score, rowid LIMIT ?").all(tx.qid, options.count) as {
            id: string;
          }[]
        ).map((r) => r.id);
      const out: number[] = [];
      for (const id of ids) {
        const row = tx.job(id);
        if (!row || row.state !== 'delayed') {
          out.push(0);
          continue;
        }
        tx.set(id, { delay: 0 });
        const state = tx.pushReady(id, row.priority, false);
        tx.emit('waiting', { jobId: id, prev: 'delayed', state });
        out.push(1);
      }
      const moved = out.reduce((a, b) => a + b, 0);
      if (moved > 0) tx.signalWork();
      return explicit ? out : [moved];
    });
  }

  async changeDelay(id: string, delay: number, now?: number): Promise<WriteCode> {
    return this.write(now, (tx) => {
      const row = tx.job(id);
      if (!row) return WriteCode.Missing;
      if (row.state !== 'delayed') return WriteCode.NotActive;
      tx.set(id, { delay });
      tx.pushDelayed(id, tx.now + delay);
      tx.emit('delayed', { jobId: id, delay: tx.now + delay });
      return WriteCode.Done;
    });
  }

  async changePriority(id: string, priority: number, lifo: boolean): Promise<WriteCode> {
    return this.write(undefined, (tx) => {
      const row = tx.job(id);
      if (!row) return WriteCode.Missing;
      if (row.state !== 'waiting' && row.state !== 'prioritized' && row.state !== 'delayed') return WriteCode.NotActive;
      tx.set(id, { priority });
      if (row.state !== 'delayed') {
        tx.pushReady(id, priority, lifo);
        tx.signalWork();
      }
      return WriteCode.Done;
    });
  }

  async moveToDelayed(id: string, fence: Fence, timestamp: number, now?: number): Promise<WriteCode> {
    return this.write(now, (tx) => {
      const row = tx.job(id);
      const code = this.fenceCode(row, fence);
      if (code !== WriteCode.Done) return code;
      if (row?.cancel_reason) return WriteCode.RefusedCancelled;
      const due = Math.max(timestamp, 0);
      tx.set(id, { token: null, moved_token: fence.token, delay: Math.max(due - tx.now, 0) });
      tx.pushDelayed(id, due);
      tx.emit('delayed', { jobId: id, delay: due, prev: 'active' });
      return WriteCode.Done;
    });
  }

  async moveToWait(id: string, fence: Fence): Promise<WriteCode> {
    return this.write(undefined, (tx) => {
      const row = tx.job(id);
      const code = this.fenceCode(row, fence);
      if (code !== WriteCode.Done || !row) return code;
      if (row.cancel_reason) return WriteCode.RefusedCancelled;
      tx.set(id, { token: null, moved_token: fence.token });
      const state = tx.pushReady(id, row.priority, true);
      tx.signalWork();
      tx.emit('waiting', { jobId: id, prev: 'active', state });
      return WriteCode.Done;
    });
  }

  /**
   * An unfenced call (no fence, or an empty token: a job fetched with getJob) needs only the job;
   * a fenced one needs its attempt to hold it, or to have moved it out of active itself and not
   * been claimed again since (BullMQ's step-job pattern; checkFence in includes/fence.lua).
   */
  private looseFence(row: JobRow | undefined, fence: Fence | undefined): WriteCode {
    if (!row) return WriteCode.Missing;
    if (!fence || fence.token === '') return WriteCode.Done;
    if (row.attempts_started !== fence.attempt) return WriteCode.StaleAttempt;
    if (row.token === fence.token || (!row.token && row.moved_token === fence.token)) return WriteCode.Done;
    return WriteCode.StaleAttempt;
  }

  async updateProgress(id: string, progress: string, fence: Fence | undefined): Promise<WriteCode> {
    return this.write(undefined, (tx) => {
      const code = this.looseFence(tx.job(id), fence);
      if (code !== WriteCode.Done) return code;
      tx.set(id, { progress });
      tx.emit('progress', { jobId: id, data: progress });
      return WriteCode.Done;
    });
  }

  async updateData(id: string, data: string, fence: Fence | undefined): Promise<WriteCode> {
    return this.write(undefined, (tx) => {
      const code = this.looseFence(tx.job(id), fence);
      if (code !== WriteCode.Done) return code;
      tx.set(id, { data });
      return WriteCode.Done;
    });
  }

  async addLog(id: string, line: string, fence: Fence | undefined, keep: number): Promise<number> {
    return this.write(undefined, (tx) => {
      const code = this.looseFence(tx.job(id), fence);
      if (code !== WriteCode.Done) return code;
      tx.s.stmt('INSERT INTO logs (qid, job_id, line) VALUES (?, ?, ?)').run(tx.qid, id, line);
      return this.trimLogs(tx, id, keep);
    });
  }

  private trimLogs(tx: Tx, id: string, keep: number): number {
    const { n } = tx.s.stmt('SELECT COUNT(*) AS n FROM logs WHERE qid = ? AND job_id = ?').get(tx.qid, id) as { n: number };
    if (keep <= 0 || n <= keep) return n;
    tx.s.stmt('DELETE FROM logs WHERE n IN (SELECT n FROM logs WHERE qid = ? AND job_id = ? ORDER BY n LIMIT ?)').run(tx.qid, id, n - keep);
    return keep;
  }

  async clearLogs(id: string, keep: number): Promise<number> {
    return this.write(undefined, (tx) => {
      if (keep <= 0) {
        tx.s.stmt('DELETE FROM logs WHERE qid = ? AND job_id = ?').run(tx.qid, id);
        return 0;
      }
      return this.trimLogs(tx, id, keep);
    });
  }

  async trimEvents(maxLength: number): Promise<number> {
    return this.write(undefined, (tx) => {
      const { n } = tx.s.stmt('SELECT COUNT(*) AS n FROM events WHERE qid = ?').get(tx.qid) as { n: number };
      return n > maxLength ? tx.dropOldestEvents(n - maxLength) : 0;
    });
  }

  async removeDeduplicationKey(id: string, jobId?: string): Promise<number> {
    return this.write(undefined, (tx) => {
      const sql = jobId
        ? 'DELETE FROM dedup WHERE qid = ? AND dedup_id = ? AND job_id = ?'
        : 'DELETE FROM dedup WHERE qid = ? AND dedup_id = ?';
      const args = jobId ? [tx.qid, id, jobId] : [tx.qid, id];
      return tx.s.stmt(sql).run(...args).changes > 0 ? 1 : 0;
    });
  }

  async removeOrphanedJobs(): Promise<number> {
    // A job row always carries its state: a SQLite database has no orphaned job.
    return Promise.resolve(0);
  }

  /**
   * Calls `listener` with each job of this queue cancelled while active, at once in this process;
   * a worker in another process learns it at its next lock renewal (extendLocks' `cancelled`).
   */
  async onCancel(listener: (jobId: string) => void): Promise<void> {
    const s = await this.store();
    this.listenCancel(s, this.queueId(s), listener);
  }

  /**
   * Cancels a job (cancelJob.lua): one not started fails at once with the reason; an active one
   * is marked and its worker told (code 2); a parent's pending children are stashed for the
   * caller to cancel (takeChildrenToCancel). 1 cancelled now, 2 active, 0 missing, -3 finished.
   */
  async cancelJob(id: string, reason: string, failKeep: Retention, now?: number): Promise<number> {
    const result = await this.write(now, (tx) => {
      const row = tx.job(id);
      if (!row) return 0;
      if (row.state === 'failed' && row.cancel_reason !== null) return 1;
      if (row.state === 'completed' || row.state === 'failed') return -3;
      if (row.state === 'active' && row.cancel_reason !== null) return 2;
      tx.s
        .stmt(
          'INSERT OR IGNORE INTO cancel_children (qid, id, child_key) SELECT qid, id, child_key FROM deps WHERE qid = ? AND id = ? AND pending = 1',
        )
        .run(tx.qid, id);
      if (row.state === 'active') {
        tx.set(id, { cancel_reason: reason });
        tx.emit('cancelling', { jobId: id, reason });
        return 2;
      }
      tx.releaseDedup(row);
      tx.set(id, { cancel_reason: reason });
      const kept = tx.finish(id, 'failed', failKeepOf(row.opts, failKeep), { failed_reason: reason });
      tx.emit('failed', { jobId: id, failedReason: reason, prev: row.state, cancelled: '1' });
      notifyParent(tx, row, 'failed', reason, !kept);
      return 1;
    });
    if (result === 2) await this.tellCancelled(id);
    return result;
  }

  async takeChildrenToCancel(id: string, count: number): Promise<string[]> {
    return this.write(undefined, (tx) => {
      const rows = tx.s.stmt('SELECT child_key FROM cancel_children WHERE qid = ? AND id = ? LIMIT ?').all(tx.qid, id, count) as {
        child_key: string;
      }[];
      for (const r of rows)
        tx.s.stmt('DELETE FROM cancel_children WHERE qid = ? AND id = ? AND child_key = ?').run(tx.qid, id, r.child_key);
      return rows.map((r) => r.child_key);
    });
  }

  readonly isCluster = false;

  sharesSlotWith(_other: string): boolean {
    return true;
  }

  async addFlow(nodes: FlowNodeWrite[], request: AddRequest | undefined, now?: number): Promise<AddFlowResult> {
    for (const node of nodes) refuseUnsupportedOpts(node);
    return this.write(now, (tx) => addFlow(tx, nodes, request));
  }

  async sealParent(id: string, now?: number): Promise<number> {
    return this.write(now, (tx) => sealParent(tx, id));
  }

  async moveToWaitingChildren(id: string, fence: Fence, now?: number): Promise<{ code: number; reason: string }> {
    return this.write(now, (tx) => {
      const code = this.looseFence(tx.job(id), fence);
      if (code !== WriteCode.Done) return { code, reason: '' };
      return moveToWaitingChildren(tx, id, fence);
    });
  }

  async removeChildDependency(id: string, now?: number): Promise<number> {
    return this.write(now, (tx) => removeChildDependency(tx, id));
  }

  /** A stored success wins: a step always returns the same value (recordStep.lua). */
  private storedSuccess(tx: Tx, id: string, key: string): string | undefined {
    const row = tx.s.stmt('SELECT record FROM steps WHERE qid = ? AND job_id = ? AND key = ?').get(tx.qid, id, key) as
      { record: string } | undefined;
    return row && row.record.startsWith('{"v":') ? row.record : undefined;
  }

  private putStep(tx: Tx, id: string, key: string, record: string): void {
    tx.s.stmt('INSERT OR REPLACE INTO steps (qid, job_id, key, record) VALUES (?, ?, ?, ?)').run(tx.qid, id, key, record);
  }

  async recordStep(
    id: string,
    key: string,
    record: string,
    _ok: boolean,
    fence: Fence | undefined,
  ): Promise<{ code: WriteCode; record: string }> {
    return this.write(undefined, (tx) => {
      const code = this.looseFence(tx.job(id), fence);
      if (code !== WriteCode.Done) return { code, record: '' };
      const stored = this.storedSuccess(tx, id, key);
      if (stored !== undefined) return { code: WriteCode.Done, record: stored };
      this.putStep(tx, id, key, record);
      return { code: WriteCode.Done, record };
    });
  }

  async continueJob(
    id: string,
    fence: Fence | undefined,
    stepKey: string,
    next: NewJob,
    now: number | undefined,
    run: { id: string; maxCost?: number },
  ): Promise<{ code: WriteCode; record: string }> {
    refuseUnsupportedOpts(next);
    if (next.delay > 0) unsupported('continueWith with a delay');
    if (next.lifo) unsupported('continueWith with lifo');
    if (run.maxCost !== undefined) unsupported('run budgets (continueWith maxCost)');
    return this.write(now, (tx) => {
      const code = this.looseFence(tx.job(id), fence);
      if (code !== WriteCode.Done) return { code, record: '' };
      const stored = this.storedSuccess(tx, id, stepKey);
      if (stored !== undefined) return { code: WriteCode.Done, record: stored };
      const nextId = next.customId;
      if (!tx.exists(nextId)) {
        tx.s
          .stmt("INSERT INTO jobs (qid, id, name, data, opts, state, ts, priority) VALUES (?, ?, ?, ?, ?, 'waiting', ?, ?)")
          .run(tx.qid, nextId, next.name, next.data, next.opts, tx.now, next.priority);
        const state = tx.pushReady(nextId, next.priority, false);
        tx.signalWork();
        if (state === 'waiting') tx.emit('added', { ids: JSON.stringify([nextId]), names: JSON.stringify([next.name]) });
        else {
          tx.emit('added', {
            ids: JSON.stringify([nextId]),
            names: JSON.stringify([next.name]),
            states: JSON.stringify([state]),
            delays: JSON.stringify([0]),
          });
        }
      }
      const record = `{"v":${JSON.stringify(nextId)},"ms":0,"at":${tx.now}}`;
      this.putStep(tx, id, stepKey, record);
      return { code: WriteCode.Done, record };
    });
  }

  // Not implemented yet: each refuses with a typed error naming it.
  rateLimit(_ms: number): Promise<number> {
    return Promise.reject(new BackendUnsupportedError('rate limits (rateLimit)'));
  }
  configureGroup(_group: string, _op: 'set' | 'pause' | 'resume', _fields?: Record<string, string>): Promise<number> {
    return Promise.reject(new BackendUnsupportedError('groups (configureGroup)'));
  }
  configureQueue(_fields: Record<string, string>): Promise<void> {
    return Promise.reject(new BackendUnsupportedError('queue-wide limits and group defaults (configureQueue)'));
  }
  replayDeadLetters(_ids: string[], _now?: number): Promise<number[]> {
    return Promise.reject(new BackendUnsupportedError('dead letters (replayDeadLetters)'));
  }
  upsertScheduler(_scheduler: SchedulerWrite, _now?: number): Promise<number> {
    return Promise.reject(new BackendUnsupportedError('job schedulers (upsertScheduler)'));
  }
  advanceScheduler(
    _id: string,
    _expectedLast: string,
    _occurrences: OccurrencePlan[],
    _after: number | null,
    _missed: number,
    _now?: number,
  ): Promise<{ created: number; again: boolean }> {
    return Promise.reject(new BackendUnsupportedError('job schedulers (advanceScheduler)'));
  }
  removeScheduler(_id: string): Promise<boolean> {
    return Promise.reject(new BackendUnsupportedError('job schedulers (removeScheduler)'));
  }
  pauseScheduler(_id: string, _paused: boolean, _now?: number): Promise<number> {
    return Promise.reject(new BackendUnsupportedError('job schedulers (pauseScheduler)'));
  }
  runScheduled(
    _id: string,
    _trigger: boolean,
    _instants: number[],
    _request: AddRequest | undefined,
    _now?: number,
  ): Promise<string[] | undefined> {
    return Promise.reject(new BackendUnsupportedError('job schedulers (runScheduled)'));
  }
  recordMetrics(): Promise<void> {
    return Promise.reject(new BackendUnsupportedError('metrics (recordMetrics)'));
  }

  // Not yet on SQLite (docs/backends.md): job output streams and runs.
  appendOutput(): Promise<WriteCode> {
    return Promise.reject(new BackendUnsupportedError('job output streams (job.stream)'));
  }

  readOutput(): Promise<OutputEntry[]> {
    return Promise.reject(new BackendUnsupportedError('job output streams (queue.readStream)'));
  }

  lastOutput(): Promise<OutputEntry | undefined> {
    return Promise.reject(new BackendUnsupportedError('job output streams (queue.readStream)'));
  }

  waitOutput(): Promise<OutputWait> {
    return Promise.reject(new BackendUnsupportedError('job output streams (queue.readStream)'));
  }

  wakeOutputWaits(): Promise<void> {
    return Promise.reject(new BackendUnsupportedError('job output streams (queue.readStream)'));
  }

  reportCost(): Promise<{ code: WriteCode; runCost: number | undefined }> {
    return Promise.reject(new BackendUnsupportedError('job costs (job.reportCost)'));
  }

  cancelRun(): Promise<string | undefined> {
    return Promise.reject(new BackendUnsupportedError('runs (queue.cancelRun)'));
  }

  getBudgetUse(): Promise<number> {
    return Promise.reject(new BackendUnsupportedError('tenant budgets (queue.getBudget and the Queue option budget)'));
  }

  getRun(): Promise<RunRecord | undefined> {
    return Promise.reject(new BackendUnsupportedError('runs (queue.getRun)'));
  }

  recordLatency(): Promise<void> {
    return Promise.reject(new BackendUnsupportedError('exact metrics (latency histograms, the worker option latencyMetrics)'));
  }

  getExactMetrics(): Promise<ExactMetricsRecord> {
    return Promise.reject(new BackendUnsupportedError('exact metrics (queue.getExactMetrics)'));
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
