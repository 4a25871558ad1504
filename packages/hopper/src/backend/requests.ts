/**
 * The requests and replies of the seam's write operations (backend.ts): jobs to add and flows,
 * claims, fences, acknowledgements with their retention, stall rescue. Plain data, no I/O.
 */
/** A job to add, already validated and serialised. */
export interface NewJob {
  name: string;
  /** JSON of the job's data. */
  data: string;
  /** JSON of the options kept on the job ('' when there are none). */
  opts: string;
  /** Custom id, or '' for an auto id. */
  customId: string;
  /** Deduplication (BullMQ's `deduplication` option), if any. */
  dedup?: { id: string; ttl: number; extend: boolean; replace: boolean; keepLast?: boolean };
  priority: number;
  delay: number;
  lifo: boolean;
  /** Creation time to record (ms), or 0 for the backend's now. */
  timestamp: number;
  /** The job's `cost` option (weighted rate limits, budgets), if any. */
  cost?: number;
}

/**
 * What an add call charges and checks beyond writing its jobs (docs/budgets.md, docs/limits.md):
 * the queue's tenant budget, and whether one refused job refuses the whole call (addBulk) or only
 * itself (adds coalesced from separate `queue.add` calls).
 */
export interface AddCharge {
  /** The budget: `limit` units per sliding `window` ms; `tenants[i]` is job i's tenant ('' = none). */
  budget?: { limit: number; window: number; tenants: string[] };
  /** true: a refused job refuses the call (BudgetExceededError / CostAboveRateLimitError thrown). */
  allOrNothing: boolean;
}

/**
 * What a child does to its parent when it fails for good: 'fail' the parent, 'continue' (start
 * the parent now), 'ignore' (record, drop the dependency), 'remove' (drop the dependency), 'none'
 * (the parent's queue decides: fail, or wait with the failure recorded).
 */
export type ChildFailurePolicy = 'none' | 'fail' | 'continue' | 'ignore' | 'remove';

/** One node of a flow to add (see addFlow.lua): a job, its queue and its place in the tree. */
export interface FlowNodeWrite extends NewJob {
  queue: string;
  /** Index (from 1) of its parent among the call's nodes; 0 for a top-level node. */
  parentIndex: number;
  /** For a top-level node: an existing parent it joins. */
  parent?: { queue: string; id: string };
  policy: ChildFailurePolicy;
  /** false: a parent whose other children come in later calls (sealParent ends that). */
  sealed: boolean;
}

/** What happened to each node of an addFlow. */
export type FlowOutcome = 'added' | 'duplicated' | 'skipped';

/** The result of addFlow: the nodes' ids and outcomes, or why nothing was written. */
export type AddFlowResult =
  | { now: number; ok: true; ids: string[]; outcomes: FlowOutcome[] }
  /** Node `index` (from 0) is not top-level and its custom id exists. */
  | { now: number; ok: false; reason: 'exists'; index: number }
  /** Node `index`'s existing parent is missing or finished (`state`). */
  | { now: number; ok: false; reason: 'parent'; index: number; state: string };

/** A parent's children, by what became of them (public keys). */
export interface Dependencies {
  /** Completed children: key -> return value (JSON). */
  processed: Record<string, string>;
  /** Children still pending. */
  unprocessed: string[];
  /** Children that failed for good: key -> failed reason. */
  failed: Record<string, string>;
  /** Children that failed for good and that the parent let go of (continueParentOnFailure, ignoreDependencyOnFailure): key -> failed reason. */
  ignored: Record<string, string>;
}

/** Identifies one add call so that a re-sent call is applied once. */
export interface AddRequest {
  producerId: string;
  seq: number;
  /** How many recent requests of this producer to remember. */
  keep: number;
}

/** What happened to each job of an add. */
export type AddOutcome = 'added' | 'duplicated' | 'deduplicated' | 'refused';

export interface AddResult {
  now: number;
  /** The queue's epoch as stored ('' when the queue's meta is gone: a dataset reset). */
  epoch: string;
  ids: string[];
  /** 'duplicated': a job with that custom id existed; 'deduplicated': the deduplication id did. */
  outcomes: AddOutcome[];
  /** Per job, the error that refused it (budget or weighted limit; not all-or-nothing calls), if any. */
  refused?: (Error | undefined)[];
}

/** A job as a worker receives it from a claim. */
export interface ClaimedJob {
  id: string;
  name: string;
  data: string;
  opts: string;
  timestamp: number;
  attemptsMade: number;
  attemptsStarted: number;
  priority: number;
  delay: number;
  progress: string;
  /** Times the job was rescued after its lock expired. */
  stalledCounter: number;
  /** The previous attempt's failure reason, if it failed. */
  failedReason?: string;
  /**
   * Set ('max:durationMs', ':group' added for a group's limit) when the job's cost is above a
   * weighted rate limit's whole window: it
   * was taken without being counted, for the worker to fail it (it could never fit).
   */
  overweight?: string;
  /** The lock token of this attempt. */
  token: string;
}

