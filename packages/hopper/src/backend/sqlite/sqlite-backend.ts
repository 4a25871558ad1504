/**
 * The SQLite implementation of the backend seam (docs/backends.md: it implements every operation
 * but a Redis server's INFO, `admin.redisInfo()`, which throws a BackendUnsupportedError). Each
 * write is one IMMEDIATE transaction (sqlite-ops.ts), the counterpart of one Lua script; reads
 * are in sqlite-reads.ts.
 *
 * Clock: one per database. A write uses the `now` it is given (tests pass a fake clock's time),
 * else the process's `Date.now()`: every process sharing a file database runs on the same
 * machine, so they read the same clock.
 */
import type {
  AddFlowResult,
  AddRequest,
  AdvanceSchedulerResult,
  ContinueResult,
  ExactMetricsRecord,
  Fence,
  LatencyEntry,
  MetricsBucket,
  MetricsType,
  SchedulerLastRun,
  FlowNodeWrite,
  GroupSettingsChange,
  LogWriteResult,
  NewJob,
  OccurrencePlan,
  QueueBackend,
  QueueSettingsChange,
  Retention,
  RunRecord,
  SchedulerPauseResult,
  SchedulerUpsertResult,
  SchedulerWrite,
  ServerInfo,
  StepRecord,
  StepWrite,
  CancelJobResult,
  ChildDependencyResult,
  RefusedMoveCode,
  ReplayDeadLetterResult,
  SealParentResult,
  WaitChildrenResult,
} from '../backend.js';
import { WriteCode } from '../requests.js';
import { failKeepOf, Tx } from './sqlite-ops.js';
import { addFlow, moveToWaitingChildren, removeChildDependency, sealParent } from './sqlite-flow-writes.js';
import { notifyParent } from './sqlite-flows.js';
import { readLimits, writeLimits } from './sqlite-limits.js';
import { applyQueueChange, groupColumnChanges } from './sqlite-settings.js';
import { continued, decodeStep, encodeStep, encodeTurnStep, isStoredSuccess } from '../step-records.js';
import { replayDeadLetter } from './sqlite-deadletters.js';
import { budgetUse, cancelRun, forgetKept, checkRun, getRun, recordTurn, reportCost, type RunColumns } from './sqlite-runs.js';
import { SqliteQueueOutput } from './sqlite-output.js';
import { configureGroup, groupOfOpts, requeueParked } from './sqlite-groups.js';
import { advanceScheduler, pauseScheduler, pendingRunOf, removeScheduler, runScheduled, upsertScheduler } from './sqlite-schedulers.js';
import { type SqliteBackendOptions } from './sqlite-writer.js';
import { readExactMetrics, recordLatency, recordMetrics } from './sqlite-metrics.js';
import { signalCancel, watchCancels } from './sqlite-cancel.js';

export type { SqliteBackendOptions } from './sqlite-writer.js';

export class SqliteQueueBackend extends SqliteQueueOutput implements QueueBackend {
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

