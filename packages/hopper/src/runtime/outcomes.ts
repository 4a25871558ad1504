/**
 * Outcomes: what the end of an attempt records. A returned value becomes a completion and a throw
 * a failure (retried per attempts and backoff), both handed to the completer for batched
 * acknowledgement; a cancelled or timed-out attempt fails whatever it returned; a processor that
 * moved its job itself (DelayedError, WaitingChildrenError) records nothing; a RateLimitError puts
 * the job back without spending an attempt. The attempt stays held (Claims) until its outcome is
 * acknowledged, so nothing it claimed falls between the executor and the completer. An
 * acknowledged batch becomes the worker's `completed` and `failed` events.
 */
import type { AckResult, Completion, Failure, QueueBackend, Retention } from '../backend/backend.js';
import { WriteCode, writeApplied } from '../backend/backend.js';
import {
  CancelledError,
  DelayedError,
  LockLostError,
  RateLimitError,
  TimeoutError,
  WaitingChildrenError,
  WaitingError,
} from '../job/errors.js';
import { failureOf, toError, type StrategyFn } from '../job/failure.js';
import { serialize } from '../job/options.js';
import { toRetention } from '../job/retention.js';
import { throwOnMoveCode, throwOnWriteCode } from '../job/write-codes.js';
import type { Claims } from './claims.js';
import type { Completer, PendingAck } from './completer.js';
import type { AckBatch } from './dispatcher.js';
import type { Outcome, RunningJob } from './executor.js';

/** Why a rate-limited job could not be put back (`moveToWait`'s refusal code), as an error. */
function putBackError(job: RunningJob['job'], code: WriteCode): Error {
  try {
    if (code === WriteCode.Missing) throwOnWriteCode(job, code, 'put back (rate limit)', 'moveJobFromActiveToWait');
    else throwOnMoveCode(job, code, 'put back (rate limit)', 'moveJobFromActiveToWait', true);
  } catch (err) {
    return toError(err);
  }
  return new Error(`Job ${job.id} could not be put back after a RateLimitError (code ${code}).`);
}

export interface OutcomesOptions {
  backend: QueueBackend;
  claims: Claims;
  completer: Completer;
  queueName: string;
  /** Retention of completed and failed jobs that set none themselves. */
  completeKeep: Retention;
  failKeep: Retention;
  backoffStrategy(): StrategyFn | undefined;
  /** Whether the worker is closed (outcomes are then dropped: their jobs were released). */
  isClosed(): boolean;
  /** Asks the dispatcher to send what is pending (and claim for the freed slot). */
  schedulePump(): void;
  /** Emits a job's `completed` or `failed` event (BullMQ's arguments: job, result or error, previous state). */
  emit(event: 'completed' | 'failed', job: RunningJob['job'], value: unknown, prev: 'active'): void;
  onError(err: unknown): void;
  /** Called for each attempt whose outcome was recorded, before its event (telemetry, metrics). */
  onRecorded?(batch: AckBatch, item: PendingAck<Completion | Failure>, code: WriteCode, now: number): void;
}

export class Outcomes {
  constructor(private readonly o: OutcomesOptions) {}

  /**
   * An attempt settled: records its outcome (or drops it: lock lost, released), and frees its slot.
   * Never throws, whatever the processor threw or returned: a step that throws records a failure.
   */
  settled(entry: RunningJob, outcome: Outcome): void {
    try {
      this.record(entry, outcome);
    } catch (err) {
      // Not reached with any value a processor can produce (job/thrown.ts reads them safely); kept
      // so a defect here fails the job instead of leaving it active with its slot taken.
      this.recordFailure(entry, toError(err));
    }
  }

