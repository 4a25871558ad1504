// What claim-ahead (the worker's `prefetch` option) costs between workers, on a throwaway Redis:
// `node bench/src/prefetch-fairness.mjs [--prefetch=0,10,20,50,100] [--jobs=400] [--rounds=3]`.
//
// Two worker processes on one queue, concurrency 10 each, take a burst of jobs added at once (the
// workers warm and idle first). Two cases: both workers equally fast (each job sleeps 5 ms), and
// one slow (20 ms a job) beside a fast one (2 ms). Per prefetch N it reports medians over the
// rounds of: the share of the burst each worker ran, enqueue-to-start latency p50 and p99 (the
// processor's start minus the add call's start, one machine's clock), and the makespan (first add
// to last completion). A worker holding jobs ahead keeps them from an idle worker: with a slow
// and a fast worker, jobs wait behind the slow one's backlog. Figures: docs/performance.md, "Claim-ahead".

import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';

const QUEUE = 'fair';
const here = path.dirname(fileURLToPath(import.meta.url));
const hopperDir = path.resolve(here, '../../packages/hopper');
const importHopper = () => import(pathToFileURL(path.join(hopperDir, 'dist/esm/index.js')).href);
const wallClockMs = () => performance.timeOrigin + performance.now();

const { values } = parseArgs({
  options: {
    prefetch: { type: 'string' },
    jobs: { type: 'string' },
    rounds: { type: 'string' },
    child: { type: 'string' },
  },
});

/** A worker process: runs jobs (sleeping `workMs` each) until told to stop; reports its starts. */
async function runChild({ connection, name, prefetch, workMs }) {
  const { Worker } = await importHopper();
  const starts = [];
  const worker = new Worker(
    QUEUE,
    async (job) => {
      starts.push({ id: job.id, latency: wallClockMs() - job.data.addedAt });
      await new Promise((resolve) => setTimeout(resolve, workMs));
    },
    { connection, concurrency: 10, ...(prefetch > 0 && { prefetch }), name },
  );
  worker.on('error', (err) => console.error(name, err.message));
  await worker.waitUntilReady();
  process.send({ ready: true });
  process.on('message', async (m) => {
    if (m.stop) {
      await worker.close();
      process.send({ starts }, () => process.exit(0));
    }
  });
}

function startWorker(connection, name, prefetch, workMs) {
  const child = fork(fileURLToPath(import.meta.url), [`--child=${JSON.stringify({ connection, name, prefetch, workMs })}`], {
    execArgv: [],
  });
  const ready = new Promise((resolve) => child.on('message', (m) => m.ready && resolve()));
  const stop = () =>
    new Promise((resolve) => {
      child.on('message', (m) => m.starts && resolve(m.starts));
      child.send({ stop: true });
    });
  return { ready, stop };
}

const quantile = (xs, q) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const median = (xs) => quantile(xs, 0.5);

async function runParent() {
  const prefetches = (values.prefetch ?? '0,10,20,50,100').split(',').map(Number);
  const total = Number(values.jobs ?? 400);
  const rounds = Number(values.rounds ?? 3);
  const { startRedis } = await import('./redis/server.mjs');
  const redis = await startRedis();
  const { Queue, QueueEvents } = await importHopper();
  const cases = [
    { label: 'equal workers (5 ms a job each)', work: [5, 5] },
    { label: 'slow (20 ms) and fast (2 ms) worker', work: [20, 2] },
  ];
  console.log(`${total} jobs a burst, 2 workers at concurrency 10, ${rounds} rounds; load ${os.loadavg()[0].toFixed(2)}`);
  try {
    for (const { label, work } of cases) {
      console.log(`\n${label}`);
      console.log('| prefetch | share of worker A | latency p50 ms | latency p99 ms | makespan ms |');
      console.log('|---|---|---|---|---|');
      for (const prefetch of prefetches) {
        const rows = [];
        for (let round = 0; round < rounds; round++) {
          await redis.control.command('FLUSHALL');
          const queue = new Queue(QUEUE, { connection: redis.connection });
          const events = new QueueEvents(QUEUE, { connection: redis.connection });
          await events.waitUntilReady();
          const a = startWorker(redis.connection, 'A', prefetch, work[0]);
          const b = startWorker(redis.connection, 'B', prefetch, work[1]);
          await Promise.all([a.ready, b.ready]);
          let completed = 0;
          let lastAt = 0;
          const done = new Promise((resolve) =>
            events.on('completed', () => {
              completed++;
              if (completed === total) {
                lastAt = wallClockMs();
                resolve();
              }
            }),
          );
          const firstAt = wallClockMs();
          const jobs = [];
          for (let i = 0; i < total; i++) jobs.push({ name: 'j', data: { i, addedAt: firstAt }, opts: { removeOnComplete: true } });
          await queue.addBulk(jobs);
          await done;
          const [sa, sb] = await Promise.all([a.stop(), b.stop()]);
          const latencies = [...sa, ...sb].map((s) => s.latency);
          rows.push({
            share: sa.length / (sa.length + sb.length),
            p50: quantile(latencies, 0.5),
            p99: quantile(latencies, 0.99),
            makespan: lastAt - firstAt,
          });
          await events.close();
          await queue.close();
        }
        const m = (key) => median(rows.map((r) => r[key]));
        console.log(
          `| ${prefetch} | ${(m('share') * 100).toFixed(0)}% | ${m('p50').toFixed(0)} | ${m('p99').toFixed(0)} | ${m('makespan').toFixed(0)} |`,
        );
      }
    }
  } finally {
    await redis.stop();
  }
}

if (values.child !== undefined) await runChild(JSON.parse(values.child));
else await runParent();
