/**
 * `hopper-queue-bull-board`: shows Hopper queues in Bull Board (`@bull-board/api` 9.10+), with its
 * views and actions (counts, job lists, job detail, retry, promote, remove, clean, pause,
 * schedulers). Bull Board's own `BullMQAdapter` refuses any queue that is not BullMQ's class;
 * this one speaks to Hopper's Queue API instead. Secure by default: read-only unless
 * `readOnlyMode: false`, every value redacted as Hopper's dashboard redacts it, no Redis server
 * facts unless `exposeServerInfo: true`; mount `bullBoardGuard()` in front for headers and CSRF.
 * The adapter holds no connection of its own between requests: Redis's INFO and the flow view
 * open one for the request and close it.
 *
 * Example: `createBullBoard({ queues: [new HopperAdapter(queue)], serverAdapter })`.
 */
import { BaseAdapter } from '@bull-board/api/dist/queueAdapters/base.js';
import type {
  AppJobScheduler,
  JobCleanStatus,
  JobCounts,
  JobSchedulerRepeatOptions,
  JobSchedulerUpdateResult,
  JobStatus,
  MetricsType,
  QueueAdapterOptions,
  QueueDefaultJobOptions,
  QueueJob,
  QueueJobOptions,
  QueueMetrics,
  QueueWorker,
  Status,
} from '@bull-board/api/dist/types.js';
import { Admin, JOB_STATES, type Job, type JobSchedulerState, type JobState, type Queue } from 'hopper-queue';
import { Redactor, defaultRedact, defaultRedactText, type Redact, type RedactText } from 'hopper-queue-dashboard/redaction';
import { flowReader, type FlowReader } from './flow.js';
import { RefusedError, holdsPlaceholder, jobView } from './job-view.js';

export { bullBoardGuard, BULL_BOARD_CSP, type BullBoardGuardOptions } from './guard.js';
export { RefusedError } from './job-view.js';

/**
 * Options of {@link HopperAdapter}: Bull Board's queue options, and Hopper's. `readOnlyMode`
 * defaults to **true** here (Bull Board's own adapters default to false): pass
 * `readOnlyMode: false` to allow retry, promote, clean, pause, add, edit, obliterate and the rest.
 */
export interface HopperAdapterOptions extends Partial<QueueAdapterOptions> {
  /** Redaction of structured values (default: the dashboard's `defaultRedact`). */
  redact?: Redact;
  /** Redaction of free text: failed reasons, stack traces, logs (default: the dashboard's `defaultRedactText`). */
  redactText?: RedactText;
  /** Serve Redis's server facts (version, OS, port, memory, clients) at Bull Board's `/api/redis/stats` (default false: a 404). */
  exposeServerInfo?: boolean;
}

/**
 * Bull Board's statuses in the order its UI lists them. No 'paused': a paused Hopper queue keeps
 * its jobs waiting (as BullMQ 6 does, for which Bull Board shows no paused tab either).
 */
const STATUSES = ['latest', 'active', 'waiting', 'waiting-children', 'prioritized', 'completed', 'failed', 'delayed'] as const;

/** Hopper's state for a Bull Board status (none for 'paused' or 'latest'). */
function stateOf(status: string): JobState | undefined {
  if (status === 'wait') return 'waiting';
  return (JOB_STATES as readonly string[]).includes(status) ? (status as JobState) : undefined;
}

/**
 * The ids scheduler `schedulerId`'s run for `instant` may have: `repeat:<schedulerId>:<instant>`
 * (BullMQ's form, which Hopper writes), or `sched:<schedulerId>:<instant>` (a pending run written by
 * an earlier Hopper; see docs/schedules.md).
 */
function schedulerRunIds(schedulerId: string, instant: number): [string, string] {
  return [`repeat:${schedulerId}:${instant}`, `sched:${schedulerId}:${instant}`];
}

/** A Hopper Queue as a Bull Board queue. */
export class HopperAdapter extends BaseAdapter {
  private readonly redactor: Redactor;
  private readonly exposeServerInfo: boolean;

