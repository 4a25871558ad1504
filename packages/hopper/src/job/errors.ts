/**
 * Hopper's typed errors.
 *
 * Every error Hopper throws on purpose carries a brand (`Symbol.for('hopper.error')` set to its
 * code), and `instanceof` checks the brand as well as the prototype chain. An app that loads
 * Hopper twice (an ESM and a CommonJS copy, say) still recognises errors made by the other copy.
 */
import { parseOccurrenceId } from '../schedule/occurrence-id.js';

const BRAND = Symbol.for('hopper.error');

/** Every error code Hopper uses, one per error class. */
export const ErrorCode = {
  InvalidOptions: 'ERR_HOPPER_INVALID_OPTIONS',
  InvalidData: 'ERR_HOPPER_INVALID_DATA',
  InvalidName: 'ERR_HOPPER_INVALID_NAME',
  InvalidJobId: 'ERR_HOPPER_INVALID_JOB_ID',
  InvalidSchedule: 'ERR_HOPPER_INVALID_SCHEDULE',
  LockLost: 'ERR_HOPPER_LOCK_LOST',
  Closed: 'ERR_HOPPER_CLOSED',
  CloseTimeout: 'ERR_HOPPER_CLOSE_TIMEOUT',
  Connection: 'ERR_HOPPER_CONNECTION',
  ConnectionTimeout: 'ERR_HOPPER_CONNECTION_TIMEOUT',
  LibraryConflict: 'ERR_HOPPER_LIBRARY_CONFLICT',
  DatabaseLost: 'ERR_HOPPER_DATABASE_LOST',
  Unrecoverable: 'ERR_HOPPER_UNRECOVERABLE',
  UnsupportedRedis: 'ERR_HOPPER_UNSUPPORTED_REDIS',
  CrossSlot: 'ERR_HOPPER_CROSS_SLOT',
  Script: 'ERR_HOPPER_SCRIPT',
  JobNotFound: 'ERR_HOPPER_JOB_NOT_FOUND',
  QueueNotFound: 'ERR_HOPPER_QUEUE_NOT_FOUND',
  UnknownBackoff: 'ERR_HOPPER_UNKNOWN_BACKOFF',
  WaitTimeout: 'ERR_HOPPER_WAIT_TIMEOUT',
  DatasetReset: 'ERR_HOPPER_DATASET_RESET',
  JobActive: 'ERR_HOPPER_JOB_ACTIVE',
  InvalidState: 'ERR_HOPPER_INVALID_STATE',
  Delayed: 'ERR_HOPPER_DELAYED',
  Waiting: 'ERR_HOPPER_WAITING',
  WaitingChildren: 'ERR_HOPPER_WAITING_CHILDREN',
  RateLimited: 'ERR_HOPPER_RATE_LIMITED',
  Cancelled: 'ERR_HOPPER_CANCELLED',
  Timeout: 'ERR_HOPPER_TIMEOUT',
  ReplayRefused: 'ERR_HOPPER_REPLAY_REFUSED',
  FlowConflict: 'ERR_HOPPER_FLOW_CONFLICT',
  FlowTooLarge: 'ERR_HOPPER_FLOW_TOO_LARGE',
  GroupMaxSizeExceeded: 'ERR_HOPPER_GROUP_MAX_SIZE_EXCEEDED',
  BudgetExceeded: 'ERR_HOPPER_BUDGET_EXCEEDED',
  CostAboveRateLimit: 'ERR_HOPPER_COST_ABOVE_RATE_LIMIT',
  UnsupportedOption: 'ERR_HOPPER_UNSUPPORTED_OPTION',
  SchedulerJob: 'ERR_HOPPER_SCHEDULER_JOB',
  RedisFull: 'ERR_HOPPER_REDIS_FULL',
  BackendUnsupported: 'ERR_HOPPER_BACKEND_UNSUPPORTED',
  BackendDriverMissing: 'ERR_HOPPER_BACKEND_DRIVER_MISSING',
  Migration: 'ERR_HOPPER_MIGRATION',
  Backend: 'ERR_HOPPER_BACKEND',
} as const;

