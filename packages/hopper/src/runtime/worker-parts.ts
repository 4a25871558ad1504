/**
 * The parts a Worker is made of, wired together: the executor that runs the processor (in process
 * or in a sandbox), the outcomes it records, the dispatcher that claims jobs and acknowledges them
 * in batches, lock renewal, stall rescue, shutdown, manual fetching and the scheduler tick. The
 * Worker keeps its public API and its state (running, paused, closing); this is its wiring.
 */
import {
  WriteCode,
  type ClaimedJob,
  type Completion,
  type Failure,
  type LastRunOutcome,
  type QueueBackend,
  type Retention,
} from '../backend/backend.js';
import type { Clock } from '../clock/clock.js';
import { CancelledError, LockLostError } from '../job/errors.js';
import type { StrategyFn } from '../job/failure.js';
import { Job, type JobContext } from '../job/job.js';
import { DEFAULT_REMOVE_ON_COMPLETE } from '../job/options.js';
import { toRetention } from '../job/retention.js';
import { SchedulerTick } from '../maintenance/scheduler-tick.js';
import { StallRescuer } from '../maintenance/stall-rescuer.js';
import { MetricsRecorder, metricsDataPoints } from '../telemetry/metrics-recorder.js';
import { attemptRecorder, JobMeter, traceAttempt } from '../telemetry/trace.js';
import { LatencyRecorder } from '../telemetry/latency-recorder.js';
import {
  heartbeat,
  overweightError,
  startLimitError,
  warnBlockedLoop,
  workerSettings,
  type Processor,
  type WorkerOptions,
} from '../api/worker-options.js';
import { Backlog } from './backlog.js';
import { Claims } from './claims.js';
import { Completer } from './completer.js';
import { Dispatcher } from './dispatcher.js';
import { Executor } from './executor.js';
import { LockRenewer } from './lock-renewer.js';
import { ManualFetcher } from './manual-fetcher.js';
import { Outcomes } from './outcomes.js';
import { mayReadSignal } from './processor-signal.js';
import { SandboxedProcessor } from './sandboxed-processor.js';
import { Shutdown } from './shutdown.js';

/** What the parts need of their worker: its identity, settings, state and events. */
export interface WorkerHost {
  /** The worker itself, as the context of the jobs it takes. */
  readonly context: JobContext;
  readonly backend: QueueBackend;
  readonly clock: Clock;
  readonly id: string;
  readonly name: string;
  readonly opts: WorkerOptions;
  /** The concurrency now (it can change while running). */
  concurrency(): number;
  backoffStrategy(): StrategyFn | undefined;
  isClosed(): boolean;
  isClosing(): boolean;
  /** Paused or closing: manual fetching takes nothing. */
  isStopped(): boolean;
  emit(event: string, ...args: unknown[]): void;
  /** Emits a job's event with BullMQ's arguments (job, result or error, previous state), if anyone listens. */
  emitJob(event: 'completed' | 'failed', job: Job, value: unknown, prev: string): void;
  emitError(err: unknown): void;
  /** A claim's reply brought `job`. */
  claimed(job: Job): void;
  /** An attempt settled: its slot is free (a job held ahead may start). */
  slotFreed(): void;
  checkEpoch(epoch: string): void;
  /** A running job was cancelled: abort its signal. */
  cancelRunning(jobId: string): void;
  /** Jobs the stall check failed for good: their `failed` events. */
  emitStallFailures(ids: string[]): void;
}

/** A Worker's parts, built and wired by {@link buildWorkerParts}. */
export interface WorkerParts {
  /** The processor (a sandbox's runner with a processor file), or undefined for manual processing. */
  processor: Processor | undefined;
  sandbox: SandboxedProcessor | undefined;
  executor: Executor;
  claims: Claims;
  /** Jobs held ahead of free slots (the `prefetch` option). */
  backlog: Backlog;
  /**
   * Jobs cancelled while held ahead: started at once, their processor never called, they end as
   * cancelled (see HeldAhead.cancel).
   */
  cancelledUnstarted: WeakSet<Job>;
  /** How long each attempt started from the backlog waited there, ms (for the latency histograms). */
  heldFor: WeakMap<Job, number>;
  dispatcher: Dispatcher;
  shutdown: Shutdown;
  renewer: LockRenewer;
  rescuer: StallRescuer;
  fetcher: ManualFetcher;
  schedulerTick: SchedulerTick;
  metrics: MetricsRecorder | undefined;
  latency: LatencyRecorder | undefined;
  failKeep: Retention;
  lockDuration: number;
  closeTimeout: number;
}

/**
 * Builds the parts of a worker for `processor` (a function, a processor file's path or URL, or
 * none). Throws InvalidOptionsError for a bad setting, before anything is started.
 */
