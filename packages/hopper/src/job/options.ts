/**
 * Job options (named as in BullMQ): their types, defaults and serialisation. Their validation is
 * the validation layer's (validation/job-options.ts, re-exported here): everything is checked
 * before anything is written; a bad value throws a typed error that names the option, the value
 * and what is accepted.
 */
import { InvalidDataError } from './errors.js';
import type { JobTelemetryOptions } from '../telemetry/telemetry.js';
import type { LegacyRepeatOptions } from '../schedule/repeat-options.js';

/**
 * Retention by count and/or age (seconds), as in BullMQ: `{ count }` keeps at most that many
 * finished jobs; `{ age, count? }` also drops those finished more than `age` seconds ago.
 * `limit` is accepted for BullMQ compatibility; Hopper bounds trimming work by itself.
 */
export type KeepJobs = { count: number } | { age: number; count?: number; limit?: number };

/** How long to wait before a retry. */
export interface BackoffOptions {
  /** `fixed`, `exponential`, or a name your worker's `settings.backoffStrategy` understands. */
  type: 'fixed' | 'exponential' | (string & {});
  /** Base delay in ms. */
  delay?: number;
  /** 0..1: how much of the delay is randomised (0.5 = between 50% and 100% of it). */
  jitter?: number;
}

/**
 * Deduplication, as in BullMQ: while a job added with this `id` is unfinished (no `ttl`), or for
 * `ttl` ms (throttle), adds with the same id create nothing and emit `deduplicated`. With
 * `extend`, each such add restarts the ttl; with `replace`, a still-delayed job takes the new
 * data, options and delay (debounce: the last add wins). With `keepLastIfActive`, an add while the
 * job runs is kept and added when it finishes.
 */
export interface DeduplicationOptions {
  id: string;
  /** Ms the id stays taken; without it, until the job completes, fails or is removed. */
  ttl?: number;
  /** Restart the ttl on each deduplicated add (requires ttl). */
  extend?: boolean;
  /** A deduplicated add replaces the data and delay of the job while it is delayed. */
  replace?: boolean;
  /**
   * While the job holding the id is active, a deduplicated add is kept (the last one wins) and
   * added as a new job when that job finishes for good (completed, or failed after its last
   * attempt), so a change that arrives during a run is never lost and two runs never overlap.
   * The id is then held until the job finishes: `ttl` and `extend` do not apply. Default false.
   * @example queue.add('sync', { user }, { deduplication: { id: `sync:${user}`, keepLastIfActive: true } })
   */
  keepLastIfActive?: boolean;
}

/** Options of one job (BullMQ's names and meanings). */
export interface JobsOptions {
  /** Custom id: any non-empty string up to 255 characters except integer-looking ones. A second add with the same id returns the existing job. */
  jobId?: string;
  /** Milliseconds to wait before the job may run. Default 0. */
  delay?: number;
  /** 0 (default, runs first) or 1..2^21 - 1 (2097151): lower runs sooner, FIFO within a priority. */
  priority?: number;
  /** Put the job at the head of the waiting list instead of the tail. Default false. */
  lifo?: boolean;
  /** Total attempts (first run included). Default 1. */
  attempts?: number;
  /** Delay before retries: ms (fixed) or a {@link BackoffOptions}. */
  backoff?: number | BackoffOptions;
  /** Retention when completed: true removes at once, a number keeps that many, or {age, count}. Default `{ count: 1000 }`. */
  removeOnComplete?: boolean | number | KeepJobs;
  /** Retention when failed for good: like removeOnComplete. Default: keep all failed jobs. */
  removeOnFail?: boolean | number | KeepJobs;
  /** Creation time (ms) to record instead of the server's time. */
  timestamp?: number;
  /** Keep at most this many log lines (0 = all). */
  keepLogs?: number;
  /** Keep at most this many stack traces from failed attempts. Default 10. */
  stackTraceLimit?: number;
  /** Refuse the job if its serialised data is larger than this many bytes. */
  sizeLimit?: number;
  /** Deduplicate adds by id (simple, throttle or debounce): see {@link DeduplicationOptions}. */
  deduplication?: DeduplicationOptions;
  /**
   * Where the job goes when it fails for good (attempts exhausted, UnrecoverableError, too many
   * stalls): a dead letter is added to `queue` in the same atomic step. Cancelled jobs are not.
   */
  deadLetter?: { queue: string };
  /**
   * Longest an attempt may run, ms: at the deadline its signal aborts with a TimeoutError and the
   * attempt fails (and is retried per attempts and backoff).
   */
  timeout?: number;
  /**
   * Makes this job a child of an existing job (BullMQ's `parent`): `id` and `queue`, the parent's
   * qualified queue name (`<prefix>:<queue>`, i.e. `job.queueQualifiedName`; a bare queue name
   * works too). The parent counts this job among its pending children until it finishes.
   */
  parent?: { id: string; queue: string };
  /** If this child fails for good, its parent fails too (and so on up the tree). */
  failParentOnFailure?: boolean;
  /** If this child fails for good, its parent starts at once, without waiting for its other children. */
  continueParentOnFailure?: boolean;
  /** If this child fails for good, its parent does not wait for it; the failure is listed in `getFailedChildrenValues()`. */
  ignoreDependencyOnFailure?: boolean;
  /** If this child fails for good, it is dropped from its parent's dependencies, as if it never existed. */
  removeDependencyOnFailure?: boolean;
  /**
   * Puts the job in a group (a tenant, a customer): groups take turns, and each may have its own
   * concurrency, rate limit, backlog cap and weight (docs/groups.md). Jobs of one group run in
   * order (FIFO, priority within the group).
   */
  group?: GroupOptions;
  /**
   * BullMQ 4/5's legacy repeatable job, honoured by `queue.add` only: the add creates or updates
   * the job scheduler named by the repeat key and returns its first occurrence (docs/schedules.md,
   * "Legacy repeatable jobs"). On an occurrence (of any job scheduler) it holds the schedule's
   * options and the occurrence's `count`.
   */
  repeat?: LegacyRepeatOptions;
  /** Set on a job scheduler's occurrences: the scheduler's id (also `job.repeatJobKey`). */
  repeatJobKey?: string;
  /** Set on a job scheduler's occurrences: the instant (ms) the occurrence stands for. */
  prevMillis?: number;
  /**
   * Trace propagation (BullMQ's option): `metadata` is the producer's serialised context, set by
   * a Queue or FlowProducer with `telemetry`; `omitContext: true` adds the job without it.
   */
  telemetry?: JobTelemetryOptions;
  /**
   * What the job is expected to cost, in any unit (tokens, cents): a finite number >= 0. A weighted
   * rate limit (`limiter: { ..., weight: 'cost' }`, docs/limits.md) counts it instead of 1 (a job
   * without it weighs 1), and a queue with a `budget` charges it to the job's tenant at add
   * (docs/budgets.md; `job.reportCost(actual)` corrects it afterwards). Default: none.
   * @example await queue.add('generate', { prompt }, { cost: 1200 });
   */
  cost?: number;
}

