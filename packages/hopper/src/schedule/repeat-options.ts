/**
 * The repeat options a user passes to `upsertJobScheduler`, and the normalised spec Hopper stores
 * and computes with. `validateRepeat` is the only way from one to the other.
 */

/** What happens when an occurrence is due while the scheduler's previous run is not finished. */
export type OverlapPolicy = 'skip' | 'bufferOne' | 'allowAll';

/** What happens to occurrences missed while nothing was running (downtime, pause). */
export type CatchupPolicy = 'latest' | 'all' | 'none';

/**
 * How a job scheduler repeats. BullMQ's `RepeatOptions` plus Hopper's policies.
 * Exactly one of `pattern` and `every` is required.
 *
 * @example
 * // 02:30 every night, Paris time; after downtime run only the latest missed night.
 * const nightly: RepeatOptions = { pattern: '30 2 * * *', tz: 'Europe/Paris' };
 * // Every 5 minutes, on the grid 00:00, 00:05, ... UTC, never two runs at once.
 * const poll: RepeatOptions = { every: 300_000, overlap: 'skip' };
 */
export interface RepeatOptions {
  /**
   * A cron pattern: 5 fields (`minute hour day-of-month month day-of-week`) or 6 (second first).
   * `L`, `W`, `#`, names (`MON-FRI`, `JAN`) and `@daily`-style nicknames are accepted. When both
   * day fields are restricted a day matching either runs (Vixie cron's OR).
   */
  pattern?: string;
  /**
   * IANA time zone the pattern's wall times are read in, e.g. `'Europe/Paris'`.
   * Default `'UTC'` (never the process's zone). Also the zone of `startDate`/`endDate` strings
   * written without an offset.
   */
  tz?: string;
  /** A fixed interval in ms (a positive integer), on a grid anchored at `startDate` or the epoch. */
  every?: number;
  /** No occurrence before this instant (inclusive). Date, epoch ms or ISO 8601 string. */
  startDate?: Date | string | number;
  /** No occurrence after this instant (inclusive). Date, epoch ms or ISO 8601 string. */
  endDate?: Date | string | number;
  /** Create at most this many occurrences (an integer >= 1). Enforced by the engine. */
  limit?: number;
  /**
   * Delay each occurrence by a deterministic amount in `[0, jitter)` ms, derived from the
   * scheduler id and the occurrence's instant, never past the next occurrence. Default 0.
   */
  jitter?: number;
  /**
   * When an occurrence is due while the previous run has not finished (still waiting, active,
   * delayed for a retry's backoff, or waiting for children): `'skip'` it and count it (default),
   * `'bufferOne'` (keep at most one waiting behind the running one) or `'allowAll'` (run anyway).
   */
  overlap?: OverlapPolicy;
  /**
   * What to run for occurrences missed while Hopper was down: `'latest'` (default, the most
   * recent missed occurrence within `catchupWindow`), `'all'` (each missed occurrence within the
   * window, at most `catchupMax`) or `'none'`. Misses outside the window are counted, not run.
   */
  catchup?: CatchupPolicy;
  /** How far back (ms) a missed occurrence is still worth running. Default 300000 (5 minutes). */
  catchupWindow?: number;
  /** With `catchup: 'all'`, the most missed occurrences run at once (1-1000). Default 100. */
  catchupMax?: number;
  /** Create the scheduler paused. Default false. */
  paused?: boolean;
  /**
   * As in BullMQ: a new cron scheduler also runs once at once (a triggered run, id
   * `sched:<id>:trigger:<now>`), then follows its pattern. Only when the scheduler is created, never
   * on a later upsert. An `every` scheduler already runs its first occurrence at once. Cannot be
   * combined with `startDate`. Not part of the schedule (an upsert differing only by it changes nothing).
   */
  immediately?: boolean;
  /**
   * With `every` only: shifts the grid by this many ms (an integer in `[0, every)`), as BullMQ's
   * `offset`: `{ every: 3_600_000, offset: 900_000 }` fires at :15 past each hour.
   */
  offset?: number;
}

