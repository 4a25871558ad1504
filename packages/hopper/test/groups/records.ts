/**
 * Checks on recorded job runs for the group and limit tests: overlaps of run intervals, and how
 * many starts fall in a rate-limit window.
 */

/** A run from `start` to `end` (ms); half-open, so a run starting when another ends does not overlap it. */
export interface Interval {
  start: number;
  end: number;
}

/** The runs that started before an earlier-started run had ended (empty when they ran one at a time). */
export function overlaps<T extends Interval>(runs: T[]): { run: T; during: Interval }[] {
  const sorted = [...runs].sort((a, b) => a.start - b.start || a.end - b.end);
  const found: { run: T; during: Interval }[] = [];
  let latest: Interval | undefined;
  for (const run of sorted) {
    if (latest && run.start < latest.end) found.push({ run, during: latest });
    if (!latest || run.end > latest.end) latest = run;
  }
  return found;
}

/** The most runs in progress at one instant. */
export function maxOverlap(runs: Interval[]): number {
  // Ends sort before starts at the same instant (half-open runs).
  const points = runs.flatMap((r) => [
    [r.start, 1],
    [r.end, -1],
  ]);
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let max = 0;
  for (const [, delta] of points) {
    now += delta;
    max = Math.max(max, now);
  }
  return max;
}

/** The most starts in any window [t, t + duration) that begins at a start t (the sliding-window count). */
export function worstWindow(starts: number[], duration: number): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let worst = 0;
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    if (j < i) j = i;
    while (j < sorted.length && sorted[j] < sorted[i] + duration) j++;
    worst = Math.max(worst, j - i);
  }
  return worst;
}

/**
 * How many windows the starts need when cut greedily: a window opens at the first start not yet
 * covered and spans `duration`. With `max` per window, n starts need at least n / max of them;
 * close to that means the limit was used fully.
 */
export function greedyWindows(starts: number[], duration: number): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let windows = 0;
  let until = -Infinity;
  for (const t of sorted) {
    if (t >= until) {
      windows++;
      until = t + duration;
    }
  }
  return windows;
}
