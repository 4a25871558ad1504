/**
 * `validateRepeat`: checks the options of `upsertJobScheduler` and returns the normalised spec,
 * or throws a typed error before anything is written.
 */
import { InvalidOptionsError } from '../job/errors.js';
import { compileCron } from './cron.js';
import { CronWalk } from './cron-walk.js';
import { parseInstant } from './dates.js';
import {
  DEFAULT_CATCHUP,
  DEFAULT_CATCHUP_MAX,
  DEFAULT_CATCHUP_WINDOW_MS,
  DEFAULT_OVERLAP,
  FIRST_RUN_HORIZON_MS,
  MAX_CATCHUP_MAX,
  REPEAT_OPTION_KEYS,
  type CatchupPolicy,
  type CronScheduleSpec,
  type OverlapPolicy,
  type RepeatOptions,
  type ScheduleSpec,
} from './repeat-options.js';
import { invalidSchedule } from './schedule-error.js';
import { DEFAULT_TIME_ZONE, describe, resolveTimeZone } from './timezone.js';

/** Options of {@link validateRepeat}. */
export interface ValidateRepeatOptions {
  /**
   * The instant the "fires within 5 years" check starts from (or `startDate`, if later).
   * Pass the engine clock's now; default `Date.now()`.
   */
  now?: Date | number;
}

const OVERLAP_POLICIES: readonly OverlapPolicy[] = ['skip', 'bufferOne', 'allowAll'];
const CATCHUP_POLICIES: readonly CatchupPolicy[] = ['latest', 'all', 'none'];

/** Hints for options that other queues have and Hopper does not. */
const UNKNOWN_OPTION_HINTS: Readonly<Record<string, string>> = {
  cron: "Hopper calls it 'pattern'.",
  timezone: "Hopper calls it 'tz'.",
  key: 'The scheduler id is the first argument of upsertJobScheduler.',
  jobId: 'Occurrence ids are sched:<schedulerId>:<instant>; the scheduler id is the first argument.',
  count: 'Hopper keeps the count of created occurrences itself.',
  prevMillis: 'Hopper records the last instant itself.',
  utc: "Use tz: 'UTC' (the default).",
};

/**
 * Checks repeat options and returns the normalised {@link ScheduleSpec}: instants as epoch ms,
 * the time zone canonical (default `'UTC'`), and defaults filled in (`overlap: 'skip'`,
 * `catchup: 'latest'`, `catchupWindow: 300000`, `catchupMax: 100`, `jitter: 0`,
 * `paused: false`, `offset: 0` for every). `limit` is kept for the engine to enforce.
 *
 * A cron schedule must fire within 5 years of `max(now, startDate)`; `endDate` in the past is
 * not an error (the schedule simply has no occurrence: `firstOccurrence` returns null).
 *
 * @throws InvalidScheduleError with a `reason` (see `InvalidScheduleReason`) saying what is wrong.
 * @example
 * validateRepeat({ pattern: '30 2 * * *', tz: 'Europe/Paris' });
 * // { kind: 'cron', pattern: '30 2 * * *', tz: 'Europe/Paris', overlap: 'skip', catchup: 'latest', ... }
 */
export function validateRepeat(repeat: RepeatOptions, options: ValidateRepeatOptions = {}): ScheduleSpec {
  if (typeof repeat !== 'object' || repeat === null || Array.isArray(repeat)) {
    throw invalidSchedule(
      'pattern-or-every',
      `repeat must be an object such as { pattern: '0 * * * *' } or { every: 60000 }, got ${describe(repeat)}.`,
    );
  }
  checkKnownKeys(repeat);
  const hasPattern = repeat.pattern != null;
  const hasEvery = repeat.every != null;
  if (hasPattern === hasEvery) {
    throw invalidSchedule(
      'pattern-or-every',
      hasPattern
        ? 'Both .pattern and .every options are defined for this repeatable job: keep one, pattern for wall-clock times, every for a fixed interval.'
        : "Either .pattern or .every options must be defined for this repeatable job: pattern (a cron string such as '0 9 * * *') or every (an interval in ms).",
    );
  }
  checkImmediately(repeat);
  const tz = repeat.tz == null ? DEFAULT_TIME_ZONE : resolveTimeZone(repeat.tz);
  const common = commonFields(repeat, tz);
  if (hasPattern) {
    if (repeat.offset != null) {
      throw invalidSchedule('invalid-offset', 'offset only applies to every schedules; shift the cron pattern itself instead.');
    }
    const spec: CronScheduleSpec = {
      kind: 'cron',
      pattern: compileCron(repeat.pattern).source,
      ...common,
    };
    checkFiresSoon(spec, nowOf(options.now));
    return spec;
  }
  const every = repeat.every;
  if (typeof every !== 'number' || !Number.isSafeInteger(every) || every < 1) {
    throw invalidSchedule('invalid-every', `every must be a positive integer number of milliseconds, got ${describe(every)}.`);
  }
  const offset = repeat.offset ?? 0;
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0 || offset >= every) {
    throw invalidSchedule(
      'invalid-offset',
      `offset must be an integer number of ms in [0, every) = [0, ${every}), got ${describe(offset)}.`,
    );
  }
  return { kind: 'every', every, offset, ...common };
}

type CommonFields = Omit<CronScheduleSpec, 'kind' | 'pattern'>;

