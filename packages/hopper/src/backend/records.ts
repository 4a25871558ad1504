/**
 * Records the backend seam passes (jobs, events, outputs, runs, the server's facts, job
 * schedulers and groups) and the typed results of its writes (re-exported by backend.ts).
 */
import type { JobState } from '../job/states.js';
import type { WriteCode } from './requests.js';

/** A job as stored, for getJob and friends. Fields absent from storage are undefined. */
export interface JobRecord {
  id: string;
  name: string;
  data: string;
  opts: string | undefined;
  state: JobState | undefined;
  timestamp: number;
  attemptsMade: number;
  attemptsStarted: number;
  stalledCounter: number;
  priority: number;
  delay: number;
  progress: string | undefined;
  processedOn: number | undefined;
  /** The name of the worker that claimed it last (`pb`), if it had one. */
  processedBy?: string;
  finishedOn: number | undefined;
  returnvalue: string | undefined;
  failedReason: string | undefined;
  stacktrace: string | undefined;
  token: string | undefined;
  deduplicationId: string | undefined;
  /** For a dead letter: the queue and id of the job it records. */
  origin: { queue: string; jobId: string } | undefined;
  /** For a child: its parent's queue and id. */
  parent: { queue: string; id: string } | undefined;
  /** For a parent added in chunks: not all of its children exist yet (it is not sealed). */
  awaitingSeal: boolean;
}

/** One entry of the events stream. */
export interface StreamEvent {
  id: string;
  event: string;
  fields: Record<string, string>;
}

/**
 * A durable step's outcome to record (`job.step`): a success with its result as JSON text, or a
 * failure with its error message; how long the step ran (ms) and when it ended (ms).
 */
export type StepWrite =
  { ok: true; json: string; durationMs: number; at: number } | { ok: false; error: string; durationMs: number; at: number };

/** A durable step's outcome as stored: a success with its result, or a failure with its error message. */
export type StepRecord =
  { ok: true; result: unknown; durationMs: number; at: number } | { ok: false; error: string; durationMs: number; at: number };

/**
 * What continueJob did: its code; with 'done', `nextId`, the next turn's id (added now, or by an
 * earlier call whose step was recorded); with a refusal, `detail`: the run's cancel reason
 * ('refused-cancelled') or its cost ('over-budget'), else ''.
 */
export interface ContinueResult {
  code: WriteCode;
  nextId: string | undefined;
  detail: string;
}

/** A run of turns as stored (see `continueJob`). */
export interface RunRecord {
  lastTurn: string | undefined;
  cost: number;
  cancelReason: string | undefined;
}

/** Most job output streams one shared wait (`waitOutput`) takes: a lane of readers. */
export const OUTPUT_WAIT_MAX = 500;

/** One entry of a job's output stream (`job.stream`): a chunk (text or JSON) or the end of an attempt's output. */
export interface OutputEntry {
  /** The stream entry id (`<ms>-<seq>`): a reader resumes after it. */
  id: string;
  /** The attempt that wrote it (attemptsStarted of that attempt). */
  attempt: number;
  kind: 'text' | 'json' | 'end';
  /** The text, or the JSON text of a JSON chunk ('' for an end entry). */
  value: string;
}

/** What one shared wait on job outputs returned: new entries per job id, and the wake stream's last id. */
export interface OutputWait {
  entries: Map<string, OutputEntry[]>;
  wake: string;
}

/** What a read of the events stream returned. */
export interface EventsRead {
  events: StreamEvent[];
  /** true when entries after `from` were trimmed before they could be read. */
  gap: boolean;
}

/** Where a bounded management step (drain, clean) stopped: its next cursor (null when done) and the groups it visited. */
export interface BoundedStep {
  readonly cursor: string | null;
  readonly visitedGroups: number;
}

/** States `clean` works on. */
export type CleanableState = 'completed' | 'failed' | 'waiting' | 'prioritized' | 'delayed';

/** Counts of jobs per state. */
export type StateCounts = Record<JobState, number>;

/** Facts about the server, checked when a component starts. */
export interface ServerInfo {
  version: string;
  /** The eviction policy, when the server tells it. */
  maxmemoryPolicy: string | undefined;
  /** Which backend answered (absent: Redis). The Redis version checks apply to Redis only. */
  kind?: 'redis' | 'sqlite';
}