/** One of the codes in {@link ErrorCode}. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

type Branded = { [BRAND]?: string };

/** Reads the brand of any value: the Hopper error code it carries, if any. */
export function hopperErrorCode(value: unknown): ErrorCode | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const code = (value as Branded)[BRAND];
  return typeof code === 'string' ? (code as ErrorCode) : undefined;
}

/**
 * Base class of every error Hopper throws on purpose. `code` tells which one it is;
 * `instanceof HopperError` is true for errors from any loaded copy of Hopper.
 */
export class HopperError extends Error {
  /** The stable machine-readable code of this error. */
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
    Object.defineProperty(this, BRAND, { value: code, enumerable: false });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    const code = hopperErrorCode(value);
    if (code === undefined) return false;
    if (this === HopperError) return true;
    const own = (this as unknown as { brandCode?: ErrorCode }).brandCode;
    return own !== undefined && own === code;
  }
}

/**
 * What {@link branded} returns: a HopperError subclass with a fixed code. Declared (rather than
 * inferred) so that the published types say the error classes extend HopperError, hence Error:
 * an inferred anonymous class is written into the .d.ts as a bare object type, and
 * typescript-eslint's only-throw-error then refused `throw new UnrecoverableError()` in users' code.
 */
interface BrandedErrorClass {
  new (message: string, options?: { cause?: unknown }): HopperError;
  readonly prototype: HopperError;
  /** The code this class answers to in `instanceof`. */
  readonly brandCode: ErrorCode;
  [Symbol.hasInstance](value: unknown): boolean;
}

/** Declares the brand code a subclass answers to in `instanceof` across module copies. */
function branded<C extends ErrorCode>(code: C): BrandedErrorClass {
  return class extends HopperError {
    static readonly brandCode: ErrorCode = code;
    constructor(message: string, options?: { cause?: unknown }) {
      super(code, message, options);
    }
  };
}

/**
 * An option or argument had a value Hopper cannot use; nothing was written. The message names the
 * option, the value and what is accepted; when the validation layer refused it, `option` (a dotted
 * path such as `removeOnComplete.age`, or a method's argument: `extendLock(duration)`), `value`
 * and `accepted` say the same as fields.
 */
export class InvalidOptionsError extends branded(ErrorCode.InvalidOptions) {
  /** The refused option or argument, when known. */
  option?: string;
  /** The refused value, when known. */
  value?: unknown;
  /** What the option accepts, in words, when known. */
  accepted?: string;

  /** `option` got `value`, which it does not accept (`accepted` says what it does; `hint` why or how to fix it). */
  static of(option: string, value: unknown, accepted: string, hint?: string): InvalidOptionsError {
    const err = new InvalidOptionsError(`${option} must be ${accepted}, got ${showRefused(value)}${hint ? `: ${hint}` : ''}.`);
    err.option = option;
    err.value = value;
    err.accepted = accepted;
    return err;
  }

  /** `option` is not an option of its set: `known` lists the names (the closest one when `near`). */
  static unknown(option: string, value: unknown, known: readonly string[], near: boolean): InvalidOptionsError {
    const name = option.slice(option.lastIndexOf('.') + 1);
    const err = new InvalidOptionsError(
      near
        ? `Unknown option ${option}: did you mean '${known[0]}'? An unknown option would change nothing, so it is refused.`
        : `Unknown option ${option}: it is not one of ${known.join(', ')}. An unknown option would change nothing, so it is refused.`,
    );
    err.option = option;
    err.value = value;
    err.accepted = near ? `'${known[0]}' (not '${name}')` : `one of ${known.join(', ')}`;
    return err;
  }
}

