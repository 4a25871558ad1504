// add-bulk: throughput of `addBulk`, as a fan-out job splitting a large send into batches.

import { performance } from 'node:perf_hooks';
import { BULK_BATCH, JOB, WARMUP, addInBatches, expectCounts, metric, openQueue } from './common.mjs';

export default {
  id: 'add-bulk',
  title: `Bulk adds: \`queue.addBulk\` batches of ${BULK_BATCH.toLocaleString('en-US')}, one call in flight`,
  metrics: [metric('jobsPerSec', 'throughput', 'jobs/s', 'higher', 0)],
  cases: (quick) => [{ label: 'add-bulk', params: { total: quick ? 2_000 : 100_000 } }],
  steps: [['producer']],
  roles: {
    async producer(ctx) {
      const { total } = ctx.params;
      const queue = openQueue(ctx);
      await queue.addBulk([{ name: WARMUP, data: {} }]); // connect and load scripts untimed
      await ctx.ready();

      const started = performance.now();
      await addInBatches(queue, total, (i) => ({ name: JOB, data: { i } }));
      const seconds = (performance.now() - started) / 1000;

      await expectCounts(queue, { waiting: total + 1 });
      return { metrics: { jobsPerSec: total / seconds } };
    },
  },
};
