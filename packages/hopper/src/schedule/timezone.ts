/**
 * Time-zone arithmetic for schedules, on temporal-polyfill: the UTC offset in force at an instant
 * and the instants where it changes. Everything takes an explicit zone, so the process's own `TZ`
 * never changes a result.
 */
import { Temporal } from './temporal.js';
import { invalidSchedule } from './schedule-error.js';

/** The zone used when a schedule gives none: UTC, never the process's local zone. */
export const DEFAULT_TIME_ZONE = 'UTC';

/**
 * Checks a time zone and returns its canonical id (`europe/paris` -> `Europe/Paris`). Accepts IANA
 * names (`Europe/Paris`, `Etc/GMT+1`, `UTC`) and fixed UTC offsets (`+05:30`).
 *
 * @throws InvalidScheduleError (reason `invalid-timezone`) for anything else.
 */
export function resolveTimeZone(tz: unknown): string {
  if (typeof tz !== 'string' || tz.trim() === '') {
    throw invalidSchedule(
      'invalid-timezone',
      `tz must be an IANA time zone name such as 'Europe/Paris' or 'UTC', got ${describe(tz)}. Omit tz to use UTC.`,
    );
  }
  try {
    return Temporal.Instant.fromEpochMilliseconds(0).toZonedDateTimeISO(tz.trim()).timeZoneId;
  } catch (cause) {
    throw invalidSchedule(
      'invalid-timezone',
      `Unknown time zone '${tz}'. Use an IANA name such as 'Europe/Paris', 'America/New_York' or ` +
        `'UTC' (see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones).`,
      { cause },
    );
  }
}

function zoned(tz: string, instant: number): Temporal.ZonedDateTime {
  return Temporal.Instant.fromEpochMilliseconds(instant).toZonedDateTimeISO(tz);
}

/** The UTC offset (ms, east positive) in force in `tz` at `instant`. Wall time = instant + offset. */
export function offsetAt(tz: string, instant: number): number {
  return zoned(tz, instant).offsetNanoseconds / 1e6;
}

/** The first instant strictly after `instant` where `tz`'s UTC offset changes, or `null` if none. */
export function transitionAfter(tz: string, instant: number): number | null {
  const next = zoned(tz, instant).getTimeZoneTransition('next');
  return next ? next.epochMilliseconds : null;
}

/**
 * The last instant at or before `instant` where `tz`'s UTC offset changed (the start of the
 * constant-offset stretch that holds `instant`), or `null` if there is none.
 */
export function transitionAtOrBefore(tz: string, instant: number): number | null {
  const previous = zoned(tz, instant + 1).getTimeZoneTransition('previous');
  return previous ? previous.epochMilliseconds : null;
}

/** A value, shown in an error message. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (value instanceof Date) return `Date(${String(value.getTime())})`;
  if (typeof value === 'object' && value !== null) return Object.prototype.toString.call(value);
  return String(value);
}