/** A refused value as a message shows it (short; never throws, whatever the value). */
export function showRefused(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}...` : value);
  if (typeof value === 'bigint') return `${String(value)}n`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return value.toString();
  if (typeof value !== 'object' || value === null) return Object.is(value, -0) ? '-0' : String(value);
  try {
    const json = JSON.stringify(value);
    if (json === undefined) return Object.prototype.toString.call(value);
    return json.length > 120 ? `${json.slice(0, 120)}...` : json;
  } catch {
    return 'a value that JSON cannot show';
  }
}

/**
 * A BullMQ option Hopper does not implement was used with a value that asks for something:
 * refused rather than silently ignored. The message names it and what to use instead; `owner`
 * says where it was passed (`Queue`, `Worker`, `job`, ...) and `option` its name.
 */
export class UnsupportedOptionError extends branded(ErrorCode.UnsupportedOption) {
  /** Where the option was passed: `Queue`, `Worker`, `QueueEvents`, `FlowProducer`, `job`, `deduplication`, `settings`. */
  readonly owner: string;
  /** The option's name. */
  readonly option: string;

  constructor(message: string, owner = '', option = '') {
    super(message);
    this.owner = owner;
    this.option = option;
  }
}

/** Job data (or a return value, progress, log) cannot be stored: not JSON-serialisable or too big. */
export class InvalidDataError extends branded(ErrorCode.InvalidData) {}

/** A queue or job name that would break Redis keys or is empty. */
export class InvalidNameError extends branded(ErrorCode.InvalidName) {}

/** A custom job id Hopper refuses (empty, too long, or integer-looking). */
export class InvalidJobIdError extends branded(ErrorCode.InvalidJobId) {}

/** A schedule (cron pattern, time zone, interval, dates) that is invalid or never fires. */
export class InvalidScheduleError extends branded(ErrorCode.InvalidSchedule) {}

/**
 * A write from an attempt that no longer holds the job: its lock expired and the job was rescued,
 * or the job was removed. The write changed nothing.
 */
export class LockLostError extends branded(ErrorCode.LockLost) {}

/** The queue, worker or connection was closed. */
export class ClosedError extends branded(ErrorCode.Closed) {}

/**
 * `worker.close()` reached its deadline (`closeTimeout`): a processor did not settle in time, or
 * Redis did not answer. The jobs still running were released for another worker at once and
 * their processors aborted; `jobIds` names them.
 */
export class CloseTimeoutError extends branded(ErrorCode.CloseTimeout) {
  /** The jobs released for another worker when the deadline passed. */
  readonly jobIds: string[];

  constructor(message: string, jobIds: string[] = [], options?: { cause?: unknown }) {
    super(message, options);
    this.jobIds = jobIds;
  }
}

/**
 * The backend cannot be reached or refuses to serve now: the connection was refused or reset, the
 * host is unknown, Redis answered BUSY (a script ran past busy-reply-threshold) or LOADING, or a
 * SQLite database cannot be opened (its directory is missing) or stays locked by another process.
 * The message says what was wrong and what to check; `cause` is the underlying error. Nothing of
 * the call was sent. Hopper keeps trying in the background: a component whose start failed
 * starts by itself once the backend answers (a Worker then processes jobs), and a later call
 * tries again. See docs/limits-and-errors.md, Time bounds.
 */
export class ConnectionError extends branded(ErrorCode.Connection) {}

/**
 * The backend did not answer within a stated bound (docs/limits-and-errors.md, Time bounds): a
 * connection stayed without a working link for `connectTimeout` (default 10 s; a server that
 * accepts the connection but never answers, a firewall that drops packets), or a component did not
 * start in time. The message names the bound and what to check. A call that failed this way was
 * not sent, unless the message says its outcome is unknown.
 */
export class ConnectionTimeoutError extends branded(ErrorCode.ConnectionTimeout) {}

/**
 * A Redis Functions library with Hopper's library name is loaded on the server but does not hold
 * Hopper's functions (another program, or a hand-edited copy, loaded it under that name). Every
 * operation needs them: delete that library (`FUNCTION DELETE <name>`, named in the message) and
 * Hopper loads its own at the next call; components recover by themselves.
 */
export class LibraryConflictError extends branded(ErrorCode.LibraryConflict) {}

/**
 * The SQLite database file this process has open was deleted or replaced (its path now names
 * another file, or none): writes would go to an unlinked file that no other process sees. The
 * backend stops using it; every call rejects with this error. Restore the file, or restart the
 * processes on the new one.
 */
export class DatabaseLostError extends branded(ErrorCode.DatabaseLost) {}

/** The Redis server is too old or lacks something Hopper needs. */
export class UnsupportedRedisError extends branded(ErrorCode.UnsupportedRedis) {}

/** Keys that must change atomically would live in different Redis Cluster slots. */
export class CrossSlotError extends branded(ErrorCode.CrossSlot) {}

/**
 * A Lua script failed inside Redis (its message names the script and Redis's error; `cause` is the
 * original reply error). A worker whose acknowledgement batch fails this way retries the batch job
 * by job and reports each job that still fails with this error (`jobId` set), then goes on.
 */
export class ScriptError extends branded(ErrorCode.Script) {
  /** The job a worker's isolated acknowledgement failed for, when known. */
  jobId?: string;
}

/**
 * Redis refused an add because it is full: `used_memory` is over `maxmemory` and the policy is
 * `noeviction` (the one Hopper asks for), so Redis answered `OOM command not allowed`. Nothing
 * of the call was written (adds are atomic), and it is safe to retry. Jobs already in the queue
 * are not affected: workers keep renewing their locks and recording results while Redis is full,
 * and each finished job they remove frees room. Raised by `Queue.add`, `Queue.addBulk`,
 * `FlowProducer.add` and `FlowProducer.addBulk`; `cause` is Redis's reply.
 *
 * What to do: retry later with a backoff (workers draining the queue free memory), raise
 * `maxmemory`, or make room (keep fewer finished jobs: `removeOnComplete`/`removeOnFail`,
 * `queue.clean`, or `queue.drain`/`obliterate` on a queue you can empty).
 *
 * @example
 * try {
 *   await queue.add('mail', data);
 * } catch (err) {
 *   if (err instanceof RedisFullError) await retryLater(data);
 *   else throw err;
 * }
 */
export class RedisFullError extends branded(ErrorCode.RedisFull) {}

/** Redis's refusal of a write under `maxmemory` with `noeviction`. */
const OOM_REPLY = /OOM command not allowed/;

/**
 * For the add paths: Redis's OOM refusal (raw, or wrapped in a ScriptError) becomes a
 * {@link RedisFullError} naming `what` was refused; any other error is returned unchanged.
 */
export function asRedisFullError(err: unknown, what: string): unknown {
  const message = err instanceof Error ? err.message : '';
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : '';
  if (!OOM_REPLY.test(message) && !OOM_REPLY.test(cause)) return err;
  return new RedisFullError(
    `Redis is full (used memory over maxmemory, policy noeviction) and refused ${what}: nothing was written. ` +
      'Retry later (workers free memory as they finish jobs), raise maxmemory, or make room ' +
      '(removeOnComplete/removeOnFail, queue.clean, or drain a queue you can empty).',
    { cause: err instanceof Error && err.cause instanceof Error && OOM_REPLY.test(cause) ? err.cause : err },
  );
}

/** The job does not exist (never added, or removed by retention or a call). */
export class JobNotFoundError extends branded(ErrorCode.JobNotFound) {}

/** No queue of that name exists under the prefix (an {@link Admin} never creates one). */
export class QueueNotFoundError extends branded(ErrorCode.QueueNotFound) {}

/**
 * A flow cannot be added as asked: a child's custom id is taken by an existing job while its
 * parent is new, or the existing parent a job should join is missing or finished. Nothing was written.
 */
export class FlowConflictError extends branded(ErrorCode.FlowConflict) {}

/**
 * A job's flow tree is too large to remove with its children in one bounded call (more than
 * 1,000 child records at every level). Nothing was removed. The message says what to do instead.
 */
export class FlowTooLargeError extends branded(ErrorCode.FlowTooLarge) {}

/** A backoff type the worker has no strategy for. */
export class UnknownBackoffError extends branded(ErrorCode.UnknownBackoff) {}

/** `waitUntilFinished` reached its time limit before the job finished. */
export class WaitTimeoutError extends branded(ErrorCode.WaitTimeout) {}

/** The Redis dataset was reset (flushed or restarted without persistence) under a running app. */
export class DatasetResetError extends branded(ErrorCode.DatasetReset) {}

/**
 * Throw from a processor to fail the job at once, without the remaining attempts.
 * Named as in BullMQ; errors named `UnrecoverableError` from BullMQ itself are honoured too.
 *
 * @example
 * throw new UnrecoverableError(`invalid invoice ${job.data.id}`);
 */
export class UnrecoverableError extends Error {
  constructor(message?: string) {
    super(message);
    this.name = 'UnrecoverableError';
    Object.defineProperty(this, BRAND, { value: ErrorCode.Unrecoverable, enumerable: false });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return (
      Function.prototype[Symbol.hasInstance].call(this, value) ||
      hopperErrorCode(value) === ErrorCode.Unrecoverable ||
      (value instanceof Error && value.name === 'UnrecoverableError')
    );
  }
}

/** The operation needs the job not to be active (a worker holds it): finish, fail or stop it first. */
export class JobActiveError extends branded(ErrorCode.JobActive) {}

/** The job is not in a state the operation works on (e.g. changeDelay on a job that is not delayed). */
export class InvalidStateError extends branded(ErrorCode.InvalidState) {}

/** Defines an error class recognised by name (BullMQ's classes of the same name count too) and by brand. */
function signalError<N extends string>(name: N, code: ErrorCode, defaultMessage: string) {
  return class extends Error {
    constructor(message: string = defaultMessage) {
      super(message);
      this.name = name;
      Object.defineProperty(this, BRAND, { value: code, enumerable: false });
    }

    static override [Symbol.hasInstance](value: unknown): boolean {
      return (
        Function.prototype[Symbol.hasInstance].call(this, value) ||
        hopperErrorCode(value) === code ||
        (value instanceof Error && value.name === name)
      );
    }
  };
}

/**
 * Throw from a processor after `job.moveToDelayed(timestamp, token)`: the job was moved on
 * purpose, so the worker records nothing more for this attempt (BullMQ's pattern).
 */
export class DelayedError extends signalError('DelayedError', ErrorCode.Delayed, 'Delayed job') {}

/**
 * Throw from a processor after `job.moveToWait(token)`: the job was put back in line on purpose,
 * so the worker records nothing more for this attempt (BullMQ's pattern).
 */
export class WaitingError extends signalError('WaitingError', ErrorCode.Waiting, 'Waiting job') {}

/**
 * Throw from a processor after `job.moveToWaitingChildren(token)` returned true: the job waits
 * for its children, and the worker records nothing more for this attempt.
 */
export class WaitingChildrenError extends signalError('WaitingChildrenError', ErrorCode.WaitingChildren, 'Waiting children') {}

/**
 * Throw from a processor after `worker.rateLimit(ms)`: the job goes back to the head of the queue
 * without spending an attempt, and the queue's workers pause claiming for `ms`.
 */
export class RateLimitError extends signalError('RateLimitError', ErrorCode.RateLimited, 'Rate limit exceeded') {}

/**
 * The job was cancelled (`queue.cancelJob`): the reason a cancelled job failed with, and the
 * reason its processor's signal aborted with. A cancelled job is never retried nor dead-lettered.
 */
export class CancelledError extends signalError('CancelledError', ErrorCode.Cancelled, 'Job cancelled') {}

/**
 * The attempt ran past the job's `timeout`: its signal aborted with this, and the attempt failed
 * with it (retried per attempts and backoff like any failure).
 */
export class TimeoutError extends signalError('TimeoutError', ErrorCode.Timeout, 'Job timed out') {}

/** A dead letter cannot be replayed: its origin job exists and is not failed, or it is being handled. */
export class ReplayRefusedError extends branded(ErrorCode.ReplayRefused) {}

/**
 * An add would take a group past its backlog cap (`maxSize`: the add's `group.maxSize`, else the
 * group's, else the queue's default): nothing of the call was written. `groupId`, `maxSize` and
 * `size` (its ready backlog now) say which group and by how much (BullMQ Pro's name).
 */
export class GroupMaxSizeExceededError extends branded(ErrorCode.GroupMaxSizeExceeded) {
  /** The group that is full. */
  groupId = '';
  /** Its backlog cap. */
  maxSize = 0;
  /** Its ready backlog when the add was refused. */
  size = 0;

  /** Builds the error for group `groupId` holding `size` ready jobs under a cap of `maxSize`. */
  static of(queue: string, groupId: string, maxSize: number, size: number): GroupMaxSizeExceededError {
    const err = new GroupMaxSizeExceededError(
      `Group "${groupId}" of queue "${queue}" is full: it holds ${size} ready jobs and its maxSize is ${maxSize}, ` +
        'so the add was refused and nothing was written. Wait for its backlog to drain, raise the cap ' +
        '(queue.setGroupOptions(groupId, { maxSize })), or drop the job.',
    );
    err.groupId = groupId;
    err.maxSize = maxSize;
    err.size = size;
    return err;
  }
}

/**
 * An add refused by the queue's tenant budget (docs/budgets.md): the job's `cost` would take its
 * tenant's use over `limit` within the sliding `window` (ms). The job was not written (with
 * addBulk: none of the call's jobs). `tenant`, `use` (the tenant's use in the window before this
 * job), `cost`, `limit` and `window` say by how much.
 */
export class BudgetExceededError extends branded(ErrorCode.BudgetExceeded) {
  /** The tenant whose budget is spent (the value of the budget's `key`). */
  tenant = '';
  /** The tenant's use in the window when the add was refused. */
  use = 0;
  /** The refused job's cost. */
  cost = 0;
  /** The budget's limit per window. */
  limit = 0;
  /** The budget's sliding window, ms. */
  window = 0;

  /** Builds the error for `tenant` at `use` of `limit` per `window` ms, refusing a job of `cost`. */
  static of(queue: string, tenant: string, use: number, cost: number, limit: number, window: number): BudgetExceededError {
    const err = new BudgetExceededError(
      `Budget exceeded for tenant "${tenant}" on queue "${queue}": it used ${use} of ${limit} in the last ${window} ms, ` +
        `and this job's cost ${cost} would take it to ${use + cost}, so the add was refused and nothing was written. ` +
        'Retry once older costs leave the window (queue.getBudget(tenant) reads the use), lower the estimate, or raise the budget limit.',
    );
    err.tenant = tenant;
    err.use = use;
    err.cost = cost;
    err.limit = limit;
    err.window = window;
    return err;
  }
}

