/**
 * Schedules, pure: repeat options -> validated spec -> fire instants, catch-up plans and jitter.
 * No I/O, no Redis, no timers. Semantics for users: docs/schedules.md.
 */
export {
  DEFAULT_CATCHUP,
  DEFAULT_CATCHUP_MAX,
  DEFAULT_CATCHUP_WINDOW_MS,
  DEFAULT_OVERLAP,
  FIRST_RUN_HORIZON_MS,
  MAX_CATCHUP_MAX,
  isScheduleSpec,
  type CatchupPolicy,
  type CronScheduleSpec,
  type EveryScheduleSpec,
  type OverlapPolicy,
  type RepeatOptions,
  type ScheduleSpec,
} from './repeat-options.js';
export { validateRepeat, type ValidateRepeatOptions } from './validate-repeat.js';
export { invalidSchedule, scheduleErrorReason, type InvalidScheduleReason, type ScheduleError } from './schedule-error.js';
export { DEFAULT_TIME_ZONE } from './timezone.js';
export { CRON_NICKNAMES } from './cron-fields.js';
export { MAX_CRON_SEGMENTS } from './cron-walk.js';
export { fireCursor, nextFireAfter, type FireCursor } from './fire-cursor.js';
export { MAX_PREVIEW_COUNT, firstOccurrence, nextFireTimes, type NextFireTimesOptions } from './next-fire-times.js';
export { CRON_ENUMERATION_CAP } from './fire-range.js';
export { planCatchup, type CatchupPlan, type PlanCatchupInput } from './catchup.js';
export { jitterFor } from './jitter.js';
export { planAdvance, type AdvancePlan, type AdvanceInput, type PlannedOccurrence } from './advance-plan.js';
