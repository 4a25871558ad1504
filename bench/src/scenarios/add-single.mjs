// add-single: throughput of individual `add` calls, as an API server enqueuing per request.

import { performance } from 'node:perf_hooks';
import { JOB, WARMUP, expectCounts, metric, openQueue } from './common.mjs';

export default {
  id: 'add-single',
  title: 'Single adds: `queue.add` calls with up to 50 in flight',
  metrics: [metric('jobsPerSec', 'throughput', 'jobs/s', 'higher', 0)],
  cases: (quick) => [{ label: 'add-single', params: { total: quick ? 2_000 : 20_000, inFlight: 50 } }],
  steps: [['producer']],
  roles: {
    async producer(ctx) {
      const { total, inFlight } = ctx.params;
      const queue = openQueue(ctx);
      await queue.add(WARMUP, {}); // connect and load scripts outside the timed window
      await ctx.ready();

      // `inFlight` lanes each awaiting its own add keep exactly that many calls outstanding.
      let next = 0;
      const lane = async () => {
        while (next < total) await queue.add(JOB, { i: next++ });
      };
      const started = performance.now();
      await Promise.all(Array.from({ length: inFlight }, lane));
      const seconds = (performance.now() - started) / 1000;

      await expectCounts(queue, { waiting: total + 1 });
      return { metrics: { jobsPerSec: total / seconds } };
    },
  },
};
