/**
 * Job options (named as in BullMQ) and their validation. Everything is checked before anything
 * is written; a bad value throws a typed error that names the option and says how to fix it.
 */
import { InvalidDataError, InvalidJobIdError, InvalidNameError, InvalidOptionsError } from './errors.js';
import type { JobTelemetryOptions } from '../telemetry/telemetry.js';
import { refuseUnsupported } from './compat.js';
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

/** Longest group id. */
export const MAX_GROUP_ID_LENGTH = 256;

/** Checks a group id (it becomes part of Redis keys). */
export function validateGroupId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id === '' || id.length > MAX_GROUP_ID_LENGTH) {
    throw new InvalidOptionsError(
      `A group id must be a non-empty string of at most ${MAX_GROUP_ID_LENGTH} characters, got ${JSON.stringify(id)}: ` +
        'use the tenant or customer id as a string.',
    );
  }
}

/** The child failure options, at most one of which a job may set. */
export const CHILD_FAILURE_OPTIONS = [
  'failParentOnFailure',
  'continueParentOnFailure',
  'ignoreDependencyOnFailure',
  'removeDependencyOnFailure',
] as const;

/** Largest priority: 2^21 - 1 (BullMQ's range, 0 to 2097151). */
export const MAX_PRIORITY = 2 ** 21 - 1;
/** Longest custom job id. */
export const MAX_JOB_ID_LENGTH = 255;
/** Default retention of completed jobs: the last 1,000 (BullMQ keeps all by default, which fills Redis). */
export const DEFAULT_REMOVE_ON_COMPLETE: KeepJobs = { count: 1000 };
/** Default number of stack traces kept per job. */
export const DEFAULT_STACK_TRACE_LIMIT = 10;

const BUILTIN_BACKOFF = new Set(['fixed', 'exponential', 'custom']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkNonNegativeInteger(value: unknown, name: string, max = Number.MAX_SAFE_INTEGER): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    throw new InvalidOptionsError(`${name} must be an integer from 0 to ${max}, got ${String(value)}.`);
  }
}

/** A priority, refused with BullMQ's key phrases ('Priority should not be float', 'Priority should be between 0 and 2097151'). */
export function checkPriority(value: unknown): void {
  if (typeof value === 'number' && Number.isFinite(value) && !Number.isInteger(value)) {
    throw new InvalidOptionsError(`Priority should not be float: priority must be an integer from 0 to ${MAX_PRIORITY}, got ${value}.`);
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_PRIORITY) {
    throw new InvalidOptionsError(
      `Priority should be between 0 and ${MAX_PRIORITY}: priority must be an integer from 0 to ${MAX_PRIORITY}, got ${String(value)}.`,
    );
  }
}

function checkNonNegativeNumber(value: unknown, name: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidOptionsError(`${name} must be a finite number >= 0, got ${String(value)}.`);
  }
}

/** Checks a queue name: it becomes part of Redis keys. */
export function validateQueueName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidNameError('Queue name must be provided: a queue name must be a non-empty string.');
  }
  if (name.length > 200) {
    throw new InvalidNameError(`Queue name "${name.slice(0, 40)}..." is ${name.length} characters long: use at most 200.`);
  }
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[:{}\s\u0000-\u001f*?[\]]/.test(name)) {
    if (name.includes(':')) {
      // BullMQ's key phrase first, for code that matches it.
      throw new InvalidNameError(
        `Queue name cannot contain :, got "${name}": ':' separates the parts of Redis keys. Use letters, digits, '-', '_' or '.'.`,
      );
    }
    throw new InvalidNameError(
      `${name.includes(':') ? 'Queue name cannot contain : ' : ''}Queue name "${name}" contains a character that would break Redis keys (':', '{', '}', '*', '?', '[', ']', whitespace or a control character): use letters, digits, '-', '_' or '.'.`,
    );
  }
}

/** Checks a key prefix. */
export function validatePrefix(prefix: unknown): asserts prefix is string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (typeof prefix !== 'string' || prefix.length === 0 || /[\s\u0000-\u001f]/.test(prefix)) {
    throw new InvalidNameError(`The prefix must be a non-empty string without whitespace, got ${JSON.stringify(prefix)}.`);
  }
}

/** Checks a job name (it is stored, not used in keys). */
export function validateJobName(name: unknown): asserts name is string {
  if (typeof name !== 'string') {
    throw new InvalidNameError(`A job name must be a string, got ${typeof name}.`);
  }
}

/**
 * Checks a custom job id (DESIGN, "Ids"). An empty one is refused (BullMQ ignores it and generates
 * an id): an empty id is almost always a missing value, and ignoring it would silently drop the
 * idempotence the caller asked for.
 */