/** What `hopper doctor` reads of the server (undefined where the server does not tell). */
export interface ServerFacts {
  /** The server's version: Redis's `redis_version` (e.g. `7.2.4`), or `SQLite <version>` for a SQLite database. */
  version: string;
  /** The server's clock (ms): Hopper's one clock, against which job times are judged. */
  now: number;
  maxmemoryPolicy: string | undefined;
  /** Bytes; 0 means no limit. */
  maxmemory: number | undefined;
  usedMemory: number | undefined;
  /** Append-only file on. */
  aof: boolean | undefined;
  /** `appendfsync` (always, everysec, no). */
  appendfsync: string | undefined;
  /** RDB snapshots configured (`save` not empty). */
  rdb: boolean | undefined;
  evictedKeys: number | undefined;
  rejectedConnections: number | undefined;
  /** Recent slow-log entries: command name, duration in microseconds, when (epoch s). */
  slowlog: { command: string; micros: number; at: number }[];
}

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
  /**
   * A scheduler moved here from another system (`hopper migrate`): created with this last
   * instant and count of created occurrences, so its next occurrence is the one it had planned
   * there. With a seed, an existing scheduler is left as it is ('unchanged').
   */
  seed?: { last: number; created: number };
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

/**
 * A rate limit as the seam passes it: at most `max` jobs start in any `duration` ms; with
 * `weight: 'cost'`, at most `max` units of the jobs' `cost` option (a weighted limit).
 */
export interface LimiterSetting {
  max: number;
  duration: number;
  weight?: 'cost';
}

/** Settings of a group (its own, or the queue's defaults for every group); undefined: not set. */
export interface GroupSettingValues {
  /** At most this many of the group's jobs run at once. */
  concurrency: number | undefined;
  limiter: LimiterSetting | undefined;
  /** Adds beyond this many ready jobs in the group are refused. */
  maxSize: number | undefined;
  /** The group's share of the turns. */
  weight: number | undefined;
}

/** A change of group settings: a value sets the setting, `null` removes it, a field left out is unchanged. */
export interface GroupSettingsChange {
  concurrency?: number | null;
  limiter?: LimiterSetting | null;
  maxSize?: number | null;
  weight?: number | null;
}

/**
 * A queue's settings as stored (each backend reads its own storage: the Redis meta hash, the
 * SQLite queue row): what `queue.getMeta()` and the limit getters report.
 */
export interface QueueSettings {
  paused: boolean;
  /** The events stream cap, when recorded. */
  maxEvents: number | undefined;
  /** The data layout version the queue was written with (`'1'`), when recorded. */
  layoutVersion: string | undefined;
  /** At most this many of the queue's jobs run at once, across all workers. */
  globalConcurrency: number | undefined;
  /** The queue-wide rate limit. */
  rateLimit: LimiterSetting | undefined;
  /** The settings every group takes unless it has its own. */
  groupDefaults: GroupSettingValues;
}

/**
 * A change of a queue's settings (`configureQueue`): a value sets the setting, `null` removes it,
 * a field left out is unchanged; in `groupDefaults`, each default likewise.
 */
export interface QueueSettingsChange {
  globalConcurrency?: number | null;
  rateLimit?: LimiterSetting | null;
  groupDefaults?: GroupSettingsChange;
}

/** A group as stored: its status, counts and its own settings (queue defaults not applied). */
export interface GroupRecord extends GroupSettingValues {
  id: string;
  status: GroupStatus;
  /** Ready jobs without a priority. */
  waiting: number;
  /** Ready jobs with a priority. */
  prioritized: number;
  active: number;
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

/** What upsertScheduler did: created, replaced (its spec or template changed), or unchanged. */
export type SchedulerUpsertResult = 'created' | 'replaced' | 'unchanged';

/** What pauseScheduler did: changed, unchanged (it was already so), or missing (no such scheduler). */
export type SchedulerPauseResult = 'changed' | 'unchanged' | 'missing';

/**
 * What advanceScheduler did: advanced (`created` occurrences, 0 when there was nothing to do;
 * `again`: its pending occurrence, due at once, was dropped by its overlap policy, so it needs
 * advancing again now), missing (no such scheduler), or raced (its last instant was no longer
 * the expected one: another process advanced it first).
 */
export type AdvanceSchedulerResult = { kind: 'advanced'; created: number; again: boolean } | { kind: 'missing' } | { kind: 'raced' };

/**
 * What retryJobs or promoteJobs did: how many jobs moved and, when ids were given, whether each
 * one did (in the order given; empty for a batch by age).
 */
export interface MovedJobs {
  count: number;
  moved: boolean[];
}

/** Fails to compile when a switch over a union's `kind` misses a case. */
export function unexpectedKind(value: never): never {
  throw new Error(`Unexpected backend result ${JSON.stringify(value)}.`);
}
