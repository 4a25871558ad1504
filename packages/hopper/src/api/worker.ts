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
import type { AckResult, ClaimedJob, Completion, Failure, Retention } from '../backend/backend.js';
import { WriteCode } from '../backend/backend.js';
import {
  CancelledError,
  CloseTimeoutError,
  DelayedError,
  TimeoutError,
  InvalidOptionsError,
  LockLostError,
  RateLimitError,
  WaitingChildrenError,
} from '../job/errors.js';
import { failureOf, toError, type StrategyFn } from '../job/failure.js';
import { Job, type JobProgress } from '../job/job.js';
import { DEFAULT_REMOVE_ON_COMPLETE, serialize } from '../job/options.js';
import { toRetention } from '../job/retention.js';
import { SchedulerTick } from '../maintenance/scheduler-tick.js';
import { StallRescuer } from '../maintenance/stall-rescuer.js';
import { Completer, type PendingAck } from '../runtime/completer.js';
import { Dispatcher, type AckBatch } from '../runtime/dispatcher.js';
import { Executor, type Outcome, type RunningJob } from '../runtime/executor.js';
import { LockRenewer } from '../runtime/lock-renewer.js';
import { SandboxedProcessor } from '../runtime/sandboxed-processor.js';
import { heartbeat, positiveInteger, warnBlockedLoop, workerSettings, type Processor, type WorkerOptions } from './worker-options.js';
import { QueueBase } from './queue-base.js';
import { refuseUnsupported } from '../job/compat.js';
import { MetricsRecorder, metricsDataPoints } from '../telemetry/metrics-recorder.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { finishedState, JobMeter, traceAttempt, validateTelemetry } from '../telemetry/trace.js';

export type { AdvancedSettings, Processor, WorkerOptions } from './worker-options.js';

// `any` defaults keep BullMQ's generic signature.
/* eslint-disable @typescript-eslint/no-explicit-any */
export class Worker<DataType = any, ResultType = any, NameType extends string = string> extends QueueBase {
  /* eslint-enable @typescript-eslint/no-explicit-any */
  /** This worker's id; its lock tokens are `id:n:i`. */
  readonly id = randomBytes(6).toString('base64url');
  readonly opts: WorkerOptions;
  private readonly processor: Processor<DataType, ResultType, NameType> | undefined;
  private readonly sandbox: SandboxedProcessor | undefined;
  private readonly executor: Executor;
  private readonly completer = new Completer();
  private readonly dispatcher: Dispatcher;
  private readonly renewer: LockRenewer;
  private readonly rescuer: StallRescuer;
  private readonly schedulerTick: SchedulerTick;
  private readonly completeKeep: Retention;
  /** @internal retention of failed jobs that set none (JobContext). */
  readonly failKeep: Retention;
  /** How long a job's lock lasts without renewal, ms. */
  readonly lockDuration: number;
  private readonly startedAt = Date.now();
  private concurrencyValue: number;
  private running = false;
  private paused = false;
  private runPromise: Promise<void> | undefined;
  private resolveRun: (() => void) | undefined;
  private closePromise: Promise<void> | undefined;
  private readonly telemetry: Telemetry | undefined;
  private readonly jobMeter: JobMeter | undefined;
  private readonly metrics: MetricsRecorder | undefined;

