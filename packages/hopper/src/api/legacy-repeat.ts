/**
 * Legacy repeatable jobs (BullMQ 4/5's `queue.add(name, data, { repeat })`), built on job
 * schedulers: an add with `repeat` creates or updates the scheduler whose id is the repeat key
 * (`repeat.key`, else BullMQ's `name:jobId:endDate:tz:pattern|every`), so the schedule keeps
 * Hopper's rules (DST, overlap, catch-up, exactly-once occurrences). `getRepeatableJobs`,
 * `removeRepeatable` and `removeRepeatableByKey` read and remove those schedulers.
 */
import { InvalidOptionsError } from '../job/errors.js';
import type { Job } from '../job/job.js';
import { validateJobName, type JobsOptions } from '../job/options.js';
import type { LegacyRepeatOptions, RepeatOptions, ScheduleSpec } from '../schedule/repeat-options.js';
import { invalidSchedule } from '../schedule/schedule-error.js';
import type { JobSchedulers } from './job-schedulers.js';
import { showValue } from '../validation/kit.js';

/** A repeatable job as `getRepeatableJobs` lists it (BullMQ 5's `RepeatableJob`). */
export interface RepeatableJob {
  /** The repeat key: the scheduler id (`removeRepeatableByKey` takes it). */
  key: string;
  /** The jobs' name. */
  name: string;
  /** The add's `jobId` (part of the key), or null. */
  id: string | null;
  /** The end date (ms), or null. */
  endDate: number | null;
  /** The time zone given, or null (the schedule then runs in UTC). */
  tz: string | null;
  pattern: string | null;
  /** The interval in ms, as a string (BullMQ 5 read it from a hash), or null. */
  every: string | null;
  /** When the pending occurrence is due (ms), if there is one. */
  next?: number;
}

/** The repeat options only a legacy add has; the rest are the scheduler's {@link RepeatOptions}. */
const LEGACY_ONLY = ['key', 'count', 'jobId', 'prevMillis'] as const;

/** Longest repeat key: the job scheduler id it becomes. */
const MAX_KEY_LENGTH = 200;

function dateMs(value: Date | string | number): number {
  return typeof value === 'number' ? value : new Date(value).getTime();
}

/**
 * BullMQ's repeat key of a legacy repeatable job: `repeat.key` if given, else
 * `name:jobId:endDate:tz:pattern|every` (empty parts for what is not set).
 *
 * @example repeatKey('bird', { every: 10_000 }) // 'bird::::10000'
 */
export function repeatKey(name: string, repeat: LegacyRepeatOptions, jobId?: string): string {
  if (repeat.key !== undefined) return repeat.key;
  const endDate = repeat.endDate !== undefined && repeat.endDate !== null ? dateMs(repeat.endDate) : '';
  const suffix = repeat.pattern ?? (repeat.every !== undefined ? String(repeat.every) : '');
  return `${name}:${jobId ?? repeat.jobId ?? ''}:${endDate}:${repeat.tz ?? ''}:${suffix}`;
}

/** Checks the legacy-only repeat options; the scheduler's own are checked by validateRepeat. */
function checkLegacyOptions(repeat: LegacyRepeatOptions): void {
  if (repeat.key !== undefined && (typeof repeat.key !== 'string' || repeat.key === '')) {
    throw new InvalidOptionsError(`repeat.key must be a non-empty string (the scheduler id), got ${showValue(repeat.key)}.`);
  }
  if (repeat.count !== undefined && !(Number.isInteger(repeat.count) && repeat.count >= 0)) {
    throw new InvalidOptionsError(`repeat.count must be an integer >= 0 (the iteration to start after), got ${showValue(repeat.count)}.`);
  }
  if (repeat.jobId !== undefined && (typeof repeat.jobId !== 'string' || repeat.jobId === '')) {
    throw new InvalidOptionsError(`repeat.jobId must be a non-empty string, got ${showValue(repeat.jobId)}.`);
  }
}

/**
 * `queue.add(name, data, { repeat, ...opts })`: creates or updates the scheduler named by the
 * repeat key and returns its pending occurrence (for a new cron schedule with `immediately`, the
 * run made at once). Resolves to undefined, as BullMQ 5 did, when the schedule has no occurrence left
 * (its `limit` was reached).
 */
export async function addRepeatable(schedulers: JobSchedulers, name: string, data: unknown, opts: JobsOptions): Promise<Job | undefined> {
  validateJobName(name);
  const { repeat, jobId, delay: _delay, prevMillis: _prev, repeatJobKey: _key, ...jobOpts } = opts;
  if (typeof repeat !== 'object' || repeat === null || Array.isArray(repeat)) {
    throw new InvalidOptionsError(
      `repeat must be an object such as { pattern: '0 3 * * *' } or { every: 60000 }, got ${showValue(repeat)}.`,
    );
  }
  checkLegacyOptions(repeat);
  if (jobId !== undefined && (typeof jobId !== 'string' || jobId === '')) {
    throw new InvalidOptionsError(`jobId must be a non-empty string, got ${showValue(jobId)}.`);
  }
  const schedule: RepeatOptions = { ...repeat };
  for (const key of LEGACY_ONLY) delete (schedule as Record<string, unknown>)[key];
  const countBase = repeat.count ?? 0;
  if (countBase > 0 && typeof repeat.limit === 'number') {
    if (repeat.limit - countBase <= 0) {
      throw invalidSchedule(
        'invalid-limit',
        `repeat.limit (${repeat.limit}) is already reached by repeat.count (${countBase}): this repeatable job would never run.`,
      );
    }
    schedule.limit = repeat.limit - countBase;
  }
  const ownJobId = jobId ?? repeat.jobId;
  const id = repeatKey(name, repeat, ownJobId);
  if (id.length > MAX_KEY_LENGTH) {
    throw new InvalidOptionsError(
      `The repeat key "${id.slice(0, 40)}..." is ${id.length} characters long (at most ${MAX_KEY_LENGTH}: it names a job scheduler): ` +
        'pass a shorter repeat.key.',
    );
  }
  const shown: LegacyRepeatOptions = { ...repeat, ...(ownJobId !== undefined ? { jobId: ownJobId } : {}) };
  delete shown.count;
  delete shown.immediately;
  delete shown.prevMillis;
  const { job } = await schedulers.write(id, schedule, { name, data, opts: jobOpts }, { repeat: shown, countBase });
  return job;
}

/** The entry `getRepeatableJobs` lists for a scheduler (its spec, and the options its occurrences show). */
export function toRepeatableJob(
  id: string,
  name: string,
  spec: ScheduleSpec,
  shown: LegacyRepeatOptions,
  next: number | undefined,
): RepeatableJob {
  return {
    key: id,
    name,
    id: shown.jobId ?? null,
    endDate: spec.endDate ?? null,
    tz: shown.tz ?? null,
    pattern: spec.kind === 'cron' ? spec.pattern : null,
    every: spec.kind === 'every' ? String(spec.every) : null,
    ...(next !== undefined ? { next } : {}),
  };
}