/**
 * The `repeat` option of `queue.add` (BullMQ 4/5's legacy repeatable jobs): {@link RepeatOptions}
 * plus the legacy fields. Such an add creates or updates a job scheduler whose id is the repeat
 * key (see docs/schedules.md, "Legacy repeatable jobs"). On an occurrence's `job.opts.repeat`
 * these fields are as the add gave them (dates as epoch ms), with `count` set.
 *
 * @example
 * await queue.add('bird', { color: 'green' }, { repeat: { every: 10_000, limit: 100 } });
 */
export interface LegacyRepeatOptions extends RepeatOptions {
  /** The scheduler id to use instead of the generated key `name:jobId:endDate:tz:pattern|every`. */
  key?: string;
  /**
   * On an add: the iteration count to start from (the first occurrence is `count + 1`, and
   * `limit` counts from it, as in BullMQ). On an occurrence: its iteration number, from 1.
   */
  count?: number;
  /** Part of the generated key (the add's `jobId` goes here too); occurrence ids stay Hopper's. */
  jobId?: string;
  /** Ignored on an add (BullMQ's internal field); occurrences carry `job.opts.prevMillis`. */
  prevMillis?: number;
}

/** Fields every normalised spec has. Instants are epoch ms. */
interface ScheduleSpecBase {
  /** Canonical time zone id (`'UTC'` when none was given). */
  readonly tz: string;
  /** First instant allowed (inclusive), epoch ms; absent = no lower bound. */
  readonly startDate?: number;
  /** Last instant allowed (inclusive), epoch ms; absent = no end. */
  readonly endDate?: number;
  /** Most occurrences to create; absent = no limit. Enforced by the engine. */
  readonly limit?: number;
  /** Jitter bound in ms (0 = none). */
  readonly jitter: number;
  /** Overlap policy. */
  readonly overlap: OverlapPolicy;
  /** Catch-up policy. */
  readonly catchup: CatchupPolicy;
  /** Catch-up window in ms. */
  readonly catchupWindow: number;
  /** Most missed occurrences created at once with `catchup: 'all'`. */
  readonly catchupMax: number;
  /** Whether the scheduler is paused. */
  readonly paused: boolean;
}

/** A validated cron schedule. */
export interface CronScheduleSpec extends ScheduleSpecBase {
  readonly kind: 'cron';
  /** The normalised pattern (trimmed, single spaces, nickname expanded). */
  readonly pattern: string;
}

/** A validated fixed-interval schedule: fires at `(startDate ?? 0) + offset + k * every`. */
export interface EveryScheduleSpec extends ScheduleSpecBase {
  readonly kind: 'every';
  readonly every: number;
  readonly offset: number;
}

/**
 * A validated, normalised schedule: plain JSON (store it as is), defaults filled in.
 * Made by {@link validateRepeat}.
 */
export type ScheduleSpec = CronScheduleSpec | EveryScheduleSpec;

/** Default {@link RepeatOptions.overlap}. */
export const DEFAULT_OVERLAP: OverlapPolicy = 'skip';
/** Default {@link RepeatOptions.catchup}. */
export const DEFAULT_CATCHUP: CatchupPolicy = 'latest';
/** Default {@link RepeatOptions.catchupWindow}: 5 minutes. */
export const DEFAULT_CATCHUP_WINDOW_MS = 300_000;
/** Default {@link RepeatOptions.catchupMax}. */
export const DEFAULT_CATCHUP_MAX = 100;
/** Largest {@link RepeatOptions.catchupMax}: one engine call creates at most this many jobs. */
export const MAX_CATCHUP_MAX = 1000;
/** A schedule must fire within this long after it starts (5 years), or it is refused. */
export const FIRST_RUN_HORIZON_MS = 5 * 366 * 86_400_000;

/** The option names {@link RepeatOptions} has. */
export const REPEAT_OPTION_KEYS: readonly (keyof RepeatOptions)[] = [
  'pattern',
  'tz',
  'every',
  'startDate',
  'endDate',
  'limit',
  'jitter',
  'overlap',
  'catchup',
  'catchupWindow',
  'catchupMax',
  'paused',
  'offset',
  'immediately',
];

/** True if the value is a normalised spec (made by `validateRepeat`) rather than raw options. */
export function isScheduleSpec(value: RepeatOptions | ScheduleSpec): value is ScheduleSpec {
  const kind = (value as { kind?: unknown }).kind;
  return kind === 'cron' || kind === 'every';
}
