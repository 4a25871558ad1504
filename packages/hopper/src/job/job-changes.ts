/**
 * Changes to a job that is not running, from any process: retry a finished one, remove it,
 * replay a dead letter, promote a delayed one, change its delay or priority. The logic behind
 * those Job methods.
 */
import { unexpectedKind, type RemoveJobResult } from '../backend/backend.js';
import {
  FlowTooLargeError,
  InvalidOptionsError,
  InvalidStateError,
  JobActiveError,
  JobNotFoundError,
  ReplayRefusedError,
  SchedulerJobError,
} from './errors.js';
import type { Job } from './job.js';
import { parseJobKey } from './job-key.js';
import { validateJobOptions } from './options.js';
import { CHANGE_PRIORITY_OPTIONS, checkArgument, checkOptional, checkRetryState, RETRY_OPTIONS } from '../validation/arguments.js';
import { throwOnWriteCode } from './write-codes.js';
import { showValue } from '../validation/kit.js';

/** `job.retry(state, opts)`: a failed (or completed) job goes back to ready. */
export async function retryFinished(
  job: Job,
  state: 'failed' | 'completed',
  opts: { resetAttemptsMade?: boolean; resetAttemptsStarted?: boolean },
): Promise<void> {
  const id = job.requireId();
  // 'active' is refused: retrying a running job would start it a second time.
  checkRetryState(state, 'retry(state)');
  checkOptional(RETRY_OPTIONS, opts, 'retry(state, opts)');
  await job.ctx.ready();
  const { moved } = await job.ctx.backend.retryJobs(state, { count: 1, timestamp: 0, ids: [id], ...opts });
  if (!moved[0]) {
    // Which refusal, for BullMQ's key phrase (read after the fact: only the message depends on it).
    if ((await job.ctx.backend.getState(id)) === 'unknown') {
      throw new JobNotFoundError(
        `Missing key for job ${id}. reprocessJob: cannot retry job ${id} in queue "${job.queueName}": it no longer exists.`,
      );
    }
    throw new InvalidStateError(
      `Job ${id} is not in the ${state} state. reprocessJob: cannot retry job ${id} in queue "${job.queueName}". Only a failed or completed job can be retried.`,
    );
  }
  if (opts.resetAttemptsMade) job.attemptsMade = 0;
  // null, as BullMQ leaves them after a retry.
  job.failedReason = null as unknown as string;
  job.finishedOn = null as unknown as undefined;
  job.processedOn = null as unknown as undefined;
  job.returnvalue = null as unknown;
}

/** Options of `job.remove()` and `queue.remove()`, as in BullMQ. */
export interface RemoveOptions {
  /**
   * Removes the job's flow children too, at every depth and in every queue, whatever their
   * state (default true, as in BullMQ). The tree is checked first: if a job in it is active, or
   * it holds more than 1,000 child records, nothing is removed. With false the job goes alone and
   * its children stay (they run, and their results go nowhere).
   */
  removeChildren?: boolean;
}

/** Reads `removeChildren` from `opts`, refusing anything else. */
export function removeChildrenOption(opts: RemoveOptions | undefined, where: string): boolean {
  if (opts === undefined) return true;
  if (typeof opts !== 'object' || opts === null) {
    throw new InvalidOptionsError(`${where}: options must be an object such as { removeChildren: false }, got ${showValue(opts)}.`);
  }
  for (const key of Object.keys(opts)) {
    if (key !== 'removeChildren') throw new InvalidOptionsError(`${where}: unknown option "${key}" (the only option is removeChildren).`);
  }
  const { removeChildren } = opts;
  if (removeChildren === undefined) return true;
  if (typeof removeChildren !== 'boolean') {
    throw new InvalidOptionsError(`${where}: removeChildren must be a boolean, got ${showValue(removeChildren)}.`);
  }
  return removeChildren;
}

/**
 * Throws the typed error for a refused removal of job `id` (nothing was removed), with BullMQ's
 * key phrase for a locked (active) job. Returns when it was removed or missing.
 */
