/**
 * The one state table: every transition a job may make, the operation that makes it, and the
 * source states it is allowed from. Scripts check the source state of every move they make;
 * this table is what they implement, and the model-based test checks them against it.
 */
import type { JobState } from './states.js';

/** A backend operation that moves jobs between states. */
export type Transition =
  'import' | 'add' | 'promote' | 'claim' | 'complete' | 'fail' | 'retry' | 'rescueStalled' | 'releaseOrphans' | 'releaseJobs';

/** Where a job may go, by operation: `from` → allowed `to` states. */
export const TRANSITIONS: Record<Transition, { from: readonly (JobState | 'new')[]; to: readonly JobState[] }> = {
  /** A job moved in from another queue system (hopper migrate) enters the state it had there; never active. */
  import: { from: ['new'], to: ['waiting', 'prioritized', 'delayed', 'waiting-children', 'completed', 'failed'] },
  /** A new job enters waiting, prioritized or delayed (or waiting-children in a flow). */
  add: { from: ['new'], to: ['waiting', 'prioritized', 'delayed', 'waiting-children'] },
  /** A due delayed job becomes ready. */
  promote: { from: ['delayed'], to: ['waiting', 'prioritized'] },
  /** A worker takes a ready job and holds its lock. */
  claim: { from: ['waiting', 'prioritized'], to: ['active'] },
  /** The holder of the lock finishes the job. */
  complete: { from: ['active'], to: ['completed'] },
  /** The holder of the lock fails the attempt: retried (after its backoff) or failed for good. */
  fail: { from: ['active'], to: ['waiting', 'prioritized', 'delayed', 'failed'] },
  /** A failed job is retried by hand. */
  retry: { from: ['failed', 'completed'], to: ['waiting', 'prioritized'] },
  /** A job whose lock expired goes back to ready, or fails after too many stalls (or as cancelled). */
  rescueStalled: { from: ['active'], to: ['waiting', 'prioritized', 'failed'] },
  /** A job claimed by a call whose reply was lost goes back to ready, no stall counted (a cancelled one fails as cancelled). */
  releaseOrphans: { from: ['active'], to: ['waiting', 'prioritized', 'failed'] },
  /** A closing worker gives a held job back to ready at once (a cancelled one fails as cancelled). */
  releaseJobs: { from: ['active'], to: ['waiting', 'prioritized', 'failed'] },
};

/** Tells whether `op` may move a job from `from` to `to`. */
export function isAllowedTransition(op: Transition, from: JobState | 'new', to: JobState): boolean {
  const rule = TRANSITIONS[op];
  return rule.from.includes(from) && rule.to.includes(to);
}
