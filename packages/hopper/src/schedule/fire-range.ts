/**
 * Questions about the fires inside a time range, with bounded work whatever the range: how many
 * are there, and which are the most recent ones. `every` schedules are answered arithmetically;
 * cron schedules are enumerated up to {@link CRON_ENUMERATION_CAP} fires, past which the count is
 * an estimate and the most recent fires are found by searching backwards.
 */
import { compileCron, estimateWallMatches } from './cron.js';
import { countEveryFires, lastEveryFires } from './every.js';
import { fireCursor, nextFireAfter } from './fire-cursor.js';
import type { CronScheduleSpec, ScheduleSpec } from './repeat-options.js';
import { offsetAt } from './timezone.js';

/**
 * Most cron fires one range question enumerates one by one (10,000, a few ms of work). A count
 * past it is exact for the first 10,000 fires and estimated for the rest (matching days times
 * fires per day, DST hours not corrected).
 */
export const CRON_ENUMERATION_CAP = 10_000;

/** How many fires a range holds, and whether that is exact. */
export interface FireCount {
  readonly count: number;
  readonly exact: boolean;
}

/** The fires of a range: how many, and the list itself when it was enumerated in full. */
export interface FireScan extends FireCount {
  /** The fires in order: a cron range of at most `CRON_ENUMERATION_CAP` fires; else `null`. */
  readonly fires: readonly number[] | null;
}

/**
 * Scans the fires in `(after, upTo]`. `every`: counted in O(1), not listed. Cron: enumerated and
 * listed up to {@link CRON_ENUMERATION_CAP} fires; past it the rest is estimated and not listed.
 */
export function scanFires(spec: ScheduleSpec, after: number, upTo: number): FireScan {
  if (upTo <= after) return { count: 0, exact: true, fires: [] };
  if (spec.kind === 'every') return { count: countEveryFires(spec, after, upTo), exact: true, fires: null };
  const cursor = fireCursor(spec, after);
  const fires: number[] = [];
  for (;;) {
    const at = cursor.next();
    if (at === null || at > upTo) return { count: fires.length, exact: true, fires };
    if (fires.length === CRON_ENUMERATION_CAP) {
      const estimate = estimateCronFires(spec, fires[fires.length - 1], upTo);
      return { count: CRON_ENUMERATION_CAP + Math.max(1, estimate), exact: false, fires: null };
    }
    fires.push(at);
  }
}

/** How many fires lie in `(after, upTo]`. O(1) for every; bounded enumeration for cron. */
export function countFires(spec: ScheduleSpec, after: number, upTo: number): FireCount {
  const { count, exact } = scanFires(spec, after, upTo);
  return { count, exact };
}

function estimateCronFires(spec: CronScheduleSpec, after: number, upTo: number): number {
  const end = spec.endDate === undefined ? upTo : Math.min(upTo, spec.endDate);
  if (end <= after) return 0;
  const cron = compileCron(spec.pattern);
  return estimateWallMatches(cron, after + offsetAt(spec.tz, after), end + offsetAt(spec.tz, end));
}

/**
 * The most recent `count` fires in `(after, upTo]`, ascending. Cron fires are found one by one
 * backwards ({@link previousCronFire}), so this costs O(count x log(gap between fires)).
 */
export function lastFires(spec: ScheduleSpec, after: number, upTo: number, count: number): number[] {
  if (count <= 0 || upTo <= after) return [];
  if (spec.kind === 'every') return lastEveryFires(spec, after, upTo, count);
  const fires: number[] = [];
  let bound = upTo;
  while (fires.length < count) {
    const at = previousCronFire(spec, bound, after);
    if (at === null) break;
    fires.push(at);
    bound = at - 1;
  }
  return fires.reverse();
}

/**
 * The last cron fire in `(after, atOrBefore]`, or `null`. The walk only goes forwards, so this
 * searches for the latest start point whose next fire is still <= `atOrBefore`: galloping back
 * from the bound (1 s, 2 s, 4 s, ...) then bisecting, about 2 x log2(gap in seconds) forward
 * searches. Defined through `nextFireAfter`, so it follows exactly the same DST rules.
 */
export function previousCronFire(spec: CronScheduleSpec, atOrBefore: number, after: number): number | null {
  if (atOrBefore <= after) return null;
  const firesBy = (start: number): boolean => {
    const at = nextFireAfter(spec, start);
    return at !== null && at <= atOrBefore;
  };
  // Invariant: firesBy(low) is true, firesBy(high) is false; the answer is nextFireAfter(low).
  let high = atOrBefore;
  let low = after;
  for (let step = 1000; atOrBefore - step > after; step *= 2) {
    if (firesBy(atOrBefore - step)) {
      low = atOrBefore - step;
      break;
    }
    high = atOrBefore - step;
  }
  if (low === after && !firesBy(after)) return null;
  // Cron fires are whole seconds, so once the bracket is 1 s wide at most one fire lies in it.
  while (high - low > 1000) {
    const middle = Math.floor((low + high) / 2);
    if (firesBy(middle)) low = middle;
    else high = middle;
  }
  return nextFireAfter(spec, low);
}
