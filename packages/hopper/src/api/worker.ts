/**
 * Worker: takes jobs from a queue and runs a processor on them, with BullMQ's API: concurrency,
 * retries with backoff, locks renewed in one call per interval, stalled-job rescue, batched
 * acknowledgements that claim the next jobs in the same round trip, and a graceful close.
 *
 * @example
 * const worker = new Worker('mail', async (job, token, signal) => {
 *   await sendMail(job.data, { signal });
 *   return { sent: true };
 * }, { connection, concurrency: 10 });
 * worker.on('failed', (job, err) => console.error(job?.id, err.message));
 */
import { randomBytes } from 'node:crypto';
import { sleep } from '../clock/timers.js';
import type { LastRunOutcome, Retention } from '../backend/backend.js';
import { InvalidOptionsError, RateLimitError } from '../job/errors.js';
import type { StrategyFn } from '../job/failure.js';
import { Job, type JobProgress } from '../job/job.js';
import { advanceTaken, takenOccurrence, type SchedulerTick } from '../maintenance/scheduler-tick.js';
import type { StallRescuer } from '../maintenance/stall-rescuer.js';
import type { Dispatcher } from '../runtime/dispatcher.js';
import { HeldAhead } from '../runtime/held-ahead.js';
import { JobStarter } from '../runtime/job-starter.js';
import type { Executor } from '../runtime/executor.js';
import type { LockRenewer } from '../runtime/lock-renewer.js';
import type { ManualFetcher } from '../runtime/manual-fetcher.js';
import type { SandboxedProcessor } from '../runtime/sandboxed-processor.js';
import { RELEASE_GRACE_MS, type Shutdown } from '../runtime/shutdown.js';
import { buildWorkerParts } from '../runtime/worker-parts.js';
import { overweightError, startLimitError, type Processor, type WorkerOptions } from './worker-options.js';
import { QueueBase } from './queue-base.js';
import { checkWorkerOption, validatePrefetch, validateProcessor } from '../validation/component-options.js';
import type { MetricsRecorder } from '../telemetry/metrics-recorder.js';
import type { LatencyRecorder } from '../telemetry/latency-recorder.js';
import type { Telemetry } from '../telemetry/telemetry.js';

export type { AdvancedSettings, Processor, WorkerOptions } from './worker-options.js';

/** The period of a running worker's keep-alive handle (it does nothing: it only holds the event loop open). */
const KEEP_ALIVE_INTERVAL_MS = 2 ** 30;

/** A worker-level cancel reason is what `AbortController.abort` is given: a string, an Error, or none. */
function checkCancelReason(reason: unknown): void {
  if (reason !== undefined && typeof reason !== 'string' && !(reason instanceof Error)) {
    throw new InvalidOptionsError(`A cancel reason is a string or an Error, got ${typeof reason}.`);
  }
}

// `any` defaults keep BullMQ's generic signature.
/* eslint-disable @typescript-eslint/no-explicit-any */
export class Worker<DataType = any, ResultType = any, NameType extends string = string> extends QueueBase {
  /* eslint-enable @typescript-eslint/no-explicit-any */
  /** This worker's id; its lock tokens are `id:n:i`. */
  readonly id = randomBytes(6).toString('base64url');
  override readonly opts: WorkerOptions;
  private readonly processor: Processor<DataType, ResultType, NameType> | undefined;
  private readonly sandbox: SandboxedProcessor | undefined;
  private readonly executor: Executor;
  /** Jobs claimed ahead of the free slots (the `prefetch` option): runtime/held-ahead.ts. */
  private readonly heldAhead: HeldAhead;
  /** Starts the jobs claims bring and cancels those held: runtime/job-starter.ts. */
  private readonly jobStarter: JobStarter;
  private readonly dispatcher: Dispatcher;
  private readonly shutdown: Shutdown;
  private readonly renewer: LockRenewer;
  private readonly rescuer: StallRescuer;
  private readonly fetcher: ManualFetcher;
  private readonly schedulerTick: SchedulerTick;
  private readonly metrics: MetricsRecorder | undefined;
  private readonly latency: LatencyRecorder | undefined;
  /** @internal retention of failed jobs that set none (JobContext). */
  readonly failKeep: Retention;
  /** How long a job's lock lasts without renewal, ms. */
  readonly lockDuration: number;
  /** @internal the `telemetry` option, for the spans of durable steps (JobContext). */
  get stepTelemetry(): Telemetry | undefined {
    return this.opts.telemetry;
  }
  /** @internal counts a manually finished attempt in the latency histograms (JobContext). */
  noteManualAttempt(job: Job, now: number, outcome: LastRunOutcome): void {
    this.latency?.note(job, now, outcome);
  }
  private readonly closeTimeout: number;
  private concurrencyValue: number;
  private running = false;
  private paused = false;
  private runPromise: Promise<void> | undefined;
  /** The services run() starts (dispatcher, renewer, rescuer) were started: a run after a pause only resumes. */
  private started = false;
  private resolveRun: (() => void) | undefined;
  private closePromise: Promise<void> | undefined;
  /**
   * Keeps the process alive from run() until close(): every timer of the runtime is unref'd, and a
   * SQLite worker holds no socket, so a rate-limited worker, or one waiting to retry a failed call,
   * would otherwise let Node exit (code 0) with jobs waiting.
   */
  private keepAlive: NodeJS.Timeout | undefined;

