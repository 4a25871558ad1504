// Failures handled by Hopper: a job that fails for good lands in a dead-letter queue and is
// replayed once the cause is fixed; an active job is cancelled from another client; a job that
// runs too long times out and is retried.
// Run with `npm run build && node examples/failures.mjs` (uses REDIS_URL or a local Redis).
import { Queue, QueueEvents, Worker } from 'hopper';
import { redisUrl } from './lib/redis.mjs';

const { url: connection, stop } = await redisUrl();
const prefix = `failures-example-${process.pid}`;
const orders = new Queue('orders', { connection, prefix, deadLetter: { queue: 'orders-dlq' } });
const dlq = new Queue('orders-dlq', { connection, prefix });
const events = new QueueEvents('orders', { connection, prefix });
await events.waitUntilReady();

let ledgerUp = false;
const worker = new Worker(
  'orders',
  async (job, _token, signal) => {
    if (job.name === 'charge' && !ledgerUp) throw new Error('ECONNREFUSED ledger:5432');
    if (job.name === 'export' || job.name === 'slow') {
      // Long work that honours its signal (a cancel or a timeout aborts it).
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, job.name === 'slow' && job.attemptsMade > 0 ? 10 : 60_000);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      });
    }
    return `${job.name} done`;
  },
  { connection, prefix, concurrency: 4 },
);

// 1. Dead letter and replay.
const charge = await orders.add('charge', { orderId: 42 }, { attempts: 2 });
await charge.waitUntilFinished(events, 10_000).catch((err) => console.log(`charge failed for good: ${err.message}`));
const [letter] = await dlq.getWaiting();
console.log(`dead letter ${letter.id} (from ${letter.deadLetterOrigin.queue}#${letter.deadLetterOrigin.jobId}): ${letter.failedReason}`);
ledgerUp = true;
console.log('replay:', JSON.stringify(await dlq.replayDeadLetters({ failedReasonContains: 'ECONNREFUSED' })));
console.log(`charge after replay: ${await charge.waitUntilFinished(events, 10_000)}`);

// 2. Cancel an active job from another client.
const exportJob = await orders.add('export', {});
await new Promise((resolve) => worker.once('active', resolve));
const other = new Queue('orders', { connection, prefix });
console.log(`cancelJob: ${await other.cancelJob(exportJob.id, 'user closed the tab')}`);
await exportJob.waitUntilFinished(events, 10_000).catch((err) => console.log(`export ended: ${err.message}`));

// 3. A timeout: the first attempt is aborted after 200 ms and retried.
const slow = await orders.add('slow', {}, { timeout: 200, attempts: 2 });
console.log(`slow after its retry: ${await slow.waitUntilFinished(events, 10_000)}`);

await worker.close();
await events.close();
await Promise.all([orders.obliterate({ force: true }), dlq.obliterate({ force: true })]);
await Promise.all([orders.close(), dlq.close(), other.close()]);
stop();
