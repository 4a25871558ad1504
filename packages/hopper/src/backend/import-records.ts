/**
 * The seam's operations for moving jobs in from another queue system (`hopper migrate`, from
 * BullMQ): the jobs as they are written here, and the typed results. Plain data, no I/O.
 */
import type { ChildFailurePolicy } from './requests.js';

/** The states a job may be imported in (active jobs are never moved: see docs/migrating.md). */
export type ImportedState = 'waiting' | 'prioritized' | 'delayed' | 'waiting-children' | 'completed' | 'failed';

/** One job to write with its own id, in the state it had in the system it comes from. */
export interface ImportedJob {
  id: string;
  name: string;
  /** JSON of the job's data. */
  data: string;
  /** JSON of the options kept on the job ('' when there are none). */
  opts: string;
  timestamp: number;
  state: ImportedState;
  priority: number;
  /** The job's delay option (ms), as recorded on it. */
  delay: number;
  /** For a delayed job: when it is due (ms). */
  due?: number;
  /** For a waiting job: at the head of the line (a job that stalled there runs next, as a rescued one here). */
  front?: boolean;
  attemptsMade: number;
  attemptsStarted: number;
  stalledCounter: number;
  processedOn?: number;
  finishedOn?: number;
  /** JSON of the return value (completed). */
  returnValue?: string;
  failedReason?: string;
  /** JSON array of stack traces. */
  stacktrace?: string;
  /** JSON of the progress. */
  progress?: string;
  processedBy?: string;
  /** Log lines, oldest first. */
  logs: string[];
  /** Its deduplication id and the ms its key had left (0: held until the job finishes). */
  dedup?: { id: string; ttlMs: number };
  /** Its parent, already in this Hopper (queue under the same prefix), and its failure policy. */
  parent?: { queue: string; id: string; policy: ChildFailurePolicy };
  /** As a parent: its children by outcome (their public keys here, `<prefix>:<queue>:<id>`). */
  children?: {
    pending: string[];
    /** [child key, return value JSON] */
    processed: [string, string][];
    /** [child key, failed reason]: failed children it waits for or failed because of. */
    failed: [string, string][];
    /** [child key, failed reason]: failed children it let go of. */
    ignored: [string, string][];
  };
}

/** What importJobs did with one job. */
export interface ImportOutcome {
  /** 'exists': a job with that id was already here; nothing was written (the copy here wins). */
  outcome: 'imported' | 'exists';
  /** Its deduplication id was held here by another job, so the imported job does not hold it. */
  dedupHeldElsewhere: boolean;
  /** Its parent was not here, so the link was dropped. */
  parentMissing: boolean;
}

/** A child outside this Hopper that finished there, to record on its parent here. */
export interface ExternalChildOutcome {
  /** The child's queue and id (its public key here is `<prefix>:<queue>:<id>`). */
  queue: string;
  id: string;
  outcome: 'completed' | 'failed' | 'removed';
  /** For a failure: the child's policy toward its parent. */
  policy: ChildFailurePolicy;
  /** Return value JSON (completed) or failed reason (failed); '' for removed. */
  value: string;
}

/**
 * The writes `hopper migrate` makes on the Hopper side, each one named atomic operation
 * (importJobs.lua, settleChildren.lua). Implemented by the Redis backend; the SQLite backend is
 * not a migration target (docs/migrating.md).
 */
export interface ImportOperations {
  /**
   * Writes jobs with their ids in the states they had elsewhere (at most about 1,000 values per
   * call: the caller batches). A job whose id exists here is left as it is ('exists').
   */
  importJobs(jobs: ImportedJob[], now?: number): Promise<ImportOutcome[]>;
  /**
   * Records on parent `id` (here) what became of children that were outside this Hopper; an
   * entry whose child is no longer pending changes nothing. Returns how many changed the parent.
   */
  settleChildren(id: string, children: ExternalChildOutcome[], now?: number): Promise<number>;
}
