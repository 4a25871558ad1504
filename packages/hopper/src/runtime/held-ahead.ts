/**
 * HeldAhead: what a Worker does with the jobs it claims ahead of its free slots (the `prefetch`
 * option). A claimed job with no free slot is held in the {@link Backlog}; it starts when a slot
 * frees or concurrency is raised, goes back to the queue unstarted on pause and close, and ends as
 * cancelled without starting when it is cancelled while held. With `prefetch` 0 nothing is ever
 * held, and every method is a no-op.
 */
import type { Clock } from '../clock/clock.js';
import type { Job } from '../job/job.js';
import type { Backlog } from './backlog.js';
import type { Claim } from './claims.js';
import type { Executor } from './executor.js';
import type { Shutdown } from './shutdown.js';

/** What {@link HeldAhead} works with: the worker's parts and a view of its state. */
export interface HeldAheadOptions {
  /** The `prefetch` option: jobs held beyond the free slots (0: none). */
  prefetch: number;
  backlog: Backlog;
  executor: Executor;
  shutdown: Shutdown;
  clock: Clock;
  /** Jobs cancelled while held ahead: started at once, their processor never called (see worker-parts). */
  cancelledUnstarted: WeakSet<Job>;
  /** How long each attempt started from the backlog waited there, ms (for the latency histograms). */
  heldFor: WeakMap<Job, number>;
  /** The worker's concurrency now (it can change while running). */
  concurrency(): number;
  /** Paused or closing: a job claimed now is not held, it goes back unstarted. */
  isStopped(): boolean;
  /** Starts `claim`'s job now: its slot is free. */
  start(claim: Claim): void;
}

/** The claim-ahead handling of a Worker: holds, starts, hands back and cancels jobs held ahead. */
export class HeldAhead {
  constructor(private readonly o: HeldAheadOptions) {}

  /** How many jobs are held ahead now. */
  get size(): number {
    return this.o.backlog.size;
  }

  /**
   * Holds `claim` if it has no free slot (or jobs held before it wait), and says whether it did
   * (false: start it now). Paused or closing, such a job is not waited for: it goes back
   * unstarted (and true is returned: it must not start).
   */
  waitForSlot(claim: Claim): boolean {
    const { prefetch, executor, backlog } = this.o;
    if (!(prefetch > 0 && (executor.size >= this.o.concurrency() || backlog.size > 0))) return false;
    if (this.o.isStopped()) this.o.shutdown.releaseUnstarted(claim);
    else {
      claim.heldAt = this.o.clock.now();
      backlog.push(claim);
    }
    return true;
  }

  /** Starts jobs held ahead while slots are free (a slot freed, or concurrency was raised). */
  startWhileFree(): void {
    const { backlog, executor, shutdown } = this.o;
    while (backlog.size > 0 && executor.size < this.o.concurrency() && !shutdown.releasing) {
      const claim = backlog.shift() as Claim;
      if (claim.releasing) continue;
      if (claim.heldAt !== undefined) this.o.heldFor.set(claim.job, this.o.clock.now() - claim.heldAt);
      this.o.start(claim);
    }
  }

  /** Gives the jobs held ahead back to the queue, unstarted (pause, close): no attempt is counted. */
  handBack(why: 'paused' | 'closing'): void {
    if (this.o.backlog.size === 0) return;
    const list = this.o.backlog.takeAll();
    void this.o.shutdown.release(new Error(`The worker was ${why}: the job held ahead was given back unstarted.`), list);
  }

  /** Job `jobId` was cancelled: if it is held ahead, it ends as cancelled now, its processor never called. */
  cancel(jobId: string): void {
    if (this.o.prefetch === 0) return;
    const claim = this.o.backlog.takeJob(jobId);
    if (!claim) return;
    this.o.cancelledUnstarted.add(claim.job);
    claim.started = true;
    const started = this.o.executor.start(claim.job);
    started.cancelled = true;
  }
}