export function validateJobId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length === 0) {
    throw new InvalidJobIdError(`A custom jobId must be a non-empty string, got ${JSON.stringify(id)}.`);
  }
  if (id.length > MAX_JOB_ID_LENGTH) {
    throw new InvalidJobIdError(`Custom jobId "${id.slice(0, 40)}..." is ${id.length} characters long: use at most ${MAX_JOB_ID_LENGTH}.`);
  }
  if (/^-?\d+$/.test(id)) {
    throw new InvalidJobIdError(
      `Custom Id cannot be integers: custom jobId "${id}" looks like an integer, which would collide with automatic ids: add a non-digit, e.g. "job-${id}".`,
    );
  }
}

function validateKeep(value: unknown, name: string): void {
  if (value === undefined || typeof value === 'boolean') return;
  if (typeof value === 'number') return checkNonNegativeInteger(value, name);
  if (isPlainObject(value) && (value.age !== undefined || value.count !== undefined)) {
    if (value.age !== undefined) checkNonNegativeNumber(value.age, `${name}.age`);
    if (value.count !== undefined) checkNonNegativeInteger(value.count, `${name}.count`);
    return;
  }
  throw new InvalidOptionsError(`${name} must be true/false, a count, or { age, count }, got ${JSON.stringify(value)}.`);
}

function validateBackoff(value: unknown, customTypes: readonly string[]): void {
  if (value === undefined) return;
  if (typeof value === 'number') return checkNonNegativeNumber(value, 'backoff');
  if (!isPlainObject(value) || typeof value.type !== 'string' || value.type === '') {
    throw new InvalidOptionsError(
      `backoff must be a delay in ms or { type: 'fixed' | 'exponential' | '<custom>', delay, jitter }, got ${JSON.stringify(value)}.`,
    );
  }
  if (!BUILTIN_BACKOFF.has(value.type) && !customTypes.includes(value.type)) {
    throw new InvalidOptionsError(
      `Unknown backoff type "${value.type}": use 'fixed', 'exponential' or 'custom' (handled by the worker's settings.backoffStrategy), ` +
        `or declare it in the Queue's backoffTypes option.`,
    );
  }
  if (value.delay !== undefined) checkNonNegativeNumber(value.delay, 'backoff.delay');
  if (value.jitter !== undefined) {
    if (typeof value.jitter !== 'number' || !(value.jitter >= 0 && value.jitter <= 1)) {
      throw new InvalidOptionsError(
        `Jitter should be between 0 and 1: backoff.jitter must be a number from 0 to 1, got ${JSON.stringify(value.jitter)}.`,
      );
    }
  }
}

function validateDeduplication(value: unknown, name: string): void {
  if (value === undefined) return;
  refuseUnsupported('deduplication', value);
  if (isPlainObject(value) && (value.id === undefined || value.id === '')) {
    throw new InvalidOptionsError(
      `Deduplication id must be provided: ${name}.id must be a non-empty string, got ${JSON.stringify(value)}.`,
    );
  }
  if (!isPlainObject(value) || typeof value.id !== 'string') {
    throw new InvalidOptionsError(
      `Deduplication id must be provided: ${name} must be { id: non-empty string, ttl?, extend?, replace?, keepLastIfActive? }, got ${JSON.stringify(value)}.`,
    );
  }
  if (value.ttl !== undefined) checkNonNegativeInteger(value.ttl, `${name}.ttl`);
  for (const flag of ['extend', 'replace', 'keepLastIfActive'] as const) {
    if (value[flag] !== undefined && typeof value[flag] !== 'boolean') throw new InvalidOptionsError(`${name}.${flag} must be a boolean.`);
  }
  if (value.extend && !value.ttl) throw new InvalidOptionsError(`${name}.extend needs a ttl to extend: add ttl (ms).`);
}

/**
 * Checks every job option; throws {@link InvalidOptionsError} (or {@link InvalidJobIdError}) on
 * the first bad one. `customBackoffTypes` are backoff type names accepted besides the built-in ones.
 */
