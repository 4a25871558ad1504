/**
 * Fair groups and queue-wide limits (docs/groups.md): a group's settings, pause and resume, its
 * jobs and counts; the queue's global concurrency and rate limit; and the defaults groups take.
 * Names follow BullMQ (global concurrency, rate limit) and BullMQ Pro (groups) where they have them.
 */
import type { GroupRecord, GroupSettingsChange, GroupStatus } from '../backend/backend.js';
import type { Job } from '../job/job.js';
import { InvalidOptionsError } from '../job/errors.js';
import { validateGroupId } from '../job/options.js';
import { checkOptional, RATE_LIMIT_OPTIONS } from '../validation/arguments.js';
import { QueueGetters } from './queue-getters.js';
import { showValue } from '../validation/kit.js';

/** A rate limit: at most `max` jobs start in any window of `duration` ms (a sliding window). */
export interface RateLimiterOptions {
  max: number;
  /** The window, ms. */
  duration: number;
  /**
   * `'cost'`: a weighted limit (docs/limits.md). Each job counts its `cost` job option (default
   * 1) instead of 1: at most `max` units (tokens, cents...) of jobs start in any `duration` ms,
   * exact across workers (counted in Redis, atomically with the claim). A job that does not fit
   * the window's remaining room waits at the head of the queue until it fits; a job whose cost
   * is above `max` could never fit: refused at add (CostAboveRateLimitError) under the queue's or
   * a group's limit, failed (UnrecoverableError) under a worker's, instead of waiting forever.
   * On a worker's `limiter`, `queue.setGlobalRateLimit(max, duration, { weighted: true })`, and a
   * group's limiter (`setGroupOptions`, `setGroupDefaults`; docs/groups.md). A function
   * (`weight: (job) => ...`) is refused: Redis cannot call it; set the job's `cost` at add
   * instead. Default: unweighted (each job counts 1).
   * @example new Worker('llm', processor, { limiter: { max: 90_000, duration: 60_000, weight: 'cost' } });
   *   await queue.add('generate', data, { cost: estimatedTokens });
   */
  weight?: 'cost';
}

/**
 * Settings of one group, or the defaults of every group of a queue. In `setGroupOptions` and
 * `setGroupDefaults`, `null` removes a setting; a field left out is unchanged.
 */
export interface GroupSettings {
  /** At most this many jobs of the group run at once, across all workers. Default: no limit. */
  concurrency?: number | null;
  /**
   * At most `max` jobs of the group start in any `duration` ms, across all workers; with
   * `weight: 'cost'`, at most `max` units of the jobs' `cost` option (docs/groups.md). Default: none.
   */
  limiter?: RateLimiterOptions | null;
  /** Adds beyond this many ready jobs in the group are refused (GroupMaxSizeExceededError). Default: none. */
  maxSize?: number | null;
  /** The group's share: it takes up to `weight` jobs per turn (weights 2:1 get a 2:1 share). Default 1. */
  weight?: number | null;
}

/** A group as `getGroups` reports it. */
export interface GroupInfo {
  id: string;
  /**
   * 'ready' taking turns; 'maxed' at its concurrency; 'limited' waiting for its rate-limit window;
   * 'paused'; 'idle' no ready job.
   */
  status: GroupStatus;
  /** Ready jobs without a priority. */
  waiting: number;
  /** Ready jobs with a priority. */
  prioritized: number;
  /** Jobs of the group running now. */
  active: number;
  /** The group's own settings (the queue's defaults apply where one is absent). */
  concurrency?: number;
  limiter?: RateLimiterOptions;
  maxSize?: number;
  weight?: number;
}

function positiveInteger(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new InvalidOptionsError(`${name} must be a positive integer, got ${String(value)}.`);
  }
  return value;
}

/**
 * Checks a rate limiter ({ max, duration }, positive integers; `weight: 'cost'` only where
 * `weighted` is allowed: a worker's or a group's limiter).
 */
