/**
 * The Queue's management operations, each bounded per script call and looped here: pause and
 * resume, drain, clean, obliterate, remove, retry and promote in bulk.
 */
import type { CleanableState } from '../backend/backend.js';
import { InvalidOptionsError, JobActiveError } from '../job/errors.js';
import { removeChildrenOption, throwIfRemoveRefused, type RemoveOptions } from '../job/job-changes.js';
import { SpanKind, TelemetryAttributes } from '../telemetry/telemetry.js';
import { trace } from '../telemetry/trace.js';
import type { JobType } from './queue-getters.js';
import { checkOptional, PROMOTE_JOBS_OPTIONS, RETRY_JOBS_OPTIONS } from '../validation/arguments.js';
import { QueueMetrics } from './queue-metrics.js';

/** Most jobs one bulk-management call (drain, clean, retry, promote, obliterate) handles. */
const BATCH = 1000;

/** BullMQ's refusal to obliterate a queue with active jobs (Bull Board matches it whole to answer 409). */
const OBLITERATE_ACTIVE = 'Cannot obliterate queue with active jobs';

// `any` defaults keep BullMQ's generic signature (`Queue` alone accepts any data).
/* eslint-disable @typescript-eslint/no-explicit-any */
export abstract class QueueManagement<DataType = any, ResultType = any, NameType extends string = string> extends QueueMetrics<
  DataType,
  ResultType,
  NameType