  /**
   * @param processor the function that processes jobs; or the path (or file URL) of a module
   *   exporting it, run in a pool of child processes (or worker threads with `useWorkerThreads`)
   *   so CPU-bound work cannot block this process; or null for manual processing.
   */
  constructor(name: string, processor?: Processor<DataType, ResultType, NameType> | string | URL | null, opts: WorkerOptions = {}) {
    // Checked before connecting (the options by QueueBase): a refused value leaves nothing running.
    validateProcessor(processor);
    validatePrefetch(processor, opts);
    super(name, opts, 'worker', 'Worker');
    this.opts = opts;
    this.concurrencyValue = opts.concurrency ?? 1;
    // Component wiring: runtime/worker-parts.ts builds the parts, which call back into the worker through this host.
    const parts = buildWorkerParts(processor as Processor | string | URL | null | undefined, {
      context: this,
      backend: this.backend,
      clock: this.clock,
      id: this.id,
      name: this.name,
      opts,
      concurrency: () => this.concurrencyValue,
      backoffStrategy: () => this.backoffStrategy,
      isClosed: () => this.closed,
      isClosing: () => this.closing,
      isStopped: () => this.paused || this.closing,
      emit: (event, ...args) => this.emit(event, ...args),
      emitJob: (event, job, value, prev) => {
        // Unheard events cost nothing per job (no arguments array, no emit).
        if (this.listenerCount(event) > 0) this.emit(event, job, value, prev);
      },
      emitError: (err) => this.emitError(err),
      claimed: (job) => this.jobStarter.claimed(job),
      slotFreed: () => this.heldAhead.startWhileFree(),
      checkEpoch: (epoch) => this.checkEpoch(epoch),
      cancelRunning: (jobId) => this.jobStarter.cancel(jobId),
      emitStallFailures: (ids) => this.emitStallFailures(ids),
    });
    ({
      processor: this.processor,
      sandbox: this.sandbox,
      executor: this.executor,
      dispatcher: this.dispatcher,
      shutdown: this.shutdown,
      renewer: this.renewer,
      rescuer: this.rescuer,
      fetcher: this.fetcher,
      schedulerTick: this.schedulerTick,
      metrics: this.metrics,
      latency: this.latency,
      failKeep: this.failKeep,
      lockDuration: this.lockDuration,
      closeTimeout: this.closeTimeout,
    } = parts);
    this.heldAhead = new HeldAhead({
      backlog: parts.backlog,
      executor: parts.executor,
      shutdown: parts.shutdown,
      cancelledUnstarted: parts.cancelledUnstarted,
      heldFor: parts.heldFor,
      prefetch: opts.prefetch ?? 0,
      clock: this.clock,
      concurrency: () => this.concurrencyValue,
      isStopped: () => this.paused || this.closing,
      start: (claim) => this.jobStarter.start(claim),
    });
    this.jobStarter = new JobStarter({
      backend: this.backend,
      clock: this.clock,
      claims: parts.claims,
      executor: parts.executor,
      shutdown: parts.shutdown,
      heldAhead: this.heldAhead,
      isClosing: () => this.closing,
      emitError: (err) => this.emitError(err),
      emitActive: (job) => {
        if (this.listenerCount('active') > 0) this.emit('active', job, 'waiting');
      },
    });

    if (opts.autorun !== false && this.processor) {
      this.run().catch((err: unknown) => this.emitError(err));
    }
  }

