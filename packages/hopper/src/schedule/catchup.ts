/**
 * Catch-up planning: after downtime (or a pause, or a slow tick) some occurrences of a scheduler
 * were never created. Decide which to create now, how many are lost, and the next one to wait
 * for. Pure; bounded work however long the downtime.
 */
import { InvalidOptionsError } from '../job/errors.js';
import { nextFireAfter } from './fire-cursor.js';
import { countFires, lastFires, scanFires } from './fire-range.js';
import type { ScheduleSpec } from './repeat-options.js';
import { describe } from './timezone.js';

/** Input of {@link planCatchup}. All instants are epoch ms from the engine's one clock. */
export interface PlanCatchupInput {
  /** The scheduler's spec (from `validateRepeat`). */
  spec: ScheduleSpec;
  /**
   * The last instant the scheduler created an occurrence for. Nothing at or before it is ever
   * planned. For a scheduler that never fired, use `firstOccurrence` instead.
   */
  lastInstant: number;
  /** The current time. */
  now: number;
}

/** What {@link planCatchup} decided. */
export interface CatchupPlan {
  /** Overdue instants to create occurrences for now, ascending, all in `(lastInstant, now]`. */
  toCreate: number[];
  /** Overdue occurrences not created: `missedOutsideWindow + droppedByPolicy`. */
  missed: number;
  /** Overdue occurrences older than `catchupWindow`. */
  missedOutsideWindow: number;
  /** Overdue occurrences inside the window that the policy left out (`latest`, `none`, `catchupMax`). */
  droppedByPolicy: number;
  /**
   * False when a cron count passed `CRON_ENUMERATION_CAP` (10,000) and `missed` is partly
   * estimated (matching days x fires per day). Always true for `every`.
   */
  missedExact: boolean;
  /** The next occurrence after `now` (and after `lastInstant`), or `null` if the schedule is over. */
  next: number | null;
}

/**
 * Plans catch-up for one scheduler. The overdue occurrences are the fires in
 * `(lastInstant, now]` (startDate/endDate applied); those in the window
 * `[now - catchupWindow, now]` are eligible, and the policy picks among them:
 *
 * - `latest` (default): the most recent eligible one, if any;
 * - `all`: the most recent `catchupMax` (default 100) eligible ones, in order;
 * - `none`: nothing.
 *
 * Everything else overdue is counted in `missed`. A backward clock jump (`now <= lastInstant`)
 * plans nothing and waits for the first fire after `lastInstant`.
 *
 * Bounded: `every` is arithmetic (any downtime, O(catchupMax)); cron enumerates at most
 * `CRON_ENUMERATION_CAP` fires per range and estimates beyond it (`missedExact: false`).
 *
 * @example
 * // every minute, down from 10:00:30 to 10:10:30; window 5 minutes; policy latest
 * planCatchup({ spec, lastInstant: t('10:00'), now: t('10:10:30') });
 * // { toCreate: [t('10:10')], missed: 9, missedOutsideWindow: 5, droppedByPolicy: 4, next: t('10:11'), ... }
 */
export function planCatchup(input: PlanCatchupInput): CatchupPlan {
  const { spec, lastInstant, now } = input;
  checkInstant(lastInstant, 'lastInstant');
  checkInstant(now, 'now');
  if (now <= lastInstant) {
    return {
      toCreate: [],
      missed: 0,
      missedOutsideWindow: 0,
      droppedByPolicy: 0,
      missedExact: true,
      next: nextFireAfter(spec, lastInstant),
    };
  }
  // Fires at or after the window's start are eligible; instants are integer ms.
  const windowAfter = Math.max(lastInstant, Math.ceil(now - spec.catchupWindow) - 1);
  const keep = spec.catchup === 'latest' ? 1 : spec.catchup === 'all' ? spec.catchupMax : 0;

  const eligible = scanFires(spec, windowAfter, now);
  const toCreate =
    eligible.fires === null
      ? lastFires(spec, windowAfter, now, Math.min(keep, eligible.count))
      : eligible.fires.slice(eligible.fires.length - Math.min(keep, eligible.fires.length));
  const outside = countFires(spec, lastInstant, windowAfter);
  const droppedByPolicy = Math.max(0, eligible.count - toCreate.length);
  return {
    toCreate,
    missed: outside.count + droppedByPolicy,
    missedOutsideWindow: outside.count,
    droppedByPolicy,
    missedExact: outside.exact && eligible.exact,
    next: nextFireAfter(spec, now),
  };
}

function checkInstant(value: number, name: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > 8.64e15) {
    throw new InvalidOptionsError(`planCatchup: ${name} must be epoch ms, got ${describe(value)}.`);
  }
}
