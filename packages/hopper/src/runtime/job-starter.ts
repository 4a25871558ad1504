/**
 * JobStarter: the path of a job a Worker's claim brought, from the claim's reply to its start: a
 * scheduler's occurrence first plans its next run, a job with no free slot is held ahead
 * ({@link HeldAhead}), a job arriving while the worker closes without waiting goes straight back,
 * and a new attempt of a job still running here aborts the old one (it lost its lock). It also
 * cancels a job this worker holds (`queue.cancelJob`): a running one's signal aborts, a held one
 * ends as cancelled without starting.
 */
import type { QueueBackend } from '../backend/backend.js';
import type { Clock } from '../clock/clock.js';
import { CancelledError, LockLostError } from '../job/errors.js';
import type { Job } from '../job/job.js';
import { advanceTaken, takenOccurrence } from '../maintenance/scheduler-tick.js';
import type { Claim, Claims } from './claims.js';
import { abortEntry, type Executor } from './executor.js';
import type { HeldAhead } from './held-ahead.js';
import type { Shutdown } from './shutdown.js';

/** What {@link JobStarter} works with: the worker's parts and its callbacks. */
export interface JobStarterOptions {
  backend: QueueBackend;
  clock: Clock;
  claims: Claims;
  executor: Executor;
  shutdown: Shutdown;
  heldAhead: HeldAhead;
  /** The worker is closing: an error then is not reported. */
  isClosing(): boolean;
  emitError(err: unknown): void;
  /** A job starts: the worker's `active` event (if anyone listens). */
  emitActive(job: Job): void;
}

/** Starts the jobs a Worker's claims bring, and cancels those it holds. */
export class JobStarter {
  constructor(private readonly o: JobStarterOptions) {}

  /** A claim's reply brought `job`: it is held from now until recorded or released. */
  claimed(job: Job): void {
    const claim = this.o.claims.add(job);
    const schedulerId = takenOccurrence(job);
    if (schedulerId === undefined) {
      this.begin(job, claim);
      return;
    }
    // A scheduler's occurrence, first attempt: its scheduler plans the next one before it runs
    // (as BullMQ does when a worker takes a scheduler's job).
    advanceTaken(this.o.backend, this.o.clock, schedulerId, job.id as string)
      .catch((err: unknown) => {
        if (!this.o.isClosing()) this.o.emitError(err);
      })
      .finally(() => {
        if (!claim.releasing) this.begin(job, claim);
      });
  }

  private begin(job: Job, claim: Claim): void {
    if (this.o.shutdown.releasing) {
      // Closing without waiting: a job that arrives now goes straight back, unstarted.
      this.o.shutdown.releaseUnstarted(claim);
      return;
    }
    // Claimed ahead (prefetch): it waits for a free slot, or goes back unstarted when paused or closing.
    if (this.o.heldAhead.waitForSlot(claim)) return;
    this.start(claim);
  }

  /** Starts `claim`'s job now: its slot is free. */
  start(claim: Claim): void {
    const { job } = claim;
    const executor = this.o.executor;
    // A new attempt of a job this worker still runs: the old attempt lost its lock (the job was
    // rescued), so it is aborted and its result will not be recorded.
    const old = executor.current(job.id as string);
    if (old) {
      executor.abort(
        old.token,
        new LockLostError(`Lost the lock of job ${job.id}: it was rescued and started again. This attempt's result will not be recorded.`),
        true,
        job.id,
      );
    }
    claim.started = true;
    this.o.emitActive(job);
    executor.start(job);
  }

  /** A job this worker holds was cancelled (pub/sub message, or reported by lock renewal): abort its signal. */
  cancel(jobId: string): void {
    // The latest attempt: an older one still running here lost its lock, its result is dropped anyway.
    const entry = this.o.executor.current(jobId);
    if (!entry) {
      // Not running here: held ahead, it ends as cancelled now, its processor never called.
      this.o.heldAhead.cancel(jobId);
      return;
    }
    if (entry.cancelled) return;
    entry.cancelled = true;
    abortEntry(entry, new CancelledError(`Job ${jobId} was cancelled.`));
  }
}
