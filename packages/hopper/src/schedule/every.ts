/**
 * `every` schedules: a fixed duration on a grid, not wall time. The grid is
 * `origin + k * every` with `origin = (startDate ?? 0) + offset`; with a `startDate` it begins at
 * `origin`, without one it extends both ways. Everything here is arithmetic: no loop depends on
 * how many slots a range holds.
 */
import type { EveryScheduleSpec } from './repeat-options.js';

/** The grid's origin: `(startDate ?? 0) + offset`. */
export function everyOrigin(spec: EveryScheduleSpec): number {
  return (spec.startDate ?? 0) + spec.offset;
}

/** The index k of the last grid slot at or before `instant` (may be negative). */
function slotAtOrBefore(spec: EveryScheduleSpec, instant: number): number {
  const origin = everyOrigin(spec);
  let k = Math.floor((instant - origin) / spec.every);
  // Float division can land one off near a slot boundary; settle on the exact integer answer
  // (a couple of steps at most; bounded anyway).
  for (let step = 0; step < 4 && origin + k * spec.every > instant; step++) k--;
  for (let step = 0; step < 4 && origin + (k + 1) * spec.every <= instant; step++) k++;
  return k;
}

/** The first allowed slot index (0 with a startDate, none without) and the last (endDate). */
function slotBounds(spec: EveryScheduleSpec): { first: number; last: number } {
  return {
    first: spec.startDate === undefined ? Number.NEGATIVE_INFINITY : 0,
    last: spec.endDate === undefined ? Number.POSITIVE_INFINITY : slotAtOrBefore(spec, spec.endDate),
  };
}

function slot(spec: EveryScheduleSpec, k: number): number {
  return everyOrigin(spec) + k * spec.every;
}

/**
 * The first grid slot strictly after `after`, within startDate/endDate; `null` past endDate.
 *
 * @example
 * nextEveryFire(validateRepeat({ every: 60_000 }) as EveryScheduleSpec, 90_000); // 120000
 */
export function nextEveryFire(spec: EveryScheduleSpec, after: number): number | null {
  const { first, last } = slotBounds(spec);
  const k = Math.max(slotAtOrBefore(spec, after) + 1, first);
  return k > last ? null : slot(spec, k);
}

/** The last grid slot at or before `instant` and after `after`, within bounds; else `null`. */
export function lastEveryFireAtOrBefore(spec: EveryScheduleSpec, instant: number, after: number): number | null {
  const { first, last } = slotBounds(spec);
  const k = Math.min(slotAtOrBefore(spec, instant), last);
  if (k < first) return null;
  const at = slot(spec, k);
  return at > after ? at : null;
}

/** How many grid slots lie in `(after, upTo]`, within startDate/endDate. O(1). */
export function countEveryFires(spec: EveryScheduleSpec, after: number, upTo: number): number {
  if (upTo <= after) return 0;
  const { first, last } = slotBounds(spec);
  const from = Math.max(slotAtOrBefore(spec, after) + 1, first);
  const to = Math.min(slotAtOrBefore(spec, upTo), last);
  return to >= from ? to - from + 1 : 0;
}

/**
 * The most recent `count` slots in `(after, upTo]`, ascending. O(count).
 *
 * @example
 * lastEveryFires(validateRepeat({ every: 1000 }) as EveryScheduleSpec, 0, 10_500, 3); // [8000, 9000, 10000]
 */
export function lastEveryFires(spec: EveryScheduleSpec, after: number, upTo: number, count: number): number[] {
  const newest = lastEveryFireAtOrBefore(spec, upTo, after);
  if (newest === null || count <= 0) return [];
  const available = countEveryFires(spec, after, upTo);
  const taken = Math.min(count, available);
  const fires: number[] = [];
  for (let index = taken - 1; index >= 0; index--) fires.push(newest - index * spec.every);
  return fires;
}

/**
 * A new `every` scheduler's first occurrence: the grid slot at or before `now`
 * (`floor(now / every) * every` without startDate/offset), due at once, so concurrent upserts
 * agree on it; `startDate` itself while `now` is before it; `null` if that slot is past endDate.
 */
export function firstEveryOccurrence(spec: EveryScheduleSpec, now: number): number | null {
  const { first, last } = slotBounds(spec);
  const k = Math.max(slotAtOrBefore(spec, now), first);
  return k > last ? null : slot(spec, k);
}
