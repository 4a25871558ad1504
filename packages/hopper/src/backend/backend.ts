/**
 * The backend seam. Every write Hopper makes is one named, atomic operation here (one Lua
 * script in the Redis backend); reads go through the query methods beside them. Core code
 * (api/, runtime/, job/, maintenance/) talks to storage only through these interfaces, so a
 * second backend can implement them and run the same behaviour suite.
 *
 * Times: every operation takes an optional `now` (ms). Production passes none and the backend
 * uses its own clock (Redis TIME); tests pass a fake clock's time. Operations return the `now`
 * they used, so callers compute durations from it instead of comparing their own clock with
 * stored times.
 */

export type {
  JobRecord,
  StreamEvent,
  RunRecord,
  StepWrite,
  StepRecord,
  ContinueResult,
  OutputEntry,
  OutputWait,
  EventsRead,
  BoundedStep,
  CleanableState,
  StateCounts,
  ServerInfo,
  ServerFacts,
  GroupRecord,
  GroupStatus,
  GroupSettingValues,
  GroupSettingsChange,
  LimiterSetting,
  QueueSettings,
  QueueSettingsChange,
  OccurrencePlan,
  SchedulerRecord,
  SchedulerWrite,
  RemoveJobResult,
  CancelJobResult,
  ReplayDeadLetterResult,
  SealParentResult,
  WaitChildrenResult,
  RefusedMoveCode,
  ChildDependencyResult,
  SchedulerUpsertResult,
  SchedulerPauseResult,
  AdvanceSchedulerResult,
  MovedJobs,
} from './records.js';
export { OUTPUT_WAIT_MAX, unexpectedKind } from './records.js';
import type {
  RunRecord,
  StepWrite,
  StepRecord,
  ContinueResult,
  OutputEntry,
  OutputWait,
  EventsRead,
  BoundedStep,
  CleanableState,
  ServerInfo,
  GroupSettingsChange,
  QueueSettingsChange,
  OccurrencePlan,
  SchedulerWrite,
  RemoveJobResult,
  CancelJobResult,
  ReplayDeadLetterResult,
  SealParentResult,
  WaitChildrenResult,
  ChildDependencyResult,
  SchedulerUpsertResult,
  SchedulerPauseResult,
  AdvanceSchedulerResult,
  MovedJobs,
} from './records.js';

export type {
  ImportedJob,
  ImportedState,
  ImportOutcome,
  ImportedDedupKey,
  ImportedDedupOutcome,
  ExternalChildOutcome,
  ImportOperations,
  ExportOperations,
  ExportSource,
  ExportTake,
  ExportedJob,
} from './import-records.js';
import type { ExportOperations, ImportOperations } from './import-records.js';
import type { BackendReads } from './backend-reads.js';
export type { BackendReads } from './backend-reads.js';
export { WriteCode, writeApplied } from './requests.js';
export type {
  NewJob,
  ChildFailurePolicy,
  FlowNodeWrite,
  FlowOutcome,
  AddFlowResult,
  Dependencies,
  AddRequest,
  AddCharge,
  AddOutcome,
  AddResult,
  ClaimedJob,
  ClaimRequest,
  ClaimResult,
  WakeClaim,
  Fence,
  Retention,
  Completion,
  Failure,
  AckResult,
  LogWriteResult,
  RescueOptions,
  RescueResult,
} from './requests.js';
import type {
  WriteCode,
  NewJob,
  FlowNodeWrite,
  AddFlowResult,
  AddRequest,
  AddCharge,
  AddResult,
  ClaimRequest,
  ClaimResult,
  WakeClaim,
  Fence,
  Retention,
  Completion,
  Failure,
  AckResult,
  LogWriteResult,
  RescueOptions,
  RescueResult,
} from './requests.js';

/**
 * One queue's storage: every write as a named operation, and the reads beside them.
 * Obtained from {@link createBackend} (backend/create.ts). The migration writes
 * ({@link ImportOperations}) and reads ({@link ExportOperations}) are optional: a backend that
 * is no migration source or target leaves them out.
 */
export interface QueueBackend extends BackendReads, Partial<ImportOperations>, Partial<ExportOperations> {
  readonly queueName: string;