  /**
   * @param processor the function that processes jobs; or the path (or file URL) of a module
   *   exporting it, run in a pool of child processes (or worker threads with `useWorkerThreads`)
   *   so CPU-bound work cannot block this process; or null for manual processing.
   */
  constructor(name: string, processor?: Processor<DataType, ResultType, NameType> | string | URL | null, opts: WorkerOptions = {}) {
    // Checked before connecting: a refused option leaves nothing running.
    validateTelemetry(opts.telemetry, `Worker "${name}"`);
    refuseUnsupported('Worker', opts);
    refuseUnsupported('settings', opts.settings);
    super(name, opts, 'worker');
    this.opts = opts;
    this.concurrencyValue = positiveInteger(opts.concurrency, 'concurrency', 1);
    if (typeof processor === 'string' || processor instanceof URL) {
      this.sandbox = new SandboxedProcessor(processor, {
        useWorkerThreads: opts.useWorkerThreads,
        maxChildren: this.concurrencyValue,
        ...opts.sandbox,
      });
      this.processor = this.sandbox.run as unknown as Processor<DataType, ResultType, NameType>;
    } else {
      this.processor = processor ?? undefined;
    }
    const { lockDuration, renewEvery, stalledInterval, maxStalledCount, drainDelayMs, schedulerInterval } = workerSettings(opts);
    this.lockDuration = lockDuration;
    this.completeKeep = toRetention(opts.removeOnComplete, toRetention(DEFAULT_REMOVE_ON_COMPLETE, { kind: 'keep' }));
    this.failKeep = toRetention(opts.removeOnFail, { kind: 'keep' });

    this.telemetry = opts.telemetry;
    this.jobMeter = opts.telemetry?.meter && new JobMeter(opts.telemetry.meter, name);
    const maxDataPoints = metricsDataPoints(opts.metrics);
    this.metrics =
      maxDataPoints === undefined
        ? undefined
        : new MetricsRecorder({ backend: this.backend, clock: this.clock, maxDataPoints, onError: (err) => this.emitError(err) });

    this.executor = new Executor(
      (job, token, signal) =>
        this.telemetry
          ? traceAttempt(this.telemetry, this.name, this.id, this.opts.name, job, () => (this.processor as Processor)(job, token, signal))
          : (this.processor as Processor)(job, token, signal),
      (entry, outcome) => this.settled(entry, outcome),
    );
    this.dispatcher = new Dispatcher({
      backend: this.backend,
      clock: this.clock,
      workerId: this.id,
      executor: this.executor,
      completer: this.completer,
      concurrency: () => this.concurrencyValue,
      lockDuration: this.lockDuration,
      limiter: opts.limiter && { max: opts.limiter.max, duration: opts.limiter.duration },
      drainDelay: drainDelayMs,
      maxLimitWait: opts.maximumRateLimitDelay,
      makeJob: (claimed: ClaimedJob, now: number) => Job.fromClaimed(this, claimed, now),
      onClaimed: (job) => this.startJob(job),
      onAcked: (batch, result, resent) => this.acked(batch, result, resent),
      onDrained: () => this.emit('drained'),
      onSchedulersDue: () => this.schedulerTick.runSoon(),
      onError: (err) => {
        if (!this.closing) this.emitError(err);
      },
    });
    this.renewer = new LockRenewer({
      backend: this.backend,
      clock: this.clock,
      executor: this.executor,
      lockDuration: this.lockDuration,
      renewEvery,
      onLost: (ids) => {
        for (const id of ids) {
          this.executor.abort(
            id,
            new LockLostError(`Lost the lock of job ${id}: it was rescued as stalled or removed. Its result will not be recorded.`),
            true,
          );
        }
      },
      onError: (err) => this.emitError(err),
      onEpoch: (epoch) => this.checkEpoch(epoch),
      onCancelled: (ids) => ids.forEach((id) => this.cancelRunning(id)),
      worker: () => heartbeat(this.id, this.opts.name, this.concurrencyValue, this.startedAt, renewEvery),
      onLag: (lag) => warnBlockedLoop(this.name, lag, this.lockDuration),
    });
    this.rescuer = new StallRescuer({
      backend: this.backend,
      clock: this.clock,
      stalledInterval,
      maxStalledCount,
      failKeep: this.failKeep,
      eventsMaxAgeMs: opts.eventsMaxAge ?? 0,
      onRescued: (ids) => {
        for (const id of ids) this.emit('stalled', id, 'active');
      },
      onFailed: (ids) => {
        for (const id of ids) this.emit('stalled', id, 'active');
      },
      onError: (err) => this.emitError(err),
    });

    this.schedulerTick = new SchedulerTick({
      backend: this.backend,
      clock: this.clock,
      interval: schedulerInterval,
      onError: (err) => this.emitError(err),
    });

    if (opts.autorun !== false && this.processor) {
      this.run().catch((err: unknown) => this.emitError(err));
    }
  }

