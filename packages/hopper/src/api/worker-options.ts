/**
 * A Worker's options (BullMQ's names and meanings): their types, defaults and validation; and how
 * a worker describes itself (its heartbeat entry) and warns about a blocked event loop.
 */
import { hostname } from 'node:os';
import type { BackoffJob } from '../job/backoff.js';
import { UnrecoverableError } from '../job/errors.js';
import type { Job } from '../job/job.js';
import type { KeepJobs } from '../job/options.js';
import type { SandboxOptions } from '../runtime/sandbox/index.js';
import type { QueueBaseOptions } from './queue-base.js';
import type { RateLimiterOptions } from './queue-groups.js';
import type { MetricsOptions } from '../telemetry/metrics-recorder.js';
import type { Telemetry } from '../telemetry/telemetry.js';

/**
 * The function that processes a job: receives the job, the attempt's lock token and an
 * AbortSignal (aborted when the lock is lost, the job is cancelled or times out, or the worker
 * is force-closed); its result becomes the job's return value, a throw fails the attempt. A
 * plain function with at most two simple parameters, which cannot see a third argument, is
 * called without a signal (none is created for it; docs/compatibility.md).
 */
// `any` defaults keep BullMQ's generic signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Processor<DataType = any, ResultType = any, NameType extends string = string> = (
  job: Job<DataType, ResultType, NameType>,
  token?: string,
  signal?: AbortSignal,
) => Promise<ResultType>;

/** Advanced worker settings. */
export interface AdvancedSettings {
  /**
   * Computes retry delays for custom backoff types: given the attempts made (including the one
   * that just failed), the type, the error and the job, returns the delay in ms (negative: fail
   * for good). Declared as a method so strategies typed for BullMQ's job type are accepted too.
   */
  backoffStrategy?(attemptsMade: number, type?: string, err?: Error, job?: BackoffJob): number | Promise<number>;
}

/** Options of a Worker (BullMQ's names and meanings). */
export interface WorkerOptions extends QueueBaseOptions {
  /** Jobs processed at once by this worker. Default 1. */
  concurrency?: number;
  /**
   * Claim-ahead (as RabbitMQ's prefetch): jobs this worker may hold beyond its free slots. A claim
   * asks for up to `concurrency + prefetch` jobs held in all; those with no free slot wait in the
   * worker and start the moment a slot frees, with no round trip, and each call to Redis carries
   * more jobs. Held-ahead jobs are active in Redis from their claim (`processedOn`,
   * `attemptsStarted` and the queue's `active` event are recorded then; the worker's `active`
   * event, the processor, the job's `timeout` and its run time in the latency histograms start
   * when a slot frees); their locks are renewed
   * and stall rescue takes them over if the worker dies. `close()` and `pause()` give them back
   * unstarted at once (no attempt counted); a job cancelled while held ahead ends as cancelled
   * without running; queue pause lets them run, as the other active jobs. Not for a worker with no
   * processor (getNextJob). Default 0 (off): see docs/performance.md ("Claim-ahead").
   *
   * @example new Worker('mail', send, { connection, concurrency: 10, prefetch: 20 })
   */
  prefetch?: number;
  /** Start processing at once. Default true; otherwise call `run()`. */
  autorun?: boolean;
  /** How long a job's lock lasts without renewal, ms. Default 30,000. */
  lockDuration?: number;
  /** How often locks are renewed, ms. Default lockDuration / 2. */
  lockRenewTime?: number;
  /** How often to look for stalled jobs (expired locks), ms. Default 30,000. */
  stalledInterval?: number;
  /** Stalls a job may have before it fails for good. Default 1. */
  maxStalledCount?: number;
  /**
   * Starts a job may have (`attemptsStarted`: retries, moves to delayed or wait, and stall rescues
   * all start it again). A job taken beyond it fails for good, without running, with
   * `job started more than allowable limit` (BullMQ's option and reason). Default: no limit.
   */
  maxStartedAttempts?: number;
  /** Do not run the stalled-job check from this worker. Default false. */
  skipStalledCheck?: boolean;
  /** Retention of completed jobs that set none themselves. Default `{ count: 1000 }`. */
  removeOnComplete?: boolean | number | KeepJobs;
  /** Retention of failed jobs that set none themselves. Default: keep. */
  removeOnFail?: boolean | number | KeepJobs;
  /** Longest idle blocking wait for new jobs, in seconds as in BullMQ. Default 5. */
  drainDelay?: number;
  /**
   * Deadline of `close()`, ms. Default 10,000. Until then close waits for the jobs this worker
   * claimed to finish and be recorded; after it, the jobs still running are released for another
   * worker at once, their processors aborted, and close rejects with a CloseTimeoutError naming them.
   */
  closeTimeout?: number;
  /**
   * How often, at the latest, this worker gives job schedulers their next occurrences, ms
   * (they are also advanced at once when an occurrence falls due). Default 5,000.
   */
  schedulerInterval?: number;
  /**
   * After a job's `timeout`, how long its attempt may still take to settle before the worker gives
   * up on it (frees its slot and records the TimeoutError), ms. Default 5,000.
   */
  timeoutGrace?: number;
  /** With a processor file: run it in worker threads instead of child processes. Default false. */
  useWorkerThreads?: boolean;
  /** With a processor file: the pool's settings (idle children kept, idle timeout, kill grace, memory limit). */
  sandbox?: Pick<SandboxOptions, 'minChildren' | 'idleTimeoutMs' | 'killGraceMs' | 'loadRetryMs' | 'maxMemoryMb'>;
  /**
   * Rate limit shared by all workers of the queue (BullMQ's option): at most `max` jobs start in
   * any `duration` ms, judged on recorded start times (a sliding window, exact across workers).
   * Without it, the queue's limit applies (`queue.setGlobalRateLimit`), if any.
   */
  limiter?: RateLimiterOptions;
  /**
   * Longest time a rate-limited worker waits before it claims again, ms (BullMQ's option). Default:
   * until the limit's window reopens. Set it when a long limit (`worker.rateLimit`) may be lifted
   * early (`queue.removeRateLimitKey()`), so workers notice within that time.
   */
  maximumRateLimitDelay?: number;
  /** A name for this worker, shown by `queue.getWorkers()`. */
  name?: string;
  /** Events older than this are trimmed by the stalled check, ms (0 = only the count cap). Default 0. */
  eventsMaxAge?: number;
  settings?: AdvancedSettings;
  /**
   * A telemetry adapter (BullMQ's interface; `bullmq-otel` works): each attempt runs in a
   * `process <queue>` consumer span linked to the context of its add, and with a meter, finished
   * jobs are counted (completed, failed, delayed, retried) and their duration recorded.
   */
  telemetry?: Telemetry;
  /**
   * Per-minute counts of completed and failed jobs, read with `queue.getMetrics` (BullMQ's
   * option). This worker counts in memory and writes once a minute and when it closes.
   * Default: off.
   */
  metrics?: MetricsOptions;
  /**
   * Exact latency histograms (wait time, run time, scheduler lateness; docs/metrics.md): this
   * worker counts each recorded attempt in fixed buckets in memory and adds the counts to the
   * queue's histograms in Redis every 5 s and when it closes (one small call). A crash loses at
   * most the unflushed window. Default: true; `false` turns it off for this worker.
   */
  latencyMetrics?: boolean;
}