> {
  /* eslint-enable @typescript-eslint/no-explicit-any */
  /** Stops all workers of this queue from taking new jobs (active ones finish). Adds still work. */
  async pause(): Promise<void> {
    await this.ready();
    await this.backend.pause();
    this.emit('paused');
  }

  /** Lets workers take jobs again after `pause()`. */
  async resume(): Promise<void> {
    await this.ready();
    await this.backend.resume();
    this.emit('resumed');
  }

  /**
   * Removes every job that has not started: waiting and prioritized ones, and delayed ones too
   * with `delayed: true`. Active and finished jobs stay, and so do job schedulers' pending runs
   * (the schedulers keep firing: remove or pause a scheduler to stop it). Works in batches of 1,000.
   */
  async drain(delayed = false): Promise<void> {
    await this.ready();
    // One bounded batch per call (at most 1,000 jobs and a few hundred groups), so other
    // clients are served in between.
    let cursor: string | null = '';
    while (cursor !== null) cursor = (await this.backend.drain(delayed, BATCH, cursor)).cursor;
  }

  /**
   * Removes jobs in `type` older than `grace` ms (finished before now - grace for completed and
   * failed; created before it for waiting, prioritized, delayed), at most `limit` (0 = all).
   * Returns the removed ids. Works in batches of 1,000, so cleaning a million jobs never holds
   * Redis long. Active jobs cannot be cleaned (their workers would lose them silently), and job
   * schedulers' pending runs are kept (the schedulers keep firing).
   *
   * @example await queue.clean(24 * 3600_000, 0, 'completed'); // completed more than a day ago
   */
  async clean(grace: number, limit: number, type: JobType | 'active' = 'completed'): Promise<string[]> {
    return trace(this.telemetry, SpanKind.INTERNAL, this.name, 'clean', this.name, async (span) => {
      span?.setAttributes({
        [TelemetryAttributes.QueueGrace]: grace,
        [TelemetryAttributes.JobType]: type,
        [TelemetryAttributes.QueueCleanLimit]: limit,
      });
      const removed = await this.cleanJobs(grace, limit, type);
      span?.setAttributes({ [TelemetryAttributes.QueueCleanCount]: removed.length });
      return removed;
    });
  }

  private async cleanJobs(grace: number, limit: number, type: JobType | 'active'): Promise<string[]> {
    if (!(Number.isFinite(grace) && grace >= 0)) throw new InvalidOptionsError(`clean: grace must be a number of ms >= 0, got ${grace}.`);
    if (!(Number.isInteger(limit) && limit >= 0))
      throw new InvalidOptionsError(`clean: limit must be an integer >= 0 (0 = no limit), got ${limit}.`);
    if (type === 'active') {
      throw new JobActiveError(
        'clean: active jobs cannot be cleaned (their workers would lose them silently): let them finish, or remove them once they stall.',
      );
    }
    const state: CleanableState = type === 'wait' || type === 'paused' ? 'waiting' : (type as CleanableState);
    if (!['completed', 'failed', 'waiting', 'prioritized', 'delayed'].includes(state)) {
      throw new InvalidOptionsError(`clean: cannot clean "${type}": use completed, failed, wait, waiting, prioritized or delayed.`);
    }
    await this.ready();
    const removed: string[] = [];
    let cursor: string | null = '';
    const now = this.clock.backendNow();
    do {
      const batch = limit > 0 ? Math.min(BATCH, limit - removed.length) : BATCH;
      const step = await this.backend.clean(state, grace, batch, cursor, now);
      for (const id of step.ids) removed.push(id);
      cursor = step.cursor;
    } while (cursor !== null && (limit === 0 || removed.length < limit));
    // BullMQ names the waiting list 'wait' in this event, whichever name the call used.
    this.emit('cleaned', removed, type === 'waiting' ? 'wait' : type);
    return removed;
  }

  /**
   * Destroys the queue and everything in it, irreversibly: pauses it, then deletes its keys in
   * batches of `count` (default 1,000). Refuses while jobs are active unless `force`, with a
   * JobActiveError whose message is BullMQ's, word for word (`Cannot obliterate queue with active
   * jobs`): tools match it whole (Bull Board answers it with a 409). Close the workers first, or
   * pass `{ force: true }`.
   */
  async obliterate(opts: { force?: boolean; count?: number } = {}): Promise<void> {
    const count = opts.count ?? BATCH;
    if (!(Number.isInteger(count) && count > 0))
      throw new InvalidOptionsError(`obliterate: count must be a positive integer, got ${count}.`);
    await this.ready();
    let cursor = '0';
    do {
      const step = await this.backend.obliterate(opts.force ?? false, count, cursor);
      if (step === 'active') {
        // BullMQ's message exactly, with no advice after it: tools compare it whole.
        throw new JobActiveError(OBLITERATE_ACTIVE);
      }
      cursor = step.cursor;
    } while (cursor !== '0');
  }

  /**
   * Removes a job (any state but active), with its flow children at every depth unless
   * `removeChildren: false` (as in BullMQ). Returns 1 if removed (and emits `removed` (jobId) on
   * this Queue, as in BullMQ), 0 if it did not exist. Nothing is removed, and a typed error
   * thrown, when the job or a job in its tree is active (JobActiveError), when the tree holds more
   * than 1,000 child records (FlowTooLargeError), or for a job scheduler's pending run
   * (SchedulerJobError: remove or pause the scheduler instead, `removeJobScheduler`,
   * `pauseJobScheduler`).
   */
  async remove(jobId: string, opts?: RemoveOptions): Promise<number> {
    const withChildren = removeChildrenOption(opts, 'queue.remove');
    await this.ready();
    const result = await this.backend.removeJob(String(jobId), this.clock.backendNow(), withChildren);
    throwIfRemoveRefused(result, String(jobId), this.name, this.prefix);
    if (result.kind !== 'removed') return 0;
    this.emit('removed', String(jobId));
    return 1;
  }

  /**
   * Moves finished jobs (`state` failed by default, or completed) that finished at or before
   * `timestamp` back to waiting, `count` per call (default 1,000) until none is left.
   */
  async retryJobs(opts: { state?: 'failed' | 'completed'; count?: number; timestamp?: number } = {}): Promise<void> {
    checkOptional(RETRY_JOBS_OPTIONS, opts, 'retryJobs(opts)');
    const count = opts.count ?? BATCH;
    if (!(Number.isInteger(count) && count > 0 && count <= 10 * BATCH)) {
      throw new InvalidOptionsError(`retryJobs: count must be an integer from 1 to 10000, got ${count}.`);
    }
    await this.ready();
    const timestamp = opts.timestamp ?? Number.MAX_SAFE_INTEGER;
    while ((await this.backend.retryJobs(opts.state ?? 'failed', { count, timestamp })).count > 0) {
      // bounded batches until none is left
    }
  }

  /** Makes delayed jobs ready now, `count` per call (default 1,000) until none is left. */
  async promoteJobs(opts: { count?: number } = {}): Promise<void> {
    checkOptional(PROMOTE_JOBS_OPTIONS, opts, 'promoteJobs(opts)');
    const count = opts.count ?? BATCH;
    if (!(Number.isInteger(count) && count > 0 && count <= 10 * BATCH)) {
      throw new InvalidOptionsError(`promoteJobs: count must be an integer from 1 to 10000, got ${count}.`);
    }
    await this.ready();
    while ((await this.backend.promoteJobs({ count })).count > 0) {
      // bounded batches until none is left
    }
  }
}
