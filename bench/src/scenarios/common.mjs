// What the scenarios share: queue options, job names, batching, pacing and completion tracking.
//
// Every scenario reaches the library under test only through `ctx.lib` ({ Queue, Worker,
// QueueEvents }) and the BullMQ-compatible API, so one piece of code measures both libraries.

import { performance } from 'node:perf_hooks';
import { processCpuMs } from '../redis/proc-cpu.mjs';

/** Name of the measured jobs. Anything else (warm-up jobs) is ignored by the trackers. */
export const JOB = 'job';
/** Name of the jobs used to connect, load scripts and warm the JIT outside the timed window. */
export const WARMUP = 'warmup';

/** Events-stream cap given to both libraries (BullMQ's option name, which Hopper accepts too). */
export const EVENTS_MAX_LEN = 10_000;

/** Jobs per `addBulk` call wherever jobs are added in bulk. */
export const BULK_BATCH = 1_000;

/** A run fails if no measured job completes for this long (a hang, not a slow library). */
export const STALL_MS = 30_000;

/**
 * Declares a reported figure.
 * @param {string} key property name in a role's `metrics`
 * @param {string} label shown in the table
 * @param {string} unit
 * @param {'higher' | 'lower'} better which direction is an improvement
 * @param {number} digits decimals shown
 * @param {{ redis?: boolean }} [options] `redis: true` for a figure of the Redis server itself (its
 *        CPU, its memory): not measured, and reported n/a, for a library on SQLite
 */
export function metric(key, label, unit, better, digits, { redis = false } = {}) {
  return { key, label, unit, better, digits, redis };
}

/** Queue options used by every scenario: same connection and same events-stream cap. */
export function queueOptions(ctx) {
  return { connection: ctx.connection, streams: { events: { maxLen: EVENTS_MAX_LEN } } };
}

/** Opens a Queue on the run's queue; the runner closes it after the role returns. */
export function openQueue(ctx) {
  return ctx.open(new ctx.lib.Queue(ctx.queueName, queueOptions(ctx)));
}

/**
 * Opens a Worker on the run's queue; the runner closes it after the role returns.
 * Every process that runs a worker also opens a Queue (see openQueue) so that queue-level
 * options such as the events-stream cap are in force whichever library reads them where.
 * @param {{ concurrency: number } & Record<string, unknown>} options Worker options
 */