  protected override async init(): Promise<void> {
    await super.init();
    // Registered (heartbeat) from ready on, running or not, as BullMQ lists a worker from its
    // connection: queue.getWorkers() shows it, manual (getNextJob) workers included.
    // Unset when the constructor threw (bad options) after the base constructor began starting.
    const renewer = this.renewer as LockRenewer | undefined;
    // The idle wait's connection opens meanwhile, as BullMQ's blocking connection: a ready worker is
    // blocked on the queue's signal when its first claim finds nothing, not connecting then.
    if (renewer && !this.closing) this.backend.openWaitConnection();
    if (renewer && !this.closing) await renewer.start();
    this.emit('ready');
  }

  /** Jobs processed at once. Can be changed while running. */
  get concurrency(): number {
    return this.concurrencyValue;
  }

  set concurrency(value: number) {
    checkWorkerOption('concurrency', value);
    this.concurrencyValue = value;
    // Jobs held ahead take the new slots first.
    this.heldAhead.startWhileFree();
    this.dispatcher.schedulePump();
  }

  /** @internal the worker's backoff strategy, bound to its settings (JobContext). */
  get backoffStrategy(): StrategyFn | undefined {
    const settings = this.opts.settings;
    return settings?.backoffStrategy ? (settings.backoffStrategy.bind(settings) as StrategyFn) : undefined;
  }

  /**
   * Manual processing: takes the next job under your `token` (no processor, no automatic lock
   * renewal: call `job.extendLock(token, ms)` for long jobs), or undefined when none is ready or
   * the worker is paused. As in BullMQ, `block` (default true) waits up to `drainDelay` for a
   * job once a previous call found none; `{ block: false }` never waits.
   *
   * @example
   * const job = await worker.getNextJob(token);
   * if (job) await job.moveToCompleted(await work(job.data), token);
   */
  async getNextJob(token: string, opts: { block?: boolean } = {}): Promise<Job<DataType, ResultType, NameType> | undefined> {
    if (typeof token !== 'string' || token === '') throw new InvalidOptionsError('getNextJob needs a non-empty token string.');
    await this.ready();
    const next = await this.fetcher.next(token, opts.block ?? true);
    if (!next) return undefined;
    const job = Job.fromClaimed<DataType, ResultType, NameType>(this, next.claimed, next.now, this.opts.name);
    const overLimit = startLimitError(job, this.opts.maxStartedAttempts) ?? overweightError(job, next.claimed.overweight);
    if (overLimit) {
      // Taken beyond maxStartedAttempts: failed for good here, and the next job is taken instead.
      await job.moveToFailed(overLimit, token);
      return this.getNextJob(token, opts);
    }
    const schedulerId = takenOccurrence(job);
    // As for a processed job: the scheduler plans its next occurrence when its job is taken.
    if (schedulerId !== undefined) await advanceTaken(this.backend, this.clock, schedulerId, job.id as string);
    this.emit('active', job, 'waiting');
    return job;
  }

  /**
   * Waits `milliseconds` (default 0), or until `abortController` aborts, whichever comes first
   * (BullMQ's `worker.delay`). Never rejects.
   *
   * @example await worker.delay(1000, controller); // a pause a processor or a loop can cut short
   */
  delay(milliseconds = 0, abortController?: AbortController): Promise<void> {
    if (!(Number.isFinite(milliseconds) && milliseconds >= 0)) {
      throw new InvalidOptionsError(`delay takes a number of ms >= 0, got ${String(milliseconds)}.`);
    }
    // Any delay works (chained past 2^31-1 ms; Infinity waits for the abort): clock/timers.ts.
    return sleep(milliseconds, { signal: abortController?.signal });
  }

  /**
   * Stops every worker of this queue from taking jobs for `expireTimeMs` (for a 429 from a
   * downstream API). Throw `Worker.RateLimitError()` from the processor next, to put the current
   * job back without spending an attempt.
   */
  async rateLimit(expireTimeMs: number): Promise<void> {
    if (!(Number.isInteger(expireTimeMs) && expireTimeMs > 0)) {
      throw new InvalidOptionsError(`rateLimit takes a positive integer of ms, got ${expireTimeMs}.`);
    }
    await this.ready();
    await this.backend.rateLimit(expireTimeMs);
  }

  /** The error to throw after `rateLimit(ms)` (BullMQ's `Worker.RateLimitError()`). */
  static RateLimitError(): RateLimitError {
    return new RateLimitError();
  }

