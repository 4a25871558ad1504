// Hopper's main job in one file: a producer adds jobs, a worker runs them (with a retry and a
// delayed job along the way), and both print what they do. Run with `npm run demo`.
// Uses REDIS_URL, or a Redis on 127.0.0.1:6379; without one it starts a throwaway redis-server.
import { Queue, QueueEvents, Worker } from 'hopper';
import { redisUrl } from './lib/redis.mjs';

const { url, stop } = await redisUrl();
const connection = url;
const prefix = `demo-${process.pid}`;
const queue = new Queue('emails', { connection, prefix });
const events = new QueueEvents('emails', { connection, prefix });
await events.waitUntilReady();

let flaky = 0;
const worker = new Worker(
  'emails',
  async (job) => {
    console.log(`  worker: ${job.name} #${job.id} for ${job.data.to} (attempt ${job.attemptsMade + 1})`);
    if (job.name === 'flaky' && flaky++ === 0) throw new Error('SMTP timeout (will retry)');
    await job.updateProgress(100);
    return { sentTo: job.data.to };
  },
  { connection, prefix, concurrency: 2 },
);
worker.on('completed', (job, result) => console.log(`  worker: #${job.id} completed -> ${JSON.stringify(result)}`));
worker.on('failed', (job, err) => console.log(`  worker: #${job?.id} failed: ${err.message}`));

console.log('producer: adding 3 jobs (one welcome with a deduplicating id, one flaky, one delayed by 500 ms)');
const welcome = await queue.add('welcome', { to: 'ada@example.com' }, { jobId: 'welcome:ada' });
const again = await queue.add('welcome', { to: 'ada@example.com' }, { jobId: 'welcome:ada' });
console.log(`producer: added welcome as #${welcome.id}; adding it again returned the same job #${again.id}`);
const flakyJob = await queue.add('flaky', { to: 'bob@example.com' }, { attempts: 3, backoff: { type: 'fixed', delay: 200 } });
const later = await queue.add('digest', { to: 'eve@example.com' }, { delay: 500 });

for (const job of [welcome, flakyJob, later]) {
  const result = await job.waitUntilFinished(events, 10_000);
  console.log(`producer: #${job.id} finished with ${JSON.stringify(result)}`);
}
console.log('producer: counts', await queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed'));

await worker.close();
await events.close();
await queue.close();
stop();
console.log('done.');