  /**
   * @param queue the Hopper Queue to show (the adapter never closes it).
   * @param options Bull Board's queue options (`readOnlyMode` — true by default here —, `allowRetries`,
   *   `description`, `displayName`, ...) and Hopper's (`redact`, `redactText`, `exposeServerInfo`).
   */
  constructor(
    private readonly queue: Queue,
    options: HopperAdapterOptions = {},
  ) {
    const { redact, redactText, exposeServerInfo, ...bullBoard } = options;
    super('bullmq', { ...bullBoard, readOnlyMode: bullBoard.readOnlyMode !== false });
    this.redactor = new Redactor(redact ?? defaultRedact, redactText ?? defaultRedactText);
    this.exposeServerInfo = exposeServerInfo === true;
  }

  /** Bull Board's view of a Hopper job: redacted, and unchangeable while read-only. */
  private view(job: Job): QueueJob {
    return jobView(job, this.redactor, () => this.readOnlyMode) as unknown as QueueJob;
  }

  /** Refuses a change while the adapter is read-only (Bull Board checks first; this holds whatever calls the adapter). */
  private writable(): void {
    if (this.readOnlyMode)
      throw new RefusedError(
        `This Bull Board is read-only for queue "${this.queue.name}": create the HopperAdapter with { readOnlyMode: false } to allow changes.`,
        405,
      );
  }

  /** The queue's name in Bull Board: its `prefix` option (a display prefix, '' by default) and the queue's name. */
  getName(): string {
    return `${this.prefix}${this.queue.name}`;
  }

  /** The queue's name in Hopper (Bull Board's flow view finds a job's queue by it). */
  getQueueName(): string {
    return this.queue.name;
  }

  /** `<prefix>:<name>`, what a child job's `opts.parent.queue` names (Bull Board's flow view matches it). */
  getQueueQualifiedName(): string {
    return this.queue.qualifiedName;
  }

  /** The queue's key prefix in Hopper (`hopper` by default). */
  getQueuePrefix(): string {
    return this.queue.prefix;
  }

  /**
   * What Bull Board's flow view reads a job's flow with: a reader that opens a FlowProducer on
   * the queue's connection for each request and closes it (see flow.ts), values redacted.
   */
  getFlowProducer(): Promise<FlowReader> {
    return Promise.resolve(flowReader({ connection: this.queue.opts.connection, prefix: this.queue.prefix, redactor: this.redactor }));
  }

  /** The queue's `defaultJobOptions` (redacted), shown by Bull Board's "add job" form. */
  override getQueueDefaultJobOptions(): QueueDefaultJobOptions {
    return (this.redactor.value(this.queue.opts.defaultJobOptions ?? {}) ?? {}) as QueueDefaultJobOptions;
  }

  /**
   * Redis's INFO text when `exposeServerInfo` is set, read through a connection opened for the
   * request and closed; otherwise null, and Bull Board answers `/api/redis/stats` with a 404.
   */
  async getRedisInfo(): Promise<string | null> {
    if (!this.exposeServerInfo) return null;
    const admin = new Admin({ connection: this.queue.opts.connection, prefix: this.queue.prefix });
    try {
      return await admin.redisInfo();
    } finally {
      await admin.close();
    }
  }

  async getJob(id: string): Promise<QueueJob | undefined> {
    const job = await this.queue.getJob(id);
    return job ? this.view(job) : undefined;
  }

  async getJobs(jobStatuses: JobStatus[], start?: number, end?: number): Promise<QueueJob[]> {
    const states = jobStatuses.map(stateOf).filter((s): s is JobState => s !== undefined);
    if (states.length === 0) return [];
    const jobs = await this.queue.getJobs(states, start ?? 0, end ?? -1);
    return jobs.map((job) => this.view(job));
  }

  async getJobCounts(): Promise<JobCounts> {
    return this.queue.getJobCounts(...JOB_STATES);
  }

