/**
 * The errors a processor throws to steer its job rather than to report a failure (re-exported by
 * job/errors.ts): fail at once ({@link UnrecoverableError}), the job was moved on purpose
 * (delayed, back to wait, waiting for children, rate limited), and the reasons a job's signal
 * aborts with (cancelled, timed out). Each is recognised by its brand and also by its name, so
 * BullMQ's classes of the same name count too.
 */
import { BRAND, ErrorCode, hopperErrorCode } from './errors-base.js';

/**
 * Throw from a processor to fail the job at once, without the remaining attempts.
 * Named as in BullMQ; errors named `UnrecoverableError` from BullMQ itself are honoured too.
 *
 * @example
 * throw new UnrecoverableError(`invalid invoice ${job.data.id}`);
 */
export class UnrecoverableError extends Error {
  constructor(message?: string) {
    super(message);
    this.name = 'UnrecoverableError';
    Object.defineProperty(this, BRAND, { value: ErrorCode.Unrecoverable, enumerable: false });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return (
      Function.prototype[Symbol.hasInstance].call(this, value) ||
      hopperErrorCode(value) === ErrorCode.Unrecoverable ||
      (value instanceof Error && value.name === 'UnrecoverableError')
    );
  }
}

/** Defines an error class recognised by name (BullMQ's classes of the same name count too) and by brand. */
function signalError<N extends string>(name: N, code: ErrorCode, defaultMessage: string) {
  return class extends Error {
    constructor(message: string = defaultMessage) {
      super(message);
      this.name = name;
      Object.defineProperty(this, BRAND, { value: code, enumerable: false });
    }

    static override [Symbol.hasInstance](value: unknown): boolean {
      return (
        Function.prototype[Symbol.hasInstance].call(this, value) ||
        hopperErrorCode(value) === code ||
        (value instanceof Error && value.name === name)
      );
    }
  };
}

/**
 * Throw from a processor after `job.moveToDelayed(timestamp, token)`: the job was moved on
 * purpose, so the worker records nothing more for this attempt (BullMQ's pattern).
 */
export class DelayedError extends signalError('DelayedError', ErrorCode.Delayed, 'Delayed job') {}

/**
 * Throw from a processor after `job.moveToWait(token)`: the job was put back in line on purpose,
 * so the worker records nothing more for this attempt (BullMQ's pattern).
 */
export class WaitingError extends signalError('WaitingError', ErrorCode.Waiting, 'Waiting job') {}

/**
 * Throw from a processor after `job.moveToWaitingChildren(token)` returned true: the job waits
 * for its children, and the worker records nothing more for this attempt.
 */
export class WaitingChildrenError extends signalError('WaitingChildrenError', ErrorCode.WaitingChildren, 'Waiting children') {}

/**
 * Throw from a processor after `worker.rateLimit(ms)`: the job goes back to the head of the queue
 * without spending an attempt, and the queue's workers pause claiming for `ms`.
 */
export class RateLimitError extends signalError('RateLimitError', ErrorCode.RateLimited, 'Rate limit exceeded') {}

/**
 * The job was cancelled (`queue.cancelJob`): the reason a cancelled job failed with, and the
 * reason its processor's signal aborted with. A cancelled job is never retried nor dead-lettered.
 */
export class CancelledError extends signalError('CancelledError', ErrorCode.Cancelled, 'Job cancelled') {}

/**
 * The attempt ran past the job's `timeout`: its signal aborted with this, and the attempt failed
 * with it (retried per attempts and backoff like any failure).
 */
export class TimeoutError extends signalError('TimeoutError', ErrorCode.Timeout, 'Job timed out') {}
