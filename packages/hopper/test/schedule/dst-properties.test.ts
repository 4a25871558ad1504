/**
 * Property tests over generated cron patterns and DST-observing zones, each run near a real
 * offset transition: fires strictly increase; they are exactly the fires of a brute-force oracle
 * of the DST rules (so each matches the pattern, except the documented gap substitutes); a
 * fixed-time pattern fires at most once per local day per listed time; and croner 11.0.1 run
 * with the same options agrees.
 */
import { Cron } from 'croner';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { compileCron, floorDay, matchesWallTime } from '../../src/schedule/cron.js';
import { nextFireTimes, scheduleErrorReason, validateRepeat, type ScheduleSpec } from '../../src/schedule/index.js';
import { bruteForceFires, offsetOf, transitionsIn } from './dst-oracle.js';

const DST_ZONES = [
  'Europe/Paris',
  'Europe/London',
  'America/New_York',
  'America/St_Johns',
  'America/Santiago',
  'America/Havana',
  'Australia/Sydney',
  'Australia/Lord_Howe',
  'Pacific/Auckland',
  'Pacific/Chatham',
  'Asia/Jerusalem',
];

const HOUR = 3_600_000;

/** A cron pattern made of fields that stress DST: hours 1-3, lists, ranges, steps. */
const patternArb = fc
  .record({
    second: fc.option(fc.constantFrom('0', '30', '*/20', '0,30', '15-16'), { nil: undefined }),
    minute: fc.constantFrom('0', '30', '45', '*', '*/15', '0,30', '10-12', '5,35', '0-59/20'),
    hour: fc.constantFrom('*', '*/2', '0', '1', '2', '3', '1-3', '0,2,23', '2,14', '*/3', '23', '0-23/4', '1,2'),
    dom: fc.constantFrom('*', '*', '*', '1', '15', 'L', '1-7', '10W', '31'),
    month: fc.constantFrom('*', '*', '*', '3', '10', '3,4,9,10,11', '*/2'),
    dow: fc.constantFrom('*', '*', '*', '0', '1-5', 'SUN', '0L', '5#2', '6'),
  })
  .map(({ second, minute, hour, dom, month, dow }) =>
    [second, minute, hour, dom, month, dow].filter((field) => field !== undefined).join(' '),
  );

/** An instant shortly before (or just after) one of the zone's transitions in 2024-2030. */
function nearTransitionArb(zone: string, hoursBefore: number): fc.Arbitrary<number> {
  const transitions = transitionsIn(zone, Date.parse('2024-01-01T00:00Z'), Date.parse('2031-01-01T00:00Z'));
  return fc
    .tuple(fc.constantFrom(...transitions), fc.integer({ min: -hoursBefore * HOUR, max: 2 * HOUR }))
    .map(([transition, shift]) => transition + shift);
}

/** Patterns with seconds are checked over a shorter window, so they start closer to the transition. */
const hasSeconds = (pattern: string): boolean => pattern.split(' ').length === 6;

const caseArb = fc.constantFrom(...DST_ZONES).chain((zone) =>
  patternArb.chain((pattern) =>
    fc.record({
      zone: fc.constant(zone),
      pattern: fc.constant(pattern),
      from: nearTransitionArb(zone, hasSeconds(pattern) ? 6 : 40),
    }),
  ),
);

/** The validated spec, or null when the generated pattern is refused (e.g. it only fires in gaps). */
function specFor(pattern: string, zone: string, from: number): ScheduleSpec | null {
  try {
    return validateRepeat({ pattern, tz: zone }, { now: from });
  } catch (error) {
    expect(scheduleErrorReason(error)).toMatch(/^(no-run-soon|never-fires)$/);
    return null;
  }
}

describe('DST properties (generated patterns x zones, near transitions)', () => {
  test('fires strictly increase and equal the brute-force oracle around the transition', () => {
    fc.assert(
      fc.property(caseArb, ({ zone, pattern, from }) => {
        const spec = specFor(pattern, zone, from);
        fc.pre(spec !== null);
        const fires = nextFireTimes(spec, { from, count: 40 });
        expect(fires.length).toBe(40);
        fires.forEach((at, index) => expect(at).toBeGreaterThan(index === 0 ? from : fires[index - 1]));
        // Compare within a window the oracle can scan: 2 days, or 8 hours at second resolution.
        const seconds = hasSeconds(pattern);
        const to = Math.min(fires.at(-1)!, from + (seconds ? 8 : 48) * HOUR);
        const oracle = bruteForceFires(pattern, zone, from, to, seconds ? 1000 : 60_000);
        expect(fires.filter((at) => at <= to)).toEqual(oracle);
      }),
      { numRuns: 150 },
    );
  });

  test('each fire matches the pattern, except a fixed-time gap substitute at a transition', () => {
    fc.assert(
      fc.property(caseArb, ({ zone, pattern, from }) => {
        const spec = specFor(pattern, zone, from);
        fc.pre(spec !== null);
        const cron = compileCron(pattern);
        for (const at of nextFireTimes(spec, { from, count: 60 })) {
          const wall = at + offsetOf(zone, at);
          if (matchesWallTime(cron, wall)) continue;
          // Not a match: must be the first instant after a forward gap, for a fixed-time pattern.
          expect(cron.fixedTime).toBe(true);
          expect(transitionsIn(zone, at, at)).toEqual([at]);
          expect(offsetOf(zone, at)).toBeGreaterThan(offsetOf(zone, at - 1));
        }
      }),
      { numRuns: 150 },
    );
  });

  test('a fixed-time pattern fires at most once per local day per listed time, never twice at one wall time', () => {
    fc.assert(
      fc.property(caseArb, ({ zone, pattern, from }) => {
        const spec = specFor(pattern, zone, from);
        const cron = compileCron(pattern);
        fc.pre(spec !== null && cron.fixedTime);
        const perDay = new Map<number, number>();
        const walls = new Set<number>();
        for (const at of nextFireTimes(spec, { from, count: 80 })) {
          const wall = at + offsetOf(zone, at);
          expect(walls.has(wall)).toBe(false);
          walls.add(wall);
          perDay.set(floorDay(wall), (perDay.get(floorDay(wall)) ?? 0) + 1);
        }
        for (const count of perDay.values()) expect(count).toBeLessThanOrEqual(cron.timesPerDay);
      }),
      { numRuns: 150 },
    );
  });

  test("agrees with croner's own search (fixedTimeRule 'no-wildcard', legacyMode)", () => {
    fc.assert(
      fc.property(caseArb, ({ zone, pattern, from }) => {
        const spec = specFor(pattern, zone, from);
        fc.pre(spec !== null);
        const ours = nextFireTimes(spec, { from, count: 25 });
        const cron = new Cron(pattern, { timezone: zone, fixedTimeRule: 'no-wildcard', legacyMode: true });
        const theirs = cron.nextRuns(25, new Date(from)).map((date) => date.getTime());
        expect(ours).toEqual(theirs);
      }),
      { numRuns: 150 },
    );
  });
});
