/**
 * Executor: runs the processor on each claimed job with its abort signal and its timeout, and
 * reports how each attempt settled. Tracks the running attempts (their fences feed lock renewal):
 * two attempts of one job may run here at once (the first lost its lock, was rescued, and this
 * worker claimed the job again), and each has its own entry, abort signal, lock and token.
 */
import type { Clock } from '../clock/clock.js';
import { safeTimeout } from '../clock/timers.js';
import { TimeoutError } from '../job/errors.js';
import type { Job } from '../job/job.js';

/**
 * Longest wait, after a processor settled, for the output writes it did not await to be stored,
 * ms: past it the outcome is recorded, and a write still unsent is refused (its attempt is over).
 */
export const OUTPUT_SETTLE_MS = 10_000;

/** A processor, as the runtime calls it. */
export type RunProcessor = (job: Job, token: string | undefined, signal: AbortSignal) => unknown;

/**
 * The processor as the executor calls it: `signal` is undefined when the executor was told the
 * processor cannot read it (ExecutorOptions.readsSignal).
 */
export type ExecutorProcessor = (job: Job, token: string | undefined, signal: AbortSignal | undefined) => unknown;

/** A job being processed. */
export interface RunningJob {
  readonly job: Job;
  /** The attempt's lock token (unique per attempt). */
  readonly token: string;
  /** The attempt's number (attemptsStarted when it was claimed): with the token, its fence. */
  readonly attempt: number;
  /**
   * The attempt's AbortController, created when its signal is first needed (see
   * signalOf): a processor that cannot read its signal costs none.
   */
  controller: AbortController | undefined;
  /** Set by the first abort; with no controller yet, `abortReason` keeps its reason for one created later. */
  aborted: boolean;
  abortReason: unknown;
  /** Set when the lock was lost: the attempt's result will not be recorded. */
  lost: boolean;
  /** Set when the job was cancelled while running: it ends as cancelled whatever it returns. */
  cancelled: boolean;
  /** Set when the attempt ran past its timeout: it fails with a TimeoutError whatever it returns. */
  timedOut: boolean;
  /** Set once the attempt is settled (by the processor, or given up after a timeout's grace). */
  settled: boolean;
  /** Timers to cancel when the attempt settles (timeouts), if any. */
  timers: { cancel(): void }[] | undefined;
}

/** How an attempt ended: the processor's value, or what it threw. */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface ExecutorOptions {
  processor: ExecutorProcessor;
  /**
   * Whether the processor may read its signal (its third argument; see mayReadSignal). When
   * false it is called without one, and an attempt's AbortController is created only if
   * something asks for its signal (signalOf).
   */
  readsSignal: boolean;
  onSettled(entry: RunningJob, outcome: Outcome): void;
  clock: Clock;
  /** After a job's `timeout`, how long its attempt may still take to settle, ms. */
  timeoutGrace: number;
  /** Ends a timed-out attempt's run at the end of its grace (a sandboxed child); without it, the attempt is given up on. */
  terminate?(entry: RunningJob): Promise<void>;
  onError(err: unknown): void;
}