export function validateJobOptions(opts: unknown, customBackoffTypes: readonly string[] = []): asserts opts is JobsOptions {
  if (opts === undefined) return;
  if (!isPlainObject(opts)) throw new InvalidOptionsError(`Job options must be an object, got ${JSON.stringify(opts)}.`);
  const o = opts as JobsOptions;
  refuseUnsupported('job', o);
  if (o.repeat !== undefined) {
    throw new InvalidOptionsError(
      'repeat is honoured by queue.add only (a legacy repeatable job), not by addBulk, flows, defaultJobOptions or scheduler templates: ' +
        'add it with queue.add(name, data, { repeat }) or use queue.upsertJobScheduler(id, repeat, template).',
    );
  }
  if (o.jobId !== undefined) validateJobId(o.jobId);
  if (o.prevMillis !== undefined) checkNonNegativeNumber(o.prevMillis, 'prevMillis');
  if (o.repeatJobKey !== undefined && typeof o.repeatJobKey !== 'string') {
    throw new InvalidOptionsError(`repeatJobKey must be a string (a job scheduler id), got ${JSON.stringify(o.repeatJobKey)}.`);
  }
  if (o.delay !== undefined) checkNonNegativeNumber(o.delay, 'delay');
  if (o.priority !== undefined) checkPriority(o.priority);
  if (o.lifo !== undefined && typeof o.lifo !== 'boolean') throw new InvalidOptionsError(`lifo must be a boolean, got ${String(o.lifo)}.`);
  if (o.attempts !== undefined) checkNonNegativeInteger(o.attempts, 'attempts');
  validateBackoff(o.backoff, customBackoffTypes);
  validateDeduplication(o.deduplication, 'deduplication');
  if (o.deadLetter !== undefined) {
    if (!isPlainObject(o.deadLetter))
      throw new InvalidOptionsError(`deadLetter must be { queue: 'name' }, got ${JSON.stringify(o.deadLetter)}.`);
    validateQueueName(o.deadLetter.queue);
  }
  if (o.timeout !== undefined && (typeof o.timeout !== 'number' || !Number.isInteger(o.timeout) || o.timeout <= 0)) {
    throw new InvalidOptionsError(`timeout must be a positive integer of ms, got ${String(o.timeout)}.`);
  }
  validateFlowOptions(o);
  if (o.group !== undefined) {
    if (!isPlainObject(o.group)) throw new InvalidOptionsError(`group must be { id: string, maxSize? }, got ${JSON.stringify(o.group)}.`);
    validateGroupId(o.group.id);
    if (o.group.maxSize !== undefined && (!Number.isInteger(o.group.maxSize) || o.group.maxSize <= 0)) {
      throw new InvalidOptionsError(`group.maxSize must be a positive integer, got ${String(o.group.maxSize)}.`);
    }
  }
  validateKeep(o.removeOnComplete, 'removeOnComplete');
  validateKeep(o.removeOnFail, 'removeOnFail');
  if (o.timestamp !== undefined) checkNonNegativeNumber(o.timestamp, 'timestamp');
  if (o.keepLogs !== undefined) checkNonNegativeInteger(o.keepLogs, 'keepLogs');
  if (o.stackTraceLimit !== undefined) checkNonNegativeInteger(o.stackTraceLimit, 'stackTraceLimit');
  if (o.sizeLimit !== undefined) checkNonNegativeInteger(o.sizeLimit, 'sizeLimit');
  if (o.telemetry !== undefined) validateJobTelemetry(o.telemetry);
  if (o.cost !== undefined && (typeof o.cost !== 'number' || !Number.isFinite(o.cost) || o.cost < 0)) {
    throw new InvalidOptionsError(`cost must be a finite number >= 0 (tokens, cents: any unit), got ${String(o.cost)}.`);
  }
}

function validateJobTelemetry(value: unknown): void {
  if (
    !isPlainObject(value) ||
    (value.metadata !== undefined && typeof value.metadata !== 'string') ||
    (value.omitContext !== undefined && typeof value.omitContext !== 'boolean')
  ) {
    throw new InvalidOptionsError(`telemetry must be { metadata?: string, omitContext?: boolean }, got ${JSON.stringify(value)}.`);
  }
}

function validateFlowOptions(o: JobsOptions): void {
  const set = CHILD_FAILURE_OPTIONS.filter((name) => {
    const value = o[name];
    if (value !== undefined && typeof value !== 'boolean')
      throw new InvalidOptionsError(`${name} must be a boolean, got ${String(value)}.`);
    return value === true;
  });
  if (set.length > 1) {
    // BullMQ's key phrase (its order of the names) first, for code that matches it.
    const order = ['removeDependencyOnFailure', 'failParentOnFailure', 'continueParentOnFailure', 'ignoreDependencyOnFailure'];
    const listed = [...set].sort((a, b) => order.indexOf(a) - order.indexOf(b));
    throw new InvalidOptionsError(
      `The following options cannot be used together: ${listed.join(', ')}. A child can follow one failure policy, but ${set.join(' and ')} are both set: keep one.`,
    );
  }
  if (o.parent !== undefined) {
    const p = o.parent as unknown;
    if (!isPlainObject(p) || typeof p.id !== 'string' || p.id === '' || typeof p.queue !== 'string' || p.queue === '') {
      throw new InvalidOptionsError(
        `parent must be { id: '<parent job id>', queue: '<prefix>:<parent queue>' } (the parent's job.queueQualifiedName), got ${JSON.stringify(p)}.`,
      );
    }
    if (o.deduplication) {
      throw new InvalidOptionsError(
        'Deduplication and parent options cannot be used together: a child job (with parent) cannot use deduplication; give it a jobId instead, which makes re-adds idempotent.',
      );
    }
  }
}

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
