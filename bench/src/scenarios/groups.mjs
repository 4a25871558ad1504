// groups: what fair groups cost. One worker process drains the same pre-added no-op jobs twice in
// each run, first spread round-robin over many groups (job i in group `g${i % groups}`), then
// without groups; the figures are both throughputs, their ratio and the Redis and worker CPU of
// each. Hopper only: BullMQ has groups only in BullMQ Pro, so the scenario declares it
// `notApplicable` (reported as n/a, not run).
//
// The two halves differ in the `group` option alone: same jobs, same worker settings, same
// processor, each half on a freshly flushed Redis and in fresh processes (fill, then drain, as
// in `process`). Adding job i to group i % groups makes round-robin order the same as insertion
// order, so both halves run the jobs in the same order and the difference is the groups'
// bookkeeping. The ratio is taken per run, from two drains measured a few seconds apart, so
// slow drift of the machine weighs on both; the reported ratio is the median of those.

import { connectRedis } from '../redis/client.mjs';
import { JOB, addInBatches, drainMeasured, duplicatesNote, expectCounts, metric, openQueue } from './common.mjs';

/** Completed jobs are removed, as in the `process` scenario's c=100 case. */
const JOB_OPTS = { removeOnComplete: true };
const CONCURRENCY = 100;

/** The two halves of a run: metric key prefix and whether jobs get a group. */
const HALVES = {
  grouped: { grouped: true, title: 'with groups' },
  plain: { grouped: false, title: 'without groups' },
};

/** Metric key of a half's figure: `groupedJobsPerSec`, `plainRedisCpuMsPer1k`... */
const keyOf = (half, figure) => `${half}${figure.replace(/^./, (c) => c.toUpperCase())}`;

const groupOf = (i, groups) => `g${i % groups}`;

/**
 * Empties Redis: the second half must start from the same state as the first (the harness
 * flushes only between runs). Called before the queue is opened.
 */
async function flushRedis(ctx) {
  const client = await connectRedis(ctx.connection);
  try {
    await client.command('FLUSHALL');
  } finally {
    client.close();
  }
}

/** Fills the queue with `total` measured jobs, each in its group when the half has groups. */
function fillRole(half) {
  const { grouped } = HALVES[half];
  return async (ctx) => {
    const { total, groups } = ctx.params;
    await flushRedis(ctx);
    const queue = openQueue(ctx);
    await ctx.ready();
    await addInBatches(queue, total, (i) => ({
      name: JOB,
      data: { i },
      opts: grouped ? { ...JOB_OPTS, group: { id: groupOf(i, groups) } } : JOB_OPTS,
    }));
    await expectCounts(queue, { waiting: total });
    if (grouped) {
      if (typeof queue.getGroupsCount !== 'function') {
        throw new Error('this library has no queue.getGroupsCount(): the groups scenario applies to Hopper only');
      }
      const count = await queue.getGroupsCount();
      if (count !== groups) throw new Error(`the queue holds ${count} groups after the fill, not ${groups}`);
    }
  };
}

/**
 * Drains the queue with one worker and reports the half's figures. The processor checks that
 * each group's jobs start in the order they were added (FIFO within a group); it does the same
 * work in both halves, so the ungrouped one pays for the check too.
 */
function drainRole(half) {
  return async (ctx) => {
    const { total, groups } = ctx.params;
    /** Index of the last job started per group (-1: none yet). */
    const lastStarted = new Int32Array(groups).fill(-1);
    let outOfOrder = 0;
    const queue = openQueue(ctx);
    await ctx.ready();
    const { duplicates, ...figures } = await drainMeasured(ctx, {
      total,
      concurrency: CONCURRENCY,
      processor: async (job) => {
        const i = job.data.i;
        const g = i % groups;
        if (i < lastStarted[g]) outOfOrder++;
        else lastStarted[g] = i;
      },
    });
    await expectCounts(queue, { waiting: 0, active: 0, delayed: 0, failed: 0, completed: 0 });
    const orderNote =
      outOfOrder > 0 && HALVES[half].grouped
        ? `${outOfOrder} job(s) started before an earlier job of their group (groups are FIFO)`
        : undefined;
    return {
      metrics: Object.fromEntries(Object.entries(figures).map(([figure, value]) => [keyOf(half, figure), value])),
      notes: [duplicatesNote(duplicates), orderNote],
      data: { jobsPerSec: figures.jobsPerSec },
    };
  };
}

export default {
  id: 'groups',
  title: 'Groups: pre-added no-op jobs in many groups, drained by one worker process, against the same jobs without groups',
  notApplicable: {
    bullmq: 'no groups outside BullMQ Pro',
    'hopper-sqlite': 'measured on Redis only: each half starts from a flushed Redis',
  },
  metrics: [
    ...Object.entries(HALVES).map(([half, { title }]) => metric(keyOf(half, 'jobsPerSec'), `throughput ${title}`, 'jobs/s', 'higher', 0)),
    metric('groupedToPlain', 'throughput with groups / without groups', 'ratio', 'higher', 2),
    ...Object.entries(HALVES).map(([half, { title }]) =>
      metric(keyOf(half, 'redisCpuMsPer1k'), `Redis CPU per 1,000 jobs ${title}`, 'ms', 'lower', 1, { redis: true }),
    ),
    ...Object.entries(HALVES).map(([half, { title }]) =>
      metric(keyOf(half, 'workerCpuMsPer1k'), `worker CPU per 1,000 jobs ${title}`, 'ms', 'lower', 1),
    ),
  ],
  cases(quick) {
    const params = quick ? { total: 5_000, groups: 100 } : { total: 100_000, groups: 1_000 };
    return [{ label: `groups c=${CONCURRENCY}, ${params.groups.toLocaleString('en-US')} groups`, params }];
  },
  // Each half fills in one process and drains in another, so the worker starts with a clean
  // heap and its CPU time is its own; the grouped half goes first in every run.
  steps: [['fillGrouped'], ['drainGrouped'], ['fillPlain'], ['drainPlain']],
  roles: {
    fillGrouped: fillRole('grouped'),
    drainGrouped: drainRole('grouped'),
    fillPlain: fillRole('plain'),
    drainPlain: drainRole('plain'),
  },

  /** Runs in the parent: the run's grouped throughput against its ungrouped one. */
  combine({ drainGrouped, drainPlain }) {
    return { metrics: { groupedToPlain: drainGrouped.jobsPerSec / drainPlain.jobsPerSec } };
  },
};
