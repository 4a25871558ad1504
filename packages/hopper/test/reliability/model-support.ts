/**
 * The in-memory model of one queue's state table, shared by the model-based tests (model*.test.ts):
 * ready order (wait list, prioritized, per-group queues), attempts, locks, stalls, delays,
 * cancellation marks, group pause and limits, and flow dependencies with their failure policies.
 * The driver that runs the same commands against the real backend is model-harness.ts.
 */
import { expect } from 'vitest';
import type { ChildFailurePolicy, WriteCode } from '../../src/backend/backend.js';

export type State = 'waiting' | 'prioritized' | 'delayed' | 'active' | 'completed' | 'failed' | 'waiting-children';

export interface ModelJob {
  id: string;
  state: State;
  priority: number;
  attempts: number;
  attemptsMade: number;
  attemptsStarted: number;
  stalls: number;
  due: number;
  deadline: number;
  token: string | undefined;
  /** Ready order within a priority (0: pushed to the front by a rescue). */
  prioSeq: number;
  /** The job's own delay (a parent moving on is delayed by it). */
  delay: number;
  group: string | undefined;
  /** Active and counted by its group's concurrency limit. */
  counted: boolean;
  /** The cancel reason, while the job carries the cancel mark. */
  cancelled: string | undefined;
  parent: { id: string; policy: ChildFailurePolicy } | undefined;
  /** Children still pending (flows). */
  pending: Set<string>;
  processed: Set<string>;
  /** Children whose failure is recorded on this parent. */
  failedChildren: Set<string>;
  /** Children whose failure this parent let go of (continueParentOnFailure, ignoreDependencyOnFailure). */
  ignoredChildren: Set<string>;
}

export interface ModelGroup {
  paused: boolean;
  concurrency: number | undefined;
  limiter: { max: number; duration: number } | undefined;
  /** Start times recorded in the group's rate-limit window. */
  starts: number[];
}

export const LOCK_MS = 1000;
export const MAX_STALLED = 1;

function byKey(a: (number | string)[], b: (number | string)[]): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i] < b[i]) return -1;
    if (a[i] > b[i]) return 1;
  }
  return 0;
}