  /**
   * Checks the server and returns facts about it (version, eviction policy). Fails with a typed
   * error (ConnectionError, ConnectionTimeoutError, ...) when the backend cannot serve now.
   */
  connect(): Promise<ServerInfo>;
  /**
   * How long a start (connect, then the component's set-up) may take before the caller is told it
   * did not answer, ms: Redis's `connectTimeout` (default 10 s); SQLite's lock wait and more.
   */
  readonly startTimeoutMs: number;
  /**
   * The typed error calls get at once while the backend is known to be unreachable (Redis: no
   * ready connection for `connectTimeout`; SQLite: the database file was lost), else undefined.
   */
  unavailable(): Error | undefined;
  /** The error of a start (or a call) that waited `ms` without an answer: the backend's own when known. */
  timeoutError(what: string, ms: number): Error;
  /**
   * Records queue-level settings (the events cap; with `childFailure`, what a child's failure
   * does to this queue's parents when the child sets no policy) and returns the queue's epoch
   * (set once, by the first caller).
   */
  initQueue(settings: { maxEvents: number; epoch: string; childFailure?: 'fail' | 'wait' }): Promise<{ epoch: string; created: boolean }>;
  /** A backend for queue `name` under the same prefix, on this backend's connection (closing it leaves the connection open). */
  sibling(name: string): QueueBackend;
  /** Reads the queue's epoch ('' when its meta is gone). */
  getEpoch(): Promise<string>;
  /**
   * The Redis client of the command connection (an ioredis `Redis` or `Cluster`), for BullMQ's
   * `client` and `waitUntilReady()`; undefined on a backend that has none (SQLite).
   */
  redisClient(): unknown;
  /** Closes connections the backend owns; borrowed ones are left open. */
  close(): Promise<void>;
  /** Forcibly drops the connections (pending commands reject); for close timeouts. */
  disconnect(): void;

