// The SQLite backend (in progress, see docs/backends.md): the same Queue, Worker and QueueEvents
// on a file database, with nothing but Node and npm. Run with `node examples/sqlite.mjs` after
// `npm run build`; pass a path to keep the database (default: a temporary file, removed at the end).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Queue, QueueEvents, Worker } from 'hopper-queue';

const dir = process.argv[2] ? undefined : mkdtempSync(path.join(tmpdir(), 'hopper-example-'));
const connection = `sqlite:${process.argv[2] ?? path.join(dir, 'hopper.db')}`;
const queue = new Queue('emails', { connection });
const worker = new Worker(
  'emails',
  async (job) => {
    // Fails once, to show a retry with backoff.
    if (job.attemptsMade === 0) throw new Error('mail server busy');
    return `sent to ${job.data.to}`;
  },
  { connection },
);
const events = new QueueEvents('emails', { connection });
events.on('completed', ({ jobId, returnvalue }) => console.log(`completed ${jobId}: ${returnvalue}`));
worker.on('failed', (job, err) => console.log(`attempt ${job.attemptsMade} of ${job.id} failed: ${err.message}`));
await events.waitUntilReady();

const job = await queue.add('welcome', { to: 'ada@example.com' }, { attempts: 3, backoff: { type: 'exponential', delay: 100 } });
console.log(`result: ${await job.waitUntilFinished(events)}`);
console.log('counts:', JSON.stringify(await queue.getJobCounts('completed', 'failed', 'waiting')));

await worker.close();
await events.close();
await queue.close();
if (dir) rmSync(dir, { recursive: true, force: true });
