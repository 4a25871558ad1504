/**
 * validateRepeat: every refusal is an InvalidScheduleError with a stable reason and a message that
 * says what to do; valid options come back normalised with their defaults.
 */
import { describe, expect, test } from 'vitest';
import { HopperError, InvalidScheduleError } from '../../src/job/errors.js';
import {
  nextFireTimes,
  scheduleErrorReason,
  validateRepeat,
  type InvalidScheduleReason,
  type RepeatOptions,
} from '../../src/schedule/index.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');

function refusal(repeat: unknown): { error: InvalidScheduleError; reason: InvalidScheduleReason | undefined } {
  try {
    validateRepeat(repeat as RepeatOptions, { now: NOW });
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidScheduleError);
    expect(error).toBeInstanceOf(HopperError);
    expect((error as InvalidScheduleError).code).toBe('ERR_HOPPER_INVALID_SCHEDULE');
    return { error: error as InvalidScheduleError, reason: scheduleErrorReason(error) };
  }
  throw new Error(`expected ${JSON.stringify(repeat)} to be refused`);
}

describe('refusals', () => {
  const cases: [label: string, repeat: unknown, reason: InvalidScheduleReason, says: RegExp][] = [
    ['neither pattern nor every', { tz: 'UTC' }, 'pattern-or-every', /Either \.pattern or \.every options must be defined/],
    ['both pattern and every', { pattern: '* * * * *', every: 1000 }, 'pattern-or-every', /keep one/],
    ['not an object', 'every minute', 'pattern-or-every', /must be an object/],
    ['an unknown option', { every: 1000, timezone: 'UTC' }, 'unknown-option', /Hopper calls it 'tz'/],
    ['a typo', { every: 1000, jiter: 5 }, 'unknown-option', /Known options: pattern, tz/],
    ['empty cron', { pattern: '   ' }, 'cron-empty', /pattern is empty/],
    ['4 fields', { pattern: '* * * *' }, 'cron-field-count', /has 4 fields; Hopper takes 5/],
    ['7 fields (years)', { pattern: '0 0 0 1 1 * 2030' }, 'cron-field-count', /Year fields are not supported/],
    ['@reboot', { pattern: '@reboot' }, 'cron-nickname', /start-up code/],
    ['an unknown nickname', { pattern: '@fortnightly' }, 'cron-nickname', /Use one of @yearly/],
    ['minute 60', { pattern: '60 * * * *' }, 'cron-out-of-range', /minute field '60': 60 is outside minute values 0-59/],
    ['hour 24', { pattern: '0 24 * * *' }, 'cron-out-of-range', /hour field/],
    ['day-of-month 0', { pattern: '0 0 0 * *' }, 'cron-out-of-range', /day-of-month/],
    ['month 13', { pattern: '0 0 1 13 *' }, 'cron-out-of-range', /month values 1-12/],
    ['day-of-week 8', { pattern: '0 0 * * 8' }, 'cron-out-of-range', /day-of-week values 0-7/],
    ['second 61 in a 6-field pattern', { pattern: '61 * * * * *' }, 'cron-out-of-range', /second field/],
    ['#6', { pattern: '0 0 * * 1#6' }, 'cron-out-of-range', /#1 to #5/],
    ['*/0', { pattern: '*/0 * * * *' }, 'cron-step', /a step of 0 is not allowed/],
    ['a step past the range', { pattern: '0 */25 * * *' }, 'cron-step', /step from 1 to 24/],
    ['a backwards range 5-1', { pattern: '5-1 * * * *' }, 'cron-range', /runs backwards/],
    ['a backwards range of names', { pattern: '0 0 * * FRI-MON' }, 'cron-range', /runs backwards/],
    ['stray characters', { pattern: '0 0 * * x' }, 'cron-syntax', /is not valid/],
    ['a numeric-prefix step', { pattern: '5/10 * * * *' }, 'cron-syntax', /Use wildcard/],
    ['the + AND modifier', { pattern: '0 0 1 * +MON' }, 'cron-syntax', /OR-ed/],
    ['a stepped dow beside a restricted dom', { pattern: '0 0 1-7 * */7' }, 'cron-ambiguous-days', /ambiguous/],
    ['a stepped dom beside a restricted dow', { pattern: '0 0 */2 * MON' }, 'cron-ambiguous-days', /ambiguous/],
    ['Feb 31st', { pattern: '0 0 31 2 *' }, 'never-fires', /never fires/],
    ['Feb 30th in a zone', { pattern: '0 0 30 2 *', tz: 'Europe/Paris' }, 'never-fires', /never fires/],
    ['no run in 5 years (5th Monday of February)', { pattern: '0 0 * 2 1#5' }, 'no-run-soon', /no run in the 5 years/],
    ['only in DST gaps', { pattern: '*/5 2 * 3 0L', tz: 'Europe/Paris' }, 'no-run-soon', /DST gaps/],
    ['an unknown zone', { pattern: '0 0 * * *', tz: 'Mars/Olympus' }, 'invalid-timezone', /Unknown time zone 'Mars\/Olympus'/],
    ['an empty zone', { pattern: '0 0 * * *', tz: '' }, 'invalid-timezone', /IANA time zone name/],
    ['every 0', { every: 0 }, 'invalid-every', /positive integer/],
    ['every negative', { every: -5 }, 'invalid-every', /positive integer/],
    ['every fractional', { every: 1.5 }, 'invalid-every', /positive integer/],
    ['every NaN', { every: Number.NaN }, 'invalid-every', /positive integer/],
    ['every as a string', { every: '1000' }, 'invalid-every', /positive integer/],
    ['offset with a pattern', { pattern: '0 * * * *', offset: 5 }, 'invalid-offset', /only applies to every/],
    ['offset >= every', { every: 1000, offset: 1000 }, 'invalid-offset', /\[0, 1000\)/],
    ['an unreadable startDate', { every: 1000, startDate: 'next tuesday' }, 'invalid-date', /ISO 8601/],
    ['an invalid Date', { every: 1000, endDate: new Date(Number.NaN) }, 'invalid-date', /not a valid date/],
    ['fractional epoch ms', { every: 1000, startDate: 1.5 }, 'invalid-date', /integer epoch ms/],
    [
      'startDate after endDate',
      { every: 1000, startDate: '2026-02-01T00:00Z', endDate: '2026-01-01T00:00Z' },
      'start-after-end',
      /is after endDate/,
    ],
    ['limit 0', { every: 1000, limit: 0 }, 'invalid-limit', /integer >= 1/],
    ['limit fractional', { every: 1000, limit: 2.5 }, 'invalid-limit', /integer >= 1/],
    ['negative jitter', { every: 1000, jitter: -1 }, 'invalid-jitter', /finite number of ms >= 0/],
    ['infinite jitter', { every: 1000, jitter: Number.POSITIVE_INFINITY }, 'invalid-jitter', /finite/],
    ['NaN jitter', { every: 1000, jitter: Number.NaN }, 'invalid-jitter', /finite/],
    ['an unknown overlap', { every: 1000, overlap: 'queue' }, 'invalid-overlap', /skip, bufferOne, allowAll/],
    ['an unknown catchup', { every: 1000, catchup: 'some' }, 'invalid-catchup', /latest, all, none/],
    ['a negative catchupWindow', { every: 1000, catchupWindow: -1 }, 'invalid-catchup-window', />= 0/],
    ['catchupMax 0', { every: 1000, catchupMax: 0 }, 'invalid-catchup-max', /from 1 to 1000/],
    ['catchupMax too big', { every: 1000, catchupMax: 5000 }, 'invalid-catchup-max', /from 1 to 1000/],
    ['paused as a string', { every: 1000, paused: 'yes' }, 'invalid-paused', /true or false/],
  ];

  test.each(cases)('%s', (_label, repeat, reason, says) => {
    const { error, reason: actual } = refusal(repeat);
    expect(actual).toBe(reason);
    expect(error.message).toMatch(says);
  });

  test('the startDate moves the 5-year check: a far startDate is fine', () => {
    const spec = validateRepeat({ pattern: '0 0 * * *', startDate: '2040-01-01T00:00Z' }, { now: NOW });
    expect(spec.startDate).toBe(Date.parse('2040-01-01T00:00Z'));
  });

  test('nextFireTimes validates too, and bounds from and count', () => {
    expect(() => nextFireTimes({ pattern: '0 0 31 2 *' }, { from: NOW, count: 1 })).toThrow(InvalidScheduleError);
    expect(() => nextFireTimes({ every: 1000 }, { from: Number.NaN, count: 1 })).toThrow(/from must be/);
    expect(() => nextFireTimes({ every: 1000 }, { from: NOW, count: -1 })).toThrow(/count must be/);
    expect(() => nextFireTimes({ every: 1000 }, { from: NOW, count: 10_001 })).toThrow(/count must be/);
  });
});

describe('normalised spec', () => {
  test('cron: defaults filled, zone canonical, pattern normalised', () => {
    expect(validateRepeat({ pattern: '  30   2 * * * ', tz: 'europe/paris' }, { now: NOW })).toEqual({
      kind: 'cron',
      pattern: '30 2 * * *',
      tz: 'Europe/Paris',
      jitter: 0,
      overlap: 'skip',
      catchup: 'latest',
      catchupWindow: 300_000,
      catchupMax: 100,
      paused: false,
    });
  });

  test('every: defaults, offset 0, explicit options kept', () => {
    expect(
      validateRepeat(
        { every: 60_000, limit: 3, jitter: 500, overlap: 'allowAll', catchup: 'all', catchupWindow: 0, catchupMax: 7, paused: true },
        { now: NOW },
      ),
    ).toEqual({
      kind: 'every',
      every: 60_000,
      offset: 0,
      tz: 'UTC',
      limit: 3,
      jitter: 500,
      overlap: 'allowAll',
      catchup: 'all',
      catchupWindow: 0,
      catchupMax: 7,
      paused: true,
    });
  });

  test('a nickname is stored expanded; undefined and null options count as absent', () => {
    const spec = validateRepeat({ pattern: '@hourly', tz: undefined, every: undefined, limit: undefined }, { now: NOW });
    expect(spec).toMatchObject({ kind: 'cron', pattern: '0 * * * *', tz: 'UTC' });
    expect(spec).not.toHaveProperty('limit');
    const nulls = { every: 1000, startDate: null, endDate: null } as unknown as RepeatOptions;
    expect(validateRepeat(nulls, { now: NOW })).not.toHaveProperty('startDate');
  });

  test('dates: Date, epoch ms, ISO instants, and wall times in tz (never the process zone)', () => {
    const spec = validateRepeat(
      { pattern: '0 9 * * *', tz: 'Europe/Paris', startDate: '2026-07-01T09:00', endDate: '2026-12-31' },
      { now: NOW },
    );
    expect(spec.startDate).toBe(Date.parse('2026-07-01T07:00Z')); // 09:00 CEST
    expect(spec.endDate).toBe(Date.parse('2026-12-30T23:00Z')); // midnight CET
    const instants = validateRepeat(
      { every: 1000, startDate: new Date('2026-07-01T00:00Z'), endDate: '2026-08-01T02:00+02:00' },
      { now: NOW },
    );
    expect(instants.startDate).toBe(Date.parse('2026-07-01T00:00Z'));
    expect(instants.endDate).toBe(Date.parse('2026-08-01T00:00Z'));
    expect(validateRepeat({ every: 1000, startDate: 0 }, { now: NOW }).startDate).toBe(0);
  });

  test('a wall-time startDate in a DST gap means the time after the gap', () => {
    const spec = validateRepeat({ every: 1000, tz: 'Europe/Paris', startDate: '2026-03-29T02:30' }, { now: NOW });
    expect(spec.startDate).toBe(Date.parse('2026-03-29T01:30Z')); // 03:30 CEST
  });

  test('endDate in the past is accepted (the schedule is simply over)', () => {
    const spec = validateRepeat({ pattern: '0 0 * * *', endDate: '2020-01-01T00:00Z' }, { now: NOW });
    expect(nextFireTimes(spec, { from: NOW, count: 3 })).toEqual([]);
  });

  test('offset zones and IANA links resolve; a spec passes through nextFireTimes untouched', () => {
    expect(validateRepeat({ pattern: '0 0 * * *', tz: '+05:30' }, { now: NOW }).tz).toBe('+05:30');
    const spec = validateRepeat({ pattern: '0 0 * * *', tz: 'Asia/Kolkata' }, { now: NOW });
    expect(nextFireTimes(spec, { from: NOW, count: 1 })).toEqual([Date.parse('2026-06-01T18:30Z')]);
  });
});
