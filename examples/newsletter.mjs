// The newsletter fan-out: one "split" job sends a newsletter to 1,000,000 users as 1,000 batch
// jobs of 1,000 users each (never a million jobs at once), added as its children with addBulk,
// then waits for them and reports the total. Prints the time taken and Redis memory used.
// Run with `npm run build && node examples/newsletter.mjs` (uses REDIS_URL or a local Redis).
import { Queue, QueueEvents, WaitingChildrenError, Worker } from 'hopper-queue';
import { Redis } from 'ioredis';
import { redisUrl } from './lib/redis.mjs';

const USERS = Number(process.env.USERS ?? 1_000_000);
const BATCH = 1_000;

const { url: connection, stop } = await redisUrl();
const prefix = `newsletter-${process.pid}`;
const redis = new Redis(connection);
const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))[1]);

const campaigns = new Queue('campaigns', { connection, prefix });
const batches = new Queue('batches', { connection, prefix });
const events = new QueueEvents('campaigns', { connection, prefix });
await events.waitUntilReady();
const before = await usedMemory();
let peak = before;
let fannedOut;
const allAdded = new Promise((resolve) => (fannedOut = resolve));

// The split job: adds one child per batch of users (in a durable step, so a retry or a crash does
// not add them twice), in addBulk calls of 500, then waits for them to finish.
const split = new Worker(
  'campaigns',
  async (job, token) => {
    await job.step('fan-out', async () => {
      const parent = { id: job.id, queue: job.queueQualifiedName };
      const count = Math.ceil(job.data.users / BATCH);
      for (let first = 0; first < count; first += 500) {
        const chunk = [];
        for (let b = first; b < Math.min(first + 500, count); b++) {
          // A batch carries its range, not a thousand addresses: the worker loads them itself.
          chunk.push({
            name: 'send',
            data: { campaign: job.data.campaign, from: b * BATCH, to: Math.min((b + 1) * BATCH, job.data.users) },
            opts: { parent, attempts: 3 },
          });
        }
        await batches.addBulk(chunk);
      }
      peak = Math.max(peak, await usedMemory());
      fannedOut();
      return count;
    });
    if (await job.moveToWaitingChildren(token)) throw new WaitingChildrenError();
    const sent = Object.values(await job.getChildrenValues()).reduce((sum, n) => sum + n, 0);
    return { sent, batches: (await job.getDependenciesCount()).processed };
  },
  { connection, prefix },
);

// The batch worker: sends to its range of users (here a no-op that counts them). It starts once
// every batch exists, so the memory figure below is the peak.
const sender = new Worker('batches', async (job) => job.data.to - job.data.from, { connection, prefix, concurrency: 50, autorun: false });

const started = Date.now();
const campaign = await campaigns.add('newsletter', { campaign: 'november', users: USERS }, { jobId: 'newsletter:november' });
await allAdded;
sender.run().catch((err) => console.error(err));
const result = await campaign.waitUntilFinished(events, 120_000);
const seconds = (Date.now() - started) / 1000;
const batchCount = Math.ceil(USERS / BATCH);
console.log(`sent to ${result.sent.toLocaleString('en')} users in ${result.batches} batches in ${seconds.toFixed(1)} s`);
console.log(
  `Redis memory at the peak (all batches added): +${((peak - before) / 1024 / 1024).toFixed(1)} MiB, ` +
    `about ${Math.round((peak - before) / batchCount)} bytes per batch job (job, data, and its entry in the parent's pending set)`,
);

await Promise.all([split.close(), sender.close(), events.close()]);
await campaigns.obliterate({ force: true });
await batches.obliterate({ force: true });
await Promise.all([campaigns.close(), batches.close()]);
redis.disconnect();
stop();
