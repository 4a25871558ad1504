// delayed: how punctually a delayed job starts. Jobs delayed by 1,000 ms are added at a steady
// rate while a worker waits with free slots; lateness is processor start minus (add call time
// + delay), so it includes promotion, wake-up and claim, all of which a user sees.

import { percentiles } from '../stats.mjs';
import { duplicatesNote, metric, runPacedProducer, runWarmWorker, wallClockMs } from './common.mjs';

const RETENTION = { removeOnComplete: { count: 1_000 } };

export default {
  id: 'delayed',
  title: 'Delayed jobs: lateness of processor start for 1,000 ms delays added at 1,000/s',
  // The maximum shows a job left waiting for a timeout, which p99 would hide if it were only one.
  metrics: [
    metric('lateP50', 'lateness p50', 'ms', 'lower', 2),
    metric('lateP99', 'lateness p99', 'ms', 'lower', 2),
    metric('lateMax', 'lateness max', 'ms', 'lower', 2),
  ],
  cases: (quick) => [
    {
      label: 'delayed',
      params: { total: quick ? 500 : 5_000, ratePerSec: 1_000, delayMs: 1_000, concurrency: 100 },
    },
  ],
  steps: [['worker', 'producer']],
  roles: {
    async worker(ctx) {
      const { total, delayMs, concurrency } = ctx.params;
      const lateness = new Float64Array(total);
      const { duplicates } = await runWarmWorker(ctx, {
        total,
        concurrency,
        onStart: (job) => (lateness[job.data.i] = wallClockMs() - (job.data.t + delayMs)),
        onCompleted: () => {},
      });
      const { p50, p99, max } = percentiles(lateness, [50, 99, 100]);
      return { metrics: { lateP50: p50, lateP99: p99, lateMax: max }, notes: [duplicatesNote(duplicates)] };
    },

    producer(ctx) {
      const { total, ratePerSec, delayMs } = ctx.params;
      return runPacedProducer(ctx, { total, ratePerSec, opts: { delay: delayMs, ...RETENTION } });
    },
  },
};