/**
 * An add refused because the job's `cost` is above the queue's weighted rate limit for a whole
 * window (`queue.setGlobalRateLimit(max, duration, { weighted: true })`), or above its group's
 * weighted limiter (`groupId` set): it could never start. Nothing was written (with addBulk: none
 * of the call's jobs).
 */
export class CostAboveRateLimitError extends branded(ErrorCode.CostAboveRateLimit) {
  /** The refused job's cost. */
  cost = 0;
  /** The weighted limit's max per window. */
  max = 0;
  /** The limit's window, ms. */
  duration = 0;
  /** The job's group, when the limit is its group's (own or the queue's group default). */
  groupId?: string;

  /**
   * Builds the error for a job of `cost` under a weighted limit of `max` per `duration` ms: the
   * queue's, or group `groupId`'s.
   */
  static of(queue: string, cost: number, max: number, duration: number, groupId?: string): CostAboveRateLimitError {
    const err = new CostAboveRateLimitError(
      groupId === undefined
        ? `The job's cost ${cost} is above queue "${queue}"'s weighted rate limit of ${max} per ${duration} ms: it could never start, ` +
            'so the add was refused and nothing was written. Split the job, lower its cost, or raise the limit (queue.setGlobalRateLimit).'
        : `The job's cost ${cost} is above group "${groupId}"'s weighted rate limit of ${max} per ${duration} ms (queue "${queue}"): ` +
            'it could never start, so the add was refused and nothing was written. Split the job, lower its cost, or raise the ' +
            "group's limiter.max (queue.setGroupOptions or setGroupDefaults).",
    );
    err.cost = cost;
    err.max = max;
    err.duration = duration;
    if (groupId !== undefined) err.groupId = groupId;
    return err;
  }
}

