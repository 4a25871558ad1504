// memory: Redis memory per waiting job, the cost of a backlog. Measured as the growth of
// INFO `used_memory` while 10,000 jobs are added and nothing consumes them.

import { BULK_BATCH, JOB, WARMUP, addInBatches, expectCounts, metric, openQueue } from './common.mjs';

/**
 * INFO fields read. The growth of the last two is subtracted from used_memory's: client buffers
 * and the script cache are transient or fixed costs (a pipelined addBulk swells the query buffer
 * for a moment), not per job.
 */
const FIELDS = ['used_memory', 'mem_clients_normal', 'used_memory_scripts'];

export default {
  id: 'memory',
  title: `Memory: Redis used_memory per waiting job (100-byte payload, added in batches of ${BULK_BATCH.toLocaleString('en-US')})`,
  notApplicable: { 'hopper-sqlite': 'measures Redis memory' },
  metrics: [metric('bytesPerJob', 'Redis memory per waiting job', 'bytes', 'lower', 0, { redis: true })],
  cases: (quick) => [{ label: 'memory', params: { total: quick ? 2_000 : 10_000, payloadBytes: 100 } }],
  steps: [['producer']],
  roles: {
    async producer(ctx) {
      const { total, payloadBytes } = ctx.params;
      const payload = 'x'.repeat(payloadBytes);
      const redis = await ctx.redis();
      const queue = openQueue(ctx);
      // One job first, so the queue's fixed keys (id counter, metadata, events stream) and the
      // loaded scripts are in the baseline rather than charged to the measured jobs.
      await queue.addBulk([{ name: WARMUP, data: { payload } }]);
      await ctx.ready();

      const before = await redis.info('memory', FIELDS);
      await addInBatches(queue, total, (i) => ({ name: JOB, data: { i, payload } }));
      const after = await redis.info('memory', FIELDS);
      await expectCounts(queue, { waiting: total + 1 });

      const growth =
        after.used_memory -
        before.used_memory -
        (after.mem_clients_normal - before.mem_clients_normal) -
        (after.used_memory_scripts - before.used_memory_scripts);
      return { metrics: { bytesPerJob: growth / total } };
    },
  },
};
