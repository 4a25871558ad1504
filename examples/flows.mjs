// Flows in one file: a parent that waits for children in other queues and reads their results,
// a child failure handled by a policy, and a job that adds children while it runs.
// Run with `npm run build && node examples/flows.mjs` (uses REDIS_URL or a local Redis).
import { FlowProducer, Queue, QueueEvents, WaitingChildrenError, Worker } from 'hopper-queue';
import { redisUrl } from './lib/redis.mjs';

const { url: connection, stop } = await redisUrl();
const prefix = `flows-example-${process.pid}`;
const flows = new FlowProducer({ connection, prefix });
const reports = new Queue('reports', { connection, prefix });
const reportEvents = new QueueEvents('reports', { connection, prefix });
await reportEvents.waitUntilReady();

// Children: one queue extracts tables; a failing table is ignored rather than blocking the report.
const etl = new Worker(
  'etl',
  async (job) => {
    if (job.data.table === 'legacy') throw new Error('legacy table is gone');
    return { table: job.data.table, rows: job.data.table.length * 100 };
  },
  { connection, prefix, concurrency: 4 },
);

// Parents: a report runs once its children are done and reads their results; a "fan-out" job adds
// children while it runs (in a durable step, so a retry does not add them twice), then waits.
const reportWorker = new Worker(
  'reports',
  async (job, token) => {
    if (job.name === 'fan-out') {
      await job.step('add-children', async () => {
        const etlQueue = new Queue('etl', { connection, prefix });
        const parent = { id: job.id, queue: job.queueQualifiedName };
        await etlQueue.addBulk(['eu', 'us', 'apac'].map((region) => ({ name: 'region', data: { table: region }, opts: { parent } })));
        await etlQueue.close();
      });
      if (await job.moveToWaitingChildren(token)) throw new WaitingChildrenError();
    }
    const results = Object.values(await job.getChildrenValues());
    const failed = await job.getFailedChildrenValues();
    return { rows: results.reduce((sum, r) => sum + r.rows, 0), tables: results.length, failed: Object.values(failed) };
  },
  { connection, prefix },
);

reportEvents.on('child-failed', ({ jobId, childKey, failedReason, policy }) =>
  console.log(`event: child ${childKey} of report ${jobId} failed (${failedReason}); policy ${policy}`),
);

const tree = await flows.add({
  name: 'monthly',
  queueName: 'reports',
  data: { month: '2026-11' },
  children: [
    { name: 'extract', queueName: 'etl', data: { table: 'sales' } },
    { name: 'extract', queueName: 'etl', data: { table: 'refunds' } },
    { name: 'extract', queueName: 'etl', data: { table: 'legacy' }, opts: { ignoreDependencyOnFailure: true } },
  ],
});
console.log(`added report #${tree.job.id} with ${tree.children.length} children; state: ${await tree.job.getState()}`);
console.log('report result:', JSON.stringify(await tree.job.waitUntilFinished(reportEvents, 10_000)));

const fanOut = await reports.add('fan-out', {});
console.log('fan-out result:', JSON.stringify(await fanOut.waitUntilFinished(reportEvents, 10_000)));

const flow = await flows.getFlow({ queueName: 'reports', id: tree.job.id });
console.log(`getFlow: ${flow.job.name} <- ${flow.children.map((c) => `${c.job.name}(${c.job.data.table})`).join(', ')}`);

await Promise.all([etl.close(), reportWorker.close(), reportEvents.close()]);
const etlQueue = new Queue('etl', { connection, prefix });
await Promise.all([reports.obliterate({ force: true }), etlQueue.obliterate({ force: true })]);
await Promise.all([reports.close(), etlQueue.close(), flows.close()]);
stop();
console.log('done.');
