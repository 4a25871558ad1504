/**
 * The croner wrapper: parses a checked pattern with croner 11.0.1 and answers wall-clock questions
 * ("the next matching wall time after w", "does this wall time match"). Wall times here are
 * "naive" milliseconds: the local date and time written as if it were UTC, so croner runs with a
 * fixed zero offset and never reads the process's zone. Turning wall times into instants (DST) is
 * the job of `cron-walk.ts`.
 */
import { CronDate, CronPattern, type CronOptions } from 'croner';
import { checkCronText } from './cron-fields.js';
import { invalidSchedule } from './schedule-error.js';

const DAY_MS = 86_400_000;

/**
 * Options handed to croner's matcher. `domAndDow: false` ORs day-of-month and day-of-week when
 * both are restricted (Vixie cron's rule; croner's `legacyMode: true`).
 */
const MATCH_OPTIONS: CronOptions = { domAndDow: false, legacyMode: true };

/** A parsed cron pattern, ready to match wall times. Built by {@link compileCron}; cached. */
export interface CompiledCron {
  /** The normalised pattern text. */
  readonly source: string;
  /** croner's parsed pattern. */
  readonly pattern: CronPattern;
  /**
   * True for a fixed-time pattern: no wildcard or step in the second, minute and hour fields
   * (lists and ranges are fixed). croner's `fixedTimeRule: 'no-wildcard'` decides it.
   */
  readonly fixedTime: boolean;
  /** How many times a matching day fires (seconds x minutes x hours that match). */
  readonly timesPerDay: number;
  /** The earliest matching time of day, in ms after midnight. */
  readonly firstTimeOfDay: number;
}

const cache = new Map<string, CompiledCron>();
const CACHE_SIZE = 512;

/**
 * Checks and parses a cron pattern. 5 fields (minute first) or 6 (second first); `L`, `W`, `#`,
 * month and day names, and the nicknames in `CRON_NICKNAMES` are accepted.
 *
 * @throws InvalidScheduleError (reasons `cron-*`) when the pattern is invalid.
 * @example
 * compileCron('30 2 * * *').fixedTime; // true
 */
export function compileCron(pattern: unknown): CompiledCron {
  if (typeof pattern === 'string') {
    const hit = cache.get(pattern);
    if (hit !== undefined) return hit;
  }
  const { normalized, fields } = checkCronText(pattern);
  let parsed: CronPattern;
  try {
    parsed = new CronPattern(fields.join(' '), undefined, {
      mode: '6-part',
      fixedTimeRule: 'no-wildcard',
    });
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message.replace(/^CronPattern: /, '').replace(/\.$/, '') : '';
    throw invalidSchedule(
      'cron-syntax',
      `cron pattern '${normalized}' is not valid: ${detail}. Check each field against ` +
        "'minute hour day-of-month month day-of-week' (an optional seconds field comes first).",
      { cause },
    );
  }
  const compiled: CompiledCron = {
    source: normalized,
    pattern: parsed,
    fixedTime: parsed.isFixedTime,
    timesPerDay: countSet(parsed.second) * countSet(parsed.minute) * countSet(parsed.hour),
    firstTimeOfDay:
      (parsed.hour.findIndex(Boolean) * 3600 + parsed.minute.findIndex(Boolean) * 60 + parsed.second.findIndex(Boolean)) * 1000,
  };
  if (typeof pattern === 'string') {
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(pattern, compiled);
  }
  return compiled;
}

function countSet(values: readonly number[]): number {
  return values.filter(Boolean).length;
}

/**
 * The first wall time strictly after `wall` (naive ms) that matches, at whole seconds; `null` if
 * croner finds none (it searches at most 400 years ahead and stops at year 3000).
 */
export function nextWallMatch(cron: CompiledCron, wall: number): number | null {
  const date = new CronDate<undefined>(new Date(wall), 0);
  const next = date.increment(cron.pattern, MATCH_OPTIONS, false);
  return next === null ? null : next.getTime();
}

/** True if the wall time (naive ms, whole second) matches every field of the pattern. */
export function matchesWallTime(cron: CompiledCron, wall: number): boolean {
  if (wall % 1000 !== 0) return false;
  return new CronDate<undefined>(new Date(wall), 0).match(cron.pattern, MATCH_OPTIONS);
}

/** True if the local date holding `wall` matches the day-of-month, month and day-of-week fields. */
export function matchesWallDay(cron: CompiledCron, wall: number): boolean {
  return matchesWallTime(cron, floorDay(wall) + cron.firstTimeOfDay);
}

/** Midnight (naive ms) of the wall date holding `wall`. */
export function floorDay(wall: number): number {
  return Math.floor(wall / DAY_MS) * DAY_MS;
}

/** Days the estimate below visits at most; past it, it extrapolates from the days it saw. */
export const MAX_ESTIMATE_DAYS = 40_000;

/**
 * An estimate of how many wall times in `(fromWall, toWall]` match: matching days times
 * `timesPerDay`, the first and last day counted pro rata. Ignores DST (a gap or a repeated hour
 * changes a day's count by at most the matches in that hour). Work is bounded by
 * {@link MAX_ESTIMATE_DAYS}. Used only to report missed counts past the enumeration cap.
 */
export function estimateWallMatches(cron: CompiledCron, fromWall: number, toWall: number): number {
  if (toWall <= fromWall) return 0;
  const firstDay = floorDay(fromWall);
  const totalDays = Math.floor((floorDay(toWall) - firstDay) / DAY_MS) + 1;
  const visited = Math.min(totalDays, MAX_ESTIMATE_DAYS);
  let matches = 0;
  for (let index = 0; index < visited; index++) {
    const day = firstDay + index * DAY_MS;
    if (!matchesWallDay(cron, day)) continue;
    const covered = Math.min(day + DAY_MS, toWall) - Math.max(day, fromWall);
    matches += (cron.timesPerDay * covered) / DAY_MS;
  }
  const scaled = visited < totalDays ? (matches * totalDays) / visited : matches;
  return Math.round(scaled);
}
