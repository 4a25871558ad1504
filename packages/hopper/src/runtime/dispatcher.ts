/**
 * Dispatcher: decides what a worker asks of Redis next, one call at a time:
 * - acknowledge finished attempts, claiming as many new jobs as there are free slots in the
 *   same call;
 * - or claim jobs for free slots;
 * - or, when the queue is empty, wait idle: a blocking pop on the queue's marker (on its own
 *   connection), plus a timer for the next delayed job's due time.
 * Finished attempts that arrive while calls are in flight wait for the next call, so under load
 * acknowledgements batch themselves. With concurrency >= 2, two calls may be in flight, each
 * claiming for half the slots: Redis runs one batch while this process runs the other. With the
 * worker's `prefetch`, the slots are concurrency + prefetch, counting the jobs held ahead (Backlog).
 */
import type {
  AckResult,
  ClaimRequest,
  ClaimResult,
  ClaimedJob,
  Completion,
  Failure,
  QueueBackend,
  Retention,
  WakeClaim,
} from '../backend/backend.js';
import type { Clock, ClockTimer } from '../clock/clock.js';
import type { Job } from '../job/job.js';
import type { Completer, PendingAck } from './completer.js';
import type { Executor } from './executor.js';
import { ErrorCode, hopperErrorCode, ScriptError } from '../job/errors.js';

/** A batch taken from the completer. */
export type AckBatch = { kind: 'fail'; items: PendingAck<Failure>[] } | { kind: 'complete'; items: PendingAck<Completion>[] };

export interface DispatcherOptions {
  backend: QueueBackend;
  clock: Clock;
  workerId: string;
  executor: Executor;
  completer: Completer;
  concurrency(): number;
  /** Jobs the worker may hold beyond its free slots (the `prefetch` option; 0: none). */
  prefetch: number;
  /** Jobs held ahead, waiting for a free slot (Backlog). */
  backlogSize(): number;
  lockDuration: number;
  /** The worker's name (`name` option), recorded on the jobs it claims as processedBy. */
  workerName?: string;
  /** The worker's rate limit, if it has one (else the queue's applies). */
  limiter?: { max: number; duration: number; weighted?: boolean };
  /** Longest idle blocking wait, ms. */
  drainDelay: number;
  /** Every attempt the worker holds, as flattened (job id, token) pairs (spared by orphan release). */
  held(): string[];
  /** Retention of cancelled orphans that set no removeOnFail. */
  failKeep: Retention;
  /** Longest wait while the queue is rate-limited before claiming again, ms (default: until the window reopens). */
  maxLimitWait?: number;
  /** Builds the Job for a claimed record. */
  makeJob(claimed: ClaimedJob, now: number): Job;
  /** A claimed job is ready to run. */
  onClaimed(job: Job): void;
  /** This worker gave up recording an attempt (its script fails): it no longer holds it. */
  onAbandoned(token: string): void;
  /** A batch was acknowledged. `resent` is true when a reconnect happened during the call. */
  onAcked(batch: AckBatch, result: AckResult, resent: boolean): void;
  /** The queue ran out of ready jobs. */
  onDrained(): void;
  /** A scheduler's occurrence fell due: its next occurrence must be computed. */
  onSchedulersDue(): void;
  onError(err: unknown): void;
}

/** Pause before retrying after a failed call. */
const RETRY_AFTER_ERROR_MS = 1000;
/** Most calls in flight at once (acknowledgements and claims). */
const MAX_IN_FLIGHT = 2;
/**
 * Most jobs one call claims (the claim script's own cap, CLAIM_MAX in includes/claim.lua): a
 * worker with more free slots claims again as soon as a call returns full.
 */
export const MAX_CLAIM = 1000;

