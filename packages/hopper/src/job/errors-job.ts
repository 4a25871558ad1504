/**
 * Hopper's typed errors about a job or a queue (re-exported by job/errors.ts): a job that is
 * missing, locked by another attempt, in the wrong state or a scheduler's pending run; a flow
 * that cannot be added or removed; a wait that timed out; a dead letter that cannot be replayed.
 */
import { parseOccurrenceId } from '../schedule/occurrence-id.js';
import { branded, ErrorCode } from './errors-base.js';

/**
 * A write from an attempt that no longer holds the job: its lock expired and the job was rescued,
 * or the job was removed. The write changed nothing.
 */
export class LockLostError extends branded(ErrorCode.LockLost) {}

/** The job does not exist (never added, or removed by retention or a call). */
export class JobNotFoundError extends branded(ErrorCode.JobNotFound) {}

/** No queue of that name exists under the prefix (an {@link Admin} never creates one). */
export class QueueNotFoundError extends branded(ErrorCode.QueueNotFound) {}

/**
 * A flow cannot be added as asked: a child's custom id is taken by an existing job while its
 * parent is new, or the existing parent a job should join is missing or finished. Nothing was written.
 */
export class FlowConflictError extends branded(ErrorCode.FlowConflict) {}

/**
 * A job's flow tree is too large to remove with its children in one bounded call (more than
 * 1,000 child records at every level). Nothing was removed. The message says what to do instead.
 */
export class FlowTooLargeError extends branded(ErrorCode.FlowTooLarge) {}

/** A backoff type the worker has no strategy for. */
export class UnknownBackoffError extends branded(ErrorCode.UnknownBackoff) {}

/** `waitUntilFinished` reached its time limit before the job finished. */
export class WaitTimeoutError extends branded(ErrorCode.WaitTimeout) {}

/** The operation needs the job not to be active (a worker holds it): finish, fail or stop it first. */
export class JobActiveError extends branded(ErrorCode.JobActive) {}

/** The job is not in a state the operation works on (e.g. changeDelay on a job that is not delayed). */
export class InvalidStateError extends branded(ErrorCode.InvalidState) {}

/** A dead letter cannot be replayed: its origin job exists and is not failed, or it is being handled. */
export class ReplayRefusedError extends branded(ErrorCode.ReplayRefused) {}

/**
 * The job is a job scheduler's pending run (its next occurrence, delayed for its time or ready
 * and not yet taken by a worker, which keeps the scheduler going): it cannot be removed or
 * cancelled directly, or the scheduler would stop for good. Nothing was changed. Remove or pause the scheduler instead
 * (`queue.removeJobScheduler(id)`, `queue.pauseJobScheduler(id)`). Once the occurrence runs it
 * is an ordinary job. `jobId` and `schedulerId` say which (BullMQ refuses the same).
 */
export class SchedulerJobError extends branded(ErrorCode.SchedulerJob) {
  /** The refused job. */
  jobId = '';
  /** The scheduler whose pending run it is. */
  schedulerId = '';

  /** Builds the error for an attempt to remove or cancel (`action`) scheduler `schedulerId`'s pending run `jobId`. */
  static of(jobId: string, schedulerId: string, action: 'removed' | 'cancelled'): SchedulerJobError {
    const quoted = schedulerId.replace(/[\\']/g, '\\$&');
    // BullMQ's phrase and operation name first (`... cannot be removed directly. remove`), then Hopper's advice.
    const op = action === 'removed' ? 'remove' : 'cancelJob';
    const err = new SchedulerJobError(
      `Job ${jobId} belongs to a job scheduler and cannot be ${action} directly. ${op}: it is the pending run of job scheduler ` +
        `${schedulerId}; call queue.removeJobScheduler('${quoted}') to stop the schedule, or queue.pauseJobScheduler('${quoted}') to pause it.`,
    );
    err.jobId = jobId;
    err.schedulerId = schedulerId;
    return err;
  }

  /** The scheduler id in a pending run's id (`sched:<schedulerId>:<instant>`, or BullMQ's `repeat:` of a run moved from BullMQ). */
  static schedulerOf(jobId: string): string {
    return parseOccurrenceId(jobId, true)?.schedulerId ?? jobId;
  }
}
