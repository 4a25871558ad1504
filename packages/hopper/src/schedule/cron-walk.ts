/**
 * Turns a cron pattern's wall times into instants in a time zone, with Vixie cron's DST rules.
 *
 * The timeline is cut at the zone's offset transitions into stretches of constant offset. Inside
 * a stretch, wall time = instant + offset, so the fires are the pattern's wall-time matches in
 * that stretch's wall range. Walking stretch by stretch yields fires in instant order, and the
 * DST rules are explicit:
 *
 * - Interval patterns (wildcard or step in second/minute/hour) fire at every matching wall time
 *   of every stretch: both passes of a repeated hour fire, and wall times inside a gap belong to
 *   no stretch, so they never fire.
 * - Fixed-time patterns skip the second pass of a repeated hour (wall times a stretch shares with
 *   the one before it), and when a gap swallows one or more of their wall times on the local date
 *   where the gap ends, they fire once at the transition instant (the first valid instant after
 *   the gap).
 *
 * These are the rules croner 11.0.1 applies with `fixedTimeRule: 'no-wildcard'`; the walk is
 * ours because croner's own search has no work bound (a pattern whose matches all fall in DST
 * gaps, such as `* * 2 * 3 0L` in Europe/Paris, makes `Cron.nextRun` walk to year 3000 for tens
 * of seconds). Here each stretch costs one croner increment and two zone look-ups, and a search
 * gives up after {@link MAX_CRON_SEGMENTS} stretches.
 */
import { floorDay, nextWallMatch, type CompiledCron } from './cron.js';
import { offsetAt, transitionAfter, transitionAtOrBefore } from './timezone.js';

/**
 * Stretches of constant offset one search may cross before it gives up: 256 is over a century of
 * twice-yearly DST; a zone without transitions is a single stretch, searched up to 400 years ahead.
 */
export const MAX_CRON_SEGMENTS = 256;

/**
 * The result of one step: the next fire (epoch ms); `'end'` (croner finds no further matching wall
 * time); `'horizon'` (the next fire is after the horizon given); `'limit'` (the search crossed
 * {@link MAX_CRON_SEGMENTS} stretches without finding one).
 */
export type CronStep = number | 'end' | 'horizon' | 'limit';

/**
 * Enumerates the fires of a cron pattern in a zone, strictly after a starting instant, in
 * increasing order. Keeps its place between calls, so enumerating n fires costs about n croner
 * increments.
 *
 * @example
 * const walk = new CronWalk(compileCron('30 2 * * *'), 'Europe/Paris', Date.parse('2026-03-27T12:00Z'));
 * walk.next(); // 2026-03-28T01:30Z
 * walk.next(); // 2026-03-29T01:00Z (02:30 does not exist that night: fires when the gap ends)
 */
export class CronWalk {
  /** Fires must be strictly after this instant. */
  private lower: number;
  /** The transition that began the current stretch, or null if it reaches back forever. */
  private start: number | null;
  /** The transition that ends the current stretch, or null if it runs forever. */
  private end: number | null;
  /** The offset inside the current stretch, and in the stretch before it. */
  private offset: number;
  private previousOffset: number;

  constructor(
    private readonly cron: CompiledCron,
    private readonly tz: string,
    after: number,
  ) {
    this.lower = after;
    this.start = transitionAtOrBefore(tz, after);
    this.end = transitionAfter(tz, after);
    this.offset = offsetAt(tz, after);
    this.previousOffset = this.start === null ? this.offset : offsetAt(tz, this.start - 1);
  }

  /** The next fire strictly after the previous one (or the start), or why there is none. */
  next(horizon: number = Number.POSITIVE_INFINITY): CronStep {
    for (let crossed = 0; ; crossed++) {
      const wall = nextWallMatch(this.cron, this.lowerWall());
      if (wall === null) return 'end';
      const at = wall - this.offset;
      if (this.end === null || at < this.end) {
        if (at > horizon) return 'horizon';
        this.lower = at;
        return at;
      }
      if (this.end > horizon) return 'horizon';
      if (crossed >= MAX_CRON_SEGMENTS) return 'limit';
      const substitute = this.enterNextStretch(this.end);
      if (substitute !== null) {
        this.lower = substitute;
        return substitute;
      }
    }
  }

  /** Wall times after this one are candidates in the current stretch. */
  private lowerWall(): number {
    const wall = this.lower + this.offset;
    if (this.cron.fixedTime && this.start !== null && this.previousOffset > this.offset) {
      // The stretch began by setting clocks back: wall times before start + previousOffset were
      // already lived once in the previous stretch; a fixed-time pattern fired then, not again.
      return Math.max(wall, this.start + this.previousOffset - 1);
    }
    return wall;
  }

  /** Moves to the stretch beginning at `transition`; returns a gap substitute fire, if any. */
  private enterNextStretch(transition: number): number | null {
    this.previousOffset = this.offset;
    this.offset = offsetAt(this.tz, transition);
    this.start = transition;
    this.end = transitionAfter(this.tz, transition);
    this.lower = transition - 1;
    if (!this.cron.fixedTime || this.offset <= this.previousOffset) return null;
    // Clocks jumped forward: wall times in [gapStart, gapEnd) never happen. A fixed-time pattern
    // that matches one of them on the date the gap ends fires once, at the transition.
    const gapStart = transition + this.previousOffset;
    const gapEnd = transition + this.offset;
    const from = Math.max(gapStart, floorDay(gapEnd));
    if (from >= gapEnd) return null;
    const wall = nextWallMatch(this.cron, from - 1);
    return wall !== null && wall < gapEnd ? transition : null;
  }
}
