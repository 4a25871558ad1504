/**
 * Job: one unit of work, as BullMQ models it. A Job handed to a processor carries its attempt's
 * fence (lock token and attempt number), so its writes (progress, logs, data) are fenced: a stale
 * attempt's writes are rejected with a LockLostError. A Job fetched with `getJob` is unfenced.
 */
import type { ClaimedJob, JobRecord } from '../backend/backend.js';
import {
  plainJsonOf,
  rawJsonOf,
  type JobContext,
  type JobFinishWaiter,
  type JobJson,
  type JobJsonRaw,
  type JobJsonSandbox,
  type JobProgress,
} from './job-json.js';
import type { JobsOptions } from './options.js';
import { loadClaimed, loadRecord } from './job-load.js';
import { appendLog, clearJobLogs, writeData, writeProgress } from './job-writes.js';
import { continueLoop, listSteps, reportJobCost, runStep, type StepInfo } from './job-steps.js';
import { JobStream } from './job-stream.js';
import { JobFields } from './job-fields.js';
import {
  childrenValues,
  dependencies,
  dependenciesCount,
  failedChildrenValues,
  ignoredChildrenFailures,
  removeUnprocessed,
  letParentGo,
  waitForChildren,
  type DependenciesCount,
  type DependenciesOpts,
  type DependenciesResult,
} from './job-flow.js';
import { publicJobKey } from './job-key.js';
import { completeHeld, delayHeld, extendHeld, failHeld, nextJobReply, type NextJobReply, waitHeld } from './job-manual.js';
import {
  changeJobDelay,
  changeJobPriority,
  promoteDelayed,
  removeJob,
  replayDeadLetter,
  retryFinished,
  type RemoveOptions,
} from './job-changes.js';
import type { JobState, JobStateOrUnknown } from './states.js';

export type { JobContext, JobFinishWaiter, JobJson, JobJsonRaw, JobJsonSandbox, JobProgress } from './job-json.js';

/**
 * A job. The type parameters follow BullMQ: `DataType` of `data`, `ReturnType` of the processor's
 * result, `NameType` of `name`.
 */
