// latency: how long a job waits at a steady, moderate load (1,000 jobs/s, far below either
// library's capacity), from the producer's `add` call to the processor starting it and to
// the worker's 'completed' event. Producer and worker are separate processes on the same
// machine, so their clocks agree (see wallClockMs).

import { percentileName, percentiles } from '../stats.mjs';
import { duplicatesNote, metric, runPacedProducer, runWarmWorker, wallClockMs } from './common.mjs';

/**
 * Extra cases with Hopper's claim-ahead: `BENCH_LATENCY_PREFETCH=20` adds "latency, prefetch 20"
 * (BullMQ has no such option: its row is BullMQ's latency). docs/performance.md, "Claim-ahead".
 */
const PREFETCH = (process.env.BENCH_LATENCY_PREFETCH ?? '')
  .split(',')
  .filter((n) => n !== '')
  .map(Number);

/** Completed jobs kept: a common production setting, so retention trimming is exercised. */
const RETENTION = { removeOnComplete: { count: 1_000 } };

/** p50 to p99, and the maximum: one job stuck until a timeout (a lost wake-up) shows only there. */
const PERCENTILES = [50, 95, 99, 100];
const WAITS = [
  { key: 'start', label: 'enqueue to start' },
  { key: 'completed', label: 'enqueue to completed' },
];
/** Metric key for a wait and a percentile: `startP50`, `completedMax`... */
const keyOf = (wait, p) => `${wait.key}${percentileName(p).replace(/^./, (c) => c.toUpperCase())}`;

export default {
  id: 'latency',
  title: 'Latency at 1,000 adds/s: enqueue to processor start, and to completed',
  metrics: WAITS.flatMap((wait) => PERCENTILES.map((p) => metric(keyOf(wait, p), `${wait.label} ${percentileName(p)}`, 'ms', 'lower', 2))),
  cases: (quick) => [
    { label: 'latency', params: { ratePerSec: 1_000, seconds: quick ? 2 : 10, concurrency: 10 } },
    ...PREFETCH.map((prefetch) => ({
      label: `latency, prefetch ${prefetch}`,
      params: { ratePerSec: 1_000, seconds: quick ? 2 : 10, concurrency: 10, prefetch },
    })),
  ],
  // Both processes run at once; the worker declares itself ready only once it is running.
  steps: [['worker', 'producer']],
  roles: {
    async worker(ctx) {
      const { ratePerSec, seconds, concurrency, prefetch } = ctx.params;
      const total = ratePerSec * seconds;
      const samples = { start: new Float64Array(total), completed: new Float64Array(total) };
      const { duplicates } = await runWarmWorker(ctx, {
        total,
        concurrency,
        prefetch,
        onStart: (job) => (samples.start[job.data.i] = wallClockMs() - job.data.t),
        onCompleted: (job) => (samples.completed[job.data.i] = wallClockMs() - job.data.t),
      });

      /** @type {Record<string, number>} */
      const metrics = {};
      for (const wait of WAITS) {
        const values = percentiles(samples[wait.key], PERCENTILES);
        for (const p of PERCENTILES) metrics[keyOf(wait, p)] = values[percentileName(p)];
      }
      return { metrics, notes: [duplicatesNote(duplicates)] };
    },

    producer(ctx) {
      const { ratePerSec, seconds } = ctx.params;
      return runPacedProducer(ctx, { total: ratePerSec * seconds, ratePerSec, opts: RETENTION });
    },
  },
};