  private record(entry: RunningJob, outcome: Outcome): void {
    if (this.o.isClosed()) return;
    const claim = this.o.claims.get(entry.token);
    if (entry.lost || !claim || claim.releasing) {
      // The result is dropped, but the slot is free: take the next job.
      if (!claim?.releasing) this.o.claims.drop(entry.token);
      this.o.schedulePump();
      return;
    }
    const job = entry.job;
    // A cancelled or timed-out attempt fails, whatever the processor returned.
    if (entry.cancelled) outcome = { ok: false, error: new CancelledError(`Job ${job.id} was cancelled.`) };
    else {
      // Anything thrown, read once and safely (a BigInt, a cycle, an Error whose getters throw).
      if (!outcome.ok) outcome = { ok: false, error: toError(outcome.error) };
      if (entry.timedOut && (outcome.ok || !(outcome.error instanceof TimeoutError))) {
        outcome = { ok: false, error: new TimeoutError(`Job ${job.id} timed out (its timeout option).`) };
      }
    }
    if (outcome.ok) {
      let returnvalue: string;
      try {
        returnvalue = outcome.value === undefined || outcome.value === null ? 'null' : serialize(outcome.value, 'The return value');
      } catch (err) {
        return this.record(entry, { ok: false, error: err });
      }
      claim.recording = true;
      this.o.completer.addCompletion({
        ack: {
          id: job.id as string,
          token: entry.token,
          attempt: entry.attempt,
          returnvalue,
          keep: toRetention(job.opts.removeOnComplete, this.o.completeKeep),
        },
        job,
        outcome: outcome.value,
      });
      this.o.schedulePump();
      return;
    }
    const error = outcome.error as Error;
    // The processor moved the job itself (moveToDelayed, moveToWait, moveToWaitingChildren): nothing to record.
    if (error instanceof DelayedError || error instanceof WaitingError || error instanceof WaitingChildrenError) {
      this.o.claims.drop(entry.token);
      this.o.schedulePump();
      return;
    }
    if (error instanceof RateLimitError) {
      this.o.backend.moveToWait(job.id as string, { token: entry.token, attempt: entry.attempt }).then(
        (code) => {
          // A cancelled job is not put back: it ends as cancelled.
          if (code === WriteCode.RefusedCancelled) return this.recordFailure(entry, new CancelledError(`Job ${job.id} was cancelled.`));
          this.o.claims.drop(entry.token);
          this.o.schedulePump();
          // Not put back (removed meanwhile, or no longer held): an `error` event with BullMQ's phrase, as BullMQ.
          if (!writeApplied(code)) this.o.onError(putBackError(job, code));
        },
        (err: unknown) => {
          this.o.claims.drop(entry.token);
          this.o.onError(err);
        },
      );
      return;
    }
    this.recordFailure(entry, error);
  }

  /** Computes the failure (retry or not, backoff) and hands it to the completer; the job stays held meanwhile. */
  private recordFailure(entry: RunningJob, error: Error): void {
    const job = entry.job;
    failureOf(job, { token: entry.token, attempt: entry.attempt }, error, this.o.backoffStrategy(), this.o.failKeep).then(
      (failure) => {
        const claim = this.o.claims.get(entry.token);
        // Released by a closing worker meanwhile: nothing to record.
        if (this.o.isClosed() || !claim || claim.releasing) return;
        claim.recording = true;
        this.o.completer.addFailure({ ack: failure, job, outcome: error });
        this.o.schedulePump();
      },
      (err: unknown) => {
        this.o.claims.drop(entry.token);
        this.o.onError(err);
      },
    );
  }

  /** A batch was acknowledged: emits each job's outcome (or a LockLostError for a rejected one). */
  acked(batch: AckBatch, result: AckResult, resent: boolean): void {
    for (let i = 0; i < batch.items.length; i++) {
      const code = result.codes[i];
      const item: PendingAck<Completion | Failure> = batch.items[i];
      const job = item.job;
      this.o.claims.drop(item.ack.token);
      // After a reconnect the call may have run twice: the first run did the work.
      const done = writeApplied(code) || (resent && (code === WriteCode.Missing || code === WriteCode.NotActive));
      if (!done) {
        this.o.onError(
          new LockLostError(
            `Job ${job.id} in queue "${this.o.queueName}": its result was not recorded because this attempt no longer holds it (code ${code}: ` +
              `${code === WriteCode.Missing ? 'the job was removed' : code === WriteCode.NotActive ? 'the job is no longer active' : 'another attempt holds it'}).`,
          ),
        );
        continue;
      }
      job.attemptsMade += 1;
      job.token = undefined;
      this.o.onRecorded?.(batch, item, code, result.now);
      if (code === WriteCode.Cancelled) {
        // Cancelled while it ran: recorded as failed with the cancel reason, whatever it returned.
        job.finishedOn = result.now;
        this.o.emit('failed', job, new CancelledError(`Job ${job.id} was cancelled.`), 'active');
      } else if (batch.kind === 'complete') {
        job.returnvalue = item.outcome;
        job.finishedOn = result.now;
        this.o.emit('completed', job, item.outcome, 'active');
      } else {
        const failure = item.ack as Failure;
        job.failedReason = failure.reason;
        if (failure.retryDelay < 0) job.finishedOn = result.now;
        else if (failure.retryDelay > 0) job.delay = failure.retryDelay;
        this.o.emit('failed', job, item.outcome, 'active');
      }
    }
  }
}
