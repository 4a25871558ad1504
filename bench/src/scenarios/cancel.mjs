// cancel: how quickly `queue.cancelJob` in one process stops an active job in another, from the
// call to the processor's AbortSignal firing in the worker process. Hopper only: BullMQ cannot
// cancel an active job, so the scenario declares it `notApplicable` (reported as n/a, not run).
//
// Hopper marks the job and tells the worker holding it on a Redis pub/sub channel; the worker's
// lock renewal reports cancellations too, as a fallback. Here the worker renews locks once an
// hour, so nothing but the pub/sub message can deliver a cancellation within the run: the figure
// is the push path's alone, and a lost message is a hang (the run fails) rather than a latency
// of up to lockRenewTime. The lock lasts two hours (a renewal time must be below the lock's
// duration); jobs are active for about 200 ms, so the lock never needs renewing.
//
// The canceller records when it calls cancelJob, the worker when the signal aborts, each by job
// id; the deltas are computed in the parent once both results are back (`combine`).

import { performance } from 'node:perf_hooks';
import { percentileName, percentiles } from '../stats.mjs';
import { JOB, STALL_MS, WARMUP, metric, openQueue, openWorker, sleep, wallClockMs } from './common.mjs';

/** Lock renewal pushed an hour away, so it cannot deliver a cancellation during the run. */
const LOCK_RENEW_MS = 3_600_000;
/**
 * Every job gets a second attempt, so a cancellation that let the job be retried would show
 * (with the default single attempt the check could not fail). Failed jobs are kept for the check.
 */
const JOB_OPTS = { attempts: 2, removeOnFail: false };
/** The cancel reason: a failed job's failedReason is `CancelledError: <reason>`. */
const REASON = 'bench';
/** How often the warm-up cancel is repeated until the worker hears one (see warmUpCancel). */
const RESEND_MS = 50;

const PERCENTILES = [50, 95, 99, 100];
/** Metric key for a percentile: `abortP50`, `abortMax`... */
const keyOf = (p) => `abort${percentileName(p).replace(/^./, (c) => c.toUpperCase())}`;

/**
 * Waits, in the processor, until the job's signal aborts; records when in `abortedAt` (measured
 * jobs only) and rejects with the abort reason, as a processor that honours its signal would.
 */
