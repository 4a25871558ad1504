/**
 * `hopper-queue-bull-board`: shows Hopper queues in Bull Board (`@bull-board/api` 9.10+), with its
 * views and actions (counts, job lists, job detail, retry, promote, remove, clean, pause,
 * schedulers). Bull Board's own `BullMQAdapter` refuses any queue that is not BullMQ's class;
 * this one speaks to Hopper's Queue API instead. Secure by default: read-only unless
 * `readOnlyMode: false`, every value redacted as Hopper's dashboard redacts it, no Redis server
 * facts unless `exposeServerInfo: true`; mount `bullBoardGuard()` in front for headers and CSRF.
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
  QueueJob,
  QueueJobOptions,
  QueueMetrics,
  QueueWorker,
  Status,
} from '@bull-board/api/dist/types.js';
import { Admin, JOB_STATES, type Job, type JobState, type Queue } from 'hopper-queue';
import { Redactor, defaultRedact, defaultRedactText, type Redact, type RedactText } from 'hopper-queue-dashboard/redaction';
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

/** Bull Board's statuses in the order its UI lists them. */
const STATUSES = ['latest', 'active', 'waiting', 'waiting-children', 'prioritized', 'completed', 'failed', 'delayed', 'paused'] as const;

/** Hopper's state for a Bull Board status ('paused' has no jobs of its own in Hopper: a paused queue keeps them waiting). */
function stateOf(status: string): JobState | undefined {
  if (status === 'wait') return 'waiting';
  return (JOB_STATES as readonly string[]).includes(status) ? (status as JobState) : undefined;
}

/** A Hopper Queue as a Bull Board queue. */
export class HopperAdapter extends BaseAdapter {
  private admin: Admin | undefined;
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

  /**
   * Redis's INFO text, through a connection of the adapter's own (opened on first use), when
   * `exposeServerInfo` is set; otherwise null, and Bull Board answers `/api/redis/stats` with a 404.
   */
  async getRedisInfo(): Promise<string | null> {
    if (!this.exposeServerInfo) return null;
    this.admin ??= new Admin({ connection: this.queue.opts.connection, prefix: this.queue.prefix });
    return this.admin.redisInfo();
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
    const counts = await this.queue.getJobCounts(...JOB_STATES);
    return { ...counts, paused: 0 };
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
    return STATUSES.filter<JobStatus>((s): s is JobStatus => s !== 'latest');
  }

  async getGlobalConcurrency(): Promise<number | null> {
    return this.queue.getGlobalConcurrency();
  }

  async setGlobalConcurrency(concurrency: number): Promise<void> {
    this.writable();
    await this.queue.setGlobalConcurrency(concurrency);
  }

  override async getWorkers(): Promise<QueueWorker[] | null> {
    const workers = await this.queue.getWorkers();
    return workers.map((w) => ({
      id: w.id,
      name: w.name ?? w.rawname,
      addr: w.hostname ?? '',
      age: w.startedAt ? Math.round((Date.now() - w.startedAt) / 1000) : 0,
    }));
  }

  async removeJobScheduler(id: string): Promise<boolean> {
    this.writable();
    return this.queue.removeJobScheduler(id);
  }

  async getJobSchedulers(): Promise<Omit<AppJobScheduler, 'queueName'>[]> {
    const states = await this.queue.getJobSchedulerStates(0, -1, true);
    return states.map((s) => ({
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
    }));
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

  /** Closes the adapter's own connection (the Queue stays open: it is yours). */
  async close(): Promise<void> {
    await this.admin?.close();
    this.admin = undefined;
  }
}
