// process: how fast one worker process drains a full queue of no-op jobs, and what CPU that
// costs Redis and Node per 1,000 jobs. With no-op jobs, everything measured is queue overhead.

import { JOB, addInBatches, drainMeasured, duplicatesNote, expectCounts, metric, openQueue } from './common.mjs';

/**
 * Claim-ahead rows: "process c=10, prefetch N", for each N here (Hopper's `prefetch` option;
 * BullMQ has none, so its row is BullMQ at c=10, the figure the claim-ahead bar compares with).
 * `BENCH_PREFETCH=10,50,100` runs others (`BENCH_PREFETCH=` none); `BENCH_PROCESS_CONCURRENCY=10`
 * keeps only the cases at that concurrency (a short run to choose N). docs/performance.md, "Claim-ahead".
 */
const PREFETCH = (process.env.BENCH_PREFETCH ?? '20')
  .split(',')
  .filter((n) => n !== '')
  .map(Number);
const ONLY_CONCURRENCY = process.env.BENCH_PROCESS_CONCURRENCY === undefined ? undefined : Number(process.env.BENCH_PROCESS_CONCURRENCY);

export default {
  id: 'process',
  title: 'Processing: pre-added no-op jobs drained by one worker process',
  metrics: [
    metric('jobsPerSec', 'throughput', 'jobs/s', 'higher', 0),
    metric('redisCpuMsPer1k', 'Redis CPU per 1,000 jobs', 'ms', 'lower', 1, { redis: true }),
    metric('workerCpuMsPer1k', 'worker CPU per 1,000 jobs', 'ms', 'lower', 1),
  ],
  cases(quick) {
    // `BENCH_PROCESS_TOTAL`: jobs per drain for a short run (default 50,000).
    const total = quick ? 2_000 : Number(process.env.BENCH_PROCESS_TOTAL ?? 50_000);
    // `removeOnComplete: true` deletes each job as it completes. The last case keeps every
    // completed job, which is BullMQ's default; it is given explicitly (`false`) because the
    // libraries' defaults differ (Hopper keeps the last 1,000) and both must get the same.
    const cases = [
      { label: 'process c=1', params: { total, concurrency: 1, removeOnComplete: true } },
      { label: 'process c=10', params: { total, concurrency: 10, removeOnComplete: true } },
      ...PREFETCH.map((prefetch) => ({
        label: `process c=10, prefetch ${prefetch}`,
        params: { total, concurrency: 10, prefetch, removeOnComplete: true },
      })),
      { label: 'process c=100', params: { total, concurrency: 100, removeOnComplete: true } },
      {
        label: 'process c=100, completed jobs kept',
        params: { total, concurrency: 100, removeOnComplete: false },
      },
    ];
    return ONLY_CONCURRENCY === undefined ? cases : cases.filter((c) => c.params.concurrency === ONLY_CONCURRENCY);
  },
  // Filling happens in its own process so the worker process starts with a clean heap and
  // its CPU time is the worker's alone.
  steps: [['fill'], ['drain']],
  roles: {
    async fill(ctx) {
      const { total, removeOnComplete } = ctx.params;
      const opts = { removeOnComplete };
      const queue = openQueue(ctx);
      await ctx.ready();
      await addInBatches(queue, total, (i) => ({ name: JOB, data: { i }, opts }));
      await expectCounts(queue, { waiting: total });
    },

    async drain(ctx) {
      const { total, concurrency, prefetch, removeOnComplete } = ctx.params;
      const queue = openQueue(ctx);
      await ctx.ready();
      const { duplicates, ...metrics } = await drainMeasured(ctx, { total, concurrency, prefetch });
      await expectCounts(queue, {
        waiting: 0,
        active: 0,
        delayed: 0,
        failed: 0,
        completed: removeOnComplete ? 0 : total,
      });
      return { metrics, notes: [duplicatesNote(duplicates)] };
    },
  },
};