  /**
   * Cancels job `jobId` if this worker is running it, in this process only (BullMQ's
   * `worker.cancelJob`): its processor's signal aborts with `reason` (`signal.reason`; without one,
   * the standard `AbortError`). Nothing is written to Redis: the attempt ends as the processor
   * decides (a plain Error is retried per `attempts`, an `UnrecoverableError` fails for good, a
   * returned value completes). To cancel from any process, for good, use `queue.cancelJob`.
   * Returns whether the job is running here (true again for a job already cancelled); false once
   * the worker is closed.
   *
   * @example
   * worker.on('lockRenewalFailed', (ids) => ids.forEach((id) => worker.cancelJob(id)));
   */
  cancelJob(jobId: string, reason?: string | Error): boolean {
    if (typeof jobId !== 'string') throw new InvalidOptionsError(`cancelJob takes a job id string, got ${typeof jobId}.`);
    checkCancelReason(reason);
    if (this.closed) return false;
    return this.executor.abortJob(jobId, reason);
  }

  /** Cancels every job this worker is running, in this process only: see {@link Worker.cancelJob}. */
  cancelAllJobs(reason?: string | Error): void {
    checkCancelReason(reason);
    this.executor.abortAll(reason);
  }

  /** @internal the stalled-job checker (tests drive it by hand with `runOnce`). */
  get stallRescuer(): StallRescuer {
    return this.rescuer;
  }

  /** @internal the sandbox pool, with a processor file (tests watch its children). */
  get sandboxPool(): SandboxedProcessor['pool'] | undefined {
    return this.sandbox?.pool;
  }

  /** @internal the scheduler tick (tests drive it by hand with `runOnce`). */
  get schedulerTicker(): SchedulerTick {
    return this.schedulerTick;
  }

  /** @internal the lock renewer (tests drive it by hand with `runOnce`). */
  get lockRenewer(): LockRenewer {
    return this.renewer;
  }

  /**
   * Starts processing (when created with `autorun: false`). Resolves when the worker is closed,
   * or paused (as BullMQ: `resume()` starts it again). Rejects if it has no processor or is
   * already running.
   */
  run(): Promise<void> {
    if (!this.processor) {
      return Promise.reject(
        new InvalidOptionsError('No process function is defined. Pass a processor to new Worker(name, processor), or use getNextJob.'),
      );
    }
    if (this.running) return Promise.reject(new Error('Worker is already running.'));
    if (this.closePromise) return Promise.reject(new Error('Worker is closed.'));
    this.running = true;
    this.runPromise = new Promise<void>((resolve) => (this.resolveRun = resolve));
    if (this.started) return this.runPromise;
    this.started = true;
    this.keepAlive ??= setInterval(() => undefined, KEEP_ALIVE_INTERVAL_MS);
    // However long the start takes: a start that failed is tried again, and processing begins
    // once the backend answers (api/starter.ts).
    this.whenStarted().then(
      () => {
        if (this.closePromise) return;
        this.dispatcher.start();
        void this.renewer.start();
        if (!this.opts.skipStalledCheck) this.rescuer.start();
        this.schedulerTick.start();
        this.backend
          .onCancel((jobId) => this.jobStarter.cancel(jobId))
          // Jobs claimed before the subscription took effect may have been cancelled unheard: lock
          // renewal reports their marks, so renew once now rather than a renewal interval later.
          .then(() => (this.executor.size > 0 && !this.closing ? this.renewer.runOnce() : undefined))
          .catch((err: unknown) => {
            if (!this.closing) this.emitError(err);
          });
      },
      // A failed start is reported by QueueBase (each new kind of failure), and closing ends the wait.
      () => undefined,
    );
    return this.runPromise;
  }

  /** Whether the worker is running (started and not closed). */
  isRunning(): boolean {
    return this.running;
  }

  /** Whether the worker is paused. */
  isPaused(): boolean {
    return this.paused;
  }

  /**
   * Stops taking new jobs (jobs held ahead with `prefetch` go back to the queue at once, unstarted).
   * Unless `doNotWaitActive`, resolves once the active jobs have finished.
   * Once they have, `run()` resolves and `isRunning()` is false, as in BullMQ; `resume()` goes on.
   */
  async pause(doNotWaitActive?: boolean): Promise<void> {
    if (this.paused) return;
    this.paused = true;
    this.dispatcher.setPaused(true);
    // Jobs held ahead have not started: they go back to the queue at once, for any worker.
    this.heldAhead.handBack('paused');
    // Every job claimed, including by a call in flight now, finishes and is recorded.
    const finished = this.shutdown.quiesce().then(() => {
      if (!this.paused || !this.running || this.closing) return;
      this.running = false;
      this.resolveRun?.();
    });
    if (!doNotWaitActive) await finished;
    this.emit('paused');
  }

