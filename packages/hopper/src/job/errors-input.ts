/**
 * Hopper's typed errors for refused input (re-exported by job/errors.ts): an option, argument,
 * name, id, schedule or payload Hopper cannot use, a BullMQ option it does not implement, and an
 * add refused by a limit (a group's backlog cap, a tenant's budget, a weighted rate limit). In
 * every case nothing was written.
 */
import { branded, ErrorCode } from './errors-base.js';

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