/**
 * The job is a job scheduler's pending run (its next occurrence, delayed for its time or ready
 * and not yet taken by a worker, which keeps the scheduler going): it cannot be removed or
 * cancelled directly, or the scheduler would stop for good. Nothing was changed. Remove or pause the scheduler instead
 * (`queue.removeJobScheduler(id)`, `queue.pauseJobScheduler(id)`). Once the occurrence runs it
 * is an ordinary job. `jobId` and `schedulerId` say which (BullMQ refuses the same).
 */
export class SchedulerJobError extends branded(ErrorCode.SchedulerJob) {
  /** The refused job. */
  jobId = '';
  /** The scheduler whose pending run it is. */
  schedulerId = '';

  /** Builds the error for an attempt to remove or cancel (`action`) scheduler `schedulerId`'s pending run `jobId`. */
  static of(jobId: string, schedulerId: string, action: 'removed' | 'cancelled'): SchedulerJobError {
    const quoted = schedulerId.replace(/[\\']/g, '\\$&');
    // BullMQ's phrase and operation name first (`... cannot be removed directly. remove`), then Hopper's advice.
    const op = action === 'removed' ? 'remove' : 'cancelJob';
    const err = new SchedulerJobError(
      `Job ${jobId} belongs to a job scheduler and cannot be ${action} directly. ${op}: it is the pending run of job scheduler ` +
        `${schedulerId}; call queue.removeJobScheduler('${quoted}') to stop the schedule, or queue.pauseJobScheduler('${quoted}') to pause it.`,
    );
    err.jobId = jobId;
    err.schedulerId = schedulerId;
    return err;
  }

  /** The scheduler id in a pending run's id (`sched:<schedulerId>:<instant>`, or BullMQ's `repeat:` of a run moved from BullMQ). */
  static schedulerOf(jobId: string): string {
    return parseOccurrenceId(jobId, true)?.schedulerId ?? jobId;
  }
}

/**
 * The backend in use does not implement this operation yet (the SQLite backend is being built
 * operation by operation: see docs/backends.md for what it supports today). `operation` names it.
 */
export class BackendUnsupportedError extends branded(ErrorCode.BackendUnsupported) {
  /** The backend operation or feature refused. */
  readonly operation: string;

  constructor(operation: string, message?: string) {
    super(
      message ??
        `The SQLite backend does not support ${operation} yet. Use a Redis connection for it, or see docs/backends.md for what the SQLite backend supports today.`,
    );
    this.operation = operation;
  }
}

/** The driver a backend needs is not installed (the SQLite backend needs `better-sqlite3`). The message says what to install. */
export class BackendDriverMissingError extends branded(ErrorCode.BackendDriverMissing) {}

/** Why `hopper migrate` refused to start or stopped (docs/migrating.md). */
export type MigrationRefusal =
  /** The source queue's Redis layout is not one Hopper can read (BullMQ 5.x or 6.x). */
  | 'unknown-layout'
  /** The source queue does not exist (no meta, no jobs). */
  | 'no-queue'
  /** Another `hopper migrate` holds the queue's migration lock. */
  | 'locked'
  /** The way back would lose Hopper-only state (groups, steps, dead letters, budgets...). */
  | 'hopper-only-state'
  /** The target cannot receive migrated jobs (a SQLite connection, or BullMQ not installed for the way back). */
  | 'unsupported-target'
  /** The migration lock was lost (another process took it after it expired): the run stopped. */
  | 'lock-lost';

/**
 * `hopper migrate` (and its API, `hopper-queue/migrate`) refused to start or had to stop. `reason`
 * says which; the message says what was found and how to go on. Nothing is lost when it is
 * thrown: every job is on one side or the other, and a re-run resumes.
 */
export class MigrationError extends branded(ErrorCode.Migration) {
  /** Why the migration refused or stopped. */
  readonly reason: MigrationRefusal;

  constructor(reason: MigrationRefusal, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/**
 * The storage refused or failed an operation for a reason that is not the caller's input: Redis
 * answered an error (busy running a script, loading its data, a read-only replica, an ACL
 * refusal), SQLite failed (the file is locked by another process, read-only, full, or damaged),
 * or an internal error occurred. The message names the operation, the queue, the storage's own
 * message and what to do; `operation` and `backend` say the same as fields, and `cause` is the
 * original error. Raised at the backend seam, so no raw ReplyError, SqliteError or TypeError
 * reaches a caller.
 */
export class BackendError extends branded(ErrorCode.Backend) {
  /** The backend operation that failed (`addJobs`, `pause`, `upsertScheduler`...). */
  operation = '';
  /** Which storage: `redis` or `sqlite`. */
  backend: 'redis' | 'sqlite' = 'redis';
}
