/**
 * planCatchup: which overdue occurrences to create after downtime, how many are missed, and the
 * next one; bounded work after years of downtime.
 */
import fc from 'fast-check';
import { CronDate } from 'croner';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { CRON_ENUMERATION_CAP, nextFireTimes, planCatchup, validateRepeat, type RepeatOptions } from '../../src/schedule/index.js';

const t = (time: string): number => Date.parse(`2026-06-01T${time}Z`);
const NOW = t('10:10:30');
const spec = (repeat: RepeatOptions) => validateRepeat(repeat, { now: Date.parse('2026-01-01T00:00Z') });
const everyMinute = (extra: Partial<RepeatOptions> = {}) => spec({ every: 60_000, ...extra });
const cronMinute = (extra: Partial<RepeatOptions> = {}) => spec({ pattern: '* * * * *', ...extra });

describe.each([
  ['every', everyMinute],
  ['cron', cronMinute],
] as const)('policies (%s, one per minute, down from 10:00 to 10:10:30)', (_kind, make) => {
  test('latest (default): the most recent missed occurrence within 5 minutes', () => {
    expect(planCatchup({ spec: make(), lastInstant: t('10:00'), now: NOW })).toEqual({
      toCreate: [t('10:10')],
      missed: 9,
      missedOutsideWindow: 5, // 10:01 .. 10:05 are older than 10:05:30
      droppedByPolicy: 4, // 10:06 .. 10:09
      missedExact: true,
      next: t('10:11'),
    });
  });

  test('all: every missed occurrence within the window, in order', () => {
    const plan = planCatchup({ spec: make({ catchup: 'all' }), lastInstant: t('10:00'), now: NOW });
    expect(plan.toCreate).toEqual([t('10:06'), t('10:07'), t('10:08'), t('10:09'), t('10:10')]);
    expect(plan.missed).toBe(5);
    expect(plan.next).toBe(t('10:11'));
  });

  test('all is bounded by catchupMax: the most recent ones', () => {
    const plan = planCatchup({ spec: make({ catchup: 'all', catchupMax: 2 }), lastInstant: t('10:00'), now: NOW });
    expect(plan.toCreate).toEqual([t('10:09'), t('10:10')]);
    expect(plan).toMatchObject({ missed: 8, missedOutsideWindow: 5, droppedByPolicy: 3 });
  });

  test('none: nothing overdue is created, all of it is counted', () => {
    const plan = planCatchup({ spec: make({ catchup: 'none' }), lastInstant: t('10:00'), now: NOW });
    expect(plan).toMatchObject({ toCreate: [], missed: 10, missedOutsideWindow: 5, droppedByPolicy: 5, next: t('10:11') });
  });

  test('window edges: an occurrence exactly catchupWindow old is still in', () => {
    const edge = planCatchup({ spec: make({ catchup: 'all', catchupWindow: 270_000 }), lastInstant: t('10:00'), now: NOW });
    expect(edge.toCreate[0]).toBe(t('10:06')); // 10:10:30 - 4.5 min = 10:06:00
    const past = planCatchup({ spec: make({ catchup: 'all', catchupWindow: 269_999 }), lastInstant: t('10:00'), now: NOW });
    expect(past.toCreate[0]).toBe(t('10:07'));
    expect(past.missedOutsideWindow).toBe(6);
  });

  test('catchupWindow 0: only an occurrence due exactly now is created', () => {
    expect(planCatchup({ spec: make({ catchupWindow: 0 }), lastInstant: t('10:00'), now: t('10:10') }).toCreate).toEqual([t('10:10')]);
    expect(planCatchup({ spec: make({ catchupWindow: 0 }), lastInstant: t('10:00'), now: NOW }).toCreate).toEqual([]);
  });

  test('no downtime: nothing to catch up, the next one is planned', () => {
    expect(planCatchup({ spec: make(), lastInstant: t('10:10'), now: NOW })).toEqual({
      toCreate: [],
      missed: 0,
      missedOutsideWindow: 0,
      droppedByPolicy: 0,
      missedExact: true,
      next: t('10:11'),
    });
  });

  test('a backward clock jump plans nothing and waits for the first fire after lastInstant', () => {
    const plan = planCatchup({ spec: make({ catchup: 'all' }), lastInstant: t('10:10'), now: t('10:02') });
    expect(plan).toMatchObject({ toCreate: [], missed: 0, next: t('10:11') });
  });

  test('endDate inside the downtime: nothing after it, and no next', () => {
    const plan = planCatchup({ spec: make({ catchup: 'all', endDate: t('10:08') }), lastInstant: t('10:00'), now: NOW });
    expect(plan).toMatchObject({ toCreate: [t('10:06'), t('10:07'), t('10:08')], missed: 5, next: null });
  });
});