export class Executor {
  /**
   * Running attempts by job id: each job's latest attempt (an O(1) lookup for claims and
   * cancellations). One map entry per attempt on the common path (a map's inserts and deletes
   * allocate as it grows, shrinks and rehashes: a second map keyed by token doubled that).
   */
  private readonly latest = new Map<string, RunningJob>();
  /**
   * Older attempts still running beside a newer one of the same job (it lost its lock, was
   * rescued, and this worker claimed it again), by lock token: rare.
   */
  private readonly older = new Map<string, RunningJob>();
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly o: ExecutorOptions) {}

  /** How many attempts are running. */
  get size(): number {
    return this.latest.size + this.older.size;
  }

  /** Every running attempt (each job's latest, then older ones). */
  attempts(): RunningJob[] {
    const all = [...this.latest.values()];
    for (const entry of this.older.values()) all.push(entry);
    return all;
  }

  /**
   * The running attempt holding lock `token`, if any. With the job's `id` (a caller holding the
   * claim knows it) the lookup is O(1); without it (a lost lock reported by token alone) the
   * running attempts are walked.
   */
  attempt(token: string, id?: string): RunningJob | undefined {
    const older = this.older.get(token);
    if (older) return older;
    if (id !== undefined) {
      const latest = this.latest.get(id);
      return latest?.token === token ? latest : undefined;
    }
    for (const entry of this.latest.values()) if (entry.token === token) return entry;
    return undefined;
  }

  /**
   * The latest running attempt of job `id`, if any. An older one may still run beside it (it lost
   * its lock; its result will not be recorded), reachable by token only.
   */
  current(id: string): RunningJob | undefined {
    return this.latest.get(id);
  }

  /** Starts processing `job` (a claimed job: it carries its attempt's token). */
  start(job: Job): RunningJob {
    const entry: RunningJob = {
      job,
      token: job.token as string,
      attempt: job.fence?.attempt ?? job.attemptsStarted,
      controller: undefined,
      aborted: false,
      abortReason: undefined,
      lost: false,
      cancelled: false,
      timedOut: false,
      settled: false,
      timers: undefined,
    };
    const previous = this.latest.get(job.id as string);
    if (previous) this.older.set(previous.token, previous);
    this.latest.set(job.id as string, entry);
    let result: unknown;
    try {
      result = this.o.processor(job, job.token, this.o.readsSignal ? signalOf(entry) : undefined);
    } catch (error) {
      this.finish(entry, { ok: false, error });
      return entry;
    }
    if (result instanceof Promise) {
      result.then(
        (value: unknown) => this.finish(entry, { ok: true, value }),
        (error: unknown) => this.finish(entry, { ok: false, error }),
      );
    } else {
      // A synchronous processor: settle on a microtask so callers see a uniform order.
      queueMicrotask(() => this.finish(entry, { ok: true, value: result }));
    }
    const timeout = job.opts.timeout;
    if (timeout !== undefined && !entry.settled) {
      entry.timers = [this.o.clock.setTimeout(() => this.timedOut(entry, timeout), timeout)];
    }
    return entry;
  }

  /**
   * The attempt ran past its timeout: abort its signal, then give it `timeoutGrace` to settle.
   * Until then it keeps its slot (its retry cannot start, so the job never runs twice at once);
   * after it, the attempt fails with the TimeoutError and the slot is freed. A late result is
   * rejected by the fencing token.
   */
  private timedOut(entry: RunningJob, timeout: number): void {
    if (entry.settled) return;
    entry.timedOut = true;
    const error = new TimeoutError(`Job ${entry.job.id} timed out after ${timeout} ms (its timeout option).`);
    abortEntry(entry, error);
    (entry.timers ??= []).push(
      this.o.clock.setTimeout(() => {
        if (entry.settled) return;
        if (this.o.terminate) this.o.terminate(entry).catch((err: unknown) => this.o.onError(err));
        else this.giveUp(entry, { ok: false, error });
      }, this.o.timeoutGrace),
    );
  }

  /**
   * The processor settled: the attempt settles once the output writes it made are stored (a
   * processor need not await `job.stream.write`), for at most OUTPUT_SETTLE_MS. Meanwhile it keeps
   * its slot and its lock is renewed. A job that never used its stream settles at once.
   */
  private finish(entry: RunningJob, outcome: Outcome): void {
    const writes = entry.job.outputInFlight();
    if (writes === undefined) {
      this.settle(entry, outcome);
      return;
    }
    const done = (): void => {
      bound.cancel();
      this.settle(entry, outcome);
    };
    const bound = safeTimeout(done, OUTPUT_SETTLE_MS, { ref: false });
    void writes.then(done, done);
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
    if (entry.timers) for (const timer of entry.timers) timer.cancel();
    // Only this attempt's entry: another attempt of the same job keeps its own.
    if (this.latest.get(entry.job.id as string) === entry) this.latest.delete(entry.job.id as string);
    else if (this.older.get(entry.token) === entry) this.older.delete(entry.token);
    this.o.onSettled(entry, outcome);
    if (this.size === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /**
   * Aborts one attempt's signal (lost lock, cancellation); its result will not be recorded if
   * `lost`. `id`: the attempt's job, when the caller knows it (see attempt).
   */
  abort(token: string, reason: Error, lost: boolean, id?: string): void {
    const entry = this.attempt(token, id);
    if (!entry) return;
    if (lost) entry.lost = true;
    abortEntry(entry, reason);
  }

  /**
   * Aborts the signal of job `id`'s running attempts with `reason`, in this process only (the
   * worker's `cancelJob`): nothing is marked in Redis, and the attempt ends as its processor
   * decides. Returns whether an attempt of the job is running here; aborting an aborted signal
   * again changes nothing, but still answers true.
   */
  abortJob(id: string, reason: unknown): boolean {
    const latest = this.latest.get(id);
    if (!latest) return false;
    // An older attempt of the job (its lock was lost) was aborted already; the latest is the one that counts.
    abortEntry(latest, reason);
    return true;
  }

  /** Aborts the signal of every running attempt with `reason` (the worker's `cancelAllJobs`). */
  abortAll(reason: unknown): void {
    for (const entry of this.attempts()) abortEntry(entry, reason);
  }

  /** Resolves when no job is running. */
  whenIdle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}

/**
 * The attempt's abort signal, its AbortController created now if it has none yet (already
 * aborted, with the first abort's reason, if the attempt was aborted before).
 */
export function signalOf(entry: RunningJob): AbortSignal {
  if (entry.controller === undefined) {
    entry.controller = new AbortController();
    if (entry.aborted) entry.controller.abort(entry.abortReason);
  }
  return entry.controller.signal;
}

/**
 * Aborts the attempt's signal with `reason`, as `AbortController.abort` does: the first abort
 * wins, a later one changes nothing. Without a controller yet, the reason is kept for signalOf.
 */
export function abortEntry(entry: RunningJob, reason: unknown): void {
  if (entry.controller !== undefined) entry.controller.abort(reason);
  else if (!entry.aborted) entry.abortReason = reason;
  entry.aborted = true;
}
