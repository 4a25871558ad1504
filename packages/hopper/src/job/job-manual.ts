/**
 * Manual processing (BullMQ's `worker.getNextJob` pattern): the holder of a job, named by its
 * token, completes it, fails it, extends its lock or moves it to delayed. The logic behind those
 * Job methods; each write is fenced by the token and the attempt.
 */
import type { ClaimedJob, Fence } from '../backend/backend.js';
import { InvalidDataError, LockLostError } from './errors.js';
import { failureOf, toError } from './failure.js';
import type { Job } from './job.js';
import type { JobJsonRaw } from './job-json.js';
import { DEFAULT_STACK_TRACE_LIMIT, serialize } from './options.js';
import { checkDurationArg } from '../validation/arguments.js';
import { throwOnMoveCode } from './write-codes.js';

/** The next job claimed under the same token (with `fetchNext`), and the server time. */
export interface Next {
  job: ClaimedJob | undefined;
  now: number;
}

/**
 * What `job.moveToCompleted` and `job.moveToFailed` return, in BullMQ's shape: `[]` when no next
 * job was taken (no `fetchNext`, or nothing ready), else `[jobJson, jobId, limitUntil, delayUntil]`
 * (`jobJson` is the next job's `asJSON()`; Hopper reports no limiter or delay there: both 0).
 * Hopper adds the non-enumerable `job`: the next job as a `Job`, held under the same token.
 *
 * @example
 * const next = await job.moveToCompleted(result, token, true);
 * if (next.job) await next.job.moveToCompleted(await work(next.job.data), token);
 */
export type NextJobReply<J = Job> = ([] | [JobJsonRaw, string, number, number]) & { readonly job?: J };

/** Builds the reply of a manual move from the next job taken (if any). */
export function nextJobReply<J extends Job>(next: J | undefined): NextJobReply<J> {
  const reply: unknown[] = next === undefined ? [] : [next.asJSON(), next.id, 0, 0];
  Object.defineProperty(reply, 'job', { value: next, enumerable: false });
  return reply as NextJobReply<J>;
}

/** The fence to write under: the attempt's that holds `job`, or the caller's token in manual processing. */
export function holderFence(job: Job, token: string | undefined, what: string): Fence {
  // BullMQ's token '0' skips its lock check; here it names the token this Job was taken with.
  if (token === '0' && job.fence) return job.fence;
  if (token !== undefined) return { token, attempt: job.fence?.token === token ? job.fence.attempt : job.attemptsStarted };
  if (job.fence) return job.fence;
  throw new LockLostError(`Cannot ${what} job ${job.id}: pass the lock token of the attempt that holds it.`);
}

function lockMs(job: Job): number {
  return job.ctx.lockDuration ?? 30_000;
}

/** `job.moveToCompleted(value, token, fetchNext)`. */
export async function completeHeld(job: Job, returnValue: unknown, token: string, fetchNext: boolean): Promise<Next> {
  const id = job.requireId();
  const fence = holderFence(job, token, 'complete');
  const json = returnValue === undefined || returnValue === null ? 'null' : serialize(returnValue, 'The return value');
  await job.ctx.ready();
  const result = await job.ctx.backend.complete(
    [{ id, ...fence, returnvalue: json, keep: { kind: 'limit', count: 1000, ageMs: -1 } }],
    { count: fetchNext ? 1 : 0, lockMs: lockMs(job), tokenPrefix: fence.token, exact: true },
    job.ctx.clock.backendNow(),
  );
  throwOnMoveCode(job, result.codes[0], 'complete', 'moveToFinished');
  job.returnvalue = returnValue;
  job.finishedOn = result.now;
  job.attemptsMade += 1;
  job.ctx.noteManualAttempt?.(job, result.now, 'completed');
  return { job: result.next.jobs[0], now: result.now };
}

/**
 * `job.moveToFailed(err, token, fetchNext)`: retried per attempts and backoff, or failed for good.
 * As in BullMQ, `fetchNext` takes the next job after a final failure or a delayed retry, not after
 * an immediate retry (which would take the same job back).
 */
export async function failHeld(job: Job, err: Error, token: string, fetchNext: boolean): Promise<Next> {
  const fence = holderFence(job, token, 'fail');
  const error = toError(err);
  const failure = await failureOf(job, fence, error, job.ctx.backoffStrategy, job.ctx.failKeep ?? { kind: 'keep' });
  await job.ctx.ready();
  const take = fetchNext && failure.retryDelay !== 0;
  const result = await job.ctx.backend.fail(
    [failure],
    { count: take ? 1 : 0, lockMs: lockMs(job), tokenPrefix: fence.token, exact: true },
    job.ctx.clock.backendNow(),
  );
  throwOnMoveCode(job, result.codes[0], 'fail', failure.retryDelay >= 0 ? 'retryJob' : 'moveToFinished');
  job.attemptsMade += 1;
  job.failedReason = failure.reason;
  // The stored traces, newest first, as fail.lua keeps them.
  const limit = job.opts.stackTraceLimit ?? DEFAULT_STACK_TRACE_LIMIT;
  job.stacktrace = error.stack && limit > 0 ? [error.stack, ...job.stacktrace].slice(0, limit) : limit > 0 ? job.stacktrace : [];
  if (failure.retryDelay < 0) job.finishedOn = result.now;
  else if (failure.retryDelay > 0) job.delay = failure.retryDelay;
  job.ctx.noteManualAttempt?.(job, result.now, failure.retryDelay < 0 ? 'failed' : 'retried');
  return { job: result.next.jobs[0], now: result.now };
}

/** `job.extendLock(token, duration)`. */
export async function extendHeld(job: Job, token: string, duration: number): Promise<number> {
  const id = job.requireId();
  checkDurationArg(duration, 'extendLock(token, duration)', true);
  await job.ctx.ready();
  const fence = holderFence(job, token, 'extend the lock of');
  const { lost } = await job.ctx.backend.extendLocks([{ id, ...fence }], duration, undefined, job.ctx.clock.backendNow());
  if (lost.length > 0) throw new LockLostError(`Cannot extend the lock of job ${id}: token ${token} does not hold it.`);
  return 1;
}

/** `job.moveToDelayed(timestamp, token)`. */
export async function delayHeld(job: Job, timestamp: number, token: string | undefined): Promise<void> {
  const id = job.requireId();
  const fence = holderFence(job, token, 'move to delayed');
  if (!Number.isFinite(timestamp)) throw new InvalidDataError(`moveToDelayed takes a timestamp in ms, got ${timestamp}.`);
  await job.ctx.ready();
  throwOnMoveCode(
    job,
    await job.ctx.backend.moveToDelayed(id, fence, timestamp, job.ctx.clock.backendNow()),
    'move to delayed',
    'moveToDelayed',
  );
}

/** `job.moveToWait(token)`. */
export async function waitHeld(job: Job, token: string | undefined): Promise<number> {
  const id = job.requireId();
  const fence = holderFence(job, token, 'move to wait');
  await job.ctx.ready();
  throwOnMoveCode(job, await job.ctx.backend.moveToWait(id, fence), 'move to wait', 'moveJobFromActiveToWait');
  return 0;
}
