// Prometheus metrics for Hopper (hopper-queue-metrics): exact counters and histograms aggregated in
// Redis across every worker, gauges read at scrape time, in your own prom-client registry and
// served on /metrics. Run with `npm run build && node examples/metrics.mjs` (uses REDIS_URL or a
// local Redis). docs/metrics.md lists every metric.
import { Queue, Worker } from 'hopper-queue';
import { HopperMetrics, startMetricsServer } from 'hopper-queue-metrics';
import { Counter, Registry } from 'prom-client';
import { redisUrl } from './lib/redis.mjs';

const connection = await redisUrl();
const prefix = `metrics-example-${process.pid}`;
const queue = new Queue('emails', { connection, prefix });

// Some work: welcome emails complete, a bounce fails twice (attempts: 2) and is failed for good.
let finished = 0;
const worker = new Worker(
  'emails',
  async (job) => {
    if (job.name === 'bounce') throw new Error('mailbox full');
    return 'sent';
  },
  { connection, prefix, concurrency: 5 },
);
const done = new Promise((resolve) => {
  const count = () => ++finished === 4 && resolve();
  worker.on('completed', count);
  worker.on('failed', (job) => job.attemptsMade === 2 && count());
});
await queue.addBulk([
  { name: 'welcome', data: { to: 'a@example.com' } },
  { name: 'welcome', data: { to: 'b@example.com' } },
  { name: 'welcome', data: { to: 'c@example.com' } },
  { name: 'bounce', data: { to: 'x@example.com' }, opts: { attempts: 2 } },
]);
await queue.add('digest', {}, { delay: 60_000 });
await done;
// Workers write their latency counts every 5 s and when they close.
await worker.close();

// 1. In your own registry, beside your app's metrics.
const registry = new Registry();
new Counter({ name: 'app_signups_total', help: 'Sign-ups', registers: [registry] }).inc(3);
const metrics = new HopperMetrics({ connection, prefix, registry });
const text = await registry.metrics();
const show = (pattern) =>
  text
    .split('\n')
    .filter((line) => pattern.test(line))
    .forEach((line) => console.log(line));
show(/^app_signups_total/);
show(/^hopper_jobs_(completed|retried|failed)_total\{.*\} [1-9]/);
show(/^hopper_queue_jobs\{queue="emails",state="(delayed|failed)"\}/);
show(/^hopper_job_run_seconds_count/);
show(/^hopper_job_wait_seconds_bucket\{queue="emails",name="welcome",le="\+Inf"\}/);
await metrics.close();

// 2. A /metrics endpoint (what `hopper metrics --port 9464` runs), on loopback.
const server = await startMetricsServer({ port: 0, connection, prefix });
const scraped = await (await globalThis.fetch(server.url)).text();
console.log(`GET /metrics: ${scraped.split('\n').filter((l) => l.startsWith('hopper_')).length} samples`);
await server.close();

await queue.obliterate({ force: true });
await queue.close();
