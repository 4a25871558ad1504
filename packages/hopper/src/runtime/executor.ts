/**
 * Executor: runs the processor on each claimed job with its abort signal, and reports how each
 * attempt settled. Tracks the running jobs (their fences feed lock renewal).
 */
import type { Job } from '../job/job.js';

/** A processor, as the runtime calls it. */
export type RunProcessor = (job: Job, token: string | undefined, signal: AbortSignal) => unknown;

/** A job being processed. */
export interface RunningJob {
  readonly job: Job;
  readonly controller: AbortController;
  /** Set when the lock was lost: the attempt's result will not be recorded. */
  lost: boolean;
  /** Set when the job was cancelled while running: it ends as cancelled whatever it returns. */
  cancelled: boolean;
  /** Set when the attempt ran past its timeout: it fails with a TimeoutError whatever it returns. */
  timedOut: boolean;
  /** Set once the attempt is settled (by the processor, or given up after a timeout's grace). */
  settled: boolean;
  /** Timers to cancel when the attempt settles (timeouts). */
  timers: { cancel(): void }[];
}

/** How an attempt ended: the processor's value, or what it threw. */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class Executor {
  /** Running jobs by id. */
  readonly running = new Map<string, RunningJob>();
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly processor: RunProcessor,
    private readonly onSettled: (entry: RunningJob, outcome: Outcome) => void,
  ) {}

  get size(): number {
    return this.running.size;
  }

  /** Starts processing `job`. */
  start(job: Job): RunningJob {
    const entry: RunningJob = {
      job,
      controller: new AbortController(),
      lost: false,
      cancelled: false,
      timedOut: false,
      settled: false,
      timers: [],
    };
    this.running.set(job.id as string, entry);
    let result: unknown;
    try {
      result = this.processor(job, job.token, entry.controller.signal);
    } catch (error) {
      this.settle(entry, { ok: false, error });
      return entry;
    }
    if (result instanceof Promise) {
      result.then(
        (value: unknown) => this.settle(entry, { ok: true, value }),
        (error: unknown) => this.settle(entry, { ok: false, error }),
      );
    } else {
      // A synchronous processor: settle on a microtask so callers see a uniform order.
      queueMicrotask(() => this.settle(entry, { ok: true, value: result }));
    }
    return entry;
  }

  /**
   * Settles an attempt now, without waiting for its processor (a timeout's grace period ended):
   * its slot is freed, and whatever the processor does later is ignored.
   */
  giveUp(entry: RunningJob, outcome: Outcome): void {
    this.settle(entry, outcome);
  }

  private settle(entry: RunningJob, outcome: Outcome): void {
    if (entry.settled) return;
    entry.settled = true;
    for (const timer of entry.timers) timer.cancel();
    this.running.delete(entry.job.id as string);
    this.onSettled(entry, outcome);
    if (this.running.size === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Aborts one job's signal (lost lock, cancellation); its result will not be recorded if `lost`. */
  abort(id: string, reason: Error, lost: boolean): void {
    const entry = this.running.get(id);
    if (!entry) return;
    if (lost) entry.lost = true;
    entry.controller.abort(reason);
  }

  /** Resolves when no job is running. */
  whenIdle(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