  async getJobLogs(id: string): Promise<string[]> {
    return (await this.queue.getJobLogs(id)).logs.map((line) => this.redactor.text(line, 'log'));
  }

  async getMetrics(type: MetricsType, start?: number, end?: number): Promise<QueueMetrics> {
    return await this.queue.getMetrics(type, start, end);
  }

  isPaused(): Promise<boolean> {
    return this.queue.isPaused();
  }

  async pause(): Promise<void> {
    this.writable();
    return this.queue.pause();
  }

  async resume(): Promise<void> {
    this.writable();
    return this.queue.resume();
  }

  /** Bull Board's "empty": every job that has not started (waiting, prioritized, delayed). */
  async empty(): Promise<void> {
    this.writable();
    return this.queue.drain(true);
  }

  async obliterate(opts?: { force?: boolean }): Promise<void> {
    this.writable();
    return this.queue.obliterate({ force: opts?.force ?? false });
  }

  async promoteAll(): Promise<void> {
    this.writable();
    return this.queue.promoteJobs();
  }

  /** Adds a job (refused when its data holds a redaction placeholder: a copy of a redacted job would lose its secrets). */
  async addJob(name: string, data: unknown, options: QueueJobOptions): Promise<QueueJob> {
    this.writable();
    if (holdsPlaceholder(data))
      throw new RefusedError(
        'The job data holds a redaction placeholder ("[redacted]"): a copy of a redacted job would run without its hidden values. Add it from your code instead.',
        400,
      );
    return this.view(await this.queue.add(name, data, options));
  }

  /** Removes the jobs of a state older than `graceTimeMs`, 1,000 per call until none is left. */
  async clean(queueStatus: JobCleanStatus, graceTimeMs: number): Promise<void> {
    this.writable();
    const state = queueStatus === 'wait' ? 'waiting' : queueStatus;
    while ((await this.queue.clean(graceTimeMs, 1000, state)).length === 1000) {
      // bounded batches until nothing older is left
    }
  }

  getStatuses(): Status[] {
    return [...STATUSES] as Status[];
  }

  getJobStatuses(): JobStatus[] {
    return STATUSES.filter((s) => s !== 'latest');
  }

  async getGlobalConcurrency(): Promise<number | null> {
    return this.queue.getGlobalConcurrency();
  }

  /** Sets the queue's global concurrency; 0 (Bull Board's "no limit") removes it. */
  async setGlobalConcurrency(concurrency: number): Promise<void> {
    this.writable();
    if (concurrency <= 0) await this.queue.removeGlobalConcurrency();
    else await this.queue.setGlobalConcurrency(concurrency);
  }

  /**
   * The queue's live workers, from Hopper's worker records (not Redis's CLIENT LIST): `id` is
   * the Redis client id of the worker's connection, as BullMQ shows it (Hopper's own worker id
   * where there is none: SQLite, Redis Cluster), `name` the Worker's `name` option (null when it
   * has none), `addr` its host name and process id (`host:pid`), `age` seconds since it started.
   */
  override async getWorkers(): Promise<QueueWorker[] | null> {
    const workers = await this.queue.getWorkers();
    return workers.map((w) => ({
      id: w.clientId ?? w.id,
      name: w.name ?? null,
      addr: w.pid === undefined ? (w.hostname ?? '') : `${w.hostname ?? ''}:${w.pid}`,
      age: w.startedAt ? Math.max(0, Math.round((Date.now() - w.startedAt) / 1000)) : 0,
    }));
  }

  /**
   * The scheduler whose pending run `job` is (Bull Board then refuses to remove the job alone,
   * naming the scheduler: removing it would stop the schedule), or null. Past runs of a scheduler
   * carry its id too (`repeatJobKey`) but are ordinary jobs.
   */
  override async getArmedJobSchedulerId(job: QueueJob): Promise<string | null> {
    const { id, repeatJobKey } = job as { id?: string; repeatJobKey?: string };
    if (!id || !repeatJobKey) return null;
    const state = await this.queue.getJobSchedulerState(repeatJobKey);
    return state?.next !== undefined && schedulerRunIds(repeatJobKey, state.next).includes(id) ? repeatJobKey : null;
  }