export class Dispatcher {
  /** Calls in flight. */
  private inFlight = 0;
  /** Slots promised to in-flight claims (jobs that may arrive with their replies). */
  private reserved = 0;
  private idle = false;
  private waiting = false;
  /** The idle wait in flight carries a claim (waitThenClaim). */
  private wakeClaimPending = false;
  private pumpScheduled = false;
  /** Until start(): a worker that never ran (manual processing) claims nothing, even on resume(). */
  private stopped = true;
  private paused = false;
  private needOrphanRelease = false;
  /**
   * An orphan release walk is under way: no other call may go out until it ends. The walk takes
   * several calls, and spares only the attempts held when it began: a claim sent between two of
   * its steps would bring jobs the walk then releases while they run (found by the fault suite).
   */
  private releasingOrphans = false;
  private claimSeq = 0;
  private connectionEpoch = 0;
  private delayTimer: ClockTimer | undefined;
  private limitTimer: ClockTimer | undefined;
  private retryTimer: ClockTimer | undefined;
  private settledWaiters: (() => void)[] = [];
  /**
   * Acknowledgements still to send one by one: a batch whose script failed in Redis is retried job
   * by job, so one bad job cannot stop the worker (see isolate()).
   */
  private isolating = 0;

  constructor(private readonly o: DispatcherOptions) {
    o.backend.onReconnect(() => {
      this.connectionEpoch++;
      this.needOrphanRelease = true;
      this.pump();
    });
  }

  /** Starts taking jobs. */
  start(): void {
    this.stopped = false;
    this.pump();
  }

  /** Stops claiming (acknowledgements still go out) and ends any idle wait. */
  stop(): void {
    this.stopped = true;
    this.cancelTimers();
    this.o.backend.interruptWait();
    this.pump();
  }

  setPaused(paused: boolean): void {
    this.paused = paused;
    if (paused) {
      this.cancelTimers();
      this.o.backend.interruptWait();
    } else {
      this.idle = false;
    }
    this.pump();
  }

  /** Asks for a pump after the current event-loop turn, so finished attempts batch together. */
  schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** Resolves when no acknowledgement is pending or in flight. */
  whenSettled(): Promise<void> {
    if (this.isSettled()) return Promise.resolve();
    return new Promise((resolve) => this.settledWaiters.push(resolve));
  }

  private isSettled(): boolean {
    return this.inFlight === 0 && this.o.completer.pending === 0;
  }

  /**
   * Slots this call may claim for: free ones (with `prefetch`, up to concurrency + prefetch jobs
   * held, running or waiting in the backlog), at most a share so another call can overlap.
   */
  private claimable(): number {
    if (this.stopped || this.paused) return 0;
    const capacity = this.o.concurrency() + this.o.prefetch;
    const held = this.o.prefetch > 0 ? this.o.executor.size + this.o.backlogSize() : this.o.executor.size;
    const free = capacity - held - this.reserved;
    const share = capacity >= 2 ? Math.ceil(capacity / MAX_IN_FLIGHT) : capacity;
    return Math.max(0, Math.min(free, share, MAX_CLAIM));
  }

  pump(): void {
    // Loop: with room for a second call, send it now rather than waiting for the first.
    while (this.inFlight < MAX_IN_FLIGHT && !this.retryTimer) {
      if (this.releasingOrphans) return;
      if (this.needOrphanRelease) {
        // Orphans can only be told apart once every reply has arrived.
        if (this.inFlight === 0) this.releaseOrphans();
        return;
      }
      const batch = this.o.completer.take(this.isolating > 0 ? 1 : undefined);
      const count = this.claimable();
      if (batch) {
        this.sendAck(batch, count);
        continue;
      }
      if (this.settledWaiters.length > 0 && this.isSettled()) {
        const waiters = this.settledWaiters;
        this.settledWaiters = [];
        for (const resolve of waiters) resolve();
      }
      if (count === 0) return;
      if (this.idle) {
        // An empty queue: one claim at a time is enough, then wait to be woken. A rate-limited
        // one waits for its timer alone.
        if (this.inFlight === 0 && !this.limitTimer) this.waitIdle();
        return;
      }
      this.sendClaim(count);
    }
  }

  private nextClaim(count: number) {
    return {
      count,
      lockMs: this.o.lockDuration,
      tokenPrefix: `${this.o.workerId}:${++this.claimSeq}:`,
      limiter: this.o.limiter,
      by: this.o.workerName,
    };
  }

  private begin(count: number): void {
    this.inFlight++;
    this.reserved += count;
  }

  private end(count: number): void {
    this.inFlight--;
    this.reserved -= count;
  }

