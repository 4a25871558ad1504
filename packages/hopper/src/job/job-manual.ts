/**
 * Manual processing (BullMQ's `worker.getNextJob` pattern): the holder of a job, named by its
 * token, completes it, fails it, extends its lock or moves it to delayed. The logic behind those
 * Job methods; each write is fenced by the token and the attempt.
 */
import type { ClaimedJob } from '../backend/backend.js';
import { InvalidDataError, LockLostError } from './errors.js';
import { failureOf, toError } from './failure.js';
import type { Job } from './job.js';
import { serialize } from './options.js';

/** The next job claimed under the same token (with `fetchNext`), and the server time. */
export interface Next {
  job: ClaimedJob | undefined;
  now: number;
}

function lockMs(job: Job): number {
  return job.ctx.lockDuration ?? 30_000;
}

/** `job.moveToCompleted(value, token, fetchNext)`. */
export async function completeHeld(job: Job, returnValue: unknown, token: string, fetchNext: boolean): Promise<Next> {
  const id = job.requireId();
  const fence = job.fenceFor(token, 'complete');
  const json = returnValue === undefined || returnValue === null ? 'null' : serialize(returnValue, 'The return value');
  await job.ctx.ready();
  const result = await job.ctx.backend.complete(
    [{ id, ...fence, returnvalue: json, keep: { kind: 'limit', count: 1000, ageMs: -1 } }],
    { count: fetchNext ? 1 : 0, lockMs: lockMs(job), tokenPrefix: token, exact: true },
    job.ctx.clock.backendNow(),
  );
  job.checkMove(result.codes[0], 'complete', 'moveToFinished');
  job.returnvalue = returnValue;
  job.finishedOn = result.now;
  job.attemptsMade += 1;
  return { job: result.next.jobs[0], now: result.now };
}

/** `job.moveToFailed(err, token, fetchNext)`: retried per attempts and backoff, or failed for good. */
export async function failHeld(job: Job, err: Error, token: string, fetchNext: boolean): Promise<Next> {
  const fence = job.fenceFor(token, 'fail');
  const failure = await failureOf(job, fence, toError(err), job.ctx.backoffStrategy, job.ctx.failKeep ?? { kind: 'keep' });
  await job.ctx.ready();
  const result = await job.ctx.backend.fail(
    [failure],
    { count: fetchNext ? 1 : 0, lockMs: lockMs(job), tokenPrefix: token, exact: true },
    job.ctx.clock.backendNow(),
  );
  job.checkMove(result.codes[0], 'fail', failure.retryDelay >= 0 ? 'retryJob' : 'moveToFinished');
  job.attemptsMade += 1;
  job.failedReason = failure.reason;
  if (failure.retryDelay < 0) job.finishedOn = result.now;
  else if (failure.retryDelay > 0) job.delay = failure.retryDelay;
  return { job: result.next.jobs[0], now: result.now };
}

/** `job.extendLock(token, duration)`. */
export async function extendHeld(job: Job, token: string, duration: number): Promise<number> {
  const id = job.requireId();
  await job.ctx.ready();
  const fence = job.fenceFor(token, 'extend the lock of');
  const { lost } = await job.ctx.backend.extendLocks([{ id, ...fence }], duration, undefined, job.ctx.clock.backendNow());
  if (lost.length > 0) throw new LockLostError(`Cannot extend the lock of job ${id}: token ${token} does not hold it.`);
  return 1;
}

/** `job.moveToDelayed(timestamp, token)`. */
export async function delayHeld(job: Job, timestamp: number, token: string | undefined): Promise<void> {
  const id = job.requireId();
  const fence = job.fenceFor(token, 'move to delayed');
  if (!Number.isFinite(timestamp)) throw new InvalidDataError(`moveToDelayed takes a timestamp in ms, got ${timestamp}.`);
  await job.ctx.ready();
  job.checkMove(await job.ctx.backend.moveToDelayed(id, fence, timestamp, job.ctx.clock.backendNow()), 'move to delayed', 'moveToDelayed');
}

/** `job.moveToWait(token)`. */
export async function waitHeld(job: Job, token: string | undefined): Promise<number> {
  const id = job.requireId();
  const fence = job.fenceFor(token, 'move to wait');
  await job.ctx.ready();
  job.checkMove(await job.ctx.backend.moveToWait(id, fence), 'move to wait', 'moveJobFromActiveToWait');
  return 0;
}
