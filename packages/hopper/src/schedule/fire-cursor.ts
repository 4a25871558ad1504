/**
 * One place that answers "what are the fires after t" for any spec, cron or every, with
 * startDate and endDate applied. Every other function (previews, first occurrence, catch-up)
 * goes through it, so they all follow exactly the same rules.
 */
import { compileCron } from './cron.js';
import { CronWalk, MAX_CRON_SEGMENTS } from './cron-walk.js';
import { nextEveryFire } from './every.js';
import type { CronScheduleSpec, ScheduleSpec } from './repeat-options.js';
import { invalidSchedule } from './schedule-error.js';

/** Enumerates a schedule's fires in increasing order. */
export interface FireCursor {
  /**
   * The next fire (epoch ms), strictly after the previous one; `null` once the schedule has no
   * more (past `endDate`, or no matching time before year 3000).
   *
   * @throws InvalidScheduleError (reason `search-limit`) if a cron search gives up.
   */
  next(): number | null;
}

/**
 * A cursor over the fires strictly after `after`, honouring startDate (inclusive) and endDate
 * (inclusive). `limit` is not applied: the engine counts occurrences, this module cannot.
 *
 * @example
 * const cursor = fireCursor(validateRepeat({ every: 60_000 }), 0);
 * cursor.next(); // 60000
 * cursor.next(); // 120000
 */
export function fireCursor(spec: ScheduleSpec, after: number): FireCursor {
  if (spec.kind === 'every') {
    let last = after;
    return {
      next: () => {
        const at = nextEveryFire(spec, last);
        if (at !== null) last = at;
        return at;
      },
    };
  }
  return cronCursor(spec, after);
}

function cronCursor(spec: CronScheduleSpec, after: number): FireCursor {
  const from = spec.startDate === undefined ? after : Math.max(after, spec.startDate - 1);
  const walk = new CronWalk(compileCron(spec.pattern), spec.tz, from);
  const horizon = spec.endDate ?? Number.POSITIVE_INFINITY;
  let done = false;
  return {
    next: () => {
      if (done) return null;
      const step = walk.next(horizon);
      if (typeof step === 'number') return step;
      if (step === 'limit') {
        throw invalidSchedule(
          'search-limit',
          `cron pattern '${spec.pattern}' in ${spec.tz}: no fire found within ` +
            `${MAX_CRON_SEGMENTS} DST periods after ${new Date(from).toISOString()}; its ` +
            'wall times fall in DST gaps or it fires too rarely. Pick times that exist in this zone.',
        );
      }
      done = true;
      return null;
    },
  };
}

/**
 * The schedule's first fire strictly after `after` (epoch ms), or `null` if it has none.
 * Exactly the rule the scheduler uses to pick the next occurrence.
 *
 * @example
 * nextFireAfter(validateRepeat({ pattern: '0 9 * * *', tz: 'Europe/Paris' }), Date.parse('2026-06-01T12:00Z'));
 * // Date.parse('2026-06-02T07:00Z')
 */
export function nextFireAfter(spec: ScheduleSpec, after: number): number | null {
  return fireCursor(spec, after).next();
}
