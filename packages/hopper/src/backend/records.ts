/**
 * Records the backend seam passes for job schedulers and groups, and the typed results of its
 * writes (re-exported by backend.ts).
 */
import type { WriteCode } from './requests.js';

/** A scheduler as written by upsert: its validated spec and job template, serialised. */
export interface SchedulerWrite {
  id: string;
  /** Digest of spec + template: an upsert with the same one changes nothing. */
  hash: string;
  /** JSON of the validated ScheduleSpec. */
  spec: string;
  /** JSON of { name, data (JSON string), opts (JSON string), priority }. */
  template: string;
  overlap: string;
  catchup: string;
  catchupWindow: number;
  /** 0 = no limit. */
  limit: number;
  paused: boolean;
}

/** One occurrence to create when advancing a scheduler. */
export interface OccurrencePlan {
  instant: number;
  due: number;
  /** The one that waits for its time (at most one); others are catch-up runs, due now. */
  pending: boolean;
}

/** A scheduler as stored. */
export interface SchedulerRecord {
  id: string;
  spec: string;
  template: string;
  paused: boolean;
  /** The last instant an occurrence was created for ('' if none yet). */
  last: string;
  /** The pending occurrence's due time, if any. */
  nextDue: number | undefined;
  pendingId: string;
  fired: number;
  skipped: number;
  missed: number;
  created: number;
  limit: number;
  createdAt: number;
}

/** Where a group stands: taking turns, parked at its concurrency or rate limit, paused, or with no backlog. */
export type GroupStatus = 'ready' | 'maxed' | 'limited' | 'paused' | 'idle';

/** A group as stored: its status, counts and its own settings (queue defaults not applied). */
export interface GroupRecord {
  id: string;
  status: GroupStatus;
  /** Ready jobs without a priority. */
  waiting: number;
  /** Ready jobs with a priority. */
  prioritized: number;
  active: number;
  concurrency: number | undefined;
  /** `weight: 'cost'`: a weighted limiter (each job counts its cost). */
  limiter: { max: number; duration: number; weight?: 'cost' } | undefined;
  maxSize: number | undefined;
  weight: number | undefined;
}

/*
 * Typed results of the seam's writes that used to return script codes. Each backend maps its own
 * codes (the Lua replies, the SQLite writes) to these unions; callers switch on `kind`.
 */

/** What removeJob did (nothing is removed unless `kind` is 'removed'). */
export type RemoveJobResult =
  | { kind: 'removed'; /** How many jobs went (the job and its removed descendants). */ count: number }
  | { kind: 'missing' }
  /** The job is active. */
  | { kind: 'active' }
  /** The job is a job scheduler's pending run (kept). */
  | { kind: 'pendingRun' }
  /** A descendant (`key`: its public key) is active. */
  | { kind: 'descendantActive'; key: string }
  /** The flow tree holds more than `limit` child records. */
  | { kind: 'treeTooLarge'; limit: number }
  /** A descendant (`key`: its public key) is a job scheduler's pending run. */
  | { kind: 'descendantPendingRun'; key: string };

/**
 * What cancelJob did: cancelled now (it had not started), signalled (active: its worker is told),
 * missing, already finished, or refused as a job scheduler's pending run (kept).
 */
export type CancelJobResult = { kind: 'cancelled' | 'signalled' | 'missing' | 'finished' | 'pendingRun' };

/**
 * What replaying one dead letter did: replayed; missing (no such dead letter); originExists (the
 * origin job exists and is not failed: refused); busy (the dead letter is active, delayed or
 * prioritized: refused); notDeadLetter.
 */
export type ReplayDeadLetterResult = { kind: 'replayed' | 'missing' | 'originExists' | 'busy' | 'notDeadLetter' };

/** What sealParent did: sealed (still waiting for children), released (sealed and moved on), alreadySealed, missing. */
export type SealParentResult = { kind: 'sealed' | 'released' | 'alreadySealed' | 'missing' };

/**
 * What moveToWaitingChildren did: moved; nothingPending (keep processing); childFailed (a child
 * with failParentOnFailure failed: `reason`); refused (the holder's move was refused: `code` says
 * why, as for the other holder moves).
 */
export type WaitChildrenResult =
  { kind: 'moved' } | { kind: 'nothingPending' } | { kind: 'childFailed'; reason: string } | { kind: 'refused'; code: RefusedMoveCode };

/** Why a holder's move was refused (the WriteCodes of a refusal). */
export type RefusedMoveCode =
  typeof WriteCode.Missing | typeof WriteCode.StaleAttempt | typeof WriteCode.NotActive | typeof WriteCode.RefusedCancelled;

/** What removeChildDependency did: removed; notPending (no parent, or not pending); missing (the child); parentMissing. */
export type ChildDependencyResult = { kind: 'removed' | 'notPending' | 'missing' | 'parentMissing' };

/** Fails to compile when a switch over a union's `kind` misses a case. */
export function unexpectedKind(value: never): never {
  throw new Error(`Unexpected backend result ${JSON.stringify(value)}.`);
}
