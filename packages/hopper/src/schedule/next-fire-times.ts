/**
 * Previews and the first occurrence: the two questions the dashboard, the CLI and
 * `upsertJobScheduler` ask, answered with the same cursor the scheduler uses.
 */
import { InvalidOptionsError } from '../job/errors.js';
import { invalidSchedule } from './schedule-error.js';
import { firstEveryOccurrence } from './every.js';
import { fireCursor, nextFireAfter } from './fire-cursor.js';
import { isScheduleSpec, type RepeatOptions, type ScheduleSpec } from './repeat-options.js';
import { describe } from './timezone.js';
import { validateRepeat } from './validate-repeat.js';

/** The most fires one {@link nextFireTimes} call returns. */
export const MAX_PREVIEW_COUNT = 10_000;

/** Options of {@link nextFireTimes}. */
export interface NextFireTimesOptions {
  /** Fires strictly after this instant are returned. */
  from: Date | number;
  /** How many fires to return (0 to {@link MAX_PREVIEW_COUNT}). */
  count: number;
}

/**
 * The next `count` fire instants (epoch ms, UTC) strictly after `from`, by exactly the rules the
 * scheduler uses: cron wall times in `tz` with the DST rules of `docs/schedules.md`, `every` on
 * its grid, `startDate` and `endDate` applied (inclusive). Fewer than `count` when the schedule
 * ends first. `limit` is NOT applied: it counts occurrences actually created, which only the
 * engine knows. Jitter is not added either (see `jitterFor`). Pure and bounded: no pattern can
 * make it spin.
 *
 * Accepts raw {@link RepeatOptions} (validated with `now = from`) or a spec from `validateRepeat`.
 *
 * @throws InvalidScheduleError when the options are invalid, or (reason `search-limit`) when a
 *   cron search gives up; InvalidOptionsError when `from` or `count` is not usable.
 * @example
 * nextFireTimes({ pattern: '30 2 * * *', tz: 'Europe/Paris' }, { from: Date.parse('2026-03-27T12:00Z'), count: 3 })
 *   .map((t) => new Date(t).toISOString());
 * // ['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']
 */
export function nextFireTimes(repeat: RepeatOptions | ScheduleSpec, options: NextFireTimesOptions): number[] {
  const { from, count } = options;
  const after = from instanceof Date ? from.getTime() : from;
  if (typeof after !== 'number' || !Number.isFinite(after) || Math.abs(after) > 8.64e15) {
    throw new InvalidOptionsError(`nextFireTimes: from must be a valid Date or epoch ms, got ${describe(from)}.`);
  }
  if (!Number.isInteger(count) || count < 0 || count > MAX_PREVIEW_COUNT) {
    throw new InvalidOptionsError(`nextFireTimes: count must be an integer from 0 to ${MAX_PREVIEW_COUNT}, got ${describe(count)}.`);
  }
  const spec = isScheduleSpec(repeat) ? checkSpec(repeat) : validateRepeat(repeat, { now: after });
  const cursor = fireCursor(spec, after);
  const fires: number[] = [];
  while (fires.length < count) {
    const at = cursor.next();
    if (at === null) break;
    fires.push(at);
  }
  return fires;
}

/**
 * A spec passed as one (it has a `kind`) is checked as `validateRepeat` checks the options it is
 * made from: an `every` of 0 or below, or a spec with no pattern, would make every fire NaN or go
 * backwards.
 */
function checkSpec(spec: ScheduleSpec): ScheduleSpec {
  if (spec.kind === 'every') {
    const { every, offset } = spec;
    if (typeof every !== 'number' || !Number.isSafeInteger(every) || every < 1) {
      throw invalidSchedule('invalid-every', `every must be a positive integer number of milliseconds, got ${describe(every)}.`);
    }
    if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0 || offset >= every) {
      throw invalidSchedule(
        'invalid-offset',
        `offset must be an integer number of ms in [0, every) = [0, ${every}), got ${describe(offset)}.`,
      );
    }
  } else if (typeof spec.pattern !== 'string' || spec.pattern.trim() === '') {
    throw invalidSchedule('cron-syntax', `pattern must be a cron string such as '0 9 * * *', got ${describe(spec.pattern)}.`);
  }
  return spec;
}

/**
 * The first occurrence of a new (or changed) scheduler upserted at `now`:
 *
 * - `every`: the grid slot at or before `now` (`floor(now / every) * every` on the default grid),
 *   due at once, so every process upserting concurrently computes the same instant; `startDate`
 *   when `now` is before it.
 * - cron: the first fire strictly after `now`. Not the latest fire at or before `now`: that one
 *   belongs to the past (running it at upsert would run, say, a 02:30 nightly job at 14:00), and
 *   BullMQ also waits for the next match. Processes that read a slightly different `now` agree
 *   unless a fire falls between their clocks, and the engine's "never at or before the last
 *   instant" rule keeps that from running twice.
 *
 * `null` when the schedule has no occurrence left (its endDate has passed).
 *
 * @example
 * firstOccurrence(validateRepeat({ every: 60_000 }), 125_000); // 120000 (due now)
 */
export function firstOccurrence(spec: ScheduleSpec, now: number): number | null {
  if (spec.kind === 'every') return firstEveryOccurrence(spec, now);
  return nextFireAfter(spec, now);
}