  private sendClaim(count: number): void {
    this.begin(count);
    this.o.backend.claim(this.nextClaim(count), this.o.clock.backendNow()).then(
      (result) => {
        this.end(count);
        this.handleClaim(result, count);
        this.pump();
      },
      (err: unknown) => this.callFailed(err, count),
    );
  }

  private sendAck(batch: AckBatch, free: number): void {
    this.begin(free);
    const epoch = this.connectionEpoch;
    const next = this.nextClaim(free);
    const now = this.o.clock.backendNow();
    const call =
      batch.kind === 'complete'
        ? this.o.backend.complete(
            batch.items.map((item) => item.ack),
            next,
            now,
          )
        : this.o.backend.fail(
            batch.items.map((item) => item.ack),
            next,
            now,
          );
    call.then(
      (result) => {
        this.end(free);
        if (this.isolating > 0) this.isolating = Math.max(0, this.isolating - batch.items.length);
        this.o.onAcked(batch, result, epoch !== this.connectionEpoch);
        this.handleClaim(result.next, free);
        this.pump();
      },
      (err: unknown) => {
        if (hopperErrorCode(err) === ErrorCode.Script) {
          this.end(free);
          this.isolate(batch, err as ScriptError);
          this.pump();
          return;
        }
        this.o.completer.putBack(batch);
        this.callFailed(err, free);
      },
    );
  }

  /**
   * A batch's script failed inside Redis (Redis does not roll a script back, but every script
   * validates before its first write, so the batch changed nothing): retry its jobs one by one;
   * a job that fails alone is reported (a ScriptError naming it) and dropped from this worker,
   * which goes on with the others. Its lock then expires and stall rescue takes it over.
   */
  private isolate(batch: AckBatch, err: ScriptError): void {
    if (batch.items.length > 1) {
      this.o.completer.putBack(batch);
      this.isolating += batch.items.length;
      return;
    }
    this.isolating = Math.max(0, this.isolating - 1);
    const jobId = batch.items[0]?.ack.id;
    const report = new ScriptError(`Could not record the outcome of job ${jobId}; this worker leaves it to stall rescue. ${err.message}`, {
      cause: err,
    });
    report.jobId = jobId;
    // Not held any more: close does not wait for it, and stall rescue takes it over.
    const token = batch.items[0]?.ack.token;
    if (token !== undefined) this.o.onAbandoned(token);
    this.o.onError(report);
  }

  private handleClaim(result: ClaimResult, requested: number): void {
    if (result.schedulersDue) this.o.onSchedulersDue();
    for (const claimed of result.jobs) this.o.onClaimed(this.o.makeJob(claimed, result.now));
    if (requested === 0) return;
    if (result.limitedFor > 0) {
      // The queue is rate-limited: wait for the window to reopen instead of polling.
      this.idle = true;
      this.limitTimer?.cancel();
      this.limitTimer = this.o.clock.setTimeout(
        () => {
          this.limitTimer = undefined;
          this.idle = false;
          this.pump();
        },
        Math.min(result.limitedFor, this.o.maxLimitWait ?? Infinity),
      );
      return;
    }
    if (result.paused) {
      // The queue is paused (queue.pause(), from any process): wait idle as on an empty queue,
      // woken by resume (it signals work), at the end of drainDelay, or when the next delayed job
      // falls due (the claim promotes it to waiting, paused or not), then claim once more.
      // Claiming again at once would loop: on SQLite a claim is synchronous, and the loop would
      // starve this process's event loop (no timer, no lock renewal, no resume()).
      this.idle = true;
      this.armDelayTimer(result);
      return;
    }
    if (result.jobs.length < requested) {
      if (!this.idle) this.o.onDrained();
      this.idle = true;
      this.armDelayTimer(result);
    } else if (result.jobs.length === requested) {
      this.idle = false;
    }
  }

  private armDelayTimer(result: ClaimResult): void {
    this.delayTimer?.cancel();
    this.delayTimer = undefined;
    if (result.nextDue === null) return;
    const wait = Math.max(0, result.nextDue - result.now);
    this.delayTimer = this.o.clock.setTimeout(() => {
      this.delayTimer = undefined;
      this.idle = false;
      // A pending waitThenClaim holds the free slots: end its wait, and its claim takes the job.
      if (this.wakeClaimPending) this.o.backend.wakeWaiters?.().catch((err: unknown) => this.o.onError(err));
      this.pump();
    }, wait);
  }

