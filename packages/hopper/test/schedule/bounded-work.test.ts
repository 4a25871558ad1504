/**
 * No pattern can make the schedule module spin. croner 11.0.1's own search walks to year 3000 for
 * patterns whose wall times all fall in DST gaps (`* * 2 * 3 0L` in Europe/Paris: ~40 s); ours
 * stops after MAX_CRON_SEGMENTS stretches of constant offset. Work is measured by counting
 * croner's increments (each one bounded: at most 400 years of field arithmetic), which does not
 * depend on machine load; the wall-clock limits are generous backstops.
 */
import { CronDate } from 'croner';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { MAX_CRON_SEGMENTS, nextFireTimes, scheduleErrorReason, validateRepeat, type ScheduleSpec } from '../../src/schedule/index.js';

const FROM = Date.parse('2026-01-01T00:00Z');

/** A spec that skipped validation (as if stored by an older version or edited by hand). */
function rawSpec(pattern: string, tz: string): ScheduleSpec {
  return {
    kind: 'cron',
    pattern,
    tz,
    jitter: 0,
    overlap: 'skip',
    catchup: 'latest',
    catchupWindow: 300_000,
    catchupMax: 100,
    paused: false,
  };
}

/** Runs `work`, returning its value (or the error it threw), croner increments made, and ms taken. */
function measured(work: () => unknown): { value: unknown; increments: number; ms: number } {
  const increments = vi.spyOn(CronDate.prototype, 'increment');
  const started = performance.now();
  let value: unknown;
  try {
    value = work();
  } catch (error) {
    value = error;
  }
  return { value, increments: increments.mock.calls.length, ms: performance.now() - started };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('bounded work', () => {
  test.each([
    ['* * 2 * 3 0L', 'Europe/Paris', 'no-run-soon'], // every second of a skipped hour
    ['*/5 2 * 3 0L', 'Europe/Paris', 'no-run-soon'],
    ['30 2 * 3 0L', 'America/New_York', null], // fixed time: fires when the gap ends, accepted
    ['0 0 31 2 *', 'Europe/Paris', 'never-fires'],
    ['0 0 30 2 *', 'Pacific/Chatham', 'never-fires'],
    ['0 0 * 2 1#5', 'UTC', 'no-run-soon'],
  ])('validating %s in %s takes a few croner steps', (pattern, tz, reason) => {
    const { value, increments, ms } = measured(() => validateRepeat({ pattern, tz }, { now: FROM }));
    expect(scheduleErrorReason(value) ?? null).toBe(reason);
    expect(increments).toBeLessThanOrEqual(30); // one per DST stretch in 5 years, plus gap checks
    expect(ms).toBeLessThan(5000);
  });

  test('an unvalidated gap-only pattern gives up with search-limit after MAX_CRON_SEGMENTS stretches', () => {
    const { value, increments, ms } = measured(() => nextFireTimes(rawSpec('* * 2 * 3 0L', 'Europe/Paris'), { from: FROM, count: 1 }));
    expect(scheduleErrorReason(value)).toBe('search-limit');
    expect((value as Error).message).toContain(`${MAX_CRON_SEGMENTS} DST periods`);
    expect(increments).toBeLessThanOrEqual(MAX_CRON_SEGMENTS + 1);
    expect(ms).toBeLessThan(10_000);
  });

  test('an unvalidated never-matching pattern returns no fires after one croner step', () => {
    const { value, increments } = measured(() => nextFireTimes(rawSpec('0 0 31 2 *', 'America/New_York'), { from: FROM, count: 5 }));
    expect(value).toEqual([]);
    expect(increments).toBe(1);
  });

  test('n fires cost about n croner steps, even a per-second pattern across a DST change', () => {
    const from = Date.parse('2026-10-25T00:58:00Z');
    const { value, increments, ms } = measured(() =>
      nextFireTimes({ pattern: '* * * * * *', tz: 'Europe/Paris' }, { from, count: 10_000 }),
    );
    const fires = value as number[];
    expect(fires).toHaveLength(10_000);
    expect(fires.at(-1)).toBe(from + 10_000 * 1000); // every instant once: an interval pattern in a fold
    expect(increments).toBeLessThanOrEqual(10_000 + 5); // + the validation's step and the stretch change
    expect(ms).toBeLessThan(10_000);
  });

  test('a rare but valid pattern (Feb 29) is found across years of DST stretches', () => {
    const spec = validateRepeat({ pattern: '0 12 29 2 *', tz: 'Europe/Paris' }, { now: FROM });
    const from = Date.parse('2097-03-01T00:00Z'); // 2100 is not a leap year: the next is 2104
    const { value, increments } = measured(() => nextFireTimes(spec, { from, count: 1 }));
    expect(value).toEqual([Date.parse('2104-02-29T11:00Z')]);
    expect(increments).toBeLessThanOrEqual(30); // 7 years: a step per DST stretch and per gap check
    // Raw options are validated from `from`: no run within 5 years of it, so they are refused.
    const raw = measured(() => nextFireTimes({ pattern: '0 12 29 2 *', tz: 'Europe/Paris' }, { from, count: 1 }));
    expect(scheduleErrorReason(raw.value)).toBe('no-run-soon');
  });

  test('croner stops at year 3000; so does a preview', () => {
    const from = Date.parse('2999-12-30T00:00Z');
    expect(nextFireTimes({ pattern: '0 0 * * *' }, { from, count: 5 })).toEqual([Date.parse('2999-12-31T00:00Z')]);
  });
});
