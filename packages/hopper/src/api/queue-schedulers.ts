/**
 * The Queue's job schedulers (upsertJobScheduler and its family) and BullMQ 4/5's legacy
 * repeatable jobs (add with repeat, getRepeatableJobs, removeRepeatable), which are job schedulers
 * named by their repeat key. The logic is in job-schedulers.ts and legacy-repeat.ts.
 */
import { InvalidOptionsError } from '../job/errors.js';
import type { Job } from '../job/job.js';
import type { JobsOptions } from '../job/options.js';
import type { LegacyRepeatOptions, RepeatOptions } from '../schedule/repeat-options.js';
import { SpanKind, TelemetryAttributes } from '../telemetry/telemetry.js';
import { trace } from '../telemetry/trace.js';
import { JobSchedulers, type JobSchedulerJson, type JobSchedulerState, type JobSchedulerTemplate } from './job-schedulers.js';
import { addRepeatable, repeatKey, type RepeatableJob } from './legacy-repeat.js';
import { QueueManagement } from './queue-management.js';
import { showValue } from '../validation/kit.js';

// `any` defaults keep BullMQ's generic signature (`Queue` alone accepts any data).
/* eslint-disable @typescript-eslint/no-explicit-any */
export abstract class QueueSchedulers<DataType = any, ResultType = any, NameType extends string = string> extends QueueManagement<
  DataType,
  ResultType,
  NameType