export function throwIfRemoveRefused(result: RemoveJobResult, id: string, queueName: string, prefix: string): void {
  const locked = `Job ${id} could not be removed because it is locked by another worker`;
  switch (result.kind) {
    case 'removed':
    case 'missing':
      return;
    case 'active':
      throw new JobActiveError(`${locked}: it is active in queue "${queueName}". Let it finish or fail, or close its worker first.`);
    case 'pendingRun':
      throw SchedulerJobError.of(id, SchedulerJobError.schedulerOf(id), 'removed');
    case 'descendantActive':
      throw new JobActiveError(
        `${locked}: job ${result.key} in its flow tree is active, so nothing was removed. Let it finish or fail, ` +
          `or pass { removeChildren: false } to remove job ${id} alone.`,
      );
    case 'treeTooLarge':
      throw new FlowTooLargeError(
        `Cannot remove job ${id} of queue "${queueName}" with its children: its flow tree holds more than ${result.limit} ` +
          'child records, more than one bounded call removes, so nothing was removed. Stop it with ' +
          `queue.cancelJob('${id}') (the parent and its pending children, in batches), then pass { removeChildren: false } to ` +
          'remove the job alone; its finished children go with their retention or queue.clean.',
      );
    case 'descendantPendingRun': {
      const childId = parseJobKey(prefix, result.key)?.id ?? result.key;
      throw SchedulerJobError.of(childId, SchedulerJobError.schedulerOf(childId), 'removed');
    }
    default:
      unexpectedKind(result);
  }
}

/** `job.remove(opts)`. */
export async function removeJob(job: Job, opts?: RemoveOptions): Promise<void> {
  const id = job.requireId();
  const withChildren = removeChildrenOption(opts, 'job.remove');
  await job.ctx.ready();
  const result = await job.ctx.backend.removeJob(id, job.ctx.clock.backendNow(), withChildren);
  throwIfRemoveRefused(result, id, job.queueName, job.ctx.prefix);
  if (result.kind === 'missing') throw new JobNotFoundError(`Cannot remove job ${id} in queue "${job.queueName}": it no longer exists.`);
}

/** `job.replay()` of a dead letter. */
export async function replayDeadLetter(job: Job): Promise<void> {
  const id = job.requireId();
  if (!job.deadLetterOrigin)
    throw new InvalidStateError(`Job ${id} in queue "${job.queueName}" is not a dead letter: only dead letters can be replayed.`);
  await job.ctx.ready();
  const [{ kind }] = await job.ctx.backend.replayDeadLetters([id], job.ctx.clock.backendNow());
  switch (kind) {
    case 'replayed':
    case 'notDeadLetter': // checked above: it stopped being one since it was read
      return;
    case 'originExists':
      throw new ReplayRefusedError(
        `Cannot replay dead letter ${id}: job ${job.deadLetterOrigin.jobId} exists in queue "${job.deadLetterOrigin.queue}" and is not failed. Remove it or wait for it to finish.`,
      );
    case 'busy':
      throw new ReplayRefusedError(`Cannot replay dead letter ${id} while it is being handled (active, delayed or prioritized).`);
    case 'missing':
      throw new JobNotFoundError(`Dead letter ${id} no longer exists (already replayed or removed).`);
    default:
      unexpectedKind(kind);
  }
}

/** `job.promote()`. */
export async function promoteDelayed(job: Job): Promise<void> {
  const id = job.requireId();
  await job.ctx.ready();
  const { moved } = await job.ctx.backend.promoteJobs({ count: 1, ids: [id] });
  if (!moved[0])
    throw new InvalidStateError(
      `Job ${id} is not in the delayed state. promote: cannot promote job ${id} in queue "${job.queueName}": it is not delayed.`,
    );
  job.delay = 0;
}

/** `job.changeDelay(delay)`. */
export async function changeJobDelay(job: Job, delay: number): Promise<void> {
  const id = job.requireId();
  validateJobOptions({ delay });
  await job.ctx.ready();
  throwOnWriteCode(
    job,
    await job.ctx.backend.changeDelay(id, delay, job.ctx.clock.backendNow()),
    'change the delay of',
    'changeDelay',
    'delayed',
  );
  job.delay = delay;
}

/** `job.changePriority(opts)`. */
export async function changeJobPriority(job: Job, opts: { priority?: number; lifo?: boolean }): Promise<void> {
  const id = job.requireId();
  checkArgument(CHANGE_PRIORITY_OPTIONS, opts, 'changePriority(opts)');
  const priority = opts.priority ?? 0;
  await job.ctx.ready();
  throwOnWriteCode(job, await job.ctx.backend.changePriority(id, priority, opts.lifo ?? false), 'change the priority of', 'changePriority');
  job.priority = priority;
}
