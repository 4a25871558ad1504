/**
 * The seam's operations for moving jobs in from another queue system (`hopper migrate`, from
 * BullMQ) and back out to it (`hopper migrate --to-bullmq`): the jobs as they are written or read
 * here, and the typed results. Plain data, no I/O.
 */
import type { ChildFailurePolicy } from './requests.js';
import type { JobRecord } from './records.js';

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
 * (importJobs.lua, settleChildren.lua, reserveJobIds.lua, importDedupKeys.lua). Implemented by the Redis backend; the SQLite backend is
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
  /**
   * Moves the queue's job id counter to at least `atLeast` (never back), so no later add takes an
   * automatic id at or below it; 0 only reads it. Returns the counter after the call.
   */
  reserveJobIds(atLeast: number): Promise<number>;
  /**
   * Writes deduplication ids held elsewhere with their ttl (at most 1,000 per call: the caller
   * batches), so an add with one of them is deduplicated here onto the job id it names until the
   * ttl ends. An id held here by another job keeps it; held by the same job, its ttl is lengthened
   * to the one given, never shortened.
   */
  importDedupKeys(keys: ImportedDedupKey[]): Promise<ImportedDedupOutcome>;
}

/** A deduplication id held elsewhere, for importDedupKeys. */
export interface ImportedDedupKey {
  /** The deduplication id. */
  id: string;
  /** The job id it points to (that job may have finished: the id is held until the ttl ends). */
  jobId: string;
  /** Ms the key has left (> 0). */
  ttlMs: number;
}

/** What one importDedupKeys call did. */
export interface ImportedDedupOutcome {
  /** Ids written. */
  written: number;
  /** Ids this job already held here whose ttl was lengthened. */
  lengthened: number;
  /** Ids another job holds here (left as they are). */
  keptHere: number;
}

/** Where the way back (`hopper migrate --to-bullmq`) takes jobs from: one structure of the queue. */
export interface ExportSource {
  /** What the jobs there are: a stalled job is an active one whose lock deadline passed. */
  state: 'waiting' | 'prioritized' | 'delayed' | 'failed' | 'completed' | 'waiting-children' | 'stalled';
  /** A group's queue of ready jobs (state 'waiting'; each job's priority tells). */
  group?: string;
}

/** What one exportTake call did. */
export interface ExportTake {
  /** Entries looked at (0: nothing left in the structure past the offset). */
  examined: number;
  /** Ids taken into the moving set, in run order. */
  taken: string[];
  /** Ids left where they are (a scheduler's pending run: its scheduler moves it). */
  skipped: string[];
}

/** A job in the way back's moving set, as read for writing to BullMQ. */
export interface ExportedJob {
  record: JobRecord;
  /** Where it was taken from, and its score there ('' for the waiting list). */
  from: ExportSource['state'] | 'scheduled';
  score: string;
  /** Its group (Hopper only), if any. */
  group?: string;
  /** Its run of turns (`continueWith`, Hopper only), if any. */
  runId?: string;
  /** The tenant its cost was charged to (budgets, Hopper only), if any. */
  budgetTenant?: string;
  /** Durable steps recorded (`job.step`, Hopper only). */
  steps: number;
  /** Its deduplication id and the ms its key has left (0: held until the job finishes), while it holds it. */
  dedup?: { id: string; ttlMs: number };
  /** The scheduler whose occurrence it is, if any. */
  schedulerId?: string;
  /** As a parent: children recorded (pending or finished). */
  children: number;
  /** The newest log lines (oldest first), and how many it has in all. */
  logs: string[];
  logCount: number;
}

/**
 * The reads and writes `hopper migrate --to-bullmq` makes on the Hopper side (exportTake.lua,
 * exportTakePending.lua, exportFinish.lua, exportGiveBack.lua): a job is taken into the queue's
 * moving set (out of every structure, its keys kept), written to BullMQ, then finished (deleted
 * here). A crash leaves it in the moving set; a re-run finishes it. Redis backend only.
 */
export interface ExportOperations {
  /** Takes up to `count` jobs of `source` past `offset` (run order) into the moving set. */
  exportTake(source: ExportSource, offset: number, count: number, now?: number): Promise<ExportTake>;
  /** Takes scheduler `schedulerId`'s pending run `id` if it still waits for its time; true if it is in the moving set. */
  exportTakePending(schedulerId: string, id: string): Promise<boolean>;
  /** The ids in the moving set, oldest first. */
  exportPending(): Promise<string[]>;
  /**
   * Reads jobs of the moving set (undefined: not in it any more, or gone), with the newest
   * `maxLogs` log lines; with `inPlace`, jobs wherever they are (a dry run's read).
   */
  exportRead(ids: string[], maxLogs: number, inPlace?: boolean): Promise<(ExportedJob | undefined)[]>;
  /** Deletes jobs of the moving set (written elsewhere); returns how many. */
  exportFinish(ids: string[], now?: number): Promise<number>;
  /** Puts jobs of the moving set back where they were taken from; returns how many. */
  exportGiveBack(ids: string[]): Promise<number>;
}
