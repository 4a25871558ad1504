/**
 * The shapes around a Job: what it needs to reach storage (JobContext), its JSON forms, and the
 * parsing of stored values.
 */
import type { LastRunOutcome, QueueBackend, Retention } from '../backend/backend.js';
import type { Clock } from '../clock/clock.js';
import type { StrategyFn } from './failure.js';
import type { Job } from './job.js';
import type { JobsOptions } from './options.js';
import type { Telemetry } from '../telemetry/telemetry.js';

/** Progress of a job: a number (e.g. percent) or any JSON object. */
export type JobProgress = number | object | string | boolean;

/** What a Job needs to reach its queue's storage. */
export interface JobContext {
  readonly backend: QueueBackend;
  readonly queueName: string;
  readonly prefix: string;
  /** Waits for the owning component to be ready (connected, checked). */
  ready(): Promise<void>;
  /** The clock deciding due times (undefined `backendNow()` in production). */
  readonly clock: Clock;
  /** Called after a job's progress was stored (a Worker emits its `progress` event). */
  jobProgressed?(job: Job, progress: JobProgress): void;
  /** The worker's backoff strategy, for `job.moveToFailed` in manual processing. */
  readonly backoffStrategy?: StrategyFn;
  /** Retention of failed jobs that set none themselves (a worker's `removeOnFail`). */
  readonly failKeep?: Retention;
  /** Lock duration for jobs taken by manual processing (a worker's `lockDuration`). */
  readonly lockDuration?: number;
  /** The worker's telemetry adapter: `job.step` runs in a child span of the attempt's. */
  readonly stepTelemetry?: Telemetry;
  /** Counts an attempt finished by manual processing in the worker's latency histograms. */
  noteManualAttempt?(job: Job, now: number, outcome: LastRunOutcome): void;
}

/** Anything that can wait for a job to finish (QueueEvents). */
export interface JobFinishWaiter {
  waitForJob(jobId: string, ttl?: number, rejectMissing?: boolean): Promise<unknown>;
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
  /** A job scheduler's occurrence: the scheduler's id (as BullMQ; absent on other jobs). */
  repeatJobKey?: string;
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
  /** A job scheduler's occurrence: the scheduler's id (as BullMQ; absent on other jobs). */
  repeatJobKey?: string;
}

/**
 * The parsed options of recently seen options strings. Bounded by the characters it holds (its
 * keys; the parsed objects are of the same order): a queue of grouped jobs has one options string
 * per group (`group: { id }` is in it), so a bound by count alone of a few hundred made a worker
 * round-robining over 1,000 groups parse every job's options again.
 */
const optsCache = new Map<string, JobsOptions>();
const OPTS_CACHE_MAX_CHARS = 1 << 20;
let optsCacheChars = 0;

/**
 * A stored job's options as a Job shows them, BullMQ's way: `attempts` is 0 when none was given.
 * Many jobs share the same options string: each distinct one is parsed once (the result is shared:
 * never changed in place).
 */
export function parseOpts(raw: string | undefined): JobsOptions {
  if (!raw) return { attempts: 0 };
  let opts = optsCache.get(raw);
  if (opts === undefined) {
    opts = JSON.parse(raw) as JobsOptions;
    opts.attempts ??= 0;
    if (optsCacheChars + raw.length > OPTS_CACHE_MAX_CHARS) {
      optsCache.clear();
      optsCacheChars = 0;
    }
    optsCache.set(raw, opts);
    optsCacheChars += raw.length;
  }
  return opts;
}

/**
 * A loaded job's options with its custom id as `jobId` (as BullMQ's `job.opts.jobId`): Hopper stores
 * the id once, as the job's id, not in the options. Automatic ids are integers, custom ids never
 * are (validateJobId), so an id that is not an integer was given as `jobId` (or made by Hopper
 * for a scheduler's occurrence, whose BullMQ counterpart also carries it). Only such jobs get an
 * object of their own; the others keep the shared one.
 */
export function optsWithId(opts: JobsOptions, id: string): JobsOptions {
  return AUTOMATIC_ID.test(id) ? opts : { ...opts, jobId: id };
}
const AUTOMATIC_ID = /^\d+$/;

export function parseJson(raw: string | undefined): unknown {
  return raw === undefined || raw === '' ? undefined : (JSON.parse(raw) as unknown);
}

/** `job.asJSON()`: the job in its stored form, values as JSON strings. */
export function rawJsonOf(job: Job): JobJsonRaw {
  return {
    id: job.id as string,
    name: job.name,
    data: JSON.stringify(job.data ?? {}),
    opts: job.opts,
    progress: job.progress,
    attemptsMade: job.attemptsMade,
    attemptsStarted: job.attemptsStarted,
    finishedOn: job.finishedOn,
    processedOn: job.processedOn,
    timestamp: job.timestamp,
    delay: job.delay,
    priority: job.priority,
    failedReason: job.failedReason,
    stacktrace: JSON.stringify(job.stacktrace),
    returnvalue: JSON.stringify(job.returnvalue ?? null),
    stalledCounter: job.stalledCounter,
    ...(job.repeatJobKey === undefined ? {} : { repeatJobKey: job.repeatJobKey }),
  };
}

/** `job.toJSON()`: the job as a plain object. */
export function plainJsonOf(job: Job): JobJson {
  return {
    id: job.id,
    name: job.name,
    data: job.data,
    opts: job.opts,
    progress: job.progress,
    returnvalue: job.returnvalue,
    failedReason: job.failedReason,
    stacktrace: job.stacktrace,
    attemptsMade: job.attemptsMade,
    attemptsStarted: job.attemptsStarted,
    stalledCounter: job.stalledCounter,
    timestamp: job.timestamp,
    processedOn: job.processedOn,
    finishedOn: job.finishedOn,
    delay: job.delay,
    priority: job.priority,
    queueName: job.queueName,
    ...(job.repeatJobKey === undefined ? {} : { repeatJobKey: job.repeatJobKey }),
  };
}
