/**
 * The one way the schedule module refuses input: an {@link InvalidScheduleError} that also carries
 * a machine-readable `reason`, so callers (the engine, the dashboard, tests) can branch on what
 * was wrong without parsing the message. The message says what was wrong and how to fix it.
 */
import { InvalidScheduleError } from '../job/errors.js';

/** Why a schedule was refused. Stable strings: safe to match on. */
export type InvalidScheduleReason =
  /** Neither `pattern` nor `every` was given, or both were. */
  | 'pattern-or-every'
  /** An option Hopper does not know (often a typo, or a BullMQ-only option). */
  | 'unknown-option'
  /** The cron pattern is empty or only spaces. */
  | 'cron-empty'
  /** The cron pattern has neither 5 nor 6 fields. */
  | 'cron-field-count'
  /** `@reboot` or an unknown `@nickname`. */
  | 'cron-nickname'
  /** A value outside its field's range (minute 60, hour 24, month 13...). */
  | 'cron-out-of-range'
  /** A step of 0, or larger than the field's range (`*\/0`). */
  | 'cron-step'
  /** A range whose start is after its end (`5-1`). */
  | 'cron-range'
  /** Anything else croner cannot parse (stray characters, misplaced `L`, `W` or `#`). */
  | 'cron-syntax'
  /** A stepped day field (`*\/n`) beside a restricted other day field: cron dialects disagree. */
  | 'cron-ambiguous-days'
  /** The pattern has no fire at all (`0 0 31 2 *`). */
  | 'never-fires'
  /** The schedule has no fire within the next 5 years (or before its `endDate`). */
  | 'no-run-soon'
  /** Not a time zone Temporal/ICU knows. */
  | 'invalid-timezone'
  /** `every` is not a positive safe integer of milliseconds. */
  | 'invalid-every'
  /** `offset` is not an integer in `[0, every)`, or was given with a cron pattern. */
  | 'invalid-offset'
  /** `startDate` or `endDate` cannot be read as an instant. */
  | 'invalid-date'
  /** `startDate` is after `endDate`. */
  | 'start-after-end'
  /** `limit` is not an integer >= 1. */
  | 'invalid-limit'
  /** `jitter` is negative, not finite or not a number. */
  | 'invalid-jitter'
  /** `overlap` is not one of `skip`, `bufferOne`, `allowAll`. */
  | 'invalid-overlap'
  /** `catchup` is not one of `latest`, `all`, `none`. */
  | 'invalid-catchup'
  /** `catchupWindow` is negative, not finite or not an integer. */
  | 'invalid-catchup-window'
  /** `catchupMax` is not an integer in `[1, 1000]`. */
  | 'invalid-catchup-max'
  /** `paused` is not a boolean. */
  | 'invalid-paused'
  /** `immediately` is not a boolean, or comes with `startDate`. */
  | 'invalid-immediately'
  /** The search for the next fire gave up (see `MAX_CRON_SEGMENTS`); the schedule fires too rarely. */
  | 'search-limit';

/** An {@link InvalidScheduleError} with the reason it was thrown. */
export type ScheduleError = InvalidScheduleError & { readonly reason: InvalidScheduleReason };

/**
 * Makes the error the schedule module throws: an `InvalidScheduleError` (so `instanceof` and the
 * brand work across module copies) with an enumerable `reason`.
 *
 * @example
 * throw invalidSchedule('invalid-every', `every must be a positive integer of ms, got ${every}`);
 */
export function invalidSchedule(reason: InvalidScheduleReason, message: string, options?: { cause?: unknown }): ScheduleError {
  const error = new InvalidScheduleError(message, options);
  Object.defineProperty(error, 'reason', { value: reason, enumerable: true });
  return error as ScheduleError;
}

/** Reads the `reason` of an error thrown by the schedule module, or `undefined` for any other value. */
export function scheduleErrorReason(value: unknown): InvalidScheduleReason | undefined {
  if (!(value instanceof InvalidScheduleError)) return undefined;
  const reason = (value as { reason?: unknown }).reason;
  return typeof reason === 'string' ? (reason as InvalidScheduleReason) : undefined;
}