  protected override async init(): Promise<void> {
    await super.init();
    this.emit('ready');
  }

  /** Jobs processed at once. Can be changed while running. */
  get concurrency(): number {
    return this.concurrencyValue;
  }

  set concurrency(value: number) {
    this.concurrencyValue = positiveInteger(value, 'concurrency', 1);
    this.dispatcher.schedulePump();
  }

  /** @internal the worker's backoff strategy, bound to its settings (JobContext). */
  get backoffStrategy(): StrategyFn | undefined {
    const settings = this.opts.settings;
    return settings?.backoffStrategy ? (settings.backoffStrategy.bind(settings) as StrategyFn) : undefined;
  }

  /**
   * Manual processing: takes the next job under your `token` (no processor, no automatic lock
   * renewal: call `job.extendLock(token, ms)` for long jobs), or undefined when none is ready.
   * With `block`, waits up to `drainDelay` for one.
   *
   * @example
   * const job = await worker.getNextJob(token);
   * if (job) await job.moveToCompleted(await work(job.data), token);
   */
  async getNextJob(token: string, opts: { block?: boolean } = {}): Promise<Job<DataType, ResultType, NameType> | undefined> {
    if (typeof token !== 'string' || token === '') throw new InvalidOptionsError('getNextJob needs a non-empty token string.');
    await this.ready();
    for (let round = 0; round < 2; round++) {
      const result = await this.backend.claim(
        { count: 1, lockMs: this.lockDuration, tokenPrefix: token, exact: true, limiter: this.opts.limiter },
        this.clock.backendNow(),
      );
      const claimed = result.jobs[0];
      if (claimed) return Job.fromClaimed<DataType, ResultType, NameType>(this, claimed, result.now);
      if (!opts.block || round === 1 || result.paused) return undefined;
      await this.backend.waitForWork((this.opts.drainDelay ?? 5) * 1000);
    }
    return undefined;
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
   * Starts processing (when created with `autorun: false`). Resolves when the worker is closed.
   */
  run(): Promise<void> {
    if (!this.processor) throw new InvalidOptionsError('This worker has no processor: pass one to new Worker(name, processor).');
    if (this.running) throw new Error('Worker is already running.');
    if (this.closePromise) throw new Error('Worker is closed.');
    this.running = true;
    this.runPromise = new Promise<void>((resolve) => (this.resolveRun = resolve));
    this.ready().then(
      () => {
        if (this.closePromise) return;
        this.dispatcher.start();
        this.renewer.start();
        if (!this.opts.skipStalledCheck) this.rescuer.start();
        this.schedulerTick.start();
        this.backend
          .onCancel((jobId) => this.cancelRunning(jobId))
          .catch((err: unknown) => {
            if (!this.closing) this.emitError(err);
          });
      },
      (err: unknown) => this.emitError(err),
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
   * Stops taking new jobs. Unless `doNotWaitActive`, resolves once the active jobs have finished.
   */
  async pause(doNotWaitActive?: boolean): Promise<void> {
    if (this.paused) return;
    this.paused = true;
    this.dispatcher.setPaused(true);
    if (!doNotWaitActive) {
      await this.executor.whenIdle();
      await this.dispatcher.whenSettled();
    }
    this.emit('paused');
  }

  /** Takes jobs again after `pause()`. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.dispatcher.setPaused(false);
    this.emit('resumed');
  }

  /** @internal emits `progress` when a job of this worker reports progress. */
  jobProgressed(job: Job, progress: JobProgress): void {
    this.emit('progress', job, progress);
  }

  private startJob(job: Job): void {
    this.emit('active', job, 'waiting');
    const entry = this.executor.start(job);
    const timeout = job.opts.timeout;
    if (timeout !== undefined && !entry.settled) {
      entry.timers.push(this.clock.setTimeout(() => this.timedOut(entry, timeout), timeout));
    }
  }

  /**
   * The attempt ran past its timeout: abort its signal, then give it `timeoutGrace` to settle.
   * Until then it keeps its slot (its retry cannot start, so the job never runs twice at once);
   * after it, the attempt fails with the TimeoutError and the slot is freed. A late result is
   * rejected by the fencing token.
   */
  private timedOut(entry: RunningJob, timeout: number): void {
    if (entry.settled) return;
    entry.timedOut = true;
    const error = new TimeoutError(`Job ${entry.job.id} timed out after ${timeout} ms (its timeout option).`);
    entry.controller.abort(error);
    const grace = this.opts.timeoutGrace ?? 5000;
    entry.timers.push(
      this.clock.setTimeout(() => {
        if (entry.settled) return;
        // A sandboxed attempt's child is ended (its run then settles); an in-process one is given up on.
        if (this.sandbox) this.sandbox.terminate(entry.job.id as string).catch((err: unknown) => this.emitError(err));
        else this.executor.giveUp(entry, { ok: false, error });
      }, grace),
    );
  }

  /** A running job was cancelled (pub/sub message, or reported by lock renewal): abort its signal. */
  private cancelRunning(jobId: string): void {
    const entry = this.executor.running.get(jobId);
    if (!entry || entry.cancelled) return;
    entry.cancelled = true;
    entry.controller.abort(new CancelledError(`Job ${jobId} was cancelled.`));
  }

  private settled(entry: RunningJob, outcome: Outcome): void {
    if (this.closed) return;
    if (entry.lost) {
      // The result is dropped, but the slot is free: take the next job.
      this.dispatcher.schedulePump();
      return;
    }
    const job = entry.job;
    const fence = job.fence as { token: string; attempt: number };
    // A cancelled or timed-out attempt fails, whatever the processor returned.
    if (entry.cancelled) outcome = { ok: false, error: new CancelledError(`Job ${job.id} was cancelled.`) };
    else if (entry.timedOut && (outcome.ok || !(outcome.error instanceof TimeoutError))) {
      outcome = { ok: false, error: new TimeoutError(`Job ${job.id} timed out (its timeout option).`) };
    }
    if (outcome.ok) {
      let returnvalue: string;
      try {
        returnvalue = outcome.value === undefined || outcome.value === null ? 'null' : serialize(outcome.value, 'The return value');
      } catch (err) {
        return this.settled(entry, { ok: false, error: err });
      }
      this.completer.addCompletion({
        ack: {
          id: job.id as string,
          token: fence.token,
          attempt: fence.attempt,
          returnvalue,
          keep: toRetention(job.opts.removeOnComplete, this.completeKeep),
        },
        job,
        outcome: outcome.value,
      });
      this.dispatcher.schedulePump();
      return;
    }
    const error = toError(outcome.error);
    // The processor moved the job itself (moveToDelayed, moveToWaitingChildren): nothing to record.
    if (error instanceof DelayedError || error instanceof WaitingChildrenError) {
      this.dispatcher.schedulePump();
      return;
    }
    if (error instanceof RateLimitError) {
      this.backend.moveToWait(job.id as string, fence).then(
        () => this.dispatcher.schedulePump(),
        (err: unknown) => this.emitError(err),
      );
      return;
    }
    failureOf(job, fence, error, this.backoffStrategy, this.failKeep).then(
      (failure) => {
        this.completer.addFailure({ ack: failure, job, outcome: error });
        this.dispatcher.schedulePump();
      },
      (err: unknown) => this.emitError(err),
    );
  }

  private acked(batch: AckBatch, result: AckResult, resent: boolean): void {
    for (let i = 0; i < batch.items.length; i++) {
      const code = result.codes[i];
      const item: PendingAck<Completion | Failure> = batch.items[i];
      const job = item.job;
      // After a reconnect the call may have run twice: the first run did the work.
      const done = code > 0 || (resent && (code === WriteCode.Missing || code === WriteCode.NotActive));
      if (!done) {
        this.emitError(
          new LockLostError(
            `Job ${job.id} in queue "${this.name}": its result was not recorded because this attempt no longer holds it (code ${code}: ` +
              `${code === WriteCode.Missing ? 'the job was removed' : code === WriteCode.NotActive ? 'the job is no longer active' : 'another attempt holds it'}).`,
          ),
        );
        continue;
      }
      job.attemptsMade += 1;
      job.token = undefined;
      if (this.jobMeter || this.metrics) this.meterFinished(batch, item, code, result.now);
      if (code === WriteCode.Cancelled) {
        // Cancelled while it ran: recorded as failed with the cancel reason, whatever it returned.
        job.finishedOn = result.now;
        this.emit('failed', job, new CancelledError(`Job ${job.id} was cancelled.`), 'active');
      } else if (batch.kind === 'complete') {
        job.returnvalue = item.outcome;
        job.finishedOn = result.now;
        this.emit('completed', job, item.outcome, 'active');
      } else {
        const failure = item.ack as Failure;
        job.failedReason = failure.reason;
        if (failure.retryDelay < 0) job.finishedOn = result.now;
        this.emit('failed', job, item.outcome, 'active');
      }
    }
  }

  /** Records a finished attempt on the telemetry meter and in the per-minute metrics. */
  private meterFinished(batch: AckBatch, item: PendingAck<Completion | Failure>, code: WriteCode, now: number): void {
    const state = finishedState(batch.kind === 'fail' ? (item.ack as Failure).retryDelay : undefined, code === WriteCode.Cancelled);
    const processedOn = item.job.processedOn;
    this.jobMeter?.record(state, item.job.name, processedOn ? now - processedOn : undefined);
    if (state === 'completed' || state === 'failed') this.metrics?.note(state);
  }

  /**
   * Closes the worker: stops taking jobs, waits for active jobs to finish (unless `force`, which
   * aborts their signals and leaves them to be rescued), records their results, then closes the
   * connections. Never hangs on Redis: after `closeTimeout` without Redis it gives up, says so
   * with a CloseTimeoutError `error` event, and drops the connections.
   */
  close(force = false): Promise<void> {
    this.closePromise ??= this.doClose(force);
    return this.closePromise;
  }

  private async doClose(force: boolean): Promise<void> {
    this.closing = true;
    this.emit('closing', 'closing worker');
    this.dispatcher.stop();
    this.rescuer.stop();
    this.schedulerTick.stop();
    if (force) {
      // Their results are not recorded: the jobs are rescued once their locks expire.
      for (const id of [...this.executor.running.keys()]) this.executor.abort(id, new Error('Worker closed with force'), true);
    } else {
      await this.executor.whenIdle();
    }
    await this.sandbox?.close();
    this.renewer.stop();
    this.metrics?.stop();
    const timeout = this.opts.closeTimeout ?? 10_000;
    const unregistered = this.backend.unregisterWorker(this.id).catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = await Promise.race([
      this.dispatcher.whenSettled().then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeout);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    this.dispatcher.dispose();
    if (gaveUp) {
      this.emitError(
        new CloseTimeoutError(
          `Worker "${this.name}" closed without recording ${this.completer.pending} finished job(s): Redis did not answer within closeTimeout (${timeout} ms). ` +
            'Those jobs stay active until their lock expires, then are retried.',
        ),
      );
      this.backend.disconnect();
    } else {
      const flushed = this.metrics?.flush().catch((err: unknown) => this.emitError(err));
      await Promise.race([
        Promise.all([unregistered, flushed]).then(() => this.backend.close()),
        new Promise((resolve) => setTimeout(resolve, timeout).unref()),
      ]);
      this.backend.disconnect();
    }
    this.closed = true;
    this.running = false;
    this.resolveRun?.();
    this.emit('closed');
  }
}