> {
  /* eslint-enable @typescript-eslint/no-explicit-any */
  /** Options merged into every job added here (the Queue's). */
  abstract defaultJobOptions: JobsOptions;
  /** Backoff type names accepted besides the built-in ones (the Queue's). */
  protected abstract readonly backoffTypes: readonly string[];
  private jobSchedulers: JobSchedulers | undefined;

  /** Made on first use: the Queue's fields it reads are set after this class's constructor runs. */
  protected get schedulers(): JobSchedulers {
    this.jobSchedulers ??= new JobSchedulers(this, () => this.defaultJobOptions, this.backoffTypes);
    return this.jobSchedulers;
  }

  /**
   * Creates or updates the job scheduler `id`: it adds a job from `template` each time `repeat`
   * fires (a cron `pattern` in `tz`, or `every` ms), with overlap, catch-up, jitter and limit
   * policies (docs/schedules.md). Idempotent: the same spec again changes nothing and keeps the
   * pending occurrence; a changed one replaces it. Safe from any number of processes at once.
   * Returns the pending occurrence's job.
   *
   * @example
   * await queue.upsertJobScheduler('nightly-report', { pattern: '30 2 * * *', tz: 'Europe/Paris' }, { name: 'report', data: {} });
   */
  upsertJobScheduler(
    id: string,
    repeat: RepeatOptions,
    template?: JobSchedulerTemplate<DataType, NameType>,
  ): Promise<Job<DataType, ResultType, NameType> | undefined> {
    return this.traceScheduler(id, template?.name ?? id, () => this.schedulers.upsert(id, repeat, template));
  }

  /** Runs a scheduler write, traced as an add when the queue has telemetry. */
  private traceScheduler(
    id: string,
    name: string,
    write: () => Promise<Job | undefined>,
  ): Promise<Job<DataType, ResultType, NameType> | undefined> {
    const run = write as () => Promise<Job<DataType, ResultType, NameType> | undefined>;
    if (!this.telemetry) return run();
    return trace(this.telemetry, SpanKind.PRODUCER, this.name, 'add', `${this.name}.${name}`, async (span) => {
      span?.setAttributes({ [TelemetryAttributes.JobSchedulerId]: id });
      const job = await run();
      if (job) span?.setAttributes({ [TelemetryAttributes.JobId]: job.id });
      return job;
    });
  }

  /**
   * `add` with `repeat` (BullMQ 4/5's legacy repeatable job): creates or updates the job
   * scheduler named by the repeat key and returns its first occurrence. Resolves to undefined
   * (as in BullMQ 5) when the schedule has no occurrence left.
   */
  protected async addRepeatable(name: NameType, data: DataType, opts: JobsOptions): Promise<Job<DataType, ResultType, NameType>> {
    const id = typeof opts.repeat === 'object' && opts.repeat !== null ? repeatKey(name, opts.repeat, opts.jobId) : name;
    return this.traceScheduler(id, name, () => addRepeatable(this.schedulers, name, data, opts)) as Promise<
      Job<DataType, ResultType, NameType>
    >;
  }

  /**
   * BullMQ 5's list of repeatable jobs: every job scheduler of the queue (legacy repeatable jobs
   * and `upsertJobScheduler` ones, which BullMQ 5 listed together), by next run (`asc`: soonest
   * first), rank range `start..end`.
   */
  async getRepeatableJobs(start = 0, end = -1, asc = false): Promise<RepeatableJob[]> {
    return this.schedulers.repeatables(start, end, asc);
  }

  /** How many repeatable jobs (job schedulers) the queue has. */
  getRepeatableCount(): Promise<number> {
    return this.schedulers.count();
  }

  /**
   * Removes the legacy repeatable job added as `add(name, data, { repeat, jobId })`: the scheduler
   * named by the same repeat key, and its pending occurrence. Returns whether it existed.
   *
   * @example await queue.removeRepeatable('bird', { every: 10_000 });
   */
  async removeRepeatable(name: NameType, repeatOpts: LegacyRepeatOptions, jobId?: string): Promise<boolean> {
    if (typeof repeatOpts !== 'object' || repeatOpts === null) {
      throw new InvalidOptionsError(`removeRepeatable needs the repeat options the job was added with, got ${showValue(repeatOpts)}.`);
    }
    return this.schedulers.remove(repeatKey(name, repeatOpts, jobId));
  }

  /** Removes a repeatable job by its key (`job.repeatJobKey`, or a key from `getRepeatableJobs`). Returns whether it existed. */
  async removeRepeatableByKey(key: string): Promise<boolean> {
    return this.schedulers.remove(key);
  }

  /**
   * A job scheduler in BullMQ's shape (`key`, `name`, `iterationCount`, the repeat fields given,
   * `next`, `template`), or undefined. Hopper's policies and counters: {@link getJobSchedulerState}
   * (the counters `fired`, `skippedByOverlap`, `missed` and `created` can also be read here, as
   * earlier versions returned them, but are not enumerable: the object equals BullMQ's).
   */
  getJobScheduler(id: string): Promise<JobSchedulerJson<DataType> | undefined> {
    return this.schedulers.get(id) as Promise<JobSchedulerJson<DataType> | undefined>;
  }

  /** Job schedulers in BullMQ's shape, by next run (`asc`: soonest first), rank range `start..end`. */
  getJobSchedulers(start = 0, end = -1, asc = false): Promise<JobSchedulerJson<DataType>[]> {
    return this.schedulers.list(start, end, asc) as Promise<JobSchedulerJson<DataType>[]>;
  }

  /**
   * Hopper's view of a job scheduler: its spec with every policy (overlap, catch-up, jitter),
   * `paused`, `next`, and its counters (`fired`, `skippedByOverlap`, `missed`, `created`), or
   * undefined.
   *
   * @example
   * const { fired, missed, next } = (await queue.getJobSchedulerState('nightly-report'))!;
   */
  getJobSchedulerState(id: string): Promise<JobSchedulerState | undefined> {
    return this.schedulers.state(id);
  }

  /** {@link getJobSchedulerState} for each scheduler, by next run (`asc`: soonest first), rank range `start..end`. */
  getJobSchedulerStates(start = 0, end = -1, asc = false): Promise<JobSchedulerState[]> {
    return this.schedulers.states(start, end, asc);
  }

  /** How many job schedulers the queue has. */
  getJobSchedulersCount(): Promise<number> {
    return this.schedulers.count();
  }

  /** Removes a job scheduler and its pending occurrence (runs already started are left alone). */
  removeJobScheduler(id: string): Promise<boolean> {
    return this.schedulers.remove(id);
  }

  /** Pauses a job scheduler: no occurrence runs until it is resumed. */
  pauseJobScheduler(id: string): Promise<boolean> {
    return this.schedulers.setPaused(id, true);
  }

  /** Resumes a paused job scheduler; what the pause missed follows its catch-up policy. */
  resumeJobScheduler(id: string): Promise<boolean> {
    return this.schedulers.setPaused(id, false);
  }

  /** Runs a job scheduler's job now, once, outside its schedule. */
  triggerJobScheduler(id: string): Promise<Job<DataType, ResultType, NameType> | undefined> {
    return this.schedulers.trigger(id) as Promise<Job<DataType, ResultType, NameType> | undefined>;
  }

  /**
   * Runs the occurrences a scheduler should have had between `from` and `to` (at most 1,000, past
   * ones only), with their regular ids: one that already ran (or is recorded as fired) is not run
   * again. Returns the ids created.
   */
  backfillJobScheduler(id: string, from: Date | number, to: Date | number): Promise<string[]> {
    return this.schedulers.backfill(id, from, to);
  }
}
