// Legacy repeatable jobs (BullMQ 4/5's `add` with `repeat`), kept on Hopper's job schedulers:
// an interval job that stops after its limit, a cron job that also runs once at once, the
// repeatable-job listing, and removal by key.
// Run with `npm run build && node examples/repeat.mjs` (uses REDIS_URL or a local Redis).
import { Queue, QueueEvents, Worker } from 'hopper-queue';
import { redisUrl } from './lib/redis.mjs';

const { url: connection, stop } = await redisUrl();
const prefix = `repeat-example-${process.pid}`;
const queue = new Queue('paint', { connection, prefix });
const events = new QueueEvents('paint', { connection, prefix });
await events.waitUntilReady();

// Every 500 ms, three times in all. The same add again (at every boot, say) changes nothing.
// overlap 'allowAll' and catchup 'all' ask for BullMQ's behaviour (every occurrence runs, even
// late or while the previous one runs); Hopper's defaults would skip such runs and count them.
const repeat = { every: 500, limit: 3, overlap: 'allowAll', catchup: 'all' };
const first = await queue.add('bird', { color: 'green' }, { repeat, jobId: 'colibri' });
await queue.add('bird', { color: 'green' }, { repeat, jobId: 'colibri' });
console.log(`first occurrence: ${first.id.startsWith('sched:bird:colibri:::500:')}, key ${first.repeatJobKey}`);

// Every day at 03:15 Paris time, and once now (immediately).
const now = await queue.add(
  'submarine',
  { color: 'yellow' },
  { repeat: { pattern: '0 15 3 * * *', tz: 'Europe/Paris', immediately: true } },
);
console.log(`cron key ${now.repeatJobKey}, ran at once: ${now.id.includes(':trigger:')}`);

const runs = [];
const threeBirds = new Promise((resolve) => {
  const worker = new Worker(
    'paint',
    async (job) => {
      if (job.name === 'bird') runs.push(job.opts.repeat.count);
      if (runs.length === 3) resolve(worker);
      return job.data.color;
    },
    { connection, prefix },
  );
});
const worker = await threeBirds;
// Sorted: two occurrences due at once (a slow start) may run in either order, as in BullMQ.
console.log(`bird iterations: ${runs.sort((a, b) => a - b).join(', ')}`);

for (const r of await queue.getRepeatableJobs(0, -1, true)) {
  console.log(`repeatable ${r.name}: id=${r.id} every=${r.every} pattern=${r.pattern} tz=${r.tz}`);
}
console.log(`removed by key: ${await queue.removeRepeatableByKey(now.repeatJobKey)}`);
console.log(`removed by options: ${await queue.removeRepeatable('bird', repeat, 'colibri')}`);
console.log(`repeatable jobs left: ${await queue.getRepeatableCount()}`);

await worker.close();
await events.close();
await queue.obliterate({ force: true });
await queue.close();
await stop();