  async addLog(id: string, line: string, fence: Fence | undefined, keep: number): Promise<LogWriteResult> {
    return this.write(undefined, (tx) => {
      const code = this.looseFence(tx.job(id), fence);
      if (code !== WriteCode.Done) return { code, count: 0 };
      tx.s.stmt('INSERT INTO logs (qid, job_id, line) VALUES (?, ?, ?)').run(tx.qid, id, line);
      return { code, count: this.trimLogs(tx, id, keep) };
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

  async removeDeduplicationKey(id: string, jobId?: string): Promise<boolean> {
    return this.write(undefined, (tx) => {
      const sql = jobId
        ? 'DELETE FROM dedup WHERE qid = ? AND dedup_id = ? AND job_id = ?'
        : 'DELETE FROM dedup WHERE qid = ? AND dedup_id = ?';
      const args = jobId ? [tx.qid, id, jobId] : [tx.qid, id];
      const removed = tx.s.stmt(sql).run(...args).changes > 0;
      // The add kept for the job (keepLastIfActive) goes with its key.
      if (removed) forgetKept(tx, id);
      return removed;
    });
  }

  async removeOrphanedJobs(): Promise<number> {
    // A job row always carries its state: a SQLite database has no orphaned job.
    return Promise.resolve(0);
  }

  /**
   * Calls `listener` with each job of this queue cancelled while active: at once in this process,
   * on the wake file's notification (or at the latest the cancel signal's poll) for a cancel written
   * by another process (sqlite-cancel.ts); lock renewal reports the marks too (extendLocks' `cancelled`).
   */
  async onCancel(listener: (jobId: string) => void): Promise<void> {
    const s = await this.store();
    const qid = this.queueId(s);
    this.listenCancel(s, qid, listener);
    const stop = watchCancels(s, qid, listener);
    this.stopWatches.push(stop);
  }

  private readonly stopWatches: (() => void)[] = [];

  override disconnect(): void {
    for (const stop of this.stopWatches.splice(0)) stop();
    super.disconnect();
  }

  /**
   * Cancels a job (cancelJob.lua): one not started fails at once with the reason; an active one
   * is marked and its worker told (code 2); a parent's pending children are stashed for the
   * caller to cancel (takeChildrenToCancel).
   */
  async cancelJob(id: string, reason: string, failKeep: Retention, now?: number): Promise<CancelJobResult> {
    const result = await this.write(now, (tx): CancelJobResult => {
      const row = tx.job(id);
      if (!row) return { kind: 'missing' };
      if (row.state === 'failed' && row.cancel_reason !== null) return { kind: 'cancelled' };
      if (row.state === 'completed' || row.state === 'failed') return { kind: 'finished' };
      if (row.state === 'active' && row.cancel_reason !== null) return { kind: 'signalled' };
      if (pendingRunOf(tx, row)) return { kind: 'pendingRun' };
      tx.s
        .stmt(
          'INSERT OR IGNORE INTO cancel_children (qid, id, child_key) SELECT qid, id, child_key FROM deps WHERE qid = ? AND id = ? AND pending = 1',
        )
        .run(tx.qid, id);
      if (row.state === 'active') {
        tx.set(id, { cancel_reason: reason });
        signalCancel(tx);
        tx.emit('cancelling', { jobId: id, reason });
        return { kind: 'signalled' };
      }
      tx.releaseDedup(row);
      tx.set(id, { cancel_reason: reason });
      const kept = tx.finish(id, 'failed', failKeepOf(row.opts, failKeep), { failed_reason: reason });
      tx.emit('failed', { jobId: id, failedReason: reason, prev: row.state, cancelled: '1' });
      notifyParent(tx, row, 'failed', reason, !kept);
      tx.count('cancelled', row.name);
      return { kind: 'cancelled' };
    });
    if (result.kind === 'signalled') await this.tellCancelled(id);
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
    return this.write(now, (tx) => addFlow(tx, nodes, request));
  }

  async sealParent(id: string, now?: number): Promise<SealParentResult> {
    return this.write(now, (tx) => sealParent(tx, id));
  }

  async moveToWaitingChildren(id: string, fence: Fence, now?: number): Promise<WaitChildrenResult> {
    return this.write(now, (tx): WaitChildrenResult => {
      const code = this.looseFence(tx.job(id), fence);
      if (code !== WriteCode.Done) return { kind: 'refused', code: code as RefusedMoveCode }; // a fence refusal: Missing, StaleAttempt, NotActive
      return moveToWaitingChildren(tx, id, fence);
    });
  }

  async removeChildDependency(id: string, now?: number): Promise<ChildDependencyResult> {
    return this.write(now, (tx) => removeChildDependency(tx, id));
  }

  /** A stored success wins: a step always returns the same value (recordStep.lua). */
  private storedSuccess(tx: Tx, id: string, key: string): string | undefined {
    const row = tx.s.stmt('SELECT record FROM steps WHERE qid = ? AND job_id = ? AND key = ?').get(tx.qid, id, key) as
      { record: string } | undefined;
    return row && isStoredSuccess(row.record) ? row.record : undefined;
  }

  private putStep(tx: Tx, id: string, key: string, record: string): void {
    tx.s.stmt('INSERT OR REPLACE INTO steps (qid, job_id, key, record) VALUES (?, ?, ?, ?)').run(tx.qid, id, key, record);
  }

  async recordStep(
    id: string,
    key: string,
    step: StepWrite,
    fence: Fence | undefined,
  ): Promise<{ code: WriteCode; stored: StepRecord | undefined }> {
    return this.write(undefined, (tx) => {
      const code = this.looseFence(tx.job(id), fence);
      if (code !== WriteCode.Done) return { code, stored: undefined };
      const stored = this.storedSuccess(tx, id, key);
      if (stored !== undefined) return { code: WriteCode.Done, stored: decodeStep(stored) };
      const record = encodeStep(step);
      this.putStep(tx, id, key, record);
      return { code: WriteCode.Done, stored: decodeStep(record) };
    });
  }

  async continueJob(
    id: string,
    fence: Fence | undefined,
    stepKey: string,
    next: NewJob,
    now: number | undefined,
    run: { id: string; maxCost?: number },
  ): Promise<ContinueResult> {
    return this.write(now, (tx) => {
      const code = this.looseFence(tx.job(id), fence);
      if (code !== WriteCode.Done) return { code, nextId: undefined, detail: '' };
      const stored = this.storedSuccess(tx, id, stepKey);
      if (stored !== undefined) return continued(decodeStep(stored));
      const checked = checkRun(tx, id, run);
      if ('code' in checked) return { code: checked.code, nextId: undefined, detail: checked.record };
      const nextId = next.customId;
      const holder = tx.job(nextId) as unknown as RunColumns | undefined;
      // A job of another run (or none) holds the next turn's id: refused, nothing written.
      if (holder && holder.run_id !== run.id) return { code: WriteCode.IdTaken, nextId: undefined, detail: '' };
      if (!holder) {
        // A grouped turn (the group is inherited with the job's options) joins its group, as an add.
        const group = groupOfOpts(next.opts)?.id ?? null;
        tx.s
          .stmt(
            "INSERT INTO jobs (qid, id, name, data, opts, state, ts, priority, delay, run_id, grp) VALUES (?, ?, ?, ?, ?, 'waiting', ?, ?, ?, ?, ?)",
          )
          .run(tx.qid, nextId, next.name, next.data, next.opts, tx.now, next.priority, Math.max(next.delay, 0), run.id, group);
        let state: string = 'delayed';
        let due = 0;
        if (next.delay > 0) {
          due = tx.now + next.delay;
          tx.pushDelayed(nextId, due);
        } else {
          state = tx.pushReady(nextId, next.priority, next.lifo && next.priority === 0, group);
          tx.signalWork();
        }
        if (state === 'waiting') tx.emit('added', { ids: JSON.stringify([nextId]), names: JSON.stringify([next.name]) });
        else {
          tx.emit('added', {
            ids: JSON.stringify([nextId]),
            names: JSON.stringify([next.name]),
            states: JSON.stringify([state]),
            delays: JSON.stringify([due]),
          });
        }
      }
      this.putStep(tx, id, stepKey, encodeTurnStep(nextId, tx.now));
      recordTurn(tx, run.id, nextId, checked.cost);
      return { code: WriteCode.Done, nextId, detail: '' };
    });
  }

  /** Records what a job cost and corrects its run's cost and budget charge (reportCost.lua). */
  async reportCost(
    id: string,
    runId: string,
    cost: number,
    fence: Fence | undefined,
  ): Promise<{ code: WriteCode; runCost: number | undefined }> {
    return this.write(undefined, (tx) => {
      const code = this.looseFence(tx.job(id), fence);
      if (code !== WriteCode.Done) return { code, runCost: undefined };
      return { code: WriteCode.Done, runCost: reportCost(tx, id, runId, cost) };
    });
  }

  /** Marks a run cancelled (cancelRun.lua); returns its latest turn's id, if it continued. */
  async cancelRun(runId: string, reason: string): Promise<string | undefined> {
    return this.write(undefined, (tx) => cancelRun(tx, runId, reason));
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    const s = await this.store();
    return getRun(s, this.queueId(s), runId, Date.now());
  }

  async getBudgetUse(tenant: string, windowMs: number, now?: number): Promise<number> {
    const s = await this.store();
    return budgetUse(s, this.queueId(s), tenant, windowMs, now ?? Date.now());
  }

  // Not implemented yet: each refuses with a typed error naming it.
  /** The manual rate limit (worker.rateLimit, queue.rateLimit); with 0, lifts it and the window's record of starts. */
  async rateLimit(ms: number): Promise<number> {
    return this.write(undefined, (tx) => {
      const limits = readLimits(tx.s, tx.qid);
      if (ms > 0) {
        writeLimits(tx, { ...limits, limitedUntil: Date.now() + ms });
        return 1;
      }
      const manual = limits.limitedUntil !== undefined && limits.limitedUntil > Date.now() ? 1 : 0;
      delete limits.limitedUntil;
      writeLimits(tx, limits);
      const window = tx.s.stmt('DELETE FROM rate_window WHERE qid = ?').run(tx.qid).changes > 0 ? 1 : 0;
      const weights = tx.s.stmt('DELETE FROM weighted_window WHERE qid = ?').run(tx.qid).changes > 0 ? 1 : 0;
      tx.signalWork();
      return manual + window + weights;
    });
  }

  /** Changes one group (sqlite-groups.ts configureGroup, its settings as columns: sqlite-settings.ts). */
  async configureGroup(group: string, op: 'set' | 'pause' | 'resume', settings: GroupSettingsChange = {}): Promise<boolean> {
    const columns = groupColumnChanges(settings);
    return this.write(undefined, (tx) => configureGroup(tx, group, op, columns));
  }

  /** Sets or removes the queue-wide limits and group defaults (sqlite-settings.ts); wakes idle workers. */
  async configureQueue(change: QueueSettingsChange): Promise<void> {
    await this.write(undefined, (tx) => {
      const limits = readLimits(tx.s, tx.qid);
      const changed = applyQueueChange(limits, change);
      writeLimits(tx, limits);
      requeueParked(tx, changed);
      tx.signalWork();
    });
  }

  /** Replays dead letters of this queue into their origin queues (codes as replayDeadLetter's). */
  async replayDeadLetters(ids: string[], now?: number): Promise<ReplayDeadLetterResult[]> {
    return this.write(now, (tx) => ids.map((id) => replayDeadLetter(tx, id)));
  }
  // Job schedulers: sqlite-schedulers.ts (each one transaction, as its Lua script).
  async upsertScheduler(scheduler: SchedulerWrite, now?: number): Promise<SchedulerUpsertResult> {
    return this.write(now, (tx) => upsertScheduler(tx, scheduler));
  }
  async advanceScheduler(
    id: string,
    expectedLast: string,
    occurrences: OccurrencePlan[],
    after: number | null,
    missed: number,
    now?: number,
  ): Promise<AdvanceSchedulerResult> {
    return this.write(now, (tx) => advanceScheduler(tx, id, expectedLast, occurrences, after, missed));
  }
  async removeScheduler(id: string): Promise<boolean> {
    return this.write(undefined, (tx) => removeScheduler(tx, id));
  }
  async pauseScheduler(id: string, paused: boolean, now?: number): Promise<SchedulerPauseResult> {
    return this.write(now, (tx) => pauseScheduler(tx, id, paused));
  }
  async runScheduled(
    id: string,
    trigger: boolean,
    instants: number[],
    request: AddRequest | undefined,
    now?: number,
  ): Promise<string[] | undefined> {
    return this.write(now, (tx) => {
      const previous = tx.previousResult<string[]>(request);
      if (previous) return previous;
      const ids = runScheduled(tx, id, trigger, instants);
      if (ids) tx.recordResult(request, ids);
      return ids;
    });
  }
  // Metrics: sqlite-metrics.ts (each write one transaction, as its Lua script).
  /** Adds a worker's per-minute counts of finished jobs (recordMetrics.lua). */
  async recordMetrics(type: MetricsType, buckets: MetricsBucket[], maxDataPoints: number): Promise<void> {
    await this.write(undefined, (tx) => recordMetrics(tx, type, buckets, maxDataPoints));
  }
  /** Adds a worker's latency histogram counts and its schedulers' last runs (recordLatency.lua). */
  async recordLatency(entries: LatencyEntry[], lastRuns: SchedulerLastRun[]): Promise<void> {
    await this.write(undefined, (tx) => recordLatency(tx, entries, lastRuns));
  }
  /** Reads the exact outcome counters, histograms and schedulers' last runs. */
  async getExactMetrics(): Promise<ExactMetricsRecord> {
    const s = await this.store();
    return readExactMetrics(s, this.queueId(s));
  }
}