function commonFields(repeat: RepeatOptions, tz: string): CommonFields {
  const startDate = repeat.startDate == null ? undefined : parseInstant(repeat.startDate, tz, 'startDate');
  const endDate = repeat.endDate == null ? undefined : parseInstant(repeat.endDate, tz, 'endDate');
  if (startDate !== undefined && endDate !== undefined && startDate > endDate) {
    throw invalidSchedule(
      'start-after-end',
      `startDate (${new Date(startDate).toISOString()}) is after endDate (${new Date(endDate).toISOString()}); swap them or drop one.`,
    );
  }
  const { limit, jitter = 0, catchupWindow = DEFAULT_CATCHUP_WINDOW_MS } = repeat;
  if (limit != null && (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1)) {
    throw invalidSchedule(
      'invalid-limit',
      `limit must be an integer >= 1 (the most occurrences to create), got ${describe(limit)}; omit it for no limit.`,
    );
  }
  if (typeof jitter !== 'number' || !Number.isFinite(jitter) || jitter < 0) {
    throw invalidSchedule('invalid-jitter', `jitter must be a finite number of ms >= 0, got ${describe(jitter)}; use 0 for none.`);
  }
  const overlap = repeat.overlap ?? DEFAULT_OVERLAP;
  if (!OVERLAP_POLICIES.includes(overlap)) {
    throw invalidSchedule('invalid-overlap', `overlap must be one of ${OVERLAP_POLICIES.join(', ')}, got ${describe(overlap)}.`);
  }
  const catchup = repeat.catchup ?? DEFAULT_CATCHUP;
  if (!CATCHUP_POLICIES.includes(catchup)) {
    throw invalidSchedule('invalid-catchup', `catchup must be one of ${CATCHUP_POLICIES.join(', ')}, got ${describe(catchup)}.`);
  }
  if (typeof catchupWindow !== 'number' || !Number.isFinite(catchupWindow) || catchupWindow < 0) {
    throw invalidSchedule(
      'invalid-catchup-window',
      `catchupWindow must be a finite number of ms >= 0, got ${describe(catchupWindow)} ` +
        `(default ${DEFAULT_CATCHUP_WINDOW_MS}, 5 minutes).`,
    );
  }
  const catchupMax = repeat.catchupMax ?? DEFAULT_CATCHUP_MAX;
  if (!Number.isInteger(catchupMax) || catchupMax < 1 || catchupMax > MAX_CATCHUP_MAX) {
    throw invalidSchedule(
      'invalid-catchup-max',
      `catchupMax must be an integer from 1 to ${MAX_CATCHUP_MAX}, got ${describe(catchupMax)}.`,
    );
  }
  const paused = repeat.paused ?? false;
  if (typeof paused !== 'boolean') {
    throw invalidSchedule('invalid-paused', `paused must be true or false, got ${describe(paused)}.`);
  }
  return {
    tz,
    ...(startDate !== undefined && { startDate }),
    ...(endDate !== undefined && { endDate }),
    ...(limit != null && { limit }),
    jitter,
    overlap,
    catchup,
    catchupWindow,
    catchupMax,
    paused,
  };
}

/** `immediately` is a boolean and excludes `startDate` (BullMQ's rule); it is not part of the spec. */
function checkImmediately(repeat: RepeatOptions): void {
  if (repeat.immediately == null) return;
  if (typeof repeat.immediately !== 'boolean') {
    throw invalidSchedule('invalid-immediately', `immediately must be true or false, got ${describe(repeat.immediately)}.`);
  }
  if (repeat.immediately && repeat.startDate != null) {
    throw invalidSchedule(
      'invalid-immediately',
      'Both .immediately and .startDate options are defined for this repeatable job: keep one (immediately runs a new cron schedule once at once).',
    );
  }
}

function checkKnownKeys(repeat: RepeatOptions): void {
  const known: readonly string[] = REPEAT_OPTION_KEYS;
  for (const [key, value] of Object.entries(repeat)) {
    if (known.includes(key) || value === undefined) continue;
    const hint = UNKNOWN_OPTION_HINTS[key] ?? `Known options: ${known.join(', ')}.`;
    throw invalidSchedule('unknown-option', `Unknown repeat option '${key}'. ${hint}`);
  }
}

function nowOf(now: Date | number | undefined): number {
  const value = now === undefined ? Date.now() : now instanceof Date ? now.getTime() : now;
  if (!Number.isFinite(value)) {
    throw new InvalidOptionsError(`validateRepeat: now must be a Date or epoch ms, got ${describe(now)}.`);
  }
  return value;
}

/** Refuses a cron schedule with no fire at all, or none within 5 years of max(now, startDate). */
function checkFiresSoon(spec: CronScheduleSpec, now: number): void {
  const from = Math.max(now, spec.startDate ?? Number.NEGATIVE_INFINITY);
  const walk = new CronWalk(compileCron(spec.pattern), spec.tz, from - 1);
  const step = walk.next(from + FIRST_RUN_HORIZON_MS);
  if (typeof step === 'number') return;
  if (step === 'end') {
    throw invalidSchedule(
      'never-fires',
      `cron pattern '${spec.pattern}' never fires (no date matches it, e.g. February 31st). Check the day-of-month and month fields.`,
    );
  }
  throw invalidSchedule(
    'no-run-soon',
    `cron pattern '${spec.pattern}' in ${spec.tz} has no run in the 5 years after ` +
      `${new Date(from).toISOString()}` +
      (spec.startDate !== undefined && spec.startDate > now ? ' (its startDate)' : '') +
      '. Hopper refuses schedules that fire so rarely or only in DST gaps; check the pattern.',
  );
}
