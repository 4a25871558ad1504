/**
 * What a scheduler creates when it advances: its next pending occurrence, plus the overdue ones
 * catch-up keeps after downtime or a pause, with jitter and the occurrence limit applied. Pure:
 * the engine stores the plan atomically, guarded by the scheduler's last instant.
 */
import { planCatchup } from './catchup.js';
import { nextFireAfter } from './fire-cursor.js';
import { jitterFor } from './jitter.js';
import { firstOccurrence } from './next-fire-times.js';
import type { ScheduleSpec } from './repeat-options.js';

/** One occurrence to create. */
export interface PlannedOccurrence {
  /** The scheduled instant (epoch ms): the occurrence's id is `sched:<schedulerId>:<instant>`. */
  instant: number;
  /**
   * When it becomes due: the instant plus its jitter (catch-up runs, and a new `every`
   * scheduler's first occurrence whose slot began before now: due at once). Lateness is measured
   * from it.
   */
  due: number;
  /** The one occurrence that waits for its time; the others are catch-up runs. */
  pending: boolean;
}

/** The result of {@link planAdvance}. */
export interface AdvancePlan {
  occurrences: PlannedOccurrence[];
  /**
   * When the occurrence after the pending one is due (its instant plus its jitter; null if
   * none), so the engine can tell when a later occurrence is due too.
   */
  after: number | null;
  /** Overdue occurrences not created (outside the catch-up window, or left out by the policy). */
  missed: number;
}

/** Input of {@link planAdvance}. */
export interface AdvanceInput {
  schedulerId: string;
  spec: ScheduleSpec;
  /** The last instant an occurrence was created for, or null for a new scheduler. */
  last: number | null;
  /** Occurrences created so far (for `limit`). */
  created: number;
  now: number;
}

/**
 * Plans a scheduler's next occurrences. A new scheduler gets its first occurrence (`every`: the
 * current grid slot, due at once however long ago the slot began; cron: the first fire after
 * now). Otherwise the occurrences
 * after `last` that are overdue go through catch-up planning (window and policy), and the next
 * fire after now becomes the pending occurrence. `limit` caps the total created.
 *
 * @example
 * planAdvance({ schedulerId: 'poll', spec, last: null, created: 0, now });
 * // { occurrences: [{ instant: slot, due: now, pending: true }], after: slot + every, missed: 0 }
 */
export function planAdvance(input: AdvanceInput): AdvancePlan {
  const { schedulerId, spec, last, created, now } = input;
  const remaining = spec.limit === undefined ? Number.POSITIVE_INFINITY : spec.limit - created;
  if (remaining <= 0) return { occurrences: [], after: null, missed: 0 };
  let catchupRuns: number[] = [];
  let missed = 0;
  let pending: number | null;
  if (last === null) {
    pending = firstOccurrence(spec, now);
  } else {
    const plan = planCatchup({ spec, lastInstant: last, now });
    catchupRuns = plan.toCreate;
    missed = plan.missed;
    pending = plan.next;
  }
  const occurrences: PlannedOccurrence[] = [];
  for (const instant of catchupRuns.slice(0, remaining)) {
    occurrences.push({ instant, due: now, pending: false });
  }
  missed += Math.max(0, catchupRuns.length - occurrences.length);
  let after: number | null = null;
  if (pending !== null && occurrences.length < remaining) {
    const next = nextFireAfter(spec, pending);
    // Never due before now: the first `every` occurrence is the current slot, which may have
    // begun up to `every` ago; it runs at once and is late only if it waits from now on.
    const due = Math.max(now, pending + jitterFor(schedulerId, pending, spec.jitter, next));
    occurrences.push({ instant: pending, due, pending: true });
    after = next === null ? null : dueTime(schedulerId, spec, next);
  }
  return { occurrences, after, missed };
}

/** When the occurrence at `instant` is due: the instant plus its jitter. */
function dueTime(schedulerId: string, spec: ScheduleSpec, instant: number): number {
  if (!(spec.jitter >= 1)) return instant;
  return instant + jitterFor(schedulerId, instant, spec.jitter, nextFireAfter(spec, instant));
}