/** Ids due at the same time: numeric ids numerically, before other ids; others as strings. */
function byId(a: string, b: string): number {
  const [na, nb] = [Number(a), Number(b)];
  const [ia, ib] = [/^\d+$/.test(a), /^\d+$/.test(b)];
  if (ia && ib) return na - nb;
  if (ia !== ib) return ia ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

export class Model {
  jobs = new Map<string, ModelJob>();
  wait: string[] = [];
  groups = new Map<string, ModelGroup>();
  nextId = 1;
  prioSeq = 0;
  now = 1_000_000;
  /** The queue's rule for a child failing with no policy of its own. */
  childFailure: 'fail' | 'wait' = 'wait';

  group(g: string): ModelGroup {
    let group = this.groups.get(g);
    if (!group) this.groups.set(g, (group = { paused: false, concurrency: undefined, limiter: undefined, starts: [] }));
    return group;
  }

  private pushReady(job: ModelJob, front: boolean): void {
    job.state = job.priority > 0 ? 'prioritized' : 'waiting';
    if (job.group !== undefined) {
      // Group queue score: priority, then a counter (0 for the front, ties by id).
      job.prioSeq = front ? 0 : ++this.prioSeq;
    } else if (job.priority > 0) {
      // Prioritized: first within its priority when put back in front (score without a counter).
      job.prioSeq = front ? 0 : ++this.prioSeq;
    } else if (front) this.wait.unshift(job.id);
    else this.wait.push(job.id);
  }

  private unlink(job: ModelJob): void {
    if (job.state === 'waiting' && job.group === undefined) this.wait = this.wait.filter((id) => id !== job.id);
  }

  add(
    opts: { priority: number; delay: number; attempts: number; group?: string },
    parent?: { id: string; policy: ChildFailurePolicy },
    hasChildren = false,
  ): string {
    const id = String(this.nextId++);
    const job: ModelJob = {
      id,
      state: 'waiting',
      priority: opts.priority,
      attempts: opts.attempts,
      attemptsMade: 0,
      attemptsStarted: 0,
      stalls: 0,
      due: 0,
      deadline: 0,
      token: undefined,
      prioSeq: 0,
      delay: opts.delay,
      group: opts.group,
      counted: false,
      cancelled: undefined,
      parent,
      pending: new Set(),
      processed: new Set(),
      failedChildren: new Set(),
      ignoredChildren: new Set(),
    };
    this.jobs.set(id, job);
    if (opts.group !== undefined) this.group(opts.group);
    if (parent) this.jobs.get(parent.id)!.pending.add(id);
    if (hasChildren) job.state = 'waiting-children';
    else if (opts.delay > 0) {
      job.state = 'delayed';
      job.due = this.now + opts.delay;
    } else this.pushReady(job, false);
    return id;
  }

  /** Every call that claims (claim, complete, fail: even with nothing to claim) first promotes due delayed jobs. */
  promoteDue(): void {
    const due = [...this.jobs.values()].filter((j) => j.state === 'delayed' && j.due <= this.now);
    // Same due time: auto ids in add order (numerically), as the claim script sorts ties.
    due.sort((a, b) => a.due - b.due || byId(a.id, b.id));
    for (const job of due) this.pushReady(job, false);
  }

  /** Ready jobs without a group, in claim order: the wait list, then prioritized. */
  ungroupedReady(): string[] {
    const prio = [...this.jobs.values()]
      .filter((j) => j.group === undefined && j.state === 'prioritized')
      .sort((a, b) => byKey([a.priority, a.prioSeq, a.id], [b.priority, b.prioSeq, b.id]));
    return [...this.wait, ...prio.map((j) => j.id)];
  }

  /** Ready jobs of group `g`, in claim order (priority 0 first, then by priority; FIFO within). */
  groupReady(g: string): ModelJob[] {
    return [...this.jobs.values()]
      .filter((j) => j.group === g && (j.state === 'waiting' || j.state === 'prioritized'))
      .sort((a, b) => byKey([a.priority, a.prioSeq, a.id], [b.priority, b.prioSeq, b.id]));
  }

  /** How many jobs of group `g` a claim may take now (its backlog within its limits; 0 if paused). */
  groupRoom(g: string): number {
    const group = this.group(g);
    if (group.paused) return 0;
    let room = this.groupReady(g).length;
    if (group.concurrency !== undefined) room = Math.min(room, Math.max(group.concurrency - this.countedActive(g), 0));
    if (group.limiter) {
      const { max, duration } = group.limiter;
      const used = group.starts.filter((t) => t > this.now - duration).length;
      room = Math.min(room, Math.max(max - used, 0));
    }
    return room;
  }

  countedActive(g: string): number {
    return [...this.jobs.values()].filter((j) => j.group === g && j.state === 'active' && j.counted).length;
  }

  private activate(ids: string[], tokenPrefix: string): void {
    ids.forEach((id, i) => {
      const job = this.jobs.get(id)!;
      job.state = 'active';
      job.attemptsStarted++;
      job.deadline = this.now + LOCK_MS;
      job.token = `${tokenPrefix}${i + 1}`;
      if (job.group !== undefined) {
        const group = this.group(job.group);
        job.counted = group.concurrency !== undefined;
        if (group.limiter) group.starts.push(this.now);
      } else job.counted = false;
      if (job.group === undefined) this.wait = this.wait.filter((w) => w !== id);
    });
  }

  /** A claim on a queue without groups: the model decides which jobs (exact order). */
  claim(count: number, tokenPrefix: string): string[] {
    this.promoteDue();
    const ids = this.ungroupedReady().slice(0, count);
    this.activate(ids, tokenPrefix);
    return ids;
  }

  /**
   * A claim on a queue with groups: the round-robin between groups is the engine's choice, so
   * the model checks `taken` (the engine's pick) instead of choosing: as many jobs as the claim
   * may take, each group's (and the ungrouped jobs') in their own order, within its limits.
   */
  claimGrouped(count: number, tokenPrefix: string, taken: string[]): void {
    this.promoteDue();
    const ungrouped = this.ungroupedReady();
    const groupIds = [...this.groups.keys()];
    const room = new Map(groupIds.map((g) => [g, this.groupRoom(g)]));
    const available = ungrouped.length + [...room.values()].reduce((a, b) => a + b, 0);
    expect(taken.length, `claim of ${count} with ${available} claimable`).toBe(Math.min(count, available));
    const fromUngrouped = taken.filter((id) => this.jobs.get(id)?.group === undefined);
    expect(fromUngrouped, 'ungrouped jobs in order').toEqual(ungrouped.slice(0, fromUngrouped.length));
    for (const g of groupIds) {
      const mine = taken.filter((id) => this.jobs.get(id)?.group === g);
      expect(mine.length, `jobs of group ${g} within its room`).toBeLessThanOrEqual(room.get(g)!);
      expect([...mine].sort(), `group ${g} takes its first ready jobs`).toEqual(
        this.groupReady(g)
          .slice(0, mine.length)
          .map((j) => j.id)
          .sort(),
      );
    }
    this.activate(taken, tokenPrefix);
  }

  private leaveActive(job: ModelJob): void {
    job.token = undefined;
    job.counted = false;
  }

  /** Ends `job` failed for good (not from waiting-children) and tells its parent. */
  private failForGood(job: ModelJob, reason: string, countAttempt: boolean): void {
    job.state = 'failed';
    if (countAttempt) job.attemptsMade++;
    this.childFailed(job, reason);
  }

  /** Returns the code complete returns: done, or cancelled (while running). */
  complete(id: string): WriteCode {
    const job = this.jobs.get(id)!;
    this.leaveActive(job);
    let code: WriteCode = 'done';
    if (job.cancelled !== undefined) {
      this.failForGood(job, job.cancelled, true);
      code = 'cancelled';
    } else {
      job.state = 'completed';
      job.attemptsMade++;
      this.childCompleted(job);
    }
    this.promoteDue();
    return code;
  }

  /** Whether the next failure of `id` exhausts its attempts. */
  exhausted(id: string): boolean {
    const job = this.jobs.get(id)!;
    return job.attemptsMade + 1 >= job.attempts;
  }

  /** Returns the code fail returns: done (retried), failed-for-good, or cancelled (failed as cancelled). */
  fail(id: string, retryDelay: number): WriteCode {
    const job = this.jobs.get(id)!;
    this.leaveActive(job);
    let code: WriteCode = 'done';
    if (job.cancelled !== undefined || job.attemptsMade + 1 >= job.attempts) {
      code = job.cancelled !== undefined ? 'cancelled' : 'failed-for-good';
      this.failForGood(job, job.cancelled ?? 'x', true);
    } else {
      job.attemptsMade++;
      if (retryDelay > 0) {
        job.state = 'delayed';
        job.due = this.now + retryDelay;
      } else {
        // An immediate retry goes behind the delayed jobs already due (promoted first, as BullMQ).
        this.promoteDue();
        this.pushReady(job, false);
      }
    }
    this.promoteDue();
    return code;
  }

  rescue(): void {
    const expired = [...this.jobs.values()]
      .filter((j) => j.state === 'active' && j.deadline <= this.now)
      .sort((a, b) => byKey([a.deadline, a.id], [b.deadline, b.id]));
    for (const job of expired) {
      job.stalls++;
      this.leaveActive(job);
      // A cancelled job never runs again: the rescue ends it as cancelled.
      if (job.cancelled !== undefined) this.failForGood(job, job.cancelled, true);
      else if (job.stalls > MAX_STALLED) this.failForGood(job, 'stalled', true);
      else this.pushReady(job, true);
    }
  }

  /**
   * Cancels a job: 1 cancelled now (or it ended cancelled already), 2 active (marked), 0 missing,
   * -3 finished otherwise. With `cascade`
   * (as Queue.cancelJob), the pending children are cancelled too, and theirs.
   */
  cancel(id: string, reason: string, cascade: boolean): number {
    const job = this.jobs.get(id);
    if (!job) return 0;
    // Idempotent (a re-sent cancel): a job that ended cancelled answers as the first call did.
    if (job.state === 'failed' && job.cancelled !== undefined) return 1;
    if (job.state === 'completed' || job.state === 'failed') return -3;
    const children = [...job.pending];
    let code: number;
    job.cancelled = reason;
    if (job.state === 'active') code = 2;
    else {
      this.unlink(job);
      this.failForGood(job, reason, false);
      code = 1;
    }
    if (cascade) for (const child of children) this.cancel(child, reason, true);
    return code;
  }

  /**
   * retryJobs of one id: a failed (or completed) job goes back to ready, its cancel mark cleared.
   * A child whose outcome its parent recorded is pending for that parent again.
   */
  retry(id: string, from: 'failed' | 'completed'): number {
    const job = this.jobs.get(id);
    if (!job || job.state !== from) return 0;
    job.cancelled = undefined;
    this.pushReady(job, false);
    const parent = job.parent && this.jobs.get(job.parent.id);
    const recorded =
      from === 'failed' ? parent?.failedChildren.delete(id) || parent?.ignoredChildren.delete(id) : parent?.processed.delete(id);
    if (parent && recorded) parent.pending.add(id);
    return 1;
  }

  /** Sets a group's concurrency (undefined removes it); the jobs already running are counted. */
  setConcurrency(g: string, concurrency: number | undefined): void {
    this.group(g).concurrency = concurrency;
    if (concurrency === undefined) return;
    for (const job of this.jobs.values()) if (job.group === g && job.state === 'active') job.counted = true;
  }

  // flows

  private childCompleted(child: ModelJob): void {
    if (!child.parent) return;
    const parent = this.jobs.get(child.parent.id)!;
    if (!parent.pending.delete(child.id)) return;
    parent.processed.add(child.id);
    parent.failedChildren.delete(child.id);
    this.releaseParent(parent, false);
  }

  private childFailed(child: ModelJob, reason: string): void {
    if (!child.parent) return;
    const parent = this.jobs.get(child.parent.id)!;
    if (!parent.pending.has(child.id)) return;
    let policy: ChildFailurePolicy | 'wait' = child.parent.policy;
    if (policy === 'none') policy = this.childFailure === 'fail' ? 'fail' : 'wait';
    if (policy === 'continue' || policy === 'ignore') parent.ignoredChildren.add(child.id);
    else if (policy !== 'remove') parent.failedChildren.add(child.id);
    if (policy === 'wait') return;
    if (policy === 'fail') {
      if (parent.state === 'waiting-children') this.failForGood(parent, `child failed: ${reason}`, false);
      return;
    }
    parent.pending.delete(child.id);
    this.releaseParent(parent, policy === 'continue');
  }

  private releaseParent(parent: ModelJob, continued: boolean): void {
    if (parent.state !== 'waiting-children') return;
    if (!continued && parent.pending.size > 0) return;
    if (parent.delay > 0) {
      parent.state = 'delayed';
      parent.due = this.now + parent.delay;
    } else this.pushReady(parent, false);
  }
}