export function buildWorkerParts(processor: Processor | string | URL | null | undefined, host: WorkerHost): WorkerParts {
  const { backend, clock, opts } = host;
  const startedAt = Date.now();
  let sandbox: SandboxedProcessor | undefined;
  let run: Processor | undefined;
  if (typeof processor === 'string' || processor instanceof URL) {
    sandbox = new SandboxedProcessor(processor, {
      useWorkerThreads: opts.useWorkerThreads,
      maxChildren: host.concurrency(),
      ...opts.sandbox,
    });
    run = sandbox.run as unknown as Processor;
  } else {
    run = processor ?? undefined;
  }
  const { lockDuration, renewEvery, stalledInterval, maxStalledCount, drainDelayMs, schedulerInterval, closeTimeout } =
    workerSettings(opts);
  const completeKeep = toRetention(opts.removeOnComplete, toRetention(DEFAULT_REMOVE_ON_COMPLETE, { kind: 'keep' }));
  const failKeep = toRetention(opts.removeOnFail, { kind: 'keep' });
  const telemetry = opts.telemetry;
  const jobMeter = opts.telemetry?.meter && new JobMeter(opts.telemetry.meter, host.name);
  const maxDataPoints = metricsDataPoints(opts.metrics);
  const metrics =
    maxDataPoints === undefined ? undefined : new MetricsRecorder({ backend, clock, maxDataPoints, onError: (err) => host.emitError(err) });
  const latency =
    opts.latencyMetrics === false ? undefined : new LatencyRecorder({ backend, clock, explicit: opts.latencyMetrics === true });
  const recorded = attemptRecorder(jobMeter, metrics);
  const completer = new Completer();
  const claims = new Claims();
  const backlog = new Backlog();
  const prefetch = opts.prefetch ?? 0;
  const cancelledUnstarted = new WeakSet<Job>();
  const heldFor = new WeakMap<Job, number>();
  // A held-ahead attempt started after its claim: the histograms count its wait to its start.
  const heldMs = (job: Job): number | undefined => (prefetch > 0 ? heldFor.get(job) : undefined);

  const outcomes = new Outcomes({
    backend,
    claims,
    completer,
    queueName: host.name,
    completeKeep,
    failKeep,
    backoffStrategy: () => host.backoffStrategy(),
    isClosed: () => host.isClosed(),
    schedulePump: () => dispatcher.schedulePump(),
    emit: (event, job, value, prev) => host.emitJob(event, job, value, prev),
    onRecorded:
      latency && recorded
        ? (batch, item, code, now) => {
            recorded(batch, item, code, now);
            latency.note(item.job, now, lastRunOutcome(batch.kind, item.ack, code), heldMs(item.job));
          }
        : latency
          ? (batch, item, code, now) => latency.note(item.job, now, lastRunOutcome(batch.kind, item.ack, code), heldMs(item.job))
          : recorded,
    onError: (err) => host.emitError(err),
  });
  // Jobs claimed above a weighted limit's whole window (rare): failed instead of run.
  const overweight = new WeakMap<Job, string>();
  /** Set once a claim brought such a job: until then no job is looked up. */
  let anyOverweight = false;
  const executor = new Executor({
    processor: (job, token, signal) => {
      // Cancelled while held ahead: it ends as cancelled, its processor never called.
      if (prefetch > 0 && cancelledUnstarted.has(job)) return Promise.reject(new CancelledError(`Job ${job.id} was cancelled.`));
      // Taken beyond maxStartedAttempts: the attempt fails for good, the processor is not called.
      const overLimit =
        startLimitError(job, opts.maxStartedAttempts) ?? (anyOverweight ? overweightError(job, overweight.get(job)) : undefined);
      if (overLimit) return Promise.reject(overLimit);
      return telemetry
        ? traceAttempt(telemetry, host.name, host.id, opts.name, job, () => (run as Processor)(job, token, signal))
        : (run as Processor)(job, token, signal);
    },
    // A processor that cannot read its signal gets none (no AbortController per job): see processor-signal.ts.
    readsSignal: sandbox !== undefined || run === undefined || mayReadSignal(run),
    onSettled:
      prefetch > 0
        ? (entry, outcome) => {
            outcomes.settled(entry, outcome);
            host.slotFreed();
          }
        : (entry, outcome) => outcomes.settled(entry, outcome),
    clock,
    timeoutGrace: opts.timeoutGrace ?? 5000,
    // A sandboxed attempt's child is ended (its run then settles); an in-process one is given up on.
    terminate: sandbox && ((entry) => sandbox?.terminate(entry.job.id as string, entry.token) ?? Promise.resolve()),
    onError: (err) => host.emitError(err),
  });
  const dispatcher = new Dispatcher({
    backend,
    clock,
    workerId: host.id,
    executor,
    completer,
    concurrency: () => host.concurrency(),
    prefetch,
    backlogSize: () => backlog.size,
    lockDuration,
    limiter: opts.limiter && { max: opts.limiter.max, duration: opts.limiter.duration, weighted: opts.limiter.weight === 'cost' },
    workerName: opts.name,
    drainDelay: drainDelayMs,
    held: () => claims.pairs(),
    failKeep,
    maxLimitWait: opts.maximumRateLimitDelay,
    makeJob: (claimed: ClaimedJob, now: number) => {
      const job = Job.fromClaimed(host.context, claimed, now, opts.name);
      if (claimed.overweight !== undefined) {
        overweight.set(job, claimed.overweight);
        anyOverweight = true;
      }
      return job;
    },
    onClaimed: (job) => host.claimed(job),
    onAcked: (batch, result, resent) => outcomes.acked(batch, result, resent),
    onAbandoned: (token) => claims.drop(token),
    onDrained: () => host.emit('drained'),
    onSchedulersDue: () => schedulerTick.runSoon(),
    onError: (err) => {
      if (!host.isClosing()) host.emitError(err);
    },
  });
  const renewer = new LockRenewer({
    backend,
    clock,
    executor,
    backlog: prefetch > 0 ? backlog : undefined,
    lockDuration,
    renewEvery,
    onLost: (tokens) => {
      const ids: string[] = [];
      for (const token of tokens) {
        // Held ahead, not started: dropped (another worker has the job now), nothing to abort.
        const waiting = prefetch > 0 ? backlog.take(token) : undefined;
        if (waiting) {
          ids.push(waiting.job.id as string);
          claims.drop(token);
          dispatcher.schedulePump();
          continue;
        }
        const id = executor.attempt(token)?.job.id;
        if (id !== undefined) ids.push(id);
        executor.abort(
          token,
          new LockLostError(`Lost the lock of job ${id}: it was rescued as stalled or removed. Its result will not be recorded.`),
          true,
        );
      }
      // BullMQ's event, after the abort: the signals already carry the LockLostError.
      if (ids.length > 0) host.emit('lockRenewalFailed', ids);
    },
    onError: (err) => host.emitError(err),
    onEpoch: (epoch) => host.checkEpoch(epoch),
    onCancelled: (ids) => ids.forEach((id) => host.cancelRunning(id)),
    worker: () => heartbeat(host.id, opts.name, host.concurrency(), startedAt, renewEvery),
    onLag: (lag) => warnBlockedLoop(host.name, lag, lockDuration),
  });
  const rescuer = new StallRescuer({
    backend,
    clock,
    stalledInterval,
    maxStalledCount,
    failKeep,
    eventsMaxAgeMs: opts.eventsMaxAge ?? 0,
    onRescued: (ids) => {
      for (const id of ids) host.emit('stalled', id, 'active');
    },
    onFailed: (ids) => {
      for (const id of ids) host.emit('stalled', id, 'active');
      host.emitStallFailures(ids);
    },
    onError: (err) => host.emitError(err),
  });

  const shutdown = new Shutdown({
    backend,
    clock,
    claims,
    executor,
    dispatcher,
    failKeep,
    queueName: host.name,
    onError: (err) => host.emitError(err),
  });

  const fetcher = new ManualFetcher({
    backend,
    clock,
    lockDuration,
    limiter: opts.limiter && { max: opts.limiter.max, duration: opts.limiter.duration, weighted: opts.limiter.weight === 'cost' },
    workerName: opts.name,
    drainDelayMs,
    stopped: () => host.isStopped(),
  });

  const schedulerTick = new SchedulerTick({
    backend,
    clock,
    interval: schedulerInterval,
    onError: (err) => host.emitError(err),
  });

  return {
    processor: run,
    sandbox,
    executor,
    claims,
    backlog,
    cancelledUnstarted,
    heldFor,
    dispatcher,
    shutdown,
    renewer,
    rescuer,
    fetcher,
    schedulerTick,
    metrics,
    latency,
    failKeep,
    lockDuration,
    closeTimeout,
  };
}

/** How a recorded attempt left its job, for a scheduler's last run. */
function lastRunOutcome(kind: 'complete' | 'fail', ack: Completion | Failure, code: WriteCode): LastRunOutcome {
  if (code === WriteCode.Cancelled) return 'failed';
  if (kind === 'complete') return 'completed';
  return (ack as Failure).retryDelay < 0 ? 'failed' : 'retried';
}
