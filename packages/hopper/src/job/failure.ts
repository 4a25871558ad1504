/**
 * What a failed attempt becomes: retried now, retried after its backoff, or failed for good.
 * Shared by the worker and by manual processing (`job.moveToFailed`).
 */
import type { Failure, Retention } from '../backend/backend.js';
import { MAX_RETRY_DELAY_MS, retryDelay, type BackoffJob } from './backoff.js';
import { TimeoutError, UnrecoverableError } from './errors.js';
import type { Job } from './job.js';
import { DEFAULT_STACK_TRACE_LIMIT } from './options.js';
import { toRetention } from './retention.js';
import { toError } from './thrown.js';

/** A backoff strategy as the failure logic calls it. */
export type StrategyFn = (attemptsMade: number, type: string, err: Error, job: BackoffJob) => number | Promise<number>;

/** Turns anything thrown into an Error that is safe to read (job/thrown.ts). */
export { toError } from './thrown.js';

/**
 * Decides the fate of `job`'s failed attempt (fenced by `fence`): `-1` fail for good (unrecoverable,
 * discarded, or a backoff that says stop), `-2` attempts exhausted, else the retry delay in ms.
 */
export async function failureOf(
  job: Job,
  fence: { token: string; attempt: number },
  error: Error,
  strategy: StrategyFn | undefined,
  failKeep: Retention,
): Promise<Failure> {
  const attempts = Math.max(job.opts.attempts ?? 1, 1);
  const made = job.attemptsMade + 1;
  let delay: number;
  let reason = error.message;
  if (error instanceof UnrecoverableError || job.discarded) {
    delay = -1;
  } else if (made >= attempts) {
    delay = -2;
  } else {
    try {
      const computed = await retryDelay(job.opts.backoff, made, error, job, strategy);
      // Capped: a retry due at an infinite (or past-any-date) score would never run.
      delay = computed < 0 ? -1 : Math.min(Math.round(computed), MAX_RETRY_DELAY_MS);
    } catch (strategyError) {
      reason = `${reason} (and no retry: ${toError(strategyError).message})`;
      delay = -1;
    }
  }
  return {
    id: job.id as string,
    token: fence.token,
    attempt: fence.attempt,
    reason,
    stack: error.stack ?? '',
    stackTraceLimit: job.opts.stackTraceLimit ?? DEFAULT_STACK_TRACE_LIMIT,
    retryDelay: delay,
    keep: toRetention(job.opts.removeOnFail, failKeep),
    timedOut: error instanceof TimeoutError,
  };
}
