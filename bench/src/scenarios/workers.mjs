// workers: the shape of a real deployment: 4 worker processes, each at concurrency 100, drain one
// queue of pre-added no-op jobs together (on Redis: one server shared by all four). Figures:
// throughput from the first completion in any process to the last in any, the Redis CPU over that
// window, and the CPU of the four worker processes together, per 1,000 jobs.
//
// No process knows how many jobs it will get: each drains until the queue is empty (checked
// every POLL_MS with getJobCounts, the same calls for every library) and reports what it saw;
// the parent adds the processes' counts up (every job exactly once) and combines their clocks,
// which agree across processes on one machine (see wallClockMs).

import {
  JOB,
  STALL_MS,
  addInBatches,
  expectCounts,
  metric,
  openQueue,
  openWorker,
  ownCpuMs,
  redisCpuMs,
  sleep,
  wallClockMs,
} from './common.mjs';

const PROCESSES = 4;
const CONCURRENCY = 100;
/** How often a process checks whether the queue is empty. */
const POLL_MS = 100;
const DRAINERS = Array.from({ length: PROCESSES }, (_, i) => `drain${i + 1}`);

/**
 * One worker process: processes jobs until the queue holds no waiting or active job, and returns
 * its share: how many measured jobs it completed (and their indexes' sum, for the parent's
 * exactly-once check), its first and last completion (wall clock, own CPU, Redis CPU).
 */
async function drainShare(ctx) {
  const { total } = ctx.params;
  const queue = openQueue(ctx);
  let count = 0;
  let indexSum = 0;
  let first;
  let lastAt = 0;
  let lastCpu = 0;
  let lastProgress = Date.now();
  let failure;
  const worker = openWorker(ctx, async () => {}, { concurrency: CONCURRENCY, autorun: false });
  worker.on('completed', (job) => {
    if (job.name !== JOB) return;
    count++;
    indexSum += job.data.i;
    lastAt = wallClockMs();
    lastCpu = ownCpuMs();
    lastProgress = Date.now();
    first ??= { at: lastAt, nodeMs: lastCpu, redisMs: redisCpuMs(ctx) };
  });
  worker.on('failed', (job, error) => (failure ??= new Error(`job ${job?.id} failed: ${error?.message ?? error}`)));
  worker.on('error', (error) => (failure ??= new Error(`worker error: ${error?.stack ?? error}`)));
  await worker.waitUntilReady();
  await ctx.ready();
  lastProgress = Date.now();
  void worker.run();
  for (;;) {
    await sleep(POLL_MS);
    if (failure) throw failure;
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    if (Object.values(counts).every((n) => n === 0)) break;
    if (Date.now() - lastProgress > STALL_MS) {
      throw new Error(`no job completed in this process for ${STALL_MS / 1000} s (${count} done, ${total} in all)`);
    }
  }
  // The queue can read empty just before the last jobs' 'completed' events fire in this process
  // (a library moves a job out of `active` before it emits the event): closing the worker waits
  // for them.
  await worker.close();
  const redisAtEnd = redisCpuMs(ctx);
  return { data: { count, indexSum, first: first ?? null, lastAt, lastCpu, redisAtEnd, onRedis: ctx.redisPid !== null } };
}

export default {
  id: 'workers',
  title: `${PROCESSES} worker processes (concurrency ${CONCURRENCY} each) draining one queue of pre-added no-op jobs`,
  metrics: [
    metric('jobsPerSec', 'throughput', 'jobs/s', 'higher', 0),
    metric('redisCpuMsPer1k', 'Redis CPU per 1,000 jobs', 'ms', 'lower', 1, { redis: true }),
    metric('workerCpuMsPer1k', `CPU of the ${PROCESSES} worker processes per 1,000 jobs`, 'ms', 'lower', 1),
  ],
  cases: (quick) => [{ label: `${PROCESSES} workers c=${CONCURRENCY}`, params: { total: quick ? 4_000 : 100_000 } }],
  steps: [['fill'], DRAINERS],
  roles: {
    async fill(ctx) {
      const { total } = ctx.params;
      const queue = openQueue(ctx);
      await ctx.ready();
      await addInBatches(queue, total, (i) => ({ name: JOB, data: { i }, opts: { removeOnComplete: true } }));
      await expectCounts(queue, { waiting: total });
    },
    ...Object.fromEntries(DRAINERS.map((role) => [role, drainShare])),
  },
  combine(data, { total }) {
    const shares = DRAINERS.map((role) => data[role]);
    const count = shares.reduce((sum, share) => sum + share.count, 0);
    const indexSum = shares.reduce((sum, share) => sum + share.indexSum, 0);
    // Every index 0..total-1 once: the count and the sum of indexes both match (a lost job and a
    // duplicate would have to cancel out in both to pass).
    if (count !== total || indexSum !== (total * (total - 1)) / 2) {
      throw new Error(`the ${PROCESSES} processes completed ${count} measured jobs (index sum ${indexSum}), not each of the ${total} once`);
    }
    const working = shares.filter((share) => share.first !== null);
    const firstAt = Math.min(...working.map((share) => share.first.at));
    const lastAt = Math.max(...working.map((share) => share.lastAt));
    const workerMs = working.reduce((sum, share) => sum + (share.lastCpu - share.first.nodeMs), 0);
    const redisMs = Math.max(...working.map((share) => share.redisAtEnd)) - Math.min(...working.map((share) => share.first.redisMs));
    const idle = PROCESSES - working.length;
    return {
      metrics: {
        jobsPerSec: total / ((lastAt - firstAt) / 1000),
        ...(working[0].onRedis && { redisCpuMsPer1k: (redisMs / total) * 1000 }),
        workerCpuMsPer1k: (workerMs / total) * 1000,
      },
      notes: [idle > 0 ? `${idle} of the ${PROCESSES} processes completed no job` : undefined],
    };
  },
};
