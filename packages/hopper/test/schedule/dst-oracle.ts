/**
 * A slow, obviously-correct oracle for the DST rules, for the property tests: it visits every
 * minute (or second) of a window, asks Temporal for the offset and croner for a wall-time match,
 * and applies the rules of docs/schedules.md directly. It shares no code with the segment walk
 * in src/schedule/cron-walk.ts, only croner's matcher and the zone offsets.
 */
import { Temporal } from 'temporal-polyfill';
import { compileCron, floorDay, matchesWallTime } from '../../src/schedule/cron.js';

/** The UTC offset (ms) of `tz` at `instant`. */
export function offsetOf(tz: string, instant: number): number {
  return Temporal.Instant.fromEpochMilliseconds(instant).toZonedDateTimeISO(tz).offsetNanoseconds / 1e6;
}

/** The zone's offset transitions in `[from, to]`. */
export function transitionsIn(tz: string, from: number, to: number): number[] {
  const found: number[] = [];
  let zdt = Temporal.Instant.fromEpochMilliseconds(from - 1).toZonedDateTimeISO(tz);
  for (;;) {
    const next = zdt.getTimeZoneTransition('next');
    if (next === null || next.epochMilliseconds > to) return found;
    found.push(next.epochMilliseconds);
    zdt = next;
  }
}

/**
 * Every fire of `pattern` in `tz` in `(from, to]`, by brute force at `stepMs` (60000 for 5-field
 * patterns whose seconds are 0, 1000 otherwise).
 */
export function bruteForceFires(pattern: string, tz: string, from: number, to: number, stepMs: number): number[] {
  const cron = compileCron(pattern);
  const offsetAt = offsetLookup(tz, from - 2 * 86_400_000, to + 86_400_000);
  const fires = new Set<number>();
  const start = Math.floor(from / stepMs) * stepMs + stepMs;
  for (let instant = start; instant <= to; instant += stepMs) {
    const wall = instant + offsetAt(instant);
    if (!matchesWallTime(cron, wall)) continue;
    if (cron.fixedTime && livedBefore(offsetAt, wall, instant)) continue; // a repeated hour's second pass
    fires.add(instant);
  }
  // Fixed-time gap substitutes: a skipped wall time on the date the gap ends fires once at the
  // transition instant.
  if (cron.fixedTime) {
    for (const transition of transitionsIn(tz, from + 1, to)) {
      const before = offsetOf(tz, transition - 1);
      const after = offsetOf(tz, transition);
      if (after <= before) continue;
      const gapStart = transition + before;
      const gapEnd = transition + after;
      for (let wall = Math.max(gapStart, floorDay(gapEnd)); wall < gapEnd; wall += 1000) {
        if (matchesWallTime(cron, wall)) {
          fires.add(transition);
          break;
        }
      }
    }
  }
  return [...fires].sort((a, b) => a - b);
}

/** True if the wall time was already shown by the zone's clocks at an instant before `instant`. */
function livedBefore(offsetAt: (instant: number) => number, wall: number, instant: number): boolean {
  for (const lookBack of [3_600_000, 2 * 3_600_000, 3 * 3_600_000, 30 * 60_000, 86_400_000]) {
    const offset = offsetAt(instant - lookBack);
    const earlier = wall - offset;
    if (earlier < instant && offsetAt(earlier) === offset) return true;
  }
  return false;
}

/**
 * The zone's offset as a function, for instants in `[from, to]`: Temporal's offset sampled once
 * per stretch between transitions (asking Temporal at every second would take minutes).
 */
function offsetLookup(tz: string, from: number, to: number): (instant: number) => number {
  const starts = [from, ...transitionsIn(tz, from, to)];
  const offsets = starts.map((start) => offsetOf(tz, start));
  return (instant) => {
    if (instant < from || instant > to) return offsetOf(tz, instant);
    let index = starts.length - 1;
    while (starts[index] > instant) index--;
    return offsets[index];
  };
}