  private waitIdle(): void {
    if (this.waiting) return;
    this.waiting = true;
    const count = this.claimable();
    // With the backend's clock, the claim goes out with the wait and runs the moment it ends (a
    // test clock's `now`, read when the wait begins, would be stale by then).
    const waitThenClaim = this.o.backend.waitThenClaim?.bind(this.o.backend);
    if (count > 0 && waitThenClaim && this.o.clock.backendNow() === undefined) {
      this.waitThenClaim(count, (request) => waitThenClaim(this.o.drainDelay, request));
      return;
    }
    this.o.backend.waitForWork(this.o.drainDelay).then(
      () => {
        this.waiting = false;
        this.idle = false;
        this.pump();
      },
      (err: unknown) => {
        this.waiting = false;
        if (!this.stopped) this.callFailed(err);
      },
    );
  }

  /**
   * The idle wait with its claim behind it (QueueBackend.waitThenClaim): a call in flight that
   * reserves `count` slots until it ends. Its reply is handled as any claim's. Ended without one
   * (close, pause, a reconnect), it may still have claimed jobs whose reply was lost: they are put
   * back by the orphan release before anything else is sent.
   */
  private waitThenClaim(count: number, waitThenClaim: (request: ClaimRequest) => Promise<WakeClaim>): void {
    this.begin(count);
    this.wakeClaimPending = true;
    const next = this.nextClaim(count);
    // Voidable: an orphan release voids it (releaseOrphans), should it run after the worker left its connection.
    const request: ClaimRequest = { ...next, voidable: { workerId: this.o.workerId, seq: this.claimSeq } };
    waitThenClaim(request).then(
      ({ claim, uncertain }) => {
        this.waiting = false;
        this.wakeClaimPending = false;
        this.end(count);
        if (uncertain) this.needOrphanRelease = true;
        // As a wake-up followed by a claim: a claim short of `count` reports the queue drained.
        this.idle = false;
        if (claim) this.handleClaim(claim, count);
        this.pump();
      },
      (err: unknown) => {
        this.waiting = false;
        this.wakeClaimPending = false;
        if (this.stopped) {
          this.end(count);
          this.pump();
          return;
        }
        // The claim may have run: look for orphans before claiming again.
        this.needOrphanRelease = true;
        this.callFailed(err, count);
      },
    );
  }

  private releaseOrphans(): void {
    this.begin(0);
    this.needOrphanRelease = false;
    this.releasingOrphans = true;
    // Attempts held here (running, finished and not yet acknowledged, or in between) are ours: keep
    // them. No wait claim is in flight now: any sent so far either answered or was given up, and a
    // given-up one that Redis has yet to run (its connection not yet seen closed) must take nothing.
    this.o.backend.releaseOrphans(this.o.workerId, this.o.held(), this.o.failKeep, this.o.clock.backendNow(), this.claimSeq).then(
      () => {
        this.releasingOrphans = false;
        this.end(0);
        this.idle = false;
        this.pump();
      },
      (err: unknown) => {
        this.releasingOrphans = false;
        this.needOrphanRelease = true;
        this.callFailed(err, 0);
      },
    );
  }

  /** A call failed: report it and pause before the next one. `reservedCount` is the failed call's reservation. */
  private callFailed(err: unknown, reservedCount?: number): void {
    if (reservedCount !== undefined) this.end(reservedCount);
    this.o.onError(err);
    this.retryTimer?.cancel();
    this.retryTimer = this.o.clock.setTimeout(() => {
      this.retryTimer = undefined;
      this.pump();
    }, RETRY_AFTER_ERROR_MS);
  }

  private cancelTimers(): void {
    this.delayTimer?.cancel();
    this.delayTimer = undefined;
    this.limitTimer?.cancel();
    this.limitTimer = undefined;
  }

  /** Drops pending timers for good (the worker is closed). */
  dispose(): void {
    this.cancelTimers();
    this.retryTimer?.cancel();
    this.retryTimer = undefined;
    this.stopped = true;
  }
}