// `any` defaults keep BullMQ's generic signature, so `Job` alone means the same as in BullMQ.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export class Job<DataType = any, ReturnType = any, NameType extends string = string> extends JobFields<DataType, ReturnType, NameType> {
  #stream: JobStream | undefined;

  /**
   * The job's output stream, for the processor running it: `write(chunk)` appends text or JSON,
   * `end()` marks the attempt's output complete; read it anywhere with `queue.readStream(jobId)`.
   * Fenced like every write of a processor. See docs/streams.md.
   */
  get stream(): JobStream {
    return (this.#stream ??= new JobStream(this));
  }

  /**
   * @internal the output writes still being sent (the attempt's outcome waits for them), or
   * undefined when there are none: a job that never used its stream costs nothing here.
   */
  outputInFlight(): Promise<void> | undefined {
    return this.#stream?.inFlight();
  }

  /** @internal builds the Job a processor receives from a claim. */
  static fromClaimed<D, R, N extends string>(
    ctx: JobContext,
    claimed: ClaimedJob,
    processedOn: number,
    processedBy?: string,
  ): Job<D, R, N> {
    return loadClaimed<D, R, N>(Job, ctx, claimed, processedOn, processedBy);
  }

  /** @internal builds a Job from its stored record. */
  static fromRecord<D, R, N extends string>(ctx: JobContext, record: JobRecord): Job<D, R, N> {
    return loadRecord<D, R, N>(Job, ctx, record);
  }

  /**
   * Adds a job through `queue` and returns it (BullMQ's `Job.create`; same as `queue.add`).
   */
  static async create<D, R, N extends string>(
    queue: { add(name: N, data: D, opts?: JobsOptions): Promise<Job<D, R, N>> },
    name: N,
    data: D,
    opts?: JobsOptions,
  ): Promise<Job<D, R, N>> {
    return queue.add(name, data, opts);
  }

  /** The job with this id in `queue`'s queue, or undefined (BullMQ's `Job.fromId`). */
  static async fromId<D, R, N extends string>(queue: JobContext, jobId: string): Promise<Job<D, R, N> | undefined> {
    await queue.ready();
    const record = await queue.backend.getJob(jobId);
    return record ? Job.fromRecord<D, R, N>(queue, record) : undefined;
  }

  /** @internal records the parent of a child job. */
  setParent(parent: { queue: string; id: string }): void {
    this.parent = { id: parent.id, queueKey: `${this.ctx.prefix}:${parent.queue}` };
    this.parentKey = publicJobKey(this.ctx.prefix, parent.queue, parent.id);
  }

  /**
   * Records progress (a number or a JSON object) and emits a `progress` event.
   * From a processor, the write is fenced to this attempt.
   *
   * @example await job.updateProgress(42);
   */
  async updateProgress(progress: JobProgress): Promise<void> {
    return writeProgress(this, progress);
  }

  /**
   * Replaces the job's data. From a processor, the write is fenced to this attempt.
   *
   * @example await job.updateData({ ...job.data, step: 2 });
   */
  async updateData(data: DataType): Promise<void> {
    return writeData(this, data);
  }

  /**
   * Appends a line to the job's log (kept per `keepLogs`). Returns the number of lines.
   * From a processor, the write is fenced to this attempt.
   */
  async log(logRow: string): Promise<number> {
    return appendLog(this, logRow);
  }

  /**
   * Deletes the job's log lines; with `keepLogs`, keeps the newest `keepLogs` of them (as BullMQ).
   * Not fenced: logs are the job's, whichever attempt wrote them.
   */
  async clearLogs(keepLogs?: number): Promise<void> {
    return clearJobLogs(this, keepLogs);
  }

  /**
   * Deletes this job's deduplication key if it still points to this job, so the next add with
   * the same deduplication id creates a job (a key a later job holds is left alone). Returns
   * whether a key was deleted; false for a job without `deduplication`.
   */
  async removeDeduplicationKey(): Promise<boolean> {
    const id = this.requireId();
    if (this.deduplicationId === undefined) return false;
    await this.ctx.ready();
    return this.ctx.backend.removeDeduplicationKey(this.deduplicationId, id);
  }

  /**
   * Lets this child's parent go of it while it is pending (BullMQ's `removeChildDependency`): the
   * parent no longer waits for it (and moves on if it was its last pending child); the child
   * stays as it is, without a parent (`parent` and `parentKey` are cleared; `opts.parent` keeps
   * what it was added with). Returns false when the job has no parent or is no longer pending
   * for it. Throws JobNotFoundError if the job or its parent does not exist.
   */
  async removeChildDependency(): Promise<boolean> {
    return letParentGo(this);
  }

  /**
   * Removes the children this job still waits for (any state but active, completed and failed),
   * and their own pending children first, as `job.remove()` removes a job (BullMQ's
   * `removeUnprocessedChildren`). Active and finished children stay. Slow for very many children
   * (one call per child).
   */
  async removeUnprocessedChildren(): Promise<void> {
    await removeUnprocessed(this);
  }

  /**
   * Marks the job so that a failure of the current attempt is final (no retry), as in BullMQ.
   */
  discard(): void {
    this.discarded = true;
  }

  /**
   * Moves a finished job back to waiting (`state` 'failed' by default, or 'completed'), as in
   * BullMQ. Its attempt counters are kept unless reset.
   */
  async retry(
    state: 'failed' | 'completed' = 'failed',
    opts: { resetAttemptsMade?: boolean; resetAttemptsStarted?: boolean } = {},
  ): Promise<void> {
    return retryFinished(this, state, opts);
  }

  /**
   * Removes the job (any state but active, which would silently lose a running attempt's work),
   * with its flow children at every depth unless `removeChildren: false` (as in BullMQ). The
   * tree is checked first: if a job in it is active (JobActiveError) or it holds more than 1,000
   * child records (FlowTooLargeError), nothing is removed. A removed child no longer blocks its
   * parent. A job scheduler's pending run is refused with a SchedulerJobError (remove or pause
   * the scheduler).
   *
   * @example await parent.remove(); // the parent and its whole tree
   * @example await parent.remove({ removeChildren: false }); // the parent alone
   */
  async remove(opts?: RemoveOptions): Promise<void> {
    return removeJob(this, opts);
  }

  /**
   * For a dead letter: puts the original job back into its origin queue under its original id,
   * with fresh attempts, and removes this dead letter, atomically. Throws ReplayRefusedError if the
   * origin job exists and is not failed; replaying twice creates one job.
   */
  async replay(): Promise<void> {
    return replayDeadLetter(this);
  }

  /**
   * Runs `fn` once for this job and `key` (a durable step, effect-once): its result is stored with
   * the job before `step` returns, and `step` returns the stored (JSON round-tripped) value, the
   * first time too. On a retry, a rescue after a crash, or a replay from the dead-letter queue,
   * it returns the stored result without calling `fn`. Only a success is stored: a `fn` that
   * throws runs again on the next attempt. From a stale attempt it throws LockLostError.
   *
   * A side effect that cannot be made atomic with its record (an API call that succeeds, then the
   * worker dies before the result is stored) may still run twice: give the service an idempotency
   * key derived from the job and the step, e.g. `${job.id}:${key}`.
   *
   * @example
   * const charge = await job.step('charge', () => stripe.charges.create({ ... }, { idempotencyKey: `${job.id}:charge` }));
   */
  async step<T>(key: string, fn: () => T | Promise<T>): Promise<T> {
    return runStep(this, key, fn);
  }

  /** The job's durable steps (for dashboards): key, stored result or last error, duration. */
  async getSteps(): Promise<StepInfo[]> {
    return listSteps(this);
  }

  /**
   * Adds the next turn of a loop of unknown length (an agent loop: each turn a job) with the
   * deterministic id `${loopId}:${turn + 1}` (this job's id is `${loopId}:${turn}`, or the loop's
   * id for turn 0), recorded as a step of this job in the same atomic call: a replayed turn adds
   * nothing new. Past `maxTurns`, throws UnrecoverableError (the loop fails, no retry); likewise
   * once the run's cost (`reportCost`) reached `maxCost`. A run cancelled with `queue.cancelRun`
   * adds no turn (CancelledError). Returns the next turn's id. The next turn inherits this job's
   * options unless overridden.
   *
   * @example
   * if (reply.stop_reason === 'tool_use') await job.continueWith({ runId }, { maxTurns: 25 });
   */
  async continueWith(data: DataType, opts: JobsOptions & { name?: NameType; maxTurns?: number; maxCost?: number } = {}): Promise<string> {
    return continueLoop(this, data, opts);
  }

  /**
   * Records what this job cost (tokens, cents: any unit), replacing an earlier report. For a turn
   * of a run (`continueWith`), the run's cost follows, and `continueWith({ maxCost })` stops the
   * run once it reaches its budget. Returns the run's cost (undefined outside a run).
   */
  async reportCost(cost: number): Promise<number | undefined> {
    return reportJobCost(this, cost);
  }

  /** Makes a delayed job ready now. */
  async promote(): Promise<void> {
    return promoteDelayed(this);
  }

  /** Reschedules a delayed job to run `delay` ms from now. */
  async changeDelay(delay: number): Promise<void> {
    return changeJobDelay(this, delay);
  }

  /**
   * Changes the priority of a waiting, prioritized or delayed job; with `lifo`, a ready job goes to
   * the head of the jobs of its new priority.
   */
  async changePriority(opts: { priority?: number; lifo?: boolean }): Promise<void> {
    return changeJobPriority(this, opts);
  }

  /**
   * Manual processing: completes the job held under `token` with `returnValue`. With `fetchNext`,
   * takes the next job under the same token in the same round trip. Returns BullMQ's reply (`[]`,
   * or `[jobJson, jobId, 0, 0]` for the next job) with the next Job as its `job` property.
   * Token `'0'` (BullMQ's "no lock check") means the token this Job was taken with.
   */
  async moveToCompleted(returnValue: ReturnType, token: string, fetchNext = false): Promise<NextJobReply> {
    const next = await completeHeld(this, returnValue, token, fetchNext);
    return nextJobReply(next.job ? Job.fromClaimed(this.ctx, next.job, next.now) : undefined);
  }

  /**
   * Manual processing: fails the attempt held under `token`; it is retried per `attempts` and
   * `backoff` like a worker's failure, or failed for good. Returns as `moveToCompleted` does
   * (`fetchNext` takes no job after an immediate retry).
   */
  async moveToFailed(err: Error, token: string, fetchNext = false): Promise<NextJobReply> {
    const next = await failHeld(this, err, token, fetchNext);
    return nextJobReply(next.job ? Job.fromClaimed(this.ctx, next.job, next.now) : undefined);
  }

  /** Manual processing: extends the lock held under `token` to `duration` ms from now. */
  async extendLock(token: string, duration: number): Promise<number> {
    return extendHeld(this, token, duration);
  }

  /**
   * Moves the active job held under `token` to delayed until `timestamp` (ms), without spending
   * an attempt. From a processor, throw `DelayedError` next so the worker records nothing more.
   */
  async moveToDelayed(timestamp: number, token?: string): Promise<void> {
    return delayHeld(this, timestamp, token);
  }

  /**
   * Puts the active job held under `token` back at the head of the ready jobs, without spending
   * an attempt (BullMQ's `moveToWait`). From a processor, throw `WaitingError` next so the worker
   * records nothing more; the job runs again as a new attempt start. Resolves with 0.
   */
  async moveToWait(token?: string): Promise<number> {
    return waitHeld(this, token);
  }

  /**
   * Dynamic children: after adding children (`queue.add(..., { parent: { id: job.id, queue:
   * job.queueQualifiedName } })`), moves this active job to waiting-children if any of them is
   * pending, and says whether it did; then throw `WaitingChildrenError` so the worker records
   * nothing more. The job runs again (a new attempt start, no attempt spent) once its children
   * are done. Throws UnrecoverableError if a child with `failParentOnFailure` already failed.
   *
   * @example
   * if (await job.moveToWaitingChildren(token)) throw new WaitingChildrenError();
   */
  async moveToWaitingChildren(token?: string, _opts?: { child?: { id: string; queue: string } }): Promise<boolean> {
    return waitForChildren(this, token);
  }

  /** The return values of this parent's completed children, by child key (`<prefix>:<queue>:<id>`). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- BullMQ's signature
  async getChildrenValues<CT = any>(): Promise<Record<string, CT>> {
    return (await childrenValues(this)) as Record<string, CT>;
  }

  /** The failed reasons of this parent's children that failed for good, by child key. */
  async getFailedChildrenValues(): Promise<Record<string, string>> {
    return failedChildrenValues(this);
  }

  /**
   * The failed reasons of the children this parent let go of (they failed for good with
   * continueParentOnFailure or ignoreDependencyOnFailure), by child key (BullMQ's name).
   */
  async getIgnoredChildrenFailures(): Promise<Record<string, string>> {
    return ignoredChildrenFailures(this);
  }

  /**
   * This parent's children by outcome: processed (with return values), unprocessed (pending) and
   * failed. Pass `{ processed: { cursor, count } }` (and/or unprocessed, failed) to page through
   * a large parent; the reply carries `next...Cursor` (0 when done).
   */
  async getDependencies(opts?: DependenciesOpts): Promise<DependenciesResult> {
    return dependencies(this, opts);
  }

  /** How many children this parent has by outcome (processed, unprocessed, failed, ignored; or those asked for). */
  async getDependenciesCount(opts?: {
    processed?: boolean;
    unprocessed?: boolean;
    failed?: boolean;
    ignored?: boolean;
  }): Promise<DependenciesCount> {
    return dependenciesCount(this, opts);
  }

  /** Whether the job is completed. */
  async isCompleted(): Promise<boolean> {
    return (await this.getState()) === 'completed';
  }

  /** Whether the job failed for good. */
  async isFailed(): Promise<boolean> {
    return (await this.getState()) === 'failed';
  }

  /** Whether a worker is running the job. */
  async isActive(): Promise<boolean> {
    return (await this.getState()) === 'active';
  }

  /** Whether the job waits to run (waiting or prioritized). */
  async isWaiting(): Promise<boolean> {
    const state: JobStateOrUnknown = await this.getState();
    return state === 'waiting' || state === 'prioritized';
  }

  /** Whether the job is delayed. */
  async isDelayed(): Promise<boolean> {
    return (await this.getState()) === 'delayed';
  }

  /** Whether the job waits for its children. */
  async isWaitingChildren(): Promise<boolean> {
    return (await this.getState()) === ('waiting-children' satisfies JobState);
  }

  /** The job's current state, or `unknown` if it no longer exists. */
  async getState(): Promise<JobStateOrUnknown> {
    await this.ctx.ready();
    return this.ctx.backend.getState(this.requireId());
  }

  /**
   * Resolves with the job's return value when it completes, or rejects with its failure reason
   * when it fails for good. Falls back to the stored state, so a finished job resolves at once.
   * A job that no longer exists (removed, or removed on completion before its event was read)
   * rejects with JobNotFoundError (`Missing key for job <key>. isFinished`, as in BullMQ).
   *
   * @param queueEvents a running QueueEvents of this job's queue.
   * @param ttl give up after this many ms (rejects with WaitTimeoutError).
   */
  waitUntilFinished(queueEvents: JobFinishWaiter, ttl?: number): Promise<ReturnType> {
    return queueEvents.waitForJob(this.requireId(), ttl, true) as Promise<ReturnType>;
  }

  /** The job in its stored form: data, return value and stack traces as JSON strings (BullMQ's `asJSON`). */
  asJSON(): JobJsonRaw {
    return rawJsonOf(this);
  }

  /** `asJSON()` plus the queue's names (BullMQ's `asJSONSandbox`). */
  asJSONSandbox(): JobJsonSandbox {
    return { ...this.asJSON(), queueName: this.queueName, queueQualifiedName: this.queueQualifiedName, prefix: this.prefix };
  }

  /** The job as a plain object (what `JSON.stringify(job)` writes). */
  toJSON(): JobJson {
    return plainJsonOf(this);
  }
}
