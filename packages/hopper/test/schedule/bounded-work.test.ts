/**
 * No pattern can make the schedule module spin. croner 11.0.1's own search walks to year 3000 for
 * patterns whose wall times all fall in DST gaps (`* * 2 * 3 0L` in Europe/Paris: ~40 s); ours
 * stops after MAX_CRON_SEGMENTS stretches of constant offset.
 */
import { describe, expect, test } from 'vitest';
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

function timed(work: () => unknown): { value: unknown; ms: number } {
  const started = performance.now();
  try {
    return { value: work(), ms: performance.now() - started };
  } catch (error) {
    return { value: error, ms: performance.now() - started };
  }
}

describe('bounded work', () => {
  test.each([
    ['* * 2 * 3 0L', 'Europe/Paris', 'no-run-soon'], // every second of a skipped hour
    ['*/5 2 * 3 0L', 'Europe/Paris', 'no-run-soon'],
    ['30 2 * 3 0L', 'America/New_York', null], // fixed time: fires when the gap ends, accepted
    ['0 0 31 2 *', 'Europe/Paris', 'never-fires'],
    ['0 0 30 2 *', 'Pacific/Chatham', 'never-fires'],
    ['0 0 * 2 1#5', 'UTC', 'no-run-soon'],
  ])('validating %s in %s is quick', (pattern, tz, reason) => {
    const { value, ms } = timed(() => validateRepeat({ pattern, tz }, { now: FROM }));
    expect(ms).toBeLessThan(500);
    expect(scheduleErrorReason(value) ?? null).toBe(reason);
  });

  test('an unvalidated gap-only pattern gives up with search-limit, quickly', () => {
    const { value, ms } = timed(() => nextFireTimes(rawSpec('* * 2 * 3 0L', 'Europe/Paris'), { from: FROM, count: 1 }));
    expect(scheduleErrorReason(value)).toBe('search-limit');
    expect((value as Error).message).toContain(`${MAX_CRON_SEGMENTS} DST periods`);
    expect(ms).toBeLessThan(2000);
  });

  test('an unvalidated never-matching pattern returns no fires, quickly', () => {
    const { value, ms } = timed(() => nextFireTimes(rawSpec('0 0 31 2 *', 'America/New_York'), { from: FROM, count: 5 }));
    expect(value).toEqual([]);
    expect(ms).toBeLessThan(500);
  });

  test('10,000 fires of a per-second pattern across a DST change take milliseconds', () => {
    const from = Date.parse('2026-10-25T00:58:00Z');
    const { value, ms } = timed(() => nextFireTimes({ pattern: '* * * * * *', tz: 'Europe/Paris' }, { from, count: 10_000 }));
    const fires = value as number[];
    expect(fires).toHaveLength(10_000);
    expect(fires.at(-1)).toBe(from + 10_000 * 1000); // every instant once: an interval pattern in a fold
    expect(ms).toBeLessThan(1000);
  });

  test('a rare but valid pattern (Feb 29) is found across years of DST stretches', () => {
    const spec = validateRepeat({ pattern: '0 12 29 2 *', tz: 'Europe/Paris' }, { now: FROM });
    const from = Date.parse('2097-03-01T00:00Z'); // 2100 is not a leap year: the next is 2104
    expect(nextFireTimes(spec, { from, count: 1 })).toEqual([Date.parse('2104-02-29T11:00Z')]);
    // Raw options are validated from `from`: no run within 5 years of it, so they are refused.
    const raw = timed(() => nextFireTimes({ pattern: '0 12 29 2 *', tz: 'Europe/Paris' }, { from, count: 1 }));
    expect(scheduleErrorReason(raw.value)).toBe('no-run-soon');
  });

  test('croner stops at year 3000; so does a preview', () => {
    const from = Date.parse('2999-12-30T00:00Z');
    expect(nextFireTimes({ pattern: '0 0 * * *' }, { from, count: 5 })).toEqual([Date.parse('2999-12-31T00:00Z')]);
  });
});
