/**
 * The Queue's operations on one job or run by id, from any process: cancel (with a flow's
 * pending children), progress and log lines written from outside a processor, deduplication
 * keys, runs of turns (`continueWith`: cancel, read), and the maintenance calls beside them
 * (trimEvents, removeOrphanedJobs).
 */
import { WriteCode, type QueueBackend } from '../backend/backend.js';
import { InvalidDataError, InvalidOptionsError, JobNotFoundError, SchedulerJobError } from '../job/errors.js';
import type { JobProgress } from '../job/job-json.js';
import { serialize } from '../job/options.js';
import { cancelChildren } from './flows.js';
import { QueueSchedulers } from './queue-schedulers.js';
import { showValue } from '../validation/kit.js';

/** The Queue's operations on one job or run by id (a layer of Queue: see the Queue class). */
// `any` defaults keep BullMQ's generic signature (`Queue` alone accepts any data).
/* eslint-disable @typescript-eslint/no-explicit-any */
export abstract class QueueJobOps<DataType = any, ResultType = any, NameType extends string = string> extends QueueSchedulers<
  DataType,
  ResultType,
  NameType
> {
  /* eslint-enable @typescript-eslint/no-explicit-any */
  /**
   * Cancels a job from any process. One that has not started fails at once with a CancelledError
   * reason (no retry, never dead-lettered): 'cancelled'. An active one's processor sees its signal
   * abort promptly, and the attempt ends as cancelled whatever it returns: 'signalled'. Returns
   * 'missing' for no such job, 'finished' if it already completed or failed (not cancelled).
   * Cancellation is sticky: a cancelled active job whose worker dies, closes or loses it ends
   * failed as cancelled, never back in line; only a retry (`retryJobs`, `job.retry`) runs it
   * again, and the retry clears the cancellation. Idempotent: cancelling a cancelled job again
   * answers as the first call did ('cancelled', or 'signalled' while it is still active), so a
   * call re-sent after a lost reply changes nothing twice.
   *
   * Cancelling a parent (a flow, or a job with dynamic children) also cancels its pending
   * children, and theirs, from this call, in batches; children that already finished are left.
   *
   * A job scheduler's pending run (its delayed occurrence) is refused with a SchedulerJobError:
   * remove or pause the scheduler instead. A running occurrence is an ordinary job.
   */
  async cancelJob(jobId: string, reason = 'cancelled'): Promise<'cancelled' | 'signalled' | 'missing' | 'finished'> {
    await this.ready();
    const failedReason = `CancelledError: ${reason}`;
    const { kind } = await this.backend.cancelJob(String(jobId), failedReason, { kind: 'keep' }, this.clock.backendNow());
    if (kind === 'pendingRun') throw SchedulerJobError.of(String(jobId), SchedulerJobError.schedulerOf(String(jobId)), 'cancelled');
    if (kind === 'cancelled' || kind === 'signalled') {
      const siblings = new Map<string, QueueBackend>([[this.name, this.backend]]);
      const backendFor = (queue: string): QueueBackend => {
        let backend = siblings.get(queue);
        if (!backend) siblings.set(queue, (backend = this.backend.sibling(queue)));
        return backend;
      };
      await cancelChildren(this.prefix, backendFor, this.name, String(jobId), failedReason, () => this.clock.backendNow());
    }
    return kind;
  }

  /** Trims the events stream to about `maxLength` entries; returns how many were removed. */
  async trimEvents(maxLength: number): Promise<number> {
    if (!(Number.isInteger(maxLength) && maxLength >= 0))
      throw new InvalidOptionsError(`trimEvents: maxLength must be an integer >= 0, got ${maxLength}.`);
    await this.ready();
    return this.backend.trimEvents(maxLength);
  }

  /** Forgets a deduplication id: the next add with it creates a job. Returns 1 if it existed, else 0 (BullMQ's count). */
  async removeDeduplicationKey(deduplicationId: string): Promise<number> {
    await this.ready();
    return (await this.backend.removeDeduplicationKey(deduplicationId)) ? 1 : 0;
  }

  /**
   * Sets the progress of job `jobId` (a number or a JSON object), as `job.updateProgress` from
   * outside a processor (not fenced). Emits `progress` (jobId, progress) on this Queue, and the
   * `progress` event for QueueEvents. Throws JobNotFoundError if the job does not exist.
   */
  async updateJobProgress(jobId: string, progress: JobProgress): Promise<void> {
    const json = serialize(progress, 'Progress');
    await this.ready();
    const code = await this.backend.updateProgress(jobId, json, undefined);
    if (code === WriteCode.Missing)
      throw new JobNotFoundError(`Missing key for job ${jobId}. updateProgress: job ${jobId} does not exist in queue "${this.name}".`);
    this.emit('progress', jobId, progress);
  }

  /**
   * Appends a line to job `jobId`'s log, as `job.log` from outside a processor (not fenced),
   * keeping at most `keepLogs` lines (0: all). Returns the number of lines. Throws
   * JobNotFoundError if the job does not exist.
   */
  async addJobLog(jobId: string, logRow: string, keepLogs = 0): Promise<number> {
    if (typeof logRow !== 'string') throw new InvalidDataError('queue.addJobLog(jobId, logRow) takes a string logRow.');
    if (!(Number.isInteger(keepLogs) && keepLogs >= 0))
      throw new InvalidOptionsError(`addJobLog: keepLogs must be an integer >= 0 (0: keep all), got ${keepLogs}.`);
    await this.ready();
    const { code, count } = await this.backend.addLog(jobId, logRow, undefined, keepLogs);
    if (code === WriteCode.Missing)
      throw new JobNotFoundError(`Missing key for job ${jobId}. addLog: job ${jobId} does not exist in queue "${this.name}".`);
    return count;
  }

  /**
   * Deletes orphaned jobs: job records that no state holds (BullMQ's migration helper for data
   * leaked by a BullMQ bug). Hopper's scripts never leave one, so on a healthy queue this finds
   * nothing; it is kept for compatibility and for data damaged outside Hopper. An orphan is
   * deleted as `job.remove()` deletes a job. Scans the queue's job keys with SCAN, `count` keys
   * per step, and stops once `limit` orphans are removed (0: no limit), so a large
   * clean-up can run in a loop: `while (await queue.removeOrphanedJobs(1000, 10_000)) {}`.
   * Returns how many were removed.
   */
  async removeOrphanedJobs(count = 1000, limit = 0): Promise<number> {
    if (!(Number.isInteger(count) && count > 0))
      throw new InvalidOptionsError(`removeOrphanedJobs: count must be an integer > 0 (keys per SCAN step), got ${count}.`);
    if (!(Number.isInteger(limit) && limit >= 0))
      throw new InvalidOptionsError(`removeOrphanedJobs: limit must be an integer >= 0 (0: no limit), got ${limit}.`);
    await this.ready();
    return this.backend.removeOrphanedJobs(count, limit);
  }

  /**
   * Cancels a run of turns (jobs chained with `job.continueWith`; the run's id is its first
   * turn's id, or that id without its `:0`): no turn of it is added any more, and its latest turn is cancelled as `cancelJob`
   * cancels a job (an active one's signal aborts). Returns that turn's id and what `cancelJob`
   * answered for it. Cancelling twice keeps the first reason.
   *
   * @example
   * await queue.cancelRun(runId, 'the user stopped the agent');
   */
  async cancelRun(
    runId: string,
    reason = 'cancelled',
  ): Promise<{ turn: string; result: 'cancelled' | 'signalled' | 'missing' | 'finished' }> {
    if (typeof runId !== 'string' || runId === '')
      throw new InvalidDataError(`cancelRun: runId must be a non-empty string, got ${showValue(runId)}.`);
    if (typeof reason !== 'string') throw new InvalidDataError(`cancelRun: reason must be a string, got ${typeof reason}.`);
    await this.ready();
    const last = await this.backend.cancelRun(runId, reason);
    if (last !== undefined) return { turn: last, result: await this.cancelJob(last, reason) };
    // A run that never continued is its first turn: `<runId>`, or `<runId>:0`.
    const result = await this.cancelJob(runId, reason);
    if (result !== 'missing') return { turn: runId, result };
    return { turn: `${runId}:0`, result: await this.cancelJob(`${runId}:0`, reason) };
  }

  /**
   * A run of turns (`job.continueWith`): its latest turn, its cost so far (the sum of its turns'
   * `job.reportCost`), and whether it was cancelled. Undefined for a run that never continued.
   */
  async getRun(
    runId: string,
  ): Promise<{ id: string; lastTurn: string | undefined; cost: number; cancelled: boolean; cancelReason?: string } | undefined> {
    await this.ready();
    const run = await this.backend.getRun(runId);
    if (!run) return undefined;
    return { id: runId, lastTurn: run.lastTurn, cost: run.cost, cancelled: run.cancelReason !== undefined, cancelReason: run.cancelReason };
  }
}
