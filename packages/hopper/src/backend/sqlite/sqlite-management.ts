/**
 * The SQLite backend's queue and job management: pause and resume, removal, drain, clean,
 * obliterate, retries and promotions, delay and priority changes, moves out of active.
 */
import { METRICS_TABLES } from './sqlite-metrics.js';
import { NOT_PENDING_RUN, pendingRunOf } from './sqlite-schedulers.js';
import type { BoundedStep, CleanableState, Fence, MovedJobs, RemoveJobResult } from '../backend.js';
import { WriteCode } from '../requests.js';
import { Tx, type JobRow } from './sqlite-ops.js';
import { childRemoved, readTree, removeTree, restoreDependency } from './sqlite-flows.js';
import { SqliteQueueLifecycle } from './sqlite-lifecycle.js';

/** Queue-wide and per-job management writes on SQLite. */
export abstract class SqliteQueueManagement extends SqliteQueueLifecycle {
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
      if (!row) return { kind: 'missing' };
      if (row.state === 'active') return { kind: 'active' };
      if (pendingRunOf(tx, row)) return { kind: 'pendingRun' };
      const nodes = withChildren ? readTree(tx, id, row.state) : [{ tx, id, state: row.state, key: tx.publicKey(id) }];
      if (!Array.isArray(nodes)) return nodes;
      removeTree(nodes);
      return { kind: 'removed', count: nodes.length };
    });
  }

  /**
   * Removes one not-running job for drain and clean: a child no longer blocks its parent, and a
   * parent of this queue it releases is taken too when `takes` says so (and so on up: a drained
   * queue does not run a parent without the children just removed; includes/tree.lua). Returns
   * the ids removed.
   */
  private removeRow(tx: Tx, row: JobRow, takes: (parent: JobRow) => boolean, depth = 0): string[] {
    tx.releaseDedup(row, false);
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
      const rows = tx.s
        .stmt(`SELECT * FROM jobs WHERE qid = ? AND state IN ${states} AND ${NOT_PENDING_RUN} LIMIT ?`)
        .all(tx.qid, limit) as JobRow[];
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
        .stmt(
          `SELECT * FROM jobs WHERE qid = ? AND state = ? AND ${finished ? 'score' : 'ts'} <= ? AND ${NOT_PENDING_RUN} ORDER BY score, rowid LIMIT ?`,
        )
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
      for (const table of [
        'events',
        'logs',
        'dedup',
        'requests',
        'workers',
        'deps',
        'steps',
        'cancel_children',
        'rate_window',
        'schedulers',
        'scheduler_fired',
        'groups',
        'group_window',
        'weighted_window',
        'budget_window',
        'runs',
        'outputs',
        'dedup_next',
        'group_weighted_window',
        ...METRICS_TABLES,
      ]) {
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
  ): Promise<MovedJobs> {
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
      return { count: moved, moved: explicit ? out.map((n) => n === 1) : [] };
    });
  }

  async promoteJobs(options: { count: number; ids?: string[] }): Promise<MovedJobs> {
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
      return { count: moved, moved: explicit ? out.map((n) => n === 1) : [] };
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
      tx.count('rate-limited', row.name);
      tx.emit('waiting', { jobId: id, prev: 'active', state });
      return WriteCode.Done;
    });
  }
}