export function openWorker(ctx, processor, options) {
  return ctx.open(new ctx.lib.Worker(ctx.queueName, processor, { connection: ctx.connection, ...options }));
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Wall-clock time in ms with sub-millisecond resolution, comparable across processes on one
 * machine. Date.now() has 1 ms steps, too coarse for latencies of about a millisecond; the
 * process's time origin (taken from the system clock at start) plus the monotonic
 * performance.now() is not. Two forked processes were measured to agree within about 0.003 ms.
 */
export const wallClockMs = () => performance.timeOrigin + performance.now();

/**
 * Adds `total` measured jobs with `addBulk`, BULK_BATCH at a time, one call in flight.
 * @param {(i: number) => { name: string, data: object, opts?: object }} makeJob
 */
export async function addInBatches(queue, total, makeJob) {
  for (let start = 0; start < total; start += BULK_BATCH) {
    const batch = [];
    for (let i = start; i < Math.min(total, start + BULK_BATCH); i++) batch.push(makeJob(i));
    await queue.addBulk(batch);
  }
}

/**
 * Issues `total` single `add` calls at `ratePerSec`, each job carrying its index `i` and the
 * wall-clock time `t` (wallClockMs) at which add was called: the enqueue time latencies are
 * measured from. Adds are not awaited one by one: like a busy web server, the producer keeps
 * its schedule whatever each call's latency; a schedule that fell behind catches up at the next
 * tick.
 * @returns {Promise<number>} the add rate actually achieved, jobs/s
 */
export async function addPaced(queue, { total, ratePerSec, opts }) {
  const pending = [];
  let failure;
  const started = performance.now();
  let sent = 0;
  while (sent < total) {
    if (failure) throw failure;
    const due = Math.min(total, Math.floor(((performance.now() - started) * ratePerSec) / 1000) + 1);
    while (sent < due) {
      const add = queue.add(JOB, { i: sent, t: wallClockMs() }, opts);
      add.catch((error) => (failure ??= error));
      pending.push(add);
      sent++;
    }
    if (sent < total) await sleep(1);
  }
  const issuedIn = (performance.now() - started) / 1000;
  await Promise.all(pending);
  return total / Math.max(issuedIn, 1 / ratePerSec);
}

/** The note a producer leaves when it could not keep its asked rate (its figures mean less). */
export function rateNote(achieved, asked) {
  return achieved < asked * 0.95
    ? `producer reached only ${Math.round(achieved)} adds/s of the ${asked} asked: latencies include its backlog`
    : undefined;
}

/**
 * Adds one warm-up job and waits until `worker` has completed it: the worker is then connected,
 * has loaded its scripts and is waiting for work, so a producer started next measures a running
 * worker, not its startup.
 */
export function warmUpWorker(queue, worker) {
  return new Promise((resolve, reject) => {
    const finish = (error) => {
      clearTimeout(timer);
      worker.off('completed', completed);
      worker.off('failed', failed);
      if (error) reject(error);
      else resolve(undefined);
    };
    const completed = (job) => job.name === WARMUP && finish();
    const failed = (job, error) => job?.name === WARMUP && finish(new Error(`warm-up job failed: ${error?.message}`));
    const timer = setTimeout(() => finish(new Error(`warm-up job not completed within ${STALL_MS / 1000} s`)), STALL_MS);
    worker.on('completed', completed);
    worker.on('failed', failed);
    queue.add(WARMUP, {}).catch(finish);
  });
}

/**
 * Resolves once `expected` distinct measured jobs (by `data.i`) have completed on `worker`.
 * Rejects on a worker 'error', on any failed job (a no-op job that fails means a broken run),
 * or when no measured job completes for STALL_MS.
 * `onCompleted(job, count)` runs for each first completion; duplicates are counted apart
 * (at-least-once allows them only after faults, and this benchmark injects none).
 * @returns {Promise<{ duplicates: number }>}
 */
export function trackCompletions(worker, expected, onCompleted) {
  return new Promise((resolve, reject) => {
    const seen = new Uint8Array(expected);
    let count = 0;
    let duplicates = 0;
    let lastProgress = Date.now();

    const finish = (error) => {
      clearInterval(stallCheck);
      worker.off('completed', completed);
      worker.off('failed', failed);
      worker.off('error', errored);
      if (error) reject(error);
      else resolve({ duplicates });
    };
    const completed = (job) => {
      if (job.name !== JOB) return;
      const i = job.data.i;
      if (seen[i] === 1) {
        duplicates++;
        return;
      }
      seen[i] = 1;
      count++;
      lastProgress = Date.now();
      onCompleted(job, count);
      if (count === expected) finish();
    };
    const failed = (job, error) => finish(new Error(`job ${job?.id} (${job?.name}) failed: ${error?.message ?? error}`));
    const errored = (error) => finish(new Error(`worker error: ${error?.stack ?? error}`));
    const stallCheck = setInterval(() => {
      if (Date.now() - lastProgress > STALL_MS) {
        finish(new Error(`no job completed for ${STALL_MS / 1000} s: ${count} of ${expected} done`));
      }
    }, 1_000);

    worker.on('completed', completed);
    worker.on('failed', failed);
    worker.on('error', errored);
  });
}

/** CPU time (user + system) of this process, in ms. */
export const ownCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/**
 * Role body shared by the drain-type scenarios (process, groups): opens one worker at
 * `concurrency` on a queue already holding `total` measured jobs and waits until all have
 * completed. Call it after ctx.ready().
 *
 * The window runs from the first completion to the last, so worker startup (connecting, loading
 * scripts) is excluded; the Redis and worker CPU clocks are sampled at the same two instants.
 * @param {{ total: number, concurrency: number, processor?: (job: unknown) => Promise<unknown> }} options
 *        `processor` defaults to a no-op
 * @returns {Promise<{ jobsPerSec: number, redisCpuMsPer1k: number, workerCpuMsPer1k: number, duplicates: number }>}
 */
export async function drainMeasured(ctx, { total, concurrency, prefetch, processor = async () => {} }) {
  const sample = () => ({
    at: performance.now(),
    nodeMs: ownCpuMs(),
    redisMs: redisCpuMs(ctx),
  });
  /** @type {{ at: number, nodeMs: number, redisMs: number } | undefined} */
  let first;
  /** @type {typeof first} */
  let last;
  // `prefetch`: Hopper's claim-ahead option (BullMQ has none and ignores it).
  const worker = openWorker(ctx, processor, { concurrency, ...(prefetch > 0 && { prefetch }) });
  const { duplicates } = await trackCompletions(worker, total, (_job, count) => {
    if (count === 1) first = sample();
    if (count === total) last = sample();
  });
  if (!first || !last) throw new Error('completion tracking ended without its two samples');
  const jobsInWindow = total - 1;
  const per1k = (ms) => (ms / jobsInWindow) * 1000;
  return {
    jobsPerSec: jobsInWindow / ((last.at - first.at) / 1000),
    ...(ctx.redisPid !== null && { redisCpuMsPer1k: per1k(last.redisMs - first.redisMs) }),
    workerCpuMsPer1k: per1k(last.nodeMs - first.nodeMs),
    duplicates,
  };
}

/**
 * CPU time of the run's redis-server so far, in ms; 0 for a library on SQLite (no Redis:
 * `ctx.redisPid` is null, and its Redis figures are not reported).
 */
export function redisCpuMs(ctx) {
  return ctx.redisPid === null ? 0 : processCpuMs(ctx.redisPid, ctx.clockTicks);
}

/** The note a worker leaves when it saw the same job complete twice. */
export function duplicatesNote(duplicates) {
  return duplicates > 0 ? `${duplicates} job(s) completed more than once` : undefined;
}

/**
 * Checks the queue's job counts after a run, so that a figure is never reported for work that
 * was not done (lost, stuck or failed jobs).
 * @param {Record<string, number>} expected counts by state, e.g. { waiting: 0, active: 0 }
 */
export async function expectCounts(queue, expected) {
  const states = Object.keys(expected);
  const counts = await queue.getJobCounts(...states);
  const wrong = states.filter((state) => (counts[state] ?? 0) !== expected[state]);
  if (wrong.length > 0) {
    const describe = (state) => `${state} ${counts[state] ?? 0} (expected ${expected[state]})`;
    throw new Error(`job counts after the run are wrong: ${wrong.map(describe).join(', ')}`);
  }
}

/**
 * Role body shared by the latency-type scenarios: a worker that is already running (warmed up)
 * when the producer starts, calling `onStart(job)` in the processor and `onCompleted(job)` in
 * the 'completed' handler for each measured job, until `total` have completed.
 * @returns {Promise<{ duplicates: number }>}
 */
export async function runWarmWorker(ctx, { total, concurrency, prefetch, onStart, onCompleted }) {
  const queue = openQueue(ctx);
  const worker = openWorker(
    ctx,
    async (job) => {
      if (job.name === JOB) onStart(job);
    },
    { concurrency, ...(prefetch > 0 && { prefetch }) },
  );
  // Listening before the warm-up, so no measured job can complete unseen.
  const done = trackCompletions(worker, total, onCompleted);
  done.catch(() => {}); // awaited below; this only keeps an early failure from being "unhandled"
  await warmUpWorker(queue, worker);
  await ctx.ready();
  return done;
}

/**
 * Role body shared by the latency-type scenarios: a producer adding `total` jobs at
 * `ratePerSec` (see addPaced) with job options `opts`, after one untimed warm-up add.
 * @returns {Promise<{ notes: (string | undefined)[] }>}
 */
export async function runPacedProducer(ctx, { total, ratePerSec, opts }) {
  const queue = openQueue(ctx);
  await queue.add(WARMUP, {}); // connect and load scripts before the timed window
  await ctx.ready();
  const achieved = await addPaced(queue, { total, ratePerSec, opts });
  return { notes: [rateNote(achieved, ratePerSec)] };
}