function untilAborted(job, signal, abortedAt) {
  return new Promise((_resolve, reject) => {
    const onAbort = () => {
      if (job.name === JOB) abortedAt[job.id] = wallClockMs();
      reject(signal.reason);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Adds a warm-up job and, once the worker has it, cancels it until its 'failed' event arrives.
 * The worker subscribes to the cancel channel after it starts, asynchronously, so a first cancel
 * can be published before anyone listens: it is repeated every RESEND_MS until one gets through.
 * Afterwards the subscription is live, the cancel script loaded and the abort path run once,
 * all outside the timed window.
 */
function warmUpCancel(queue, worker) {
  return new Promise((resolve, reject) => {
    let settled = false;
    /** @type {ReturnType<typeof setInterval> | undefined} */
    let resend;
    const finish = (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(resend);
      worker.off('active', active);
      worker.off('failed', failed);
      if (error) reject(error);
      else resolve(undefined);
    };
    const cancel = (id) =>
      queue.cancelJob(id, 'warm-up').then((outcome) => {
        // 'finished': a resend raced the failure being recorded; the 'failed' event settles it.
        if (outcome !== 'signalled' && outcome !== 'finished') {
          finish(new Error(`cancelJob on the active warm-up job returned "${outcome}", not "signalled"`));
        }
      }, finish);
    const active = (job) => {
      if (job.name !== WARMUP || resend) return;
      void cancel(job.id);
      resend = setInterval(() => void cancel(job.id), RESEND_MS);
    };
    const failed = (job, error) => {
      if (job?.name !== WARMUP) return;
      if (error?.name === 'CancelledError') finish();
      else finish(new Error(`warm-up job failed with "${error?.message ?? error}" instead of a CancelledError`));
    };
    const timer = setTimeout(() => finish(new Error(`warm-up job not cancelled within ${STALL_MS / 1000} s`)), STALL_MS);
    worker.on('active', active);
    worker.on('failed', failed);
    queue.add(WARMUP, {}, JOB_OPTS).catch(finish);
  });
}

/**
 * Resolves once `expected` distinct measured jobs have failed with a CancelledError. Rejects on a
 * worker 'error', on a measured job failing for any other reason, or when no measured job fails
 * for STALL_MS (a cancellation the worker never heard of).
 */
function trackCancellations(worker, expected) {
  return new Promise((resolve, reject) => {
    const seen = new Set();
    let lastProgress = Date.now();
    const finish = (error) => {
      clearInterval(stallCheck);
      worker.off('failed', failed);
      worker.off('error', errored);
      if (error) reject(error);
      else resolve(undefined);
    };
    const failed = (job, error) => {
      if (job?.name !== JOB) return;
      if (error?.name !== 'CancelledError') {
        finish(new Error(`job ${job.id} failed with "${error?.message ?? error}" instead of a CancelledError`));
        return;
      }
      if (seen.has(job.id)) return;
      seen.add(job.id);
      lastProgress = Date.now();
      if (seen.size === expected) finish();
    };
    const errored = (error) => finish(new Error(`worker error: ${error?.stack ?? error}`));
    const stallCheck = setInterval(() => {
      if (Date.now() - lastProgress > STALL_MS) {
        finish(new Error(`no job was cancelled for ${STALL_MS / 1000} s: ${seen.size} of ${expected} done`));
      }
    }, 1_000);
    worker.on('failed', failed);
    worker.on('error', errored);
  });
}

/**
 * Checks how each cancelled job ended: failed, with a CancelledError reason, after a single
 * attempt. Returns a note listing the exceptions, or undefined when there are none.
 * @param {string[]} ids the measured jobs
 * @param {Map<string, number>} starts processor starts by job id
 */
async function outcomeNote(queue, ids, starts) {
  const failed = new Map();
  for (const job of await queue.getJobs(['failed'])) failed.set(job.id, job);
  const exceptions = [];
  for (const id of ids) {
    const job = failed.get(id);
    const problems = [];
    if (!job) {
      const current = await queue.getJob(id);
      problems.push(`is ${current ? await current.getState() : 'gone'}, not failed`);
    } else if (!String(job.failedReason).startsWith('CancelledError')) {
      problems.push(`failed with reason ${JSON.stringify(job.failedReason)}`);
    }
    const runs = starts.get(id) ?? 0;
    if (runs > 1 || (job?.attemptsMade ?? 0) > 1) {
      problems.push(`was retried (processor started ${runs} time${runs === 1 ? '' : 's'}, attemptsMade ${job?.attemptsMade ?? '?'})`);
    }
    if (problems.length > 0) exceptions.push(`job ${id} ${problems.join(' and ')}`);
  }
  if (exceptions.length === 0) return undefined;
  const shown = exceptions.slice(0, 5).join('; ');
  return `${exceptions.length} of ${ids.length} cancelled jobs did not end failed once with a CancelledError reason: ${shown}${exceptions.length > 5 ? '; ...' : ''}`;
}

/** Polls the job's state until it is active; anything but waiting or active breaks the run. */
async function waitUntilActive(job) {
  const deadline = performance.now() + STALL_MS;
  for (;;) {
    const state = await job.getState();
    if (state === 'active') return;
    if (state !== 'waiting') throw new Error(`job ${job.id} is ${state} before being cancelled`);
    if (performance.now() > deadline) throw new Error(`job ${job.id} still waiting after ${STALL_MS / 1000} s`);
    await sleep(1);
  }
}

export default {
  id: 'cancel',
  title: "Cancellation: from cancelJob in another process to the active job's abort signal, 50 cancels/s",
  notApplicable: {
    bullmq: 'no cancellation of active jobs',
  },
  metrics: PERCENTILES.map((p) => metric(keyOf(p), `cancel to abort ${percentileName(p)}`, 'ms', 'lower', 2)),
  cases: (quick) => [{ label: 'cancel', params: { total: quick ? 50 : 500, ratePerSec: 50, concurrency: 10 } }],
  // Both at once: the worker declares itself ready once a warm-up cancellation has reached it.
  steps: [['worker', 'canceller']],
  roles: {
    async worker(ctx) {
      const { total, concurrency } = ctx.params;
      /** Wall-clock time (wallClockMs) at which each measured job's signal aborted, by job id. */
      const abortedAt = {};
      /** Processor starts by job id: more than one means a cancelled job was retried. */
      const starts = new Map();
      const queue = openQueue(ctx);
      const worker = openWorker(
        ctx,
        async (job, _token, signal) => {
          if (!signal) throw new Error('the processor got no AbortSignal (third argument)');
          if (job.name === JOB) {
            starts.set(job.id, (starts.get(job.id) ?? 0) + 1);
            // A retry must not wait for a cancel that will never come: it completes, and the
            // outcome check reports it.
            if (starts.get(job.id) > 1) return;
          }
          await untilAborted(job, signal, abortedAt);
        },
        { concurrency, lockRenewTime: LOCK_RENEW_MS, lockDuration: 2 * LOCK_RENEW_MS },
      );
      // Listening before the warm-up, so no measured cancellation can go unseen.
      const done = trackCancellations(worker, total);
      done.catch(() => {}); // awaited below; this only keeps an early failure from being "unhandled"
      await warmUpCancel(queue, worker);
      await ctx.ready();
      await done;
      return { data: { abortedAt }, notes: [await outcomeNote(queue, Object.keys(abortedAt), starts)] };
    },

    async canceller(ctx) {
      const { total, ratePerSec } = ctx.params;
      const queue = openQueue(ctx);
      if (typeof queue.cancelJob !== 'function') {
        throw new Error('this library has no queue.cancelJob(): the cancel scenario applies to Hopper only');
      }
      // Connects and loads the cancel script before the timed window (no such job: a no-op).
      const warm = await queue.cancelJob('no-such-job', REASON);
      if (warm !== 'missing') throw new Error(`cancelJob on a job that does not exist returned "${warm}"`);
      await ctx.ready();

      const jobs = await queue.addBulk(Array.from({ length: total }, (_, i) => ({ name: JOB, data: { i }, opts: JOB_OPTS })));
      /** Wall-clock time just before each cancelJob call, by job id. */
      const sentAt = {};
      const started = performance.now();
      // Jobs are claimed in order, so the next to cancel is (almost always) already active: one
      // call at a time on a fixed schedule, each measured on its own, not a burst.
      for (const [k, job] of jobs.entries()) {
        const wait = started + (k * 1000) / ratePerSec - performance.now();
        if (wait > 0) await sleep(wait);
        await waitUntilActive(job);
        const t = wallClockMs();
        const outcome = await queue.cancelJob(job.id, REASON);
        if (outcome !== 'signalled') throw new Error(`cancelJob(${job.id}) on an active job returned "${outcome}", not "signalled"`);
        sentAt[job.id] = t;
      }
      const achieved = (total - 1) / Math.max((performance.now() - started) / 1000, 1e-3);
      const note =
        total > 1 && achieved < ratePerSec * 0.95
          ? `canceller reached only ${Math.round(achieved)} cancels/s of the ${ratePerSec} asked (jobs slow to become active)`
          : undefined;
      return { data: { sentAt }, notes: [note] };
    },
  },

  /** Runs in the parent: cancel-to-abort latency per job, from the two roles' timestamps. */
  combine({ worker, canceller }) {
    const { abortedAt } = worker;
    const { sentAt } = canceller;
    const ids = Object.keys(sentAt);
    const unmatched = [...ids.filter((id) => !(id in abortedAt)), ...Object.keys(abortedAt).filter((id) => !(id in sentAt))];
    if (unmatched.length > 0) {
      throw new Error(`cancel and abort times do not match for job(s) ${unmatched.slice(0, 10).join(', ')}`);
    }
    const values = percentiles(
      ids.map((id) => abortedAt[id] - sentAt[id]),
      PERCENTILES,
    );
    return { metrics: Object.fromEntries(PERCENTILES.map((p) => [keyOf(p), values[percentileName(p)]])) };
  },
};
