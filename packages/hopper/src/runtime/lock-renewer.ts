/**
 * LockRenewer: extends the locks of every job a worker runs, in one call per interval, and
 * reports the locks it lost (their jobs were rescued or removed) so the worker aborts them.
 * It also notices when the event loop was blocked long enough to endanger locks.
 */
import type { QueueBackend } from '../backend/backend.js';
import type { Clock, ClockTimer } from '../clock/clock.js';
import type { Executor } from './executor.js';

export interface LockRenewerOptions {
  backend: QueueBackend;
  clock: Clock;
  executor: Executor;
  /**
   * The jobs held ahead of free slots (the `prefetch` option): their locks are renewed with the
   * running jobs', and a lost one is reported like a running one's.
   */
  backlog?: { locks(): { id: string; token: string; attempt: number }[]; has(token: string): boolean };
  lockDuration: number;
  /** How often to renew (default lockDuration / 2). */
  renewEvery: number;
  /** Attempts (by token) whose lock was lost. */
  onLost(tokens: string[]): void;
  onError(err: unknown): void;
  /** Jobs this worker runs that were cancelled (the fallback to the cancel channel). */
  onCancelled?(ids: string[]): void;
  /** Receives the queue's epoch at each renewal (dataset-reset detection). */
  onEpoch?(epoch: string): void;
  /** The worker's heartbeat entry (id, JSON description, ttl), renewed at each interval. */
  worker?(): { id: string; info: string; ttlMs: number };
  /** Called when a renewal ran late by `lagMs`, more than lockDuration / 2. */
  onLag(lagMs: number): void;
}

export class LockRenewer {
  private timer: ClockTimer | undefined;
  private expectedAt = 0;
  private running = false;
  private first: Promise<void> | undefined;

  constructor(private readonly o: LockRenewerOptions) {}

  /**
   * Starts renewing; the first call (the worker's first heartbeat) goes out at once, and the
   * promise resolves once it is answered (a failure goes to `onError`). Calling it again while
   * started changes nothing.
   */
  start(): Promise<void> {
    if (this.first) return this.first;
    this.running = true;
    this.first = this.runOnce().then(
      () => this.schedule(),
      (err: unknown) => {
        this.o.onError(err);
        this.schedule();
      },
    );
    return this.first;
  }

  stop(): void {
    this.running = false;
    this.first = undefined;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private schedule(): void {
    if (!this.running) return;
    this.expectedAt = this.o.clock.now() + this.o.renewEvery;
    this.timer = this.o.clock.setTimeout(() => {
      // Lag is only meaningful on the real clock: a test's fake clock jumps by design.
      const lag = this.o.clock.now() - this.expectedAt;
      if (this.o.clock.real && lag > this.o.lockDuration / 2) this.o.onLag(lag);
      this.runOnce().then(
        () => this.schedule(),
        (err: unknown) => {
          this.o.onError(err);
          this.schedule();
        },
      );
    }, this.o.renewEvery);
  }

  /**
   * Renews every running attempt's lock (and every held-ahead job's) now, with the worker's heartbeat, in one call; returns the
   * tokens of the attempts whose lock was lost. Each attempt is renewed on its own fence (token
   * and attempt number), so a stale attempt of a job never renews, nor loses, the new one's lock.
   */
  async runOnce(): Promise<string[]> {
    const locks: { id: string; token: string; attempt: number }[] = [];
    for (const entry of this.o.executor.attempts()) {
      if (!entry.lost) locks.push({ id: entry.job.id as string, token: entry.token, attempt: entry.attempt });
    }
    const backlog = this.o.backlog;
    if (backlog) for (const lock of backlog.locks()) locks.push(lock);
    const { lost, epoch, cancelled } = await this.o.backend.extendLocks(
      locks,
      this.o.lockDuration,
      this.o.worker?.(),
      this.o.clock.backendNow(),
    );
    this.o.onEpoch?.(epoch);
    if (cancelled.length > 0) this.o.onCancelled?.(cancelled);
    // An attempt may have settled while the call was in flight, or been reported by a renewal that
    // overlapped this one (the one after the cancel subscription): only report each running one once.
    const stillRunning = lost.filter((token) => {
      const entry = this.o.executor.attempt(token);
      return (entry !== undefined && !entry.lost) || backlog?.has(token) === true;
    });
    if (stillRunning.length > 0) this.o.onLost(stillRunning);
    return stillRunning;
  }
}
