/**
 * Retry delays (pure): fixed and exponential backoff with optional jitter, or a custom strategy
 * given to the worker.
 */
import { UnknownBackoffError } from './errors.js';
import type { Job } from './job.js';
import type { BackoffOptions } from './options.js';
import { MAX_DELAY_MS } from '../validation/job-options.js';

/**
 * Longest retry delay, ms: 100 years, the bound of a job's `delay` and of a backoff's `delay`. A
 * computed delay beyond it (a backoffStrategy returning Infinity, an exponential backoff doubled
 * past it) is capped to it, so a retry is always due at a finite time.
 */
export const MAX_RETRY_DELAY_MS = MAX_DELAY_MS;

/** The failed job, as a backoff strategy receives it. */
export type BackoffJob = Job;

/**
 * A custom backoff: given the attempts made so far (including the one that just failed), the
 * backoff type, the error and the job, returns the delay in ms before the retry; a negative
 * value fails the job for good, and NaN or a non-number fails it for good with a reason that says
 * so. A delay beyond MAX_RETRY_DELAY_MS (100 years; Infinity included) is capped to it.
 */
export type BackoffStrategy = (attemptsMade: number, type?: string, err?: Error, job?: BackoffJob) => number | Promise<number>;

function jittered(delay: number, jitter: number | undefined, random: () => number): number {
  if (!jitter) return delay;
  return Math.floor(delay * (1 - jitter) + random() * delay * jitter);
}

/**
 * The delay before the next attempt, in ms, or a negative number to stop retrying.
 * `attemptsMade` counts the attempt that just failed (1 after the first failure).
 */
export async function retryDelay(
  backoff: number | BackoffOptions | undefined,
  attemptsMade: number,
  err: Error,
  job: BackoffJob,
  strategy: ((attemptsMade: number, type: string, err: Error, job: BackoffJob) => number | Promise<number>) | undefined,
  random: () => number = Math.random,
): Promise<number> {
  if (backoff === undefined) return 0;
  if (typeof backoff === 'number') return backoff;
  const delay = backoff.delay ?? 0;
  switch (backoff.type) {
    case 'fixed':
      return jittered(delay, backoff.jitter, random);
    case 'exponential':
      return jittered(Math.round(2 ** Math.max(attemptsMade - 1, 0) * delay), backoff.jitter, random);
    default: {
      if (!strategy) {
        throw new UnknownBackoffError(
          `Backoff type "${backoff.type}" is not built in (fixed, exponential): give the Worker settings.backoffStrategy to handle it.`,
        );
      }
      const value = await strategy(attemptsMade, backoff.type, err, job);
      if (typeof value !== 'number' || Number.isNaN(value)) {
        throw new UnknownBackoffError(
          `settings.backoffStrategy returned ${String(value)} for type "${backoff.type}": return a delay in ms.`,
        );
      }
      return value;
    }
  }
}
