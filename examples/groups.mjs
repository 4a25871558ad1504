// Fair groups per tenant: one queue of webhook deliveries shared by every customer. A big
// customer queues 2,000 deliveries, then a small one queues 5: the small one's run at once
// instead of after the big backlog. Each customer is limited to 2 deliveries at a time and to 50
// per second (a sliding window), and to 5,000 queued; a paused customer waits. An AI customer's
// limit counts tokens (a weighted limiter: each job weighs its `cost`), and a job heavier than
// its whole window is refused at add.
// Run with `npm run build && node examples/groups.mjs` (uses REDIS_URL or a local Redis).
import { CostAboveRateLimitError, GroupMaxSizeExceededError, Queue, Worker } from 'hopper-queue';
import { redisUrl } from './lib/redis.mjs';

const { url: connection, stop } = await redisUrl();
const prefix = `groups-${process.pid}`;
const deliveries = new Queue('webhooks', { connection, prefix });

// Every customer (group) gets these unless it has its own settings.
await deliveries.setGroupDefaults({ concurrency: 2, limiter: { max: 50, duration: 1000 }, maxSize: 5_000 });
// A premium customer: twice the share of turns, and more at once.
await deliveries.setGroupOptions('premium', { weight: 2, concurrency: 4 });

const deliver = (customer, n) => ({ name: 'deliver', data: { customer, n }, opts: { group: { id: customer } } });
await deliveries.addBulk(Array.from({ length: 2_000 }, (_, n) => deliver('big-co', n)));
await deliveries.addBulk(Array.from({ length: 5 }, (_, n) => deliver('small-co', n)));
await deliveries.addBulk(Array.from({ length: 20 }, (_, n) => deliver('premium', n)));
await deliveries.pauseGroup('on-hold');
await deliveries.add('deliver', { customer: 'on-hold', n: 0 }, { group: { id: 'on-hold' } });

// The backlog cap: an add beyond it is refused, with nothing written.
await deliveries.setGroupOptions('tiny', { maxSize: 1 });
await deliveries.add('deliver', { customer: 'tiny', n: 0 }, { group: { id: 'tiny' } });
try {
  await deliveries.add('deliver', { customer: 'tiny', n: 1 }, { group: { id: 'tiny' } });
} catch (err) {
  if (!(err instanceof GroupMaxSizeExceededError)) throw err;
  console.log(`refused: group ${err.groupId} holds ${err.size} of ${err.maxSize}`);
}

// Tokens, not jobs: at most 1,000 tokens of this customer's jobs start per minute. Two jobs of
// 400 fit; the third waits for the window (the customer reads 'limited'), the others go on.
await deliveries.setGroupOptions('ai-co', { limiter: { max: 1_000, duration: 60_000, weight: 'cost' } });
const generate = (n, cost) => ({ name: 'generate', data: { customer: 'ai-co', n }, opts: { group: { id: 'ai-co' }, cost } });
await deliveries.addBulk([generate(0, 400), generate(1, 400), generate(2, 400)]);
try {
  await deliveries.add('generate', { customer: 'ai-co', n: 3 }, { group: { id: 'ai-co' }, cost: 5_000 });
} catch (err) {
  if (!(err instanceof CostAboveRateLimitError)) throw err;
  console.log(`refused: cost ${err.cost} is above group ${err.groupId}'s ${err.max} tokens per ${err.duration} ms`);
}

let started = 0;
const firstStart = new Map();
const running = new Map();
let maxRunning = 0;
const worker = new Worker(
  'webhooks',
  async (job) => {
    const customer = job.data.customer;
    started++;
    if (!firstStart.has(customer)) firstStart.set(customer, started);
    running.set(customer, (running.get(customer) ?? 0) + 1);
    maxRunning = Math.max(maxRunning, running.get(customer));
    await new Promise((resolve) => setTimeout(resolve, 5)); // the HTTP call
    running.set(customer, running.get(customer) - 1);
  },
  { connection, prefix, concurrency: 20 },
);

// The small customer's 5 deliveries are done long before the big one's 2,000 (and ai-co's
// first two generations, within its tokens per minute).
const doneSmall = new Promise((resolve) => {
  let done = 0;
  let ai = 0;
  worker.on('completed', (job) => {
    if (job.data.customer === 'small-co') done++;
    if (job.data.customer === 'ai-co') ai++;
    if (done === 5 && ai === 2) resolve();
  });
});
await doneSmall;
console.log(`small-co started at position ${firstStart.get('small-co')}, all 5 done after ${started} starts in all`);
console.log('groups:');
for (const g of await deliveries.getGroups()) {
  console.log(`  ${g.id}: ${g.status}, ${g.waiting} waiting, ${g.active} active`);
}
console.log(`most deliveries of one customer at once: ${maxRunning}`);

await worker.close();
await deliveries.obliterate({ force: true });
await deliveries.close();
await stop();