  /** Takes jobs again after `pause()` (running again, if the pause had stopped it). */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (!this.running && this.started && !this.closing) {
      this.running = true;
      this.runPromise = new Promise<void>((resolve) => (this.resolveRun = resolve));
    }
    this.dispatcher.setPaused(false);
    this.emit('resumed');
  }

  /** @internal emits `progress` when a job of this worker reports progress. */
  jobProgressed(job: Job, progress: JobProgress): void {
    this.emit('progress', job, progress);
  }

  /**
   * Jobs the stall check failed for good (too many stalls, or cancelled while their worker was
   * gone): `failed` with the stored reason (BullMQ's `job stalled more than allowable limit`), as
   * BullMQ's worker emits it; the job is undefined if its removeOnFail already removed it.
   */
  private emitStallFailures(ids: string[]): void {
    Promise.all(ids.map((id) => Job.fromId<DataType, ResultType, NameType>(this, id))).then(
      (jobs) => {
        for (let i = 0; i < ids.length; i++) {
          const job = jobs[i];
          const reason = job?.failedReason ?? 'job stalled more than allowable limit';
          this.emit('failed', job, new Error(reason), 'active');
        }
      },
      (err: unknown) => {
        if (!this.closing) this.emitError(err);
      },
    );
  }

  /**
   * Closes the worker: stops taking jobs, finishes every job it started (including those of a
   * claim whose reply arrives after close began, for its free slots; jobs held ahead with
   * `prefetch` go back to the queue at once, unstarted) and records their results, then closes the
   * connections. `force` (BullMQ's meaning: do not wait) releases the jobs it holds for another
   * worker at once, aborting their processors. Never hangs: after `closeTimeout` (default 10 s)
   * the jobs still running are released at once (not left for their locks to expire), their
   * processors aborted, and close rejects with a CloseTimeoutError naming them (`jobIds`); it
   * settles at most about 2 s after the deadline (1 s for the release, 1 s to close the connections) even when Redis does not answer.
   * The error goes to the first call; a later call resolves once the worker is closed.
   *
   * @example
   * process.on('SIGTERM', () => worker.close().catch((err) => console.error(err.message)));
   */
  override close(force = false): Promise<void> {
    // The CloseTimeoutError goes to the first caller; later calls resolve once the worker is closed.
    if (this.closePromise) return this.closePromise.catch(() => undefined);
    this.closePromise = this.doClose(force).finally(() => {
      // A closed worker does not hold the process, however its close ended.
      clearInterval(this.keepAlive);
      this.keepAlive = undefined;
    });
    return this.closePromise;
  }

  private async doClose(force: boolean): Promise<void> {
    this.closing = true;
    this.starter.stop();
    this.emit('closing', 'closing worker');
    this.dispatcher.stop();
    // Jobs held ahead have not started: close does not wait to run them, they go back at once.
    this.heldAhead.handBack('closing');
    this.rescuer.stop();
    this.schedulerTick.stop();
    const error = await this.shutdown.stop(force, this.closeTimeout);
    this.renewer.stop();
    this.metrics?.stop();
    this.latency?.stop();
    this.dispatcher.dispose();
    const grace = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());
    // The pool ends its children within its kill grace; past the deadline it gets 1 s at most.
    if (error) await Promise.race([this.sandbox?.close(), grace(RELEASE_GRACE_MS)]);
    else await this.sandbox?.close();
    if (error) {
      this.backend.disconnect();
    } else {
      const unregistered = this.backend.unregisterWorker(this.id).catch(() => undefined);
      const flushed = this.metrics?.flush().catch((err: unknown) => this.emitError(err));
      // A failed last flush loses this worker's unflushed latency counts (docs/metrics.md).
      const latencyFlushed = this.latency?.flush().catch(() => undefined);
      await Promise.race([Promise.all([unregistered, flushed, latencyFlushed]).then(() => this.backend.close()), grace(RELEASE_GRACE_MS)]);
      this.backend.disconnect();
    }
    this.closed = true;
    this.running = false;
    this.resolveRun?.();
    this.emit('closed');
    if (error) throw error;
  }
}