export function validateLimiter(value: unknown, name: string, weighted = false): asserts value is RateLimiterOptions {
  if (typeof value !== 'object' || value === null) {
    throw new InvalidOptionsError(`${name} must be { max, duration } (jobs per ms), got ${showValue(value)}.`);
  }
  const { max, duration, weight } = value as Record<string, unknown>;
  positiveInteger(max, `${name}.max`);
  positiveInteger(duration, `${name}.duration`);
  if (weight === undefined) return;
  if (!weighted) {
    throw new InvalidOptionsError(
      `${name}.weight: weighted rate limits are not supported here; remove weight, or put a weighted limiter on the worker or the queue.`,
    );
  }
  if (typeof weight === 'function') {
    throw new InvalidOptionsError(
      `${name}.weight must be 'cost', not a function: the limit is counted inside Redis, which cannot call it. ` +
        `Compute the weight when adding the job: queue.add(name, data, { cost: job.data.estimatedTokens }), and set weight: 'cost'.`,
    );
  }
  if (weight !== 'cost') {
    throw new InvalidOptionsError(`${name}.weight must be 'cost' (each job weighs its cost option), got ${showValue(weight)}.`);
  }
}

/** Checks group settings and turns them into the seam's change (`null` removes a setting). */
function settingsChange(settings: GroupSettings): GroupSettingsChange {
  if (typeof settings !== 'object' || settings === null) {
    throw new InvalidOptionsError(
      `Group settings must be an object like { concurrency, limiter, maxSize, weight }, got ${String(settings)}.`,
    );
  }
  const known = ['concurrency', 'limiter', 'maxSize', 'weight'];
  for (const key of Object.keys(settings)) {
    if (!known.includes(key)) throw new InvalidOptionsError(`Unknown group setting "${key}": use ${known.join(', ')}.`);
  }
  const change: GroupSettingsChange = {};
  for (const key of ['concurrency', 'maxSize', 'weight'] as const) {
    const value = settings[key];
    if (value === undefined) continue;
    change[key] = value === null ? null : positiveInteger(value, key);
  }
  if (settings.limiter !== undefined) {
    if (settings.limiter === null) change.limiter = null;
    else {
      validateLimiter(settings.limiter, 'limiter', true);
      const { max, duration, weight } = settings.limiter;
      change.limiter = weight === 'cost' ? { max, duration, weight } : { max, duration };
    }
  }
  return change;
}

function toInfo(record: GroupRecord): GroupInfo {
  const info: GroupInfo = {
    id: record.id,
    status: record.status,
    waiting: record.waiting,
    prioritized: record.prioritized,
    active: record.active,
  };
  if (record.concurrency !== undefined) info.concurrency = record.concurrency;
  if (record.limiter !== undefined) info.limiter = record.limiter;
  if (record.maxSize !== undefined) info.maxSize = record.maxSize;
  if (record.weight !== undefined) info.weight = record.weight;
  return info;
}

// `any` defaults keep BullMQ's generic signature.
/* eslint-disable @typescript-eslint/no-explicit-any */
export abstract class QueueGroups<DataType = any, ResultType = any, NameType extends string = string> extends QueueGetters<
  DataType,
  ResultType,
  NameType
