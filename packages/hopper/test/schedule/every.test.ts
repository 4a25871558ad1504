/**
 * `every` schedules: a fixed duration on a grid anchored at startDate (or the epoch), and the
 * first occurrence of a new scheduler.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { firstOccurrence, nextFireAfter, nextFireTimes, validateRepeat, type RepeatOptions } from '../../src/schedule/index.js';

const NOW = Date.parse('2026-06-01T10:07:30.250Z');
const spec = (repeat: RepeatOptions) => validateRepeat(repeat, { now: NOW });

describe('every grid', () => {
  test('next fire is the next grid slot strictly after from', () => {
    expect(nextFireTimes({ every: 60_000 }, { from: 90_000, count: 3 })).toEqual([120_000, 180_000, 240_000]);
    expect(nextFireTimes({ every: 60_000 }, { from: 120_000, count: 1 })).toEqual([180_000]); // exclusive
    expect(nextFireTimes({ every: 60_000 }, { from: 119_999, count: 1 })).toEqual([120_000]);
  });

  test('the grid is wall-clock blind: DST does not move it', () => {
    const day = 86_400_000;
    const fires = nextFireTimes({ every: day, tz: 'Europe/Paris' }, { from: Date.parse('2026-03-28T00:00Z'), count: 3 });
    expect(fires).toEqual([Date.parse('2026-03-29T00:00Z'), Date.parse('2026-03-30T00:00Z'), Date.parse('2026-03-31T00:00Z')]);
  });

  test('startDate anchors the grid and is itself the first slot', () => {
    const start = Date.parse('2026-06-01T10:00:07Z');
    expect(nextFireTimes({ every: 60_000, startDate: start }, { from: 0, count: 2 })).toEqual([start, start + 60_000]);
    expect(nextFireTimes({ every: 60_000, startDate: start }, { from: start + 1, count: 1 })).toEqual([start + 60_000]);
  });

  test('offset shifts the grid (BullMQ offset)', () => {
    expect(nextFireTimes({ every: 3_600_000, offset: 900_000 }, { from: Date.parse('2026-06-01T10:20Z'), count: 2 })).toEqual([
      Date.parse('2026-06-01T11:15Z'),
      Date.parse('2026-06-01T12:15Z'),
    ]);
  });

  test('endDate is inclusive and ends the schedule', () => {
    const s = spec({ every: 1000, startDate: 0, endDate: 3000 });
    expect(nextFireTimes(s, { from: -5, count: 10 })).toEqual([0, 1000, 2000, 3000]);
    expect(nextFireAfter(s, 3000)).toBeNull();
  });

  test('property: fires are on the grid, strictly after from, consecutive', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 ** 9 }),
        fc.integer({ min: -(10 ** 13), max: 10 ** 13 }),
        fc.option(fc.integer({ min: 0, max: 10 ** 13 }), { nil: undefined }),
        (every, from, startDate) => {
          const fires = nextFireTimes({ every, startDate }, { from, count: 5 });
          const origin = startDate ?? 0;
          expect(fires).toHaveLength(5);
          expect(fires[0]).toBeGreaterThan(from);
          if (fires[0] - every > from) expect(fires[0]).toBe(origin); // nothing skipped except before startDate
          for (const [index, at] of fires.entries()) {
            expect(Math.abs((at - origin) % every)).toBe(0);
            if (index > 0) expect(at - fires[index - 1]).toBe(every);
            if (startDate !== undefined) expect(at).toBeGreaterThanOrEqual(startDate);
          }
        },
      ),
    );
  });
});

describe('firstOccurrence', () => {
  test('every: floor(now / every) * every, due at once', () => {
    expect(firstOccurrence(spec({ every: 60_000 }), NOW)).toBe(Date.parse('2026-06-01T10:07:00Z'));
    expect(firstOccurrence(spec({ every: 60_000 }), Date.parse('2026-06-01T10:07:00Z'))).toBe(Date.parse('2026-06-01T10:07:00Z'));
  });

  test('every: concurrent upserts a few ms apart agree on the first occurrence', () => {
    const s = spec({ every: 10_000 });
    const nows = [NOW, NOW + 3, NOW + 40, NOW + 900];
    expect(new Set(nows.map((now) => firstOccurrence(s, now))).size).toBe(1);
  });

  test('every: startDate in the future is the first occurrence; past endDate there is none', () => {
    const start = NOW + 3_600_000;
    expect(firstOccurrence(spec({ every: 60_000, startDate: start }), NOW)).toBe(start);
    expect(firstOccurrence(spec({ every: 60_000, endDate: NOW - 120_000 }), NOW)).toBeNull();
  });

  test('every with an offset: the last shifted slot at or before now', () => {
    expect(firstOccurrence(spec({ every: 3_600_000, offset: 900_000 }), NOW)).toBe(Date.parse('2026-06-01T09:15Z'));
  });

  test('cron: the first fire strictly after now', () => {
    expect(firstOccurrence(spec({ pattern: '*/5 * * * *' }), NOW)).toBe(Date.parse('2026-06-01T10:10Z'));
    expect(firstOccurrence(spec({ pattern: '*/5 * * * *' }), Date.parse('2026-06-01T10:10Z'))).toBe(Date.parse('2026-06-01T10:15Z'));
    expect(firstOccurrence(spec({ pattern: '0 9 * * *', startDate: '2026-07-01T00:00Z' }), NOW)).toBe(Date.parse('2026-07-01T09:00Z'));
    expect(firstOccurrence(spec({ pattern: '0 9 * * *', endDate: NOW - 1 }), NOW)).toBeNull();
  });
});
