/**
 * The job states, named as in BullMQ. A job is in exactly one of them at any time; the state is
 * stored on the job (field `s`) by the script that moves it, and mirrored by exactly one Redis
 * structure (see docs/architecture.md).
 */
export const JOB_STATES = ['waiting', 'prioritized', 'delayed', 'active', 'waiting-children', 'completed', 'failed'] as const;

/** One of the job states. */
export type JobState = (typeof JOB_STATES)[number];

/** The states a job ends in (BullMQ's `FinishedStatus`). */
export type FinishedStatus = 'completed' | 'failed';

/** A state a job can be found in, or `unknown` when the job does not exist. */
export type JobStateOrUnknown = JobState | 'unknown';

/** States a finished job ends in. */
export const TERMINAL_STATES: readonly JobState[] = ['completed', 'failed'];

/** Tells whether a string is one of the job states. */
export function isJobState(value: string): value is JobState {
  return (JOB_STATES as readonly string[]).includes(value);
}

/**
 * The names the getters accept: the states, plus BullMQ's alias `wait` for `waiting`, `paused`
 * (always 0 in Hopper: pausing a queue does not move its jobs, see the README), and `repeat`
 * (BullMQ's legacy repeatable jobs; always empty in Hopper).
 */
export type JobCountType = JobState | 'wait' | 'paused' | 'repeat';
