/**
 * Job: one unit of work, as BullMQ models it. A Job handed to a processor carries its attempt's
 * fence (lock token and attempt number), so its writes (progress, logs) are fenced: a stale
 * attempt's writes are rejected with a LockLostError. A Job fetched with `getJob` is unfenced.
 */
import type { ClaimedJob, Fence, JobRecord, QueueBackend } from '../backend/backend.js';
import { InvalidDataError, LockLostError, JobNotFoundError } from './errors.js';
import type { JobsOptions } from './options.js';
import { serialize } from './options.js';
import type { JobStateOrUnknown } from './states.js';
import { WriteCode } from '../backend/backend.js';

/** Progress of a job: a number (e.g. percent) or any JSON object. */
export type JobProgress = number | object | string | boolean;

/** What a Job needs to reach its queue's storage. */
export interface JobContext {
  readonly backend: QueueBackend;
  readonly queueName: string;
  readonly prefix: string;
  /** Waits for the owning component to be ready (connected, checked). */
  ready(): Promise<void>;
  /** Called after a job's progress was stored (a Worker emits its `progress` event). */
  jobProgressed?(job: Job, progress: JobProgress): void;
}

/** Anything that can wait for a job to finish (QueueEvents). */
export interface JobFinishWaiter {
  waitForJob(jobId: string, ttl?: number): Promise<unknown>;
}

/** A job in its stored form, values serialised (BullMQ's `JobJson`, from `job.asJSON()`). */
export interface JobJsonRaw {
  id: string;
  name: string;
  data: string;
  opts: JobsOptions;
  progress: JobProgress;
  attemptsMade: number;
  attemptsStarted: number;
  finishedOn?: number;
  processedOn?: number;
  timestamp: number;
  delay?: number;
  priority?: number;
  failedReason: string;
  stacktrace?: string;
  returnvalue: string;
  stalledCounter: number;
}

/** `asJSON()` plus where the job lives (BullMQ's `JobJsonSandbox`). */
export type JobJsonSandbox = JobJsonRaw & { queueName: string; queueQualifiedName: string; prefix: string };

/** The plain-object form of a job (`job.toJSON()`). */
export interface JobJson {
  id: string | undefined;
  name: string;
  data: unknown;
  opts: JobsOptions;
  progress: JobProgress;
  returnvalue: unknown;
  failedReason: string | undefined;
  stacktrace: string[];
  attemptsMade: number;
  attemptsStarted: number;
  stalledCounter: number;
  timestamp: number;
  processedOn: number | undefined;
  finishedOn: number | undefined;
  delay: number;
  priority: number;
  queueName: string;
}

const optsCache = new Map<string, JobsOptions>();

// Many jobs share the same options string: parse each distinct one once.
function parseOpts(raw: string | undefined): JobsOptions {
  if (!raw) return {};
  let opts = optsCache.get(raw);
  if (opts === undefined) {
    opts = JSON.parse(raw) as JobsOptions;
    if (optsCache.size >= 256) optsCache.clear();
    optsCache.set(raw, opts);
  }
  return opts;
}

function parseJson(raw: string | undefined): unknown {
  return raw === undefined || raw === '' ? undefined : (JSON.parse(raw) as unknown);
}

/**
 * A job. The type parameters follow BullMQ: `DataType` of `data`, `ReturnType` of the processor's
 * result, `NameType` of `name`.
 */
