/**
 * Reads `startDate` / `endDate` as instants. A string without a UTC offset is a wall time in the
 * schedule's zone, never in the process's zone (which `new Date(string)` would use).
 */
import { Temporal } from './temporal.js';
import { invalidSchedule } from './schedule-error.js';
import { describe } from './timezone.js';

/** The largest |epoch ms| a JavaScript Date can hold. */
const MAX_INSTANT = 8.64e15;

/**
 * Reads a date option as epoch ms.
 *
 * - a `number`: epoch milliseconds (an integer);
 * - a `Date`: its instant;
 * - a `string`: ISO 8601. With `Z` or an offset (`2026-03-01T09:00Z`, `...+01:00`) it is that
 *   instant; without (`2026-03-01T09:00`, `2026-03-01`) it is that wall time in `tz` (the earlier
 *   pass in a repeated hour, the time after the gap in a skipped one).
 *
 * @throws InvalidScheduleError (reason `invalid-date`) when the value cannot be read.
 * @example
 * parseInstant('2026-03-01T09:00', 'Europe/Paris', 'startDate'); // Date.parse('2026-03-01T08:00Z')
 */
export function parseInstant(value: unknown, tz: string, name: string): number {
  const fix =
    'Pass a Date, epoch milliseconds, or an ISO 8601 string such as ' +
    "'2026-03-01T09:00:00Z' (an instant) or '2026-03-01T09:00' (a wall time in tz).";
  let instant: number;
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) {
      throw invalidSchedule('invalid-date', `${name} ${value} is not integer epoch ms. ${fix}`);
    }
    instant = value;
  } else if (value instanceof Date) {
    instant = value.getTime();
  } else if (typeof value === 'string') {
    instant = parseIsoString(value.trim(), tz);
  } else {
    throw invalidSchedule('invalid-date', `${name} must be a date, got ${describe(value)}. ${fix}`);
  }
  if (!Number.isFinite(instant) || Math.abs(instant) > MAX_INSTANT) {
    throw invalidSchedule('invalid-date', `${name} ${describe(value)} is not a valid date. ${fix}`);
  }
  return instant;
}

function parseIsoString(text: string, tz: string): number {
  try {
    return Temporal.Instant.from(text).epochMilliseconds;
  } catch {
    // No offset in the string: read it as a wall time in the schedule's zone below.
  }
  try {
    return Temporal.PlainDateTime.from(text).toZonedDateTime(tz, { disambiguation: 'compatible' }).toInstant().epochMilliseconds;
  } catch {
    return Number.NaN;
  }
}
