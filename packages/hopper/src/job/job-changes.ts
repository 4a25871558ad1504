/**
 * Changes to a job that is not running, from any process: retry a finished one, remove it,
 * replay a dead letter, promote a delayed one, change its delay or priority. The logic behind
 * those Job methods.
 */
import { InvalidStateError, JobActiveError, JobNotFoundError, ReplayRefusedError, SchedulerJobError } from './errors.js';
import type { Job } from './job.js';
import { validateJobOptions } from './options.js';
import { throwOnWriteCode } from './write-codes.js';

/** `job.retry(state, opts)`: a failed (or completed) job goes back to ready. */
export async function retryFinished(
  job: Job,
  state: 'failed' | 'completed',
  opts: { resetAttemptsMade?: boolean; resetAttemptsStarted?: boolean },
): Promise<void> {
  const id = job.requireId();
  await job.ctx.ready();
  const [moved] = await job.ctx.backend.retryJobs(state, { count: 1, timestamp: 0, ids: [id], ...opts });
  if (moved !== 1) {
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

/** `job.remove()`. */
export async function removeJob(job: Job): Promise<void> {
  const id = job.requireId();
  await job.ctx.ready();
  const code = await job.ctx.backend.removeJob(id, job.ctx.clock.backendNow());
  if (code === -4) {
    throw new JobActiveError(
      `Cannot remove job ${id} in queue "${job.queueName}": it is active. Let it finish or fail, or close its worker first.`,
    );
  }
  if (code === -5) throw SchedulerJobError.of(id, SchedulerJobError.schedulerOf(id), 'removed');
  if (code === 0) throw new JobNotFoundError(`Cannot remove job ${id} in queue "${job.queueName}": it no longer exists.`);
}

/** `job.replay()` of a dead letter. */
export async function replayDeadLetter(job: Job): Promise<void> {
  const id = job.requireId();
  if (!job.deadLetterOrigin)
    throw new InvalidStateError(`Job ${id} in queue "${job.queueName}" is not a dead letter: only dead letters can be replayed.`);
  await job.ctx.ready();
  const [code] = await job.ctx.backend.replayDeadLetters([id], job.ctx.clock.backendNow());
  if (code === -4) {
    throw new ReplayRefusedError(
      `Cannot replay dead letter ${id}: job ${job.deadLetterOrigin.jobId} exists in queue "${job.deadLetterOrigin.queue}" and is not failed. Remove it or wait for it to finish.`,
    );
  }
  if (code === -5)
    throw new ReplayRefusedError(`Cannot replay dead letter ${id} while it is being handled (active, delayed or prioritized).`);
  if (code === 0) throw new JobNotFoundError(`Dead letter ${id} no longer exists (already replayed or removed).`);
}

/** `job.promote()`. */
export async function promoteDelayed(job: Job): Promise<void> {
  const id = job.requireId();
  await job.ctx.ready();
  const [moved] = await job.ctx.backend.promoteJobs({ count: 1, ids: [id] });
  if (moved !== 1)
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
  const priority = opts.priority ?? 0;
  validateJobOptions({ priority, lifo: opts.lifo });
  await job.ctx.ready();
  throwOnWriteCode(job, await job.ctx.backend.changePriority(id, priority, opts.lifo ?? false), 'change the priority of', 'changePriority');
  job.priority = priority;
}