describe('invariants (property)', () => {
  test('toCreate is ascending in (lastInstant, now]; created + missed = the fires in (lastInstant, now]', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<RepeatOptions>(
          { every: 7_000 },
          { every: 60_000, offset: 13_000 },
          { pattern: '*/7 * * * * *' },
          { pattern: '0 */2 * * *', tz: 'Europe/Paris' },
          { pattern: '30 1-3 * * *', tz: 'Europe/Paris' },
        ),
        fc.constantFrom<'latest' | 'all' | 'none'>('latest', 'all', 'none'),
        fc.integer({ min: 0, max: 2 * 3_600_000 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: Date.parse('2026-10-24T20:00Z'), max: Date.parse('2026-10-25T04:00Z') }),
        fc.integer({ min: -3_600_000, max: 6 * 3_600_000 }),
        (repeat, catchup, catchupWindow, catchupMax, lastInstant, downtime) => {
          const s = spec({ ...repeat, catchup, catchupWindow, catchupMax });
          const now = lastInstant + downtime;
          const plan = planCatchup({ spec: s, lastInstant, now });
          const overdue = downtime > 0 ? nextFireTimes(s, { from: lastInstant, count: 10_000 }).filter((at) => at <= now) : [];
          for (const [index, at] of plan.toCreate.entries()) {
            expect(at).toBeGreaterThan(lastInstant);
            expect(at).toBeLessThanOrEqual(now);
            expect(at).toBeGreaterThanOrEqual(now - catchupWindow);
            expect(overdue).toContain(at);
            if (index > 0) expect(at).toBeGreaterThan(plan.toCreate[index - 1]);
          }
          expect(plan.toCreate.length + plan.missed).toBe(overdue.length);
          expect(plan.toCreate.length).toBeLessThanOrEqual(catchup === 'latest' ? 1 : catchup === 'all' ? catchupMax : 0);
          expect(plan.next).toBe(nextFireTimes(s, { from: Math.max(now, lastInstant), count: 1 })[0]);
        },
      ),
      { numRuns: 120 },
    );
  });

  test('cron catch-up follows the DST rules: the two 02:00s of a fall-back night are distinct', () => {
    const s = spec({ pattern: '0 * * * *', tz: 'Europe/Paris', catchup: 'all', catchupWindow: 3_600_000 });
    const plan = planCatchup({ spec: s, lastInstant: Date.parse('2026-10-24T23:00Z'), now: Date.parse('2026-10-25T01:30Z') });
    expect(plan.toCreate).toEqual([Date.parse('2026-10-25T01:00Z')]); // 02:00 CET, second pass
    expect(plan.missed).toBe(1); // 02:00 CEST (00:00Z) is older than the window
  });
});

describe('long downtime is bounded', () => {
  /** Counts croner increments (the unit of cron work; each is bounded) made from now on. */
  const cronSteps = () => vi.spyOn(CronDate.prototype, 'increment');
  afterEach(() => {
    vi.restoreAllMocks();
  });

  test('every second for 10 years: counted arithmetically, exact', () => {
    const s = spec({ every: 1000, catchup: 'all' });
    const lastInstant = Date.parse('2016-06-01T00:00Z');
    const now = Date.parse('2026-06-01T00:00:00.500Z');
    const started = performance.now();
    const plan = planCatchup({ spec: s, lastInstant, now });
    expect(performance.now() - started).toBeLessThan(1000); // O(catchupMax); ~1 ms
    expect(plan.toCreate).toHaveLength(100);
    expect(plan.toCreate.at(-1)).toBe(Date.parse('2026-06-01T00:00Z'));
    expect(plan.toCreate[0]).toBe(Date.parse('2026-05-31T23:58:21Z'));
    expect(plan.missed + plan.toCreate.length).toBe((now - 500 - lastInstant) / 1000);
    expect(plan.missedExact).toBe(true);
  });

  test('cron every second for a year: enumeration capped, the count estimated closely', () => {
    const s = spec({ pattern: '* * * * * *', tz: 'Europe/Paris' });
    const lastInstant = Date.parse('2025-06-01T00:00Z');
    const now = Date.parse('2026-06-01T00:00:00.500Z');
    const steps = cronSteps();
    const plan = planCatchup({ spec: s, lastInstant, now });
    // the window's 300 fires, then CRON_ENUMERATION_CAP fires of the year, then an estimate
    expect(steps.mock.calls.length).toBeLessThanOrEqual(CRON_ENUMERATION_CAP + 310);
    expect(plan.toCreate).toEqual([Date.parse('2026-06-01T00:00Z')]);
    expect(plan.missedExact).toBe(false);
    const truth = (now - 500 - lastInstant) / 1000 - 1;
    expect(Math.abs(plan.missed - truth) / truth).toBeLessThan(0.001);
    expect(plan.next).toBe(Date.parse('2026-06-01T00:00:01Z'));
  });

  test('cron with a huge window and catchup all: the most recent catchupMax, found backwards', () => {
    const s = spec({ pattern: '*/2 * * * * *', catchup: 'all', catchupWindow: 86_400_000 });
    const now = Date.parse('2026-06-01T12:00:00Z');
    const steps = cronSteps();
    const plan = planCatchup({ spec: s, lastInstant: now - 2 * 86_400_000, now });
    // the window and the older day each enumerated up to the cap, then a few forward searches
    // per fire found backwards
    expect(steps.mock.calls.length).toBeLessThanOrEqual(2 * CRON_ENUMERATION_CAP + 100 * 20);
    expect(plan.toCreate).toHaveLength(100);
    expect(plan.toCreate[0]).toBe(now - 198_000);
    expect(plan.toCreate.at(-1)).toBe(now);
    expect(plan.missed + plan.toCreate.length).toBeGreaterThan(CRON_ENUMERATION_CAP);
    expect(Math.abs(plan.missed + 100 - 86_400)).toBeLessThan(100);
  });

  test('a rare cron after decades of downtime is exact (few fires)', () => {
    const s = spec({ pattern: '0 0 1 1 *', tz: 'America/New_York' });
    const plan = planCatchup({ spec: s, lastInstant: Date.parse('1990-01-01T00:00Z'), now: Date.parse('2026-06-01T00:00Z') });
    expect(plan).toMatchObject({ toCreate: [], missed: 37, missedExact: true, next: Date.parse('2027-01-01T05:00Z') });
  });
});
