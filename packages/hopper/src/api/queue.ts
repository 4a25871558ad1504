/**
 * Queue: adds jobs and manages a queue, with BullMQ's API.
 *
 * @example
 * const queue = new Queue('mail', { connection: { host: '127.0.0.1', port: 6379 } });
 * await queue.add('welcome', { userId: 'u1' }, { jobId: 'welcome:u1', attempts: 3 });
 */
import { randomBytes } from 'node:crypto';
import type { NewJob, StateCounts } from '../backend/backend.js';
import { Job } from '../job/job.js';
import { serialize, validateJobName, validateJobOptions, type JobsOptions } from '../job/options.js';
import type { JobCountType } from '../job/states.js';
import { InvalidOptionsError } from '../job/errors.js';
import { QueueBase, type QueueBaseOptions } from './queue-base.js';

/** Options of a Queue. */
export interface QueueOptions extends QueueBaseOptions {
  /** Options merged into every job added through this queue (job options win). */
  defaultJobOptions?: JobsOptions;
  /** The events stream cap, as in BullMQ: `{ events: { maxLen } }` (default 10,000 events). */
  streams?: { events?: { maxLen?: number } };
}

/** A job to add in `addBulk`. */
export interface BulkJob<DataType, NameType extends string> {
  name: NameType;
  data: DataType;
  opts?: JobsOptions;
}

/** Default cap of the events stream. */
export const DEFAULT_MAX_EVENTS = 10_000;

// `any` defaults keep BullMQ's generic signature (`Queue` alone accepts any data).
/* eslint-disable @typescript-eslint/no-explicit-any */
export class Queue<DataType = any, ResultType = any, NameType extends string = string> extends QueueBase {
  /* eslint-enable @typescript-eslint/no-explicit-any */
  /** The options this queue was created with. */
  readonly opts: QueueOptions;
  /** Options merged into every job added here. */
  defaultJobOptions: JobsOptions;
  private readonly producerId = randomBytes(6).toString('base64url');
  private seq = 0;
  private inFlight = 0;

  constructor(name: string, opts: QueueOptions = {}) {
    super(name, opts, 'command');
    this.opts = opts;
    this.defaultJobOptions = { ...opts.defaultJobOptions };
    validateJobOptions(this.defaultJobOptions);
    const maxLen = opts.streams?.events?.maxLen;
    if (maxLen !== undefined && !(Number.isInteger(maxLen) && maxLen >= 0)) {
      throw new InvalidOptionsError(`streams.events.maxLen must be an integer >= 0, got ${String(maxLen)}.`);
    }
  }

  protected override async init(): Promise<void> {
    await this.backend.initQueue({ maxEvents: this.opts.streams?.events?.maxLen ?? DEFAULT_MAX_EVENTS });
  }

  /**
   * Adds a job. With a `jobId` that already exists, nothing is written: the existing job is
   * returned and a `duplicated` event is emitted.
   *
   * @example await queue.add('resize', { path: '/img/1.png' }, { attempts: 3, backoff: { type: 'exponential', delay: 1000 } });
   */
  async add(name: NameType, data: DataType, opts?: JobsOptions): Promise<Job<DataType, ResultType, NameType>> {
    const [job] = await this.addBulk([{ name, data, opts }]);
    return job;
  }

  /**
   * Adds several jobs atomically: all are written or none. Keep batches to about 1,000 jobs
   * so one call does not hold Redis for long.
   */
  async addBulk(jobs: BulkJob<DataType, NameType>[]): Promise<Job<DataType, ResultType, NameType>[]> {
    if (!Array.isArray(jobs)) throw new InvalidOptionsError('addBulk takes an array of { name, data, opts }.');
    const prepared = new Array<NewJob>(jobs.length);
    const merged = new Array<JobsOptions>(jobs.length);
    for (let i = 0; i < jobs.length; i++) {
      const { name, data, opts } = jobs[i];
      validateJobName(name);
      validateJobOptions(opts);
      const o = opts ? { ...this.defaultJobOptions, ...opts } : this.defaultJobOptions;
      merged[i] = o;
      prepared[i] = toNewJob(name, data, o);
    }
    if (prepared.length === 0) return [];
    await this.ready();
    this.inFlight++;
    let result;
    try {
      result = await this.backend.addJobs(
        prepared,
        { producerId: this.producerId, seq: ++this.seq, keep: Math.max(64, 2 * this.inFlight + 16) },
        this.clock.backendNow(),
      );
    } finally {
      this.inFlight--;
    }
    const out = new Array<Job<DataType, ResultType, NameType>>(jobs.length);
    for (let i = 0; i < jobs.length; i++) {
      const id = result.ids[i];
      if (result.duplicated[i]) {
        const existing = await this.getJob(id);
        if (existing) {
          this.emit('duplicated', existing);
          out[i] = existing;
          continue;
        }
      }
      const job = new Job<DataType, ResultType, NameType>(this, jobs[i].name, jobs[i].data, merged[i], id);
      job.timestamp = merged[i].timestamp ?? result.now;
      out[i] = job;
      this.emit('waiting', job);
    }
    return out;
  }

  /** The job with this id, or undefined if it does not exist. */
  async getJob(jobId: string): Promise<Job<DataType, ResultType, NameType> | undefined> {
    await this.ready();
    const record = await this.backend.getJob(String(jobId));
    return record ? Job.fromRecord<DataType, ResultType, NameType>(this, record) : undefined;
  }

  /**
   * Counts jobs per state. With no argument, every state; `wait` is BullMQ's alias of `waiting`,
   * and `paused` is always 0 (pausing a queue does not move its jobs).
   *
   * @example const { waiting, active, failed } = await queue.getJobCounts();
   */
  async getJobCounts(...types: JobCountType[]): Promise<Record<string, number>> {
    await this.ready();
    const counts = await this.backend.getStateCounts();
    const wanted = types.flat().length > 0 ? types.flat() : (Object.keys(counts) as JobCountType[]);
    const out: Record<string, number> = {};
    for (const type of wanted) out[type] = countOf(counts, type);
    return out;
  }

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

  /** Whether the queue is paused. */
  async isPaused(): Promise<boolean> {
    await this.ready();
    return this.backend.isPaused();
  }

  /** Closes the queue's connection (a connection you passed in stays open). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.backend.close();
    this.emit('closed');
  }
}

function countOf(counts: StateCounts, type: JobCountType): number {
  if (type === 'wait') return counts.waiting;
  if (type === 'paused') return 0;
  return counts[type] ?? 0;
}

function toNewJob(name: string, data: unknown, opts: JobsOptions): NewJob {
  const { jobId, ...stored } = opts;
  const storedJson = JSON.stringify(stored);
  return {
    name,
    data: serialize(data === undefined ? {} : data, 'Job data', opts.sizeLimit),
    opts: storedJson === '{}' ? '' : storedJson,
    customId: jobId ?? '',
    priority: opts.priority ?? 0,
    delay: opts.delay ?? 0,
    lifo: opts.lifo ?? false,
    timestamp: opts.timestamp ?? 0,
  };
}
