// Failures handled by Hopper: a job that fails for good lands in a dead-letter queue and is
// replayed once the cause is fixed; an active job is cancelled from another client, then retried
// (a retry lifts the cancellation); a job that runs too long times out and is retried; a worker
// whose processor ignores its signal still closes by its deadline, releasing the job.
// Run with `npm run build && node examples/failures.mjs` (uses REDIS_URL or a local Redis).
import { Queue, QueueEvents, Worker } from 'hopper-queue';
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
        const rerun = job.name === 'slow' ? job.attemptsMade > 0 : job.attemptsStarted > 1;
        const timer = setTimeout(resolve, rerun ? 10 : 60_000);
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
// Listen before adding: the worker may start the job before add() returns.
const exportActive = new Promise((resolve) => worker.once('active', resolve));
const exportJob = await orders.add('export', {});
await exportActive;
const other = new Queue('orders', { connection, prefix });
console.log(`cancelJob: ${await other.cancelJob(exportJob.id, 'user closed the tab')}`);
await exportJob.waitUntilFinished(events, 10_000).catch((err) => console.log(`export ended: ${err.message}`));

// 3. A timeout: the first attempt is aborted after 200 ms and retried.
const slow = await orders.add('slow', {}, { timeout: 200, attempts: 2 });
console.log(`slow after its retry: ${await slow.waitUntilFinished(events, 10_000)}`);

// 4. A retry lifts a cancellation: the cancelled export runs again.
await orders.retryJobs({ state: 'failed' });
console.log(`export after retryJobs: ${await exportJob.waitUntilFinished(events, 10_000)}`);

// 5. close() never hangs: past closeTimeout a job whose processor ignores its signal is released
// for another worker at once, and close says which.
const reports = new Queue('reports', { connection, prefix });
const stubborn = new Worker('reports', () => new Promise(() => {}), { connection, prefix, closeTimeout: 300 });
const reportActive = new Promise((resolve) => stubborn.once('active', resolve));
const report = await reports.add('quarterly', {});
await reportActive;
await stubborn.close().catch((err) => console.log(`close: ${err.name}, released job(s) ${err.jobIds.join(', ')}`));
console.log(`report is now ${await reports.getJobState(report.id)}`);
await reports.obliterate({ force: true });
await reports.close();

await worker.close();
await events.close();
await Promise.all([orders.obliterate({ force: true }), dlq.obliterate({ force: true })]);
await Promise.all([orders.close(), dlq.close(), other.close()]);
stop();
