/**
 * The fields of a Job (BullMQ's names and meanings) and its constructor; what a job does is in
 * the Job class (job.ts), which extends this one.
 */
import type { Fence } from '../backend/backend.js';
import { JobNotFoundError } from './errors.js';
import type { JobContext, JobProgress } from './job-json.js';
import type { JobsOptions } from './options.js';

/** A job's fields; see Job. */
// `any` defaults keep BullMQ's generic signature (see Job).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export abstract class JobFields<DataType = any, ReturnType = any, NameType extends string = string> {
  /** The job's id: an integer counter as a string, or the custom `jobId`. */
  id: string | undefined;
  name: NameType;
  data: DataType;
  /** The options the job was added with (defaults merged). */
  opts: JobsOptions;
  progress: JobProgress = 0;
  /** The processor's result, once completed (null before, as BullMQ). */
  returnvalue: ReturnType = null as ReturnType; // BullMQ's value until the job completes
  /** The error message of the last failed attempt. */
  failedReason: string = undefined as unknown as string;
  /** Stack traces of failed attempts, newest first (at most `stackTraceLimit`). */
  stacktrace: string[] = [];
  /** Attempts that have finished (completed or failed). */
  attemptsMade = 0;
  /** Attempts that have started (a claim by a worker). */
  attemptsStarted = 0;
  /** Times the job was rescued after its lock expired. */
  stalledCounter = 0;
  /** When the job was added (ms). */
  timestamp: number;
  /** When the current or last attempt started (ms). */
  processedOn?: number;
  /** When the job finished (ms). */
  finishedOn?: number;
  /** The `name` of the worker that ran its current or last attempt, if that worker had one (as BullMQ). */
  processedBy?: string;
  delay: number;
  priority: number;
  readonly queueName: string;
  /** The lock token of the attempt running this job (processor jobs only). */
  token?: string;
  /** For a child: its parent's key, `<prefix>:<queue>:<id>` (as in BullMQ). */
  parentKey?: string;
  /** For a child: its parent's id and qualified queue name (`<prefix>:<queue>`), as in BullMQ. */
  parent?: { id: string; queueKey: string };
  /**
   * For a job scheduler's occurrence: the scheduler's id (for a legacy repeatable job, its repeat
   * key, as `getRepeatableJobs()` lists it and `removeRepeatableByKey` takes it), as in BullMQ.
   */
  repeatJobKey?: string;
  /** For a dead letter (a job in a dead-letter queue): the job it records, and when it failed. */
  deadLetterOrigin?: { queue: string; jobId: string; failedOn?: number };

  /** The job's deduplication id (`opts.deduplication.id`), as in BullMQ. */
  deduplicationId?: string;

  /** Set by `discard()`: a failure of this attempt will not be retried. */
  discarded = false;

  /** @internal */
  readonly ctx: JobContext;
  /** @internal the fence of the attempt that holds this job, when handed to a processor. */
  fence: Fence | undefined;
  /** Builds a Job object; to add a job, use `queue.add`. */
  constructor(ctx: JobContext, name: NameType, data: DataType, opts: JobsOptions = {}, id?: string) {
    this.ctx = ctx;
    this.queueName = ctx.queueName;
    this.id = id;
    this.name = name;
    this.data = data;
    this.opts = opts;
    this.deduplicationId = opts.deduplication?.id;
    this.repeatJobKey = opts.repeatJobKey;
    this.timestamp = opts.timestamp ?? 0;
    this.delay = opts.delay ?? 0;
    this.priority = opts.priority ?? 0;
  }

  /** The key prefix of the job's queue. */
  get prefix(): string {
    return this.ctx.prefix;
  }

  /** `prefix:queueName`, as in BullMQ. */
  get queueQualifiedName(): string {
    return `${this.ctx.prefix}:${this.queueName}`;
  }

  /** @internal the job's id; throws if it was never added. */
  requireId(): string {
    if (this.id === undefined) throw new JobNotFoundError('This job has no id: it was never added to a queue.');
    return this.id;
  }
}