/** What a worker asks for when it claims jobs (alone or with an acknowledgement). */
export interface ClaimRequest {
  count: number;
  lockMs: number;
  /** The i-th claimed job (from 1) gets the token `tokenPrefix + i`... */
  tokenPrefix: string;
  /** ...or, with `exact` (manual processing, count 1), `tokenPrefix` itself. */
  exact?: boolean;
  /**
   * The worker's rate limit (at most `max` starts in any `duration` ms), else the queue's;
   * `weighted`: each job counts its `cost` option instead of 1.
   */
  limiter?: { max: number; duration: number; weighted?: boolean };
  /** The worker's name, recorded on each claimed job (`processedBy`). */
  by?: string;
  /**
   * For a claim sent behind an idle wait (waitThenClaim): worker `workerId`'s claim number `seq`.
   * Once that worker's orphan release has voided its wait claims up to `seq` or beyond
   * ({@link QueueBackend.releaseOrphans}'s `voidWaitClaimsUpTo`), the claim takes nothing if it
   * runs after all (a wake-up that reached the connection the worker had left, before Redis saw it
   * close): the worker is no longer listening for its reply.
   */
  voidable?: { workerId: string; seq: number };
}

export interface ClaimResult {
  now: number;
  paused: boolean;
  /** When the queue had no ready job for the claim: the earliest delayed job's due time. */
  nextDue: number | null;
  /** When the queue is rate-limited: ms until claims may resume (0 otherwise). */
  limitedFor: number;
  /** A scheduler's occurrence fell due: its scheduler needs its next occurrence computed. */
  schedulersDue: boolean;
  jobs: ClaimedJob[];
}

/** What {@link QueueBackend.waitThenClaim} brought back. */
export interface WakeClaim {
  /** The claim's result; undefined when the wait ended without one (interrupted: close, pause, reconnect). */
  claim: ClaimResult | undefined;
  /**
   * The claim may have run without its reply arriving here (its connection closed after the claim
   * was sent, and was interrupted or re-sent it): jobs may be held under the worker's id that the
   * worker does not know, for {@link QueueBackend.releaseOrphans} to put back.
   */
  uncertain: boolean;
}

/**
 * What a fenced write did: the seam's typed result of the job writes (complete, fail, the holder's
 * moves, progress, data, logs, steps, outputs). Each backend maps its own codes to these names in
 * one place (the Redis backend: the script replies; the SQLite backend returns them directly).
 * Applied: 'done', 'failed-for-good', 'cancelled' (see {@link writeApplied}); refused: the rest.
 */
export const WriteCode = {
  Done: 'done',
  /** A failure recorded for good (no retry left, or not retried). */
  FailedForGood: 'failed-for-good',
  /** The job was cancelled while running: it ended as cancelled (failed), not completed. */
  Cancelled: 'cancelled',
  /** The job does not exist. */
  Missing: 'missing',
  /** The caller's attempt no longer holds the job (its lock expired and it was rescued, or another attempt took over). */
  StaleAttempt: 'stale-attempt',
  /** The job is not in a state that allows the write. */
  NotActive: 'not-active',
  /** The job was cancelled: a holder's move (to delayed, to wait, to waiting-children) is refused. */
  RefusedCancelled: 'refused-cancelled',
  /** A run's cost reached its budget (`continueWith({ maxCost })`): the next turn was not added. */
  OverBudget: 'over-budget',
  /** The id a write would create is held by another job (a run's next turn taken by a job of another run). */
  IdTaken: 'id-taken',
} as const;
export type WriteCode = (typeof WriteCode)[keyof typeof WriteCode];

/** Whether a write's result means it was applied ('done', 'failed-for-good' or 'cancelled'). */
export function writeApplied(code: WriteCode): boolean {
  return code === WriteCode.Done || code === WriteCode.FailedForGood || code === WriteCode.Cancelled;
}

/** What an appended log line did: applied (`count`: the lines the log holds now) or refused (`count` 0). */
export interface LogWriteResult {
  code: WriteCode;
  count: number;
}

/** The fence of an attempt: its lock token and attempt number (attemptsStarted). */
export interface Fence {
  token: string;
  attempt: number;
}

/**
 * Retention of a finished job: keep all, remove at once, or keep at most `count` jobs and
 * none older than `ageMs` (-1 = no limit).
 */
export type Retention = { kind: 'keep' } | { kind: 'remove' } | { kind: 'limit'; count: number; ageMs: number };

export interface Completion extends Fence {
  id: string;
  /** JSON of the return value. */
  returnvalue: string;
  keep: Retention;
}

export interface Failure extends Fence {
  id: string;
  reason: string;
  /** This attempt's stack trace ('' for none). */
  stack: string;
  stackTraceLimit: number;
  /** -1: fail for good; -2: fail for good, attempts exhausted; 0: retry now; > 0: retry after ms. */
  retryDelay: number;
  keep: Retention;
  /** The attempt ran past its timeout (counted as timed-out in the queue's metrics). */
  timedOut?: boolean;
}

export interface AckResult {
  now: number;
  codes: WriteCode[];
  next: ClaimResult;
}

export interface RescueOptions {
  maxStalledCount: number;
  limit: number;
  intervalMs: number;
  /** Run even if another worker checked within the interval. */
  force: boolean;
  /** Retention for jobs failed by the rescue that have no removeOnFail of their own. */
  failKeep: Retention;
  /** Events older than this are trimmed (0 = no age cap). */
  eventsMaxAgeMs: number;
}

export interface RescueResult {
  now: number;
  /** false when another worker already ran the check within the interval. */
  ran: boolean;
  rescued: string[];
  failed: string[];
  /** How many expired locks the call looked at: a full batch (= limit) means more may be left. */
  expired: number;
}