  // writes
  /**
   * Adds jobs atomically. `charge`: the tenant budget to charge and check, and whether a refused
   * job (budget, or cost above the queue's weighted rate limit) refuses the call (throws) or only
   * itself (`refused` in the result).
   */
  addJobs(jobs: NewJob[], request: AddRequest | undefined, now?: number, charge?: AddCharge): Promise<AddResult>;
  claim(request: ClaimRequest, now?: number): Promise<ClaimResult>;
  complete(batch: Completion[], next: ClaimRequest, now?: number): Promise<AckResult>;
  fail(batch: Failure[], next: ClaimRequest, now?: number): Promise<AckResult>;
  /**
   * Renews locks and the worker's heartbeat (`worker` given: its id, description and heartbeat ttl).
   * A lock is renewed only for the attempt that holds it (token and attempt number); `lost` lists
   * the tokens of the attempts that no longer do.
   */
  extendLocks(
    locks: ({ id: string } & Fence)[],
    lockMs: number,
    worker: { id: string; info: string; ttlMs: number } | undefined,
    now?: number,
  ): Promise<{ now: number; epoch: string; lost: string[]; cancelled: string[] }>;
  unregisterWorker(workerId: string): Promise<void>;
  /** One bounded step of the stall rescue (at most 500 jobs): see rescueStalled.lua. */
  rescueStalled(options: RescueOptions, now?: number): Promise<RescueResult>;
  /**
   * After a reconnect: puts back the jobs held under `workerId` by attempts not in `known`
   * (flattened job id, token pairs: claims whose reply was lost); cancelled ones end failed as
   * cancelled. Returns how many. `voidWaitClaimsUpTo`: the worker's wait claims (ClaimRequest
   * `voidable`) numbered up to it are void from the first step on, so one that still runs
   * after the walk (its connection not yet closed in Redis) takes nothing.
   */
  releaseOrphans(workerId: string, known: string[], failKeep: Retention, now?: number, voidWaitClaimsUpTo?: number): Promise<number>;
  /**
   * A closing worker gives back held jobs at once (fenced): each goes back to the head of the
   * ready jobs, a cancelled one ends failed as cancelled. One code per job (see releaseJobs.lua).
   */
  releaseJobs(jobs: ({ id: string; started: boolean } & Fence)[], failKeep: Retention, now?: number): Promise<WriteCode[]>;
  pause(): Promise<boolean>;
  resume(): Promise<boolean>;
  /**
   * Removes a job that is not active, with its flow descendants when `withChildren` (read and
   * checked first: nothing is removed if one is active, is a job scheduler's pending run, or the
   * tree is too large). See {@link RemoveJobResult}.
   */
  removeJob(id: string, now?: number, withChildren?: boolean): Promise<RemoveJobResult>;
  /** Adds trees of jobs across queues atomically (this backend's queue routes the call). */
  addFlow(nodes: FlowNodeWrite[], request: AddRequest | undefined, now?: number): Promise<AddFlowResult>;
  /** Lets an unsealed parent move on once its children are done. */
  sealParent(id: string, now?: number): Promise<SealParentResult>;
  /** The holder moves an active parent to waiting-children while children are pending (see moveToWaitingChildren.lua). */
  moveToWaitingChildren(id: string, fence: Fence, now?: number): Promise<WaitChildrenResult>;
  /** Takes up to `count` children of a cancelled parent still to cancel (public keys). */
  takeChildrenToCancel(id: string, count: number): Promise<string[]>;
  /**
   * One bounded step of drain: removes up to `limit` not-started jobs (delayed too if asked, but not
   * schedulers' pending runs), then
   * grouped ready jobs, walking at most a few hundred groups from `cursor` ('' starts). Returns how
   * many it removed, how many groups it visited, and the next cursor (null when done).
   */
  drain(includeDelayed: boolean, limit: number, cursor: string): Promise<BoundedStep & { removed: number }>;
  /**
   * One bounded step of clean: removes old jobs in `state` ('' starts the cursor); returns the removed
   * ids, the groups visited, and the next cursor (null when done).
   */
  clean(state: CleanableState, graceMs: number, limit: number, cursor: string, now?: number): Promise<BoundedStep & { ids: string[] }>;
  /** One bounded step of obliterate; cursor '0' starts. Returns the next cursor ('0' when done) or 'active' if active jobs block it. */
  obliterate(force: boolean, count: number, cursor: string): Promise<{ cursor: string; deleted: number } | 'active'>;
  /** Moves finished jobs back to ready: a batch by age, or the given ids (then whether each moved). */
  retryJobs(
    state: 'failed' | 'completed',
    options: { count: number; timestamp: number; ids?: string[]; resetAttemptsMade?: boolean; resetAttemptsStarted?: boolean },
  ): Promise<MovedJobs>;
  /** Makes delayed jobs ready now: a batch, or the given ids (then whether each moved). */
  promoteJobs(options: { count: number; ids?: string[] }): Promise<MovedJobs>;
  changeDelay(id: string, delay: number, now?: number): Promise<WriteCode>;
  changePriority(id: string, priority: number, lifo: boolean): Promise<WriteCode>;
  /** The holder moves an active job to delayed until `timestamp` (no attempt spent). */
  moveToDelayed(id: string, fence: Fence, timestamp: number, now?: number): Promise<WriteCode>;
  /** The holder puts an active job back at the head of the ready jobs (no attempt spent). */
  moveToWait(id: string, fence: Fence): Promise<WriteCode>;
  /** Stops claims on the whole queue for `ms`; with 0, lifts the manual limit and clears the rate-limit window (returns keys removed). */
  rateLimit(ms: number): Promise<number>;
  /**
   * How long until claims may resume, ms (BullMQ's readings): the manual limit, or a full
   * queue-wide window (0 when not full); -2 with neither a manual limit nor a queue-wide limit.
   * With `maxJobs`: the manual limit, else the window's time left once it holds `maxJobs` starts, else 0.
   */
  getRateLimitTtl(maxJobs?: number): Promise<number>;
  /**
   * Changes one group (see configureGroup.lua): 'set' applies `settings` (a value sets, `null`
   * removes, a field left out is unchanged; a group parked at a limit is judged again at the next
   * claim), 'pause', 'resume'. Returns whether it changed anything: 'pause'/'resume' of a group
   * already so return false; 'set' returns true. Each backend maps the settings to its own storage.
   */
  configureGroup(group: string, op: 'set' | 'pause' | 'resume', settings?: GroupSettingsChange): Promise<boolean>;
  /**
   * Changes the queue-wide limits and the group defaults (a value sets, `null` removes, a field
   * left out is unchanged; see configureQueue.lua) and wakes idle workers.
   */
  configureQueue(change: QueueSettingsChange): Promise<void>;
  trimEvents(maxLength: number): Promise<number>;
  /** Deletes a deduplication key (with `jobId`: only while it points to that job); whether it deleted one. */
  removeDeduplicationKey(id: string, jobId?: string): Promise<boolean>;
  /** Lets a pending child's parent go of it. */
  removeChildDependency(id: string, now?: number): Promise<ChildDependencyResult>;
  /** Deletes a job's log lines, or all but the newest `keep` (0: all); returns how many are left. */
  clearLogs(id: string, keep: number): Promise<number>;
  /**
   * Deletes orphaned jobs (a hash in no state structure): scans `scanCount` keys per SCAN step,
   * stops after `limit` removals (0: no limit). Returns how many were removed.
   */
  removeOrphanedJobs(scanCount: number, limit: number, now?: number): Promise<number>;
  /** Cancels a job (see {@link CancelJobResult}). */
  cancelJob(id: string, reason: string, failKeep: Retention, now?: number): Promise<CancelJobResult>;
  /** Replays dead letters of this (dead-letter) queue: one result per id (see replayDeadLetters.lua). */
  replayDeadLetters(ids: string[], now?: number): Promise<ReplayDeadLetterResult[]>;
  /** Calls `listener` with the id of each job of this queue cancelled while active (pub/sub). */
  onCancel(listener: (jobId: string) => void): Promise<void>;
  /** Whether the backend runs on a Redis Cluster (cross-queue atomic steps need one hash tag). */
  readonly isCluster: boolean;
  /** Whether queue `other` shares this queue's Redis Cluster slot. */
  sharesSlotWith(other: string): boolean;
  /** Creates or updates a scheduler (see {@link SchedulerUpsertResult}). */
  upsertScheduler(scheduler: SchedulerWrite, now?: number): Promise<SchedulerUpsertResult>;
  /** Creates a scheduler's next occurrences if its last instant is still `expectedLast` (see {@link AdvanceSchedulerResult}). */
  advanceScheduler(
    id: string,
    expectedLast: string,
    occurrences: OccurrencePlan[],
    after: number | null,
    missed: number,
    now?: number,
  ): Promise<AdvanceSchedulerResult>;
  removeScheduler(id: string): Promise<boolean>;
  /** Pauses or resumes a scheduler (see {@link SchedulerPauseResult}). */
  pauseScheduler(id: string, paused: boolean, now?: number): Promise<SchedulerPauseResult>;
  /**
   * Runs occurrences now, outside the schedule (trigger: one at now; else the given past instants).
   * Returns created ids, or undefined if no such scheduler. A numbered `request` re-sent after a
   * lost reply returns the first call's ids instead of running again.
   */
  runScheduled(
    id: string,
    trigger: boolean,
    instants: number[],
    request: AddRequest | undefined,
    now?: number,
  ): Promise<string[] | undefined>;
  updateProgress(id: string, progress: string, fence: Fence | undefined): Promise<WriteCode>;
  updateData(id: string, data: string, fence: Fence | undefined): Promise<WriteCode>;
  /**
   * Stores a durable step's outcome (fenced); returns the code and the outcome now stored (a stored
   * success wins; undefined when the write was refused).
   */
  recordStep(
    id: string,
    key: string,
    step: StepWrite,
    fence: Fence | undefined,
  ): Promise<{ code: WriteCode; stored: StepRecord | undefined }>;
  /** Adds the next turn of a loop and records it as the current job's step (fenced); see {@link ContinueResult}. */
  continueJob(
    id: string,
    fence: Fence | undefined,
    stepKey: string,
    next: NewJob,
    now: number | undefined,
    run: { id: string; maxCost?: number },
  ): Promise<ContinueResult>;
  /**
   * Records what a job cost (replacing its earlier report) and adds the difference to its run's
   * cost when it is a turn of a run (`runId`: the run it would belong to). Returns the run's cost
   * then (undefined when the job is in no run).
   */
  reportCost(id: string, runId: string, cost: number, fence: Fence | undefined): Promise<{ code: WriteCode; runCost: number | undefined }>;
  /**
   * A tenant's use of the queue's budget: the sum of the costs charged in the last `windowMs`
   * (docs/budgets.md). Reads only.
   */
  getBudgetUse(tenant: string, windowMs: number, now?: number): Promise<number>;
  /** Marks a run cancelled (no turn is added any more); returns its latest turn's id, if it continued. */
  cancelRun(runId: string, reason: string): Promise<string | undefined>;
  /** A run's record: its latest turn, cost so far, and cancel reason; undefined when it has none. */
  getRun(runId: string): Promise<RunRecord | undefined>;
  /**
   * The run job `id` is a turn of, as its record says (set on the turns `continueJob` adds);
   * undefined for a job added otherwise (a run's first turn), or a missing job.
   */
  runOf(id: string): Promise<string | undefined>;
  /**
   * Appends a log line (fenced when `fence` is given). Applied once even when ioredis re-sends
   * the call after a lost reply: each call is numbered per backend (`request` overrides the
   * numbering; tests use it to replay a call). Returns the write's code and the lines the log holds.
   */
  addLog(
    id: string,
    line: string,
    fence: Fence | undefined,
    keep: number,
    request?: { client: string; seq: number },
  ): Promise<LogWriteResult>;
  /**
   * Appends chunks to a job's output stream, fenced to the attempt, then its end entry when
   * `ended`. `seq` numbers the writer's calls within the attempt (a re-sent call is applied once);
   * the stream keeps about `maxLen` entries. At most 200 chunks per call.
   */
  appendOutput(
    id: string,
    chunks: { json: boolean; value: string }[],
    ended: boolean,
    fence: Fence,
    seq: number,
    maxLen: number,
  ): Promise<WriteCode>;
  /** Up to `count` entries of a job's output after entry `after` ('0-0': from the start). */
  readOutput(id: string, after: string, count: number): Promise<OutputEntry[]>;
  /** The last entry of a job's output, if it has any. */
  lastOutput(id: string): Promise<OutputEntry | undefined>;
  /**
   * Waits up to `blockMs` for entries after each `(id, after)` of `reads` (at most
   * OUTPUT_WAIT_MAX), on the blocking connection of `lane` (0, 1, ...: one per slice of
   * OUTPUT_WAIT_MAX streams) shared by every reader of this backend; returns early when woken by
   * {@link wakeOutputWaits} (`wakeAfter`: the wake stream's last id seen, '' to start from now).
   */
  waitOutput(lane: number, reads: { id: string; after: string }[], wakeAfter: string, blockMs: number, count: number): Promise<OutputWait>;
  /** Wakes the blocked output waits of every process reading this queue's outputs (a reader joined). */
  wakeOutputWaits(): Promise<void>;