> {
  /* eslint-enable @typescript-eslint/no-explicit-any */

  /**
   * Caps the jobs of this queue running at once across all workers (BullMQ's global concurrency).
   * @example await queue.setGlobalConcurrency(4);
   */
  async setGlobalConcurrency(concurrency: number): Promise<void> {
    positiveInteger(concurrency, 'Global concurrency');
    await this.ready();
    await this.backend.configureQueue({ globalConcurrency: concurrency });
  }

  /** The queue's global concurrency, or null when there is none. */
  async getGlobalConcurrency(): Promise<number | null> {
    await this.ready();
    return (await this.backend.getQueueSettings()).globalConcurrency ?? null;
  }

  /**
   * Whether the queue's global concurrency is reached: as many jobs active as it allows (BullMQ's
   * `isMaxed`). False without a global concurrency.
   */
  async isMaxed(): Promise<boolean> {
    await this.ready();
    const [settings, counts] = await Promise.all([this.backend.getQueueSettings(), this.backend.getStateCounts()]);
    const limit = settings.globalConcurrency;
    return limit !== undefined && counts.active >= limit;
  }

  /** Removes the global concurrency limit. */
  async removeGlobalConcurrency(): Promise<void> {
    await this.ready();
    await this.backend.configureQueue({ globalConcurrency: null });
  }

  /**
   * Limits the jobs of this queue that start: at most `max` in any `duration` ms, across all
   * workers (a sliding window on recorded start times). A worker's own `limiter` option takes
   * precedence over it.
   * @example await queue.setGlobalRateLimit(100, 1000); // 100 jobs per second
   */
  async setGlobalRateLimit(max: number, duration: number, opts: { weighted?: boolean } = {}): Promise<void> {
    validateLimiter({ max, duration }, 'Rate limit');
    checkOptional(RATE_LIMIT_OPTIONS, opts, 'setGlobalRateLimit(max, duration, opts)');
    await this.ready();
    // Weighted (docs/limits.md): `max` units of the jobs' `cost` option per `duration` ms.
    await this.backend.configureQueue({ rateLimit: opts.weighted ? { max, duration, weight: 'cost' } : { max, duration } });
  }

  /** The queue's rate limit (`weight: 'cost'` when weighted), or null when there is none. */
  async getGlobalRateLimit(): Promise<RateLimiterOptions | null> {
    await this.ready();
    return (await this.backend.getQueueSettings()).rateLimit ?? null;
  }

  /**
   * How long until the queue's jobs may start again, ms (BullMQ's name and values): the time
   * left of a `worker.rateLimit(ms)`, or until the oldest start leaves a full queue-wide window;
   * 0 when jobs may start now under a queue-wide limit; -2 (as BullMQ) when the queue has neither
   * a manual limit nor a queue-wide rate limit. With `maxJobs`, as BullMQ: the manual limit, else
   * the time left of the recent starts' window once it holds `maxJobs` starts (a worker's
   * `limiter` counts there too), else 0.
   */
  async getRateLimitTtl(maxJobs?: number): Promise<number> {
    if (maxJobs === 0) maxJobs = undefined; // BullMQ's "no maxJobs"
    if (maxJobs !== undefined && !(Number.isInteger(maxJobs) && maxJobs > 0)) {
      throw new InvalidOptionsError(`getRateLimitTtl(maxJobs): maxJobs must be a positive integer, got ${maxJobs}.`);
    }
    await this.ready();
    return this.backend.getRateLimitTtl(maxJobs);
  }

  /**
   * Stops every worker of this queue from starting jobs for `expireTimeMs` (BullMQ's
   * `queue.rateLimit`; the same as `worker.rateLimit`, from the producer's side). Jobs already
   * running go on; `removeRateLimitKey()` lifts it early.
   * @example await queue.rateLimit(60_000); // the downstream API said 429
   */
  async rateLimit(expireTimeMs: number): Promise<void> {
    if (!(Number.isInteger(expireTimeMs) && expireTimeMs > 0)) {
      throw new InvalidOptionsError(`rateLimit takes a positive integer of ms, got ${expireTimeMs}.`);
    }
    await this.ready();
    await this.backend.rateLimit(expireTimeMs);
  }

  /**
   * Lifts a manual rate limit (`worker.rateLimit`) and forgets the recent starts the rate limit
   * counts, so workers may start jobs at once (BullMQ's name). Returns the number of keys removed.
   */
  async removeRateLimitKey(): Promise<number> {
    await this.ready();
    return this.backend.rateLimit(0);
  }

  /**
   * Removes the queue's rate limit. Resolves, as in BullMQ, to the number of settings removed: 2
   * (its max and its duration) when the queue had one, else 0.
   */
  async removeGlobalRateLimit(): Promise<number> {
    await this.ready();
    const had = (await this.backend.getQueueSettings()).rateLimit != null;
    await this.backend.configureQueue({ rateLimit: null });
    return had ? 2 : 0;
  }

  /**
   * Sets the settings every group takes unless it has its own: concurrency, limiter, maxSize,
   * weight (`null` removes one).
   * @example await queue.setGroupDefaults({ concurrency: 2, limiter: { max: 10, duration: 1000 } });
   */
  async setGroupDefaults(settings: GroupSettings): Promise<void> {
    const groupDefaults = settingsChange(settings);
    await this.ready();
    await this.backend.configureQueue({ groupDefaults });
  }

  /** The group defaults of this queue. */
  async getGroupDefaults(): Promise<GroupSettings> {
    await this.ready();
    const defaults = (await this.backend.getQueueSettings()).groupDefaults;
    const settings: GroupSettings = {};
    if (defaults.concurrency !== undefined) settings.concurrency = defaults.concurrency;
    if (defaults.limiter !== undefined) settings.limiter = defaults.limiter;
    if (defaults.maxSize !== undefined) settings.maxSize = defaults.maxSize;
    if (defaults.weight !== undefined) settings.weight = defaults.weight;
    return settings;
  }

  /**
   * Sets one group's own settings, over the queue's defaults (`null` removes one). A group parked
   * at a limit is judged again under its new settings at the next claim.
   * @example await queue.setGroupOptions('tenant-42', { concurrency: 1, weight: 3 });
   */
  async setGroupOptions(groupId: string, settings: GroupSettings): Promise<void> {
    validateGroupId(groupId);
    const change = settingsChange(settings);
    await this.ready();
    await this.backend.configureGroup(groupId, 'set', change);
  }

  /** Sets how many jobs of a group may run at once (BullMQ Pro's name). */
  async setGroupConcurrency(groupId: string, concurrency: number): Promise<void> {
    await this.setGroupOptions(groupId, { concurrency });
  }

  /** A group's own concurrency, or null when it takes the queue's default (BullMQ Pro's name). */
  async getGroupConcurrency(groupId: string): Promise<number | null> {
    return (await this.getGroup(groupId))?.concurrency ?? null;
  }

  /**
   * Sets a group's rate limit: at most `max` of its jobs start in any `duration` ms (with
   * `{ weighted: true }`, at most `max` units of their `cost` option).
   */
  async setGroupRateLimit(groupId: string, max: number, duration: number, opts: { weighted?: boolean } = {}): Promise<void> {
    checkOptional(RATE_LIMIT_OPTIONS, opts, 'setGroupRateLimit(groupId, max, duration, opts)');
    await this.setGroupOptions(groupId, { limiter: opts.weighted ? { max, duration, weight: 'cost' } : { max, duration } });
  }

  /**
   * Pauses a group: no worker starts its jobs until `resumeGroup` (running ones finish). A group
   * that does not exist yet is recorded paused. Returns false if it was already paused.
   */
  async pauseGroup(groupId: string): Promise<boolean> {
    validateGroupId(groupId);
    await this.ready();
    return this.backend.configureGroup(groupId, 'pause');
  }

  /** Resumes a paused group. Returns false if it was not paused. */
  async resumeGroup(groupId: string): Promise<boolean> {
    validateGroupId(groupId);
    await this.ready();
    return this.backend.configureGroup(groupId, 'resume');
  }

  /**
   * The queue's groups (by id, ranks `start`..`end`), each with its status, counts and own settings.
   * @example for (const g of await queue.getGroups()) console.log(g.id, g.status, g.waiting, g.active);
   */
  async getGroups(start = 0, end = -1): Promise<GroupInfo[]> {
    await this.ready();
    return (await this.backend.getGroups(start, end)).map(toInfo);
  }

  /** One group, or undefined if the queue does not know it. */
  async getGroup(groupId: string): Promise<GroupInfo | undefined> {
    validateGroupId(groupId);
    await this.ready();
    const record = await this.backend.getGroup(groupId);
    return record && toInfo(record);
  }

  /** How many groups the queue knows (with jobs, settings, or paused). */
  async getGroupsCount(): Promise<number> {
    await this.ready();
    return this.backend.getGroupsCount();
  }

  /** A group's ready jobs in the order they will run (ranks `start`..`end`). */
  async getGroupJobs(groupId: string, start = 0, end = -1): Promise<Job<DataType, ResultType, NameType>[]> {
    validateGroupId(groupId);
    await this.ready();
    return this.jobsByIds(await this.backend.getGroupJobIds(groupId, start, end));
  }

  /** How many ready jobs a group holds. */
  async getGroupJobsCount(groupId: string): Promise<number> {
    const group = await this.getGroup(groupId);
    return group ? group.waiting + group.prioritized : 0;
  }
}