/** The options a Queue's `defaultJobOptions` holds (BullMQ's `DefaultJobOptions`): job options. */
export type DefaultJobOptions = JobsOptions;

/** A job's group (BullMQ Pro's option). */
export interface GroupOptions {
  /** The group's id: a non-empty string of at most 256 characters. */
  id: string;
  /**
   * Refuse the add with GroupMaxSizeExceededError if the group already holds this many ready
   * jobs (overrides the group's and the queue's maxSize).
   */
  maxSize?: number;
}

export {
  checkPriority,
  MAX_GROUP_ID_LENGTH,
  MAX_JOB_ID_LENGTH,
  MAX_PRIORITY,
  validateGroupId,
  validateJobId,
  validateJobName,
  validatePrefix,
  validateQueueName,
} from '../validation/names.js';
export { CHILD_FAILURE_OPTIONS, validateJobOptions } from '../validation/job-options.js';

/** Default retention of completed jobs: the last 1,000 (BullMQ keeps all by default, which fills Redis). */
export const DEFAULT_REMOVE_ON_COMPLETE: KeepJobs = { count: 1000 };
/** Default number of stack traces kept per job. */
export const DEFAULT_STACK_TRACE_LIMIT = 10;

function rejectUnserialisable(_key: string, value: unknown): unknown {
  const type = typeof value;
  if (type === 'bigint')
    throw new InvalidDataError('Job data contains a BigInt, which JSON cannot store: convert it to a string or number.');
  if (type === 'function' || type === 'symbol') {
    throw new InvalidDataError(`Job data contains a ${type}, which JSON would silently drop: remove it or convert it to plain data.`);
  }
  return value;
}

/**
 * Serialises job data (or a return value, progress) to JSON, refusing what JSON cannot carry
 * faithfully: BigInt, functions, symbols and circular structures. `undefined` is stored as `null`.
 * `what` names the value in error messages; `sizeLimit` (bytes) is checked when given.
 */
export function serialize(value: unknown, what: string, sizeLimit?: number, jobName?: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value, rejectUnserialisable);
  } catch (err) {
    if (err instanceof InvalidDataError) throw new InvalidDataError(err.message.replace('Job data', what));
    throw new InvalidDataError(`${what} cannot be serialised to JSON (${(err as Error).message}): pass plain, acyclic data.`, {
      cause: err,
    });
  }
  if (json === undefined) json = 'null';
  if (sizeLimit !== undefined && Buffer.byteLength(json) > sizeLimit) {
    // BullMQ's key phrase first, for code that matches it.
    const phrase = jobName === undefined ? '' : `The size of job ${jobName} exceeds the limit ${sizeLimit} bytes: `;
    throw new InvalidDataError(
      `${phrase}${what} is ${Buffer.byteLength(json)} bytes, over the sizeLimit of ${sizeLimit}: store large payloads elsewhere and pass a reference.`,
    );
  }
  return json;
}