  async removeJobScheduler(id: string): Promise<boolean> {
    this.writable();
    return this.queue.removeJobScheduler(id);
  }

  async getJobSchedulers(): Promise<Omit<AppJobScheduler, 'queueName'>[]> {
    const states = await this.queue.getJobSchedulerStates(0, -1, true);
    return Promise.all(
      states.map(async (s) => ({
        id: s.key,
        name: s.name,
        ...(s.pattern !== undefined ? { pattern: s.pattern } : {}),
        ...(s.every !== undefined ? { every: s.every } : {}),
        ...(s.tz ? { tz: s.tz } : {}),
        ...(s.limit !== undefined ? { limit: s.limit } : {}),
        ...(s.startDate !== undefined ? { startDate: s.startDate } : {}),
        ...(s.endDate !== undefined ? { endDate: s.endDate } : {}),
        ...(s.next !== undefined ? { next: s.next } : {}),
        iterationCount: s.created,
        template: { data: this.redactor.value(s.template?.data), opts: this.redactor.value(s.template?.opts) as Record<string, unknown> },
        ...(await this.schedulerRuns(s)),
      })),
    );
  }

  /**
   * What Bull Board shows of a scheduler's runs: the pending run (`nextRunJobId`, the job waiting
   * for `next`); once the schedule has run (more than one run created), when the previous run
   * started (`lastRun`: a worker plans the pending run as it takes the previous one, so the
   * pending run's creation time) and, for an interval schedule, the previous run's id while that
   * job is kept (`lastRunJobId`: runs are `every` ms apart). A cron schedule's previous run is not
   * named (it would take walking the pattern backwards).
   */
  private async schedulerRuns(s: JobSchedulerState): Promise<{ nextRunJobId?: string; lastRun?: number; lastRunJobId?: string }> {
    if (s.next === undefined) return {};
    const pending = await this.runOf(s.key, s.next);
    if (!pending?.id) return {};
    if (s.created <= 1) return { nextRunJobId: pending.id };
    const previous = s.every ? await this.runOf(s.key, s.next - s.every) : undefined;
    return { nextRunJobId: pending.id, lastRun: pending.timestamp, ...(previous?.id ? { lastRunJobId: previous.id } : {}) };
  }

  /** Scheduler `schedulerId`'s run for `instant`, under either form of its id. */
  private async runOf(schedulerId: string, instant: number): Promise<Job | undefined> {
    for (const id of schedulerRunIds(schedulerId, instant)) {
      const job = await this.queue.getJob(id);
      if (job) return job;
    }
    return undefined;
  }

  getJobSchedulersCount(): Promise<number> {
    return this.queue.getJobSchedulersCount();
  }

  override get supportsJobSchedulerUpdate(): boolean {
    return true;
  }

  async updateJobScheduler(id: string, repeat: JobSchedulerRepeatOptions): Promise<JobSchedulerUpdateResult> {
    this.writable();
    const current = await this.queue.getJobSchedulerState(id);
    if (!current) return 'not-found';
    try {
      await this.queue.upsertJobScheduler(id, repeat, current.template);
      return 'updated';
    } catch {
      return 'invalid-schedule';
    }
  }

  override get supportsJobSchedulerRun(): boolean {
    return true;
  }

  async runJobSchedulerNow(id: string): Promise<QueueJob | 'not-found'> {
    this.writable();
    if (!(await this.queue.getJobSchedulerState(id))) return 'not-found';
    const job = await this.queue.triggerJobScheduler(id);
    return job ? this.view(job) : 'not-found';
  }

  /**
   * Nothing to close: the adapter holds no connection between requests (the Queue is yours to
   * close). Kept so that code written for earlier versions, which held one, still runs.
   */
  async close(): Promise<void> {
    // no connection is held
  }
}