// `any` defaults keep BullMQ's generic signature, so `Job` alone means the same as in BullMQ.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export class Job<DataType = any, ReturnType = any, NameType extends string = string> {
  /** The job's id: an integer counter as a string, or the custom `jobId`. */
  id: string | undefined;
  name: NameType;
  data: DataType;
  /** The options the job was added with (defaults merged). */
  opts: JobsOptions;
  progress: JobProgress;
  /** The processor's result, once completed. */
  returnvalue: ReturnType;
  /** The error message of the last failed attempt. */
  failedReason: string;
  /** Stack traces of failed attempts, newest first (at most `stackTraceLimit`). */
  stacktrace: string[];
  /** Attempts that have finished (completed or failed). */
  attemptsMade: number;
  /** Attempts that have started (a claim by a worker). */
  attemptsStarted: number;
  /** Times the job was rescued after its lock expired. */
  stalledCounter: number;
  /** When the job was added (ms). */
  timestamp: number;
  /** When the current or last attempt started (ms). */
  processedOn?: number;
  /** When the job finished (ms). */
  finishedOn?: number;
  delay: number;
  priority: number;
  readonly queueName: string;
  /** The lock token of the attempt running this job (processor jobs only). */
  token?: string;
  /** Accepted for BullMQ compatibility: flows are not part of this release, so always undefined. */
  parentKey?: string;
  /** Accepted for BullMQ compatibility (job schedulers set it in BullMQ); undefined here. */
  repeatJobKey?: string;

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
    this.progress = 0;
    this.returnvalue = undefined as ReturnType;
    this.failedReason = undefined as unknown as string;
    this.stacktrace = [];
    this.attemptsMade = 0;
    this.attemptsStarted = 0;
    this.stalledCounter = 0;
    this.timestamp = opts.timestamp ?? 0;
    this.processedOn = undefined;
    this.finishedOn = undefined;
    this.delay = opts.delay ?? 0;
    this.priority = opts.priority ?? 0;
    this.token = undefined;
    this.fence = undefined;
  }

  /** The key prefix of the job's queue. */
  get prefix(): string {
    return this.ctx.prefix;
  }

  /** `prefix:queueName`, as in BullMQ. */
  get queueQualifiedName(): string {
    return `${this.ctx.prefix}:${this.queueName}`;
  }

  /** @internal builds the Job a processor receives from a claim. */
  static fromClaimed<D, R, N extends string>(ctx: JobContext, claimed: ClaimedJob, processedOn: number): Job<D, R, N> {
    const job = new Job<D, R, N>(ctx, claimed.name as N, JSON.parse(claimed.data) as D, parseOpts(claimed.opts), claimed.id);
    job.timestamp = claimed.timestamp;
    job.attemptsMade = claimed.attemptsMade;
    job.attemptsStarted = claimed.attemptsStarted;
    job.priority = claimed.priority;
    job.delay = claimed.delay;
    if (claimed.progress !== '') job.progress = JSON.parse(claimed.progress) as JobProgress;
    job.processedOn = processedOn;
    job.token = claimed.token;
    job.fence = { token: claimed.token, attempt: claimed.attemptsStarted };
    return job;
  }

  /** @internal builds a Job from its stored record. */
  static fromRecord<D, R, N extends string>(ctx: JobContext, record: JobRecord): Job<D, R, N> {
    const job = new Job<D, R, N>(ctx, record.name as N, JSON.parse(record.data) as D, parseOpts(record.opts), record.id);
    job.timestamp = record.timestamp;
    job.attemptsMade = record.attemptsMade;
    job.attemptsStarted = record.attemptsStarted;
    job.stalledCounter = record.stalledCounter;
    job.priority = record.priority;
    job.delay = record.delay;
    job.progress = (parseJson(record.progress) as JobProgress | undefined) ?? 0;
    job.processedOn = record.processedOn;
    job.finishedOn = record.finishedOn;
    job.returnvalue = parseJson(record.returnvalue) as R;
    job.failedReason = record.failedReason as string;
    job.stacktrace = (parseJson(record.stacktrace) as string[] | undefined) ?? [];
    return job;
  }

  private requireId(): string {
    if (this.id === undefined) throw new JobNotFoundError('This job has no id: it was never added to a queue.');
    return this.id;
  }

  private checkWrite(code: number, what: string): void {
    if (code === WriteCode.Missing) {
      throw new JobNotFoundError(`Cannot ${what} job ${this.id} in queue "${this.queueName}": it no longer exists.`);
    }
    if (code === WriteCode.StaleAttempt) {
      throw new LockLostError(
        `Cannot ${what} job ${this.id} in queue "${this.queueName}": this attempt no longer holds the job (its lock expired and it was rescued, or another attempt took over). The write was rejected.`,
      );
    }
  }

  /**
   * Records progress (a number or a JSON object) and emits a `progress` event.
   * From a processor, the write is fenced to this attempt.
   *
   * @example await job.updateProgress(42);
   */
  async updateProgress(progress: JobProgress): Promise<void> {
    const id = this.requireId();
    const json = serialize(progress, 'Progress');
    await this.ctx.ready();
    this.checkWrite(await this.ctx.backend.updateProgress(id, json, this.fence), 'update progress of');
    this.progress = progress;
    this.ctx.jobProgressed?.(this, progress);
  }

  /**
   * Replaces the job's data. From a processor, the write is fenced to this attempt.
   *
   * @example await job.updateData({ ...job.data, step: 2 });
   */
  async updateData(data: DataType): Promise<void> {
    const id = this.requireId();
    const json = serialize(data === undefined ? {} : data, 'Job data', this.opts.sizeLimit);
    await this.ctx.ready();
    this.checkWrite(await this.ctx.backend.updateData(id, json, this.fence), 'update data of');
    this.data = data;
  }

  /**
   * Appends a line to the job's log (kept per `keepLogs`). Returns the number of lines.
   * From a processor, the write is fenced to this attempt.
   */
  async log(logRow: string): Promise<number> {
    const id = this.requireId();
    if (typeof logRow !== 'string') throw new InvalidDataError('job.log() takes a string.');
    await this.ctx.ready();
    const count = await this.ctx.backend.addLog(id, logRow, this.fence, this.opts.keepLogs ?? 0);
    this.checkWrite(count, 'log to');
    return count;
  }

  /** The job's current state, or `unknown` if it no longer exists. */
  async getState(): Promise<JobStateOrUnknown> {
    await this.ctx.ready();
    return this.ctx.backend.getState(this.requireId());
  }

  /**
   * Resolves with the job's return value when it completes, or rejects with its failure reason
   * when it fails for good. Falls back to the stored state, so a finished job resolves at once.
   *
   * @param queueEvents a running QueueEvents of this job's queue.
   * @param ttl give up after this many ms (rejects with WaitTimeoutError).
   */
  waitUntilFinished(queueEvents: JobFinishWaiter, ttl?: number): Promise<ReturnType> {
    return queueEvents.waitForJob(this.requireId(), ttl) as Promise<ReturnType>;
  }

  /** The job in its stored form: data, return value and stack traces as JSON strings (BullMQ's `asJSON`). */
  asJSON(): JobJsonRaw {
    return {
      id: this.id as string,
      name: this.name,
      data: JSON.stringify(this.data ?? {}),
      opts: this.opts,
      progress: this.progress,
      attemptsMade: this.attemptsMade,
      attemptsStarted: this.attemptsStarted,
      finishedOn: this.finishedOn,
      processedOn: this.processedOn,
      timestamp: this.timestamp,
      delay: this.delay,
      priority: this.priority,
      failedReason: this.failedReason,
      stacktrace: JSON.stringify(this.stacktrace),
      returnvalue: JSON.stringify(this.returnvalue ?? null),
      stalledCounter: this.stalledCounter,
    };
  }

  /** `asJSON()` plus the queue's names (BullMQ's `asJSONSandbox`). */
  asJSONSandbox(): JobJsonSandbox {
    return { ...this.asJSON(), queueName: this.queueName, queueQualifiedName: this.queueQualifiedName, prefix: this.prefix };
  }

  /** The job as a plain object (what `JSON.stringify(job)` writes). */
  toJSON(): JobJson {
    return {
      id: this.id,
      name: this.name,
      data: this.data,
      opts: this.opts,
      progress: this.progress,
      returnvalue: this.returnvalue,
      failedReason: this.failedReason,
      stacktrace: this.stacktrace,
      attemptsMade: this.attemptsMade,
      attemptsStarted: this.attemptsStarted,
      stalledCounter: this.stalledCounter,
      timestamp: this.timestamp,
      processedOn: this.processedOn,
      finishedOn: this.finishedOn,
      delay: this.delay,
      priority: this.priority,
      queueName: this.queueName,
    };
  }
}