/** A worker's timing settings with their defaults applied (the options were checked by the validation layer at construction). */
export function workerSettings(opts: WorkerOptions): {
  lockDuration: number;
  renewEvery: number;
  stalledInterval: number;
  maxStalledCount: number;
  drainDelayMs: number;
  schedulerInterval: number;
  closeTimeout: number;
} {
  const lockDuration = opts.lockDuration ?? 30_000;
  const renewEvery = opts.lockRenewTime ?? Math.max(1, Math.floor(lockDuration / 2));
  const stalledInterval = opts.stalledInterval ?? 30_000;
  const maxStalledCount = opts.maxStalledCount ?? 1;
  const drainDelaySeconds = opts.drainDelay ?? 5;
  const schedulerInterval = opts.schedulerInterval ?? 5000;
  const closeTimeout = opts.closeTimeout ?? 10_000;
  return {
    lockDuration,
    renewEvery,
    stalledInterval,
    maxStalledCount,
    drainDelayMs: drainDelaySeconds * 1000,
    schedulerInterval,
    closeTimeout,
  };
}

/**
 * The error that fails, for good and without running it, a job taken more than `maxStartedAttempts`
 * times (BullMQ's reason); undefined when the job is within the limit or there is none.
 */
export function startLimitError(job: Job, maxStartedAttempts: number | undefined): UnrecoverableError | undefined {
  if (maxStartedAttempts === undefined || job.attemptsStarted <= maxStartedAttempts) return undefined;
  return new UnrecoverableError('job started more than allowable limit');
}

/**
 * The error that fails, for good and without running it, a job whose `cost` is above a weighted
 * rate limit's whole window (`overweight` = 'max:durationMs' from the claim, ':group' added for
 * its group's limit, lowered after the job was added): it could never fit.
 */
export function overweightError(job: Job, overweight: string | undefined): UnrecoverableError | undefined {
  if (overweight === undefined) return undefined;
  const [max, duration] = overweight.split(':');
  const second = overweight.indexOf(':', overweight.indexOf(':') + 1);
  if (second >= 0) {
    const group = overweight.slice(second + 1);
    return new UnrecoverableError(
      `job cost ${String(job.opts.cost ?? 1)} is above group "${group}"'s weighted rate limit of ${max} per ${duration} ms ` +
        `(lowered after the job was added): it could never start. Split the job, lower its cost option, or raise the group's limiter.max.`,
    );
  }
  return new UnrecoverableError(
    `job cost ${String(job.opts.cost ?? 1)} is above the weighted rate limit of ${max} per ${duration} ms: it could never start. ` +
      `Split the job, lower its cost option, or raise limiter.max.`,
  );
}

/** A worker's heartbeat entry, shown by `queue.getWorkers()`; it lives twice the renewal interval. */
export function heartbeat(
  id: string,
  name: string | undefined,
  concurrency: number,
  startedAt: number,
  renewEvery: number,
): { id: string; info: string; ttlMs: number } {
  const info = JSON.stringify({ name, hostname: hostname(), pid: process.pid, concurrency, startedAt });
  return { id, info, ttlMs: 2 * renewEvery + 1000 };
}

/** Warns that the event loop was blocked long enough for locks to expire under running jobs. */
export function warnBlockedLoop(worker: string, lagMs: number, lockDuration: number): void {
  process.emitWarning(
    `Worker "${worker}": the event loop was blocked for about ${Math.round(lagMs)} ms, over lockDuration / 2 (${lockDuration / 2} ms). ` +
      'Locks may expire and jobs be rescued while still running: move CPU-bound work out of the main thread.',
    { type: 'HopperWarning', code: 'HOPPER_EVENT_LOOP_BLOCKED' },
  );
}
