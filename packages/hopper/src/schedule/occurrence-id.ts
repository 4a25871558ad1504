/**
 * The ids of a job scheduler's occurrences (the jobs it creates): `sched:<schedulerId>:<instant
 * ms>`, and `sched:<schedulerId>:trigger:<now ms>` for a run made by triggerJobScheduler (the
 * `trigger` segment keeps it apart from the scheduled run of the same instant). Written by the
 * backends (advanceScheduler.lua, runScheduled.lua, sqlite-schedulers.ts); read here. BullMQ names
 * its occurrences `repeat:<schedulerId>:<instant>`: a pending run moved from BullMQ by `hopper
 * migrate` keeps that id, so every reader accepts both prefixes.
 */

/** The prefix of the occurrence ids Hopper writes. */
export const OCCURRENCE_PREFIX = 'sched:';
/** BullMQ's prefix (a pending run migrated from BullMQ keeps its id); read too. */
export const LEGACY_OCCURRENCE_PREFIX = 'repeat:';

/** The id of scheduler `schedulerId`'s occurrence for `instant` (epoch ms). */
export function occurrenceId(schedulerId: string, instant: number): string {
  return `${OCCURRENCE_PREFIX}${schedulerId}:${instant}`;
}

/** The id of scheduler `schedulerId`'s triggered run made at `now` (epoch ms). */
export function triggeredOccurrenceId(schedulerId: string, now: number): string {
  return `${OCCURRENCE_PREFIX}${schedulerId}:trigger:${now}`;
}

/** What an occurrence id says. */
export interface ParsedOccurrenceId {
  schedulerId: string;
  /** The scheduled instant (a triggered run: when it was triggered), epoch ms. */
  instant: number;
  triggered: boolean;
}

const SCHEDULED = /^(?:repeat|sched):(.+):(-?\d+)$/s;
const TRIGGERED = /^(?:repeat|sched):(.+):trigger:(-?\d+)$/s;

/**
 * Reads an occurrence id, in either prefix; undefined when `id` has not the form. A scheduler id
 * ending in `:trigger` makes its scheduled runs read as triggered ones: `pending` (the id is a
 * scheduler's pending run, never a triggered one) reads the id as a scheduled run.
 */
export function parseOccurrenceId(id: string, pending = false): ParsedOccurrenceId | undefined {
  if (!id.startsWith(OCCURRENCE_PREFIX) && !id.startsWith(LEGACY_OCCURRENCE_PREFIX)) return undefined;
  const triggered = pending ? null : TRIGGERED.exec(id);
  if (triggered) return { schedulerId: triggered[1], instant: Number(triggered[2]), triggered: true };
  const scheduled = SCHEDULED.exec(id);
  return scheduled ? { schedulerId: scheduled[1], instant: Number(scheduled[2]), triggered: false } : undefined;
}

/** Whether `id` has the form of an occurrence id (either prefix). */
export function isOccurrenceId(id: string): boolean {
  return parseOccurrenceId(id) !== undefined;
}
