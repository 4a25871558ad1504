// latency: how long a job waits at a steady, moderate load (1,000 jobs/s, far below either
// library's capacity), from the producer's `add` call to the processor starting it and to
// the worker's 'completed' event. Producer and worker are separate processes on the same
// machine, so their clocks agree (see wallClockMs).

import { percentiles } from '../stats.mjs';
import { duplicatesNote, metric, runPacedProducer, runWarmWorker, wallClockMs } from './common.mjs';

/** Completed jobs kept: a common production setting, so retention trimming is exercised. */
const RETENTION = { removeOnComplete: { count: 1_000 } };

const PERCENTILES = [50, 95, 99];

export default {
  id: 'latency',
  title: 'Latency at 1,000 adds/s: enqueue to processor start, and to completed',
  metrics: [
    ...PERCENTILES.map((p) => metric(`startP${p}`, `enqueue to start p${p}`, 'ms', 'lower', 2)),
    ...PERCENTILES.map((p) => metric(`completedP${p}`, `enqueue to completed p${p}`, 'ms', 'lower', 2)),
  ],
  cases: (quick) => [{ label: 'latency', params: { ratePerSec: 1_000, seconds: quick ? 2 : 10, concurrency: 10 } }],
  // Both processes run at once; the worker declares itself ready only once it is running.
  steps: [['worker', 'producer']],
  roles: {
    async worker(ctx) {
      const { ratePerSec, seconds, concurrency } = ctx.params;
      const total = ratePerSec * seconds;
      const toStart = new Float64Array(total);
      const toCompleted = new Float64Array(total);
      const { duplicates } = await runWarmWorker(ctx, {
        total,
        concurrency,
        onStart: (job) => (toStart[job.data.i] = wallClockMs() - job.data.t),
        onCompleted: (job) => (toCompleted[job.data.i] = wallClockMs() - job.data.t),
      });

      const start = percentiles(toStart, PERCENTILES);
      const completed = percentiles(toCompleted, PERCENTILES);
      /** @type {Record<string, number>} */
      const metrics = {};
      for (const p of PERCENTILES) {
        metrics[`startP${p}`] = start[`p${p}`];
        metrics[`completedP${p}`] = completed[`p${p}`];
      }
      return { metrics, notes: [duplicatesNote(duplicates)] };
    },

    producer(ctx) {
      const { ratePerSec, seconds } = ctx.params;
      return runPacedProducer(ctx, { total: ratePerSec * seconds, ratePerSec, opts: RETENTION });
    },
  },
};