  // blocking waits (on a connection of their own)
  /** Blocks until a producer signals work or `timeoutMs` passes; true when signalled. */
  waitForWork(timeoutMs: number): Promise<boolean>;
  /**
   * Optional: waits as waitForWork does, with the claim `request` sent right behind the wait on
   * the same connection, so the claim runs the moment the wait ends (woken or timed out) instead
   * of one round trip later. Claims with the backend's clock (no `now`). interruptWait ends it.
   */
  waitThenClaim?(timeoutMs: number, request: ClaimRequest): Promise<WakeClaim>;
  /**
   * With waitThenClaim: signals work as a producer does, which ends the wait of the queue's
   * longest-waiting worker (this one's pending waitThenClaim, or another's) so its claim runs now.
   * A worker whose pending claim holds its free slots calls it when a delayed job falls due.
   */
  wakeWaiters?(): Promise<void>;
  /** Interrupts a pending waitForWork or waitThenClaim (used on close and pause). */
  interruptWait(): void;
  /**
   * Starts opening the connection waitForWork blocks on, if it is not open (a worker does while
   * starting, so its first idle wait begins at once instead of after a connect).
   */
  openWaitConnection(): void;
  /**
   * Reads events after stream id `from`, blocking up to `blockMs` (-1: do not block).
   * With `checkGap`, also tells whether entries after `from` were trimmed unread.
   */
  readEvents(from: string, blockMs: number, count: number, checkGap: boolean): Promise<EventsRead>;
  /** The id of the newest event ('0-0' when there is none). */
  lastEventId(): Promise<string>;

  // test and audit support
  /** Checks that every job is in exactly one state structure, agreeing with its stored state; returns the violations. */
  checkInvariants(): Promise<string[]>;
  /** Subscribes to connection events of the command connection (reconnects). */
  onReconnect(listener: () => void): void;
}

export type {
  MetricsType,
  MetricsBucket,
  LatencyKind,
  LatencyEntry,
  LastRunOutcome,
  SchedulerLastRun,
  ExactMetricsRecord,
  MetricsRecord,
} from './metrics-records.js';

export type { BackendAdmin } from './backend-admin.js';
