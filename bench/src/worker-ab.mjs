// Worker CPU per job of two or more builds of Hopper, A/B on one throwaway Redis:
// `node bench/src/worker-ab.mjs --build=main=<hopper package dir> --build=branch=<hopper package dir>`.
//
// A change to the worker's per-job path moves its CPU per job by a few percent, less than the
// project benchmark's run-to-run spread on a shared machine. This measures just that figure, for
// builds (each a `packages/hopper` directory with its `dist/` built, e.g. a worktree of main and
// the branch), in turn, the order reversed every round (A B, then B A...) so that drift and
// neighbours fall on all of them, and reports medians. Each drain runs like the benchmark's `process` case: the queue is
// filled first (addBulk, 1,000 per call, `removeOnComplete: true`, data `{ i }`), then a fresh
// child process opens a Queue and a Worker (no-op processor) on it, and the window runs from the
// first completion to the last; worker CPU is `process.cpuUsage()` of that child over the window,
// Redis CPU is read from /proc. `--cpu-prof=<dir>` writes a V8 CPU profile of every drain's
// measured window (started at the first completion, stopped at the last, through node:inspector;
// it adds its own overhead to the CPU figures of that run), to read with profile-summary.mjs.
// `--alloc` samples the window's allocations instead (V8's sampling heap profiler, collected objects
// included) and reports the bytes allocated per job: a figure that, unlike CPU time, does not move
// with the machine's load (it also slows the run: its CPU figures are not comparable to others').
// A build's directory may end with `?prefetch=N`: its worker then holds N jobs ahead (the
// `prefetch` option), so one build can be compared with itself at several N
// (`--build=p0=packages/hopper --build=p20=packages/hopper?prefetch=20`).
// Method and figures: docs/performance.md, "Issue 21, worker side" and "Claim-ahead".

import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { URLSearchParams, fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import inspector from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
import { clockTicksPerSecond, processCpuMs } from './redis/proc-cpu.mjs';

const QUEUE = 'ab';
const JOB = 'job';

const { values } = parseArgs({
  options: {
    build: { type: 'string', multiple: true },
    jobs: { type: 'string' },
    rounds: { type: 'string' },
    concurrency: { type: 'string' },
    'cpu-prof': { type: 'string' },
    alloc: { type: 'boolean' },
    child: { type: 'string' },
  },
});

const importHopper = (dir) => import(pathToFileURL(path.join(path.resolve(dir), 'dist/esm/index.js')).href);

if (values.child !== undefined) await runChild(JSON.parse(values.child));
else await runParent();

/** The drain child: one worker on the filled queue, measured from its first completion to its last. */
async function runChild({ dir, connection, concurrency, prefetch, total, redisPid, ticks, profile, alloc }) {
  const { Queue, Worker } = await importHopper(dir);
  const queue = new Queue(QUEUE, { connection, streams: { events: { maxLen: 10_000 } } });
  await queue.waitUntilReady();
  const cpu = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const sample = () => ({ at: performance.now(), node: cpu(), redis: processCpuMs(redisPid, ticks) });
  const session = profile || alloc ? new inspector.Session() : undefined;
  const post = (method, params) =>
    new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  if (session) {
    session.connect();
    await post('Profiler.enable');
  }
  let first;
  let last;
  let count = 0;
  const worker = new Worker(QUEUE, async () => {}, { connection, concurrency, ...(prefetch > 0 && { prefetch }) });
  await new Promise((resolve, reject) => {
    worker.on('error', (err) => reject(new Error(`worker error: ${err?.stack ?? err}`)));
    worker.on('failed', (job, err) => reject(new Error(`job ${job?.id} failed: ${err?.message}`)));
    worker.on('completed', (job) => {
      if (job.name !== JOB) return;
      count++;
      if (count === 1) {
        if (profile) void post('Profiler.start');
        if (alloc)
          void post('HeapProfiler.startSampling', {
            samplingInterval: 512,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true,
          });
        first = sample();
      }
      if (count === total) {
        last = sample();
        resolve();
      }
    });
  });
  let allocated = 0;
  if (alloc) {
    const { profile: sampled } = await post('HeapProfiler.stopSampling');
    const sum = (node) => node.selfSize + node.children.reduce((total, child) => total + sum(child), 0);
    allocated = sum(sampled.head);
  }
  if (profile) {
    const { profile: taken } = await post('Profiler.stop');
    writeFileSync(profile, JSON.stringify(taken));
  }
  session?.disconnect();
  await worker.close();
  await queue.close();
  const n = total - 1;
  const reply = {
    jobsPerSec: n / ((last.at - first.at) / 1000),
    workerCpuMsPer1k: ((last.node - first.node) / n) * 1000,
    redisCpuMsPer1k: ((last.redis - first.redis) / n) * 1000,
    allocBytesPerJob: allocated / n,
  };
  process.send(reply, () => process.exit(0));
}

async function runParent() {
  const builds = Object.fromEntries(
    (values.build ?? []).map((spec) => {
      const at = spec.indexOf('=');
      return [spec.slice(0, at), spec.slice(at + 1)];
    }),
  );
  /** A build's directory and prefetch (`<dir>?prefetch=N`). */
  const buildOf = (name) => {
    const [dir, query] = builds[name].split('?');
    return { dir, prefetch: Number(new URLSearchParams(query ?? '').get('prefetch') ?? 0) };
  };
  const names = Object.keys(builds);
  if (names.length < 2 || names.some((name) => name === '' || !builds[name])) {
    throw new Error(
      'usage: worker-ab.mjs --build=<name>=<hopper package dir> --build=<name>=<dir> [...] [--jobs=50000] [--rounds=5] [--concurrency=100,10] [--cpu-prof=<dir>] [--alloc]',
    );
  }
  const total = Number(values.jobs ?? 50_000);
  const rounds = Number(values.rounds ?? 5);
  const concurrencies = (values.concurrency ?? '100,10').split(',').map(Number);
  if (values['cpu-prof']) mkdirSync(values['cpu-prof'], { recursive: true });
  const { startRedis } = await import('./redis/server.mjs');
  const redis = await startRedis();
  const ticks = clockTicksPerSecond();
  const { Queue } = await importHopper(buildOf(names[0]).dir);
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  console.log(
    `builds: ${names.map((name) => `${name}=${builds[name]}`).join(' ')}; ${total} jobs per drain, ${rounds} rounds; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  try {
    for (const concurrency of concurrencies) {
      const samples = Object.fromEntries(names.map((name) => [name, []]));
      for (let round = 0; round < rounds; round++) {
        for (const build of round % 2 === 0 ? names : [...names].reverse()) {
          await redis.control.command('FLUSHALL');
          const queue = new Queue(QUEUE, { connection: redis.connection, streams: { events: { maxLen: 10_000 } } });
          for (let from = 0; from < total; from += 1_000) {
            const jobs = [];
            for (let i = from; i < Math.min(total, from + 1_000); i++)
              jobs.push({ name: JOB, data: { i }, opts: { removeOnComplete: true } });
            await queue.addBulk(jobs);
          }
          await queue.close();
          const profile = values['cpu-prof'] && path.resolve(values['cpu-prof'], `${build}-c${concurrency}-r${round}.cpuprofile`);
          const spec = {
            ...buildOf(build),
            connection: redis.connection,
            concurrency,
            total,
            redisPid: redis.pid,
            ticks,
            profile,
            alloc: values.alloc === true,
          };
          const result = await new Promise((resolve, reject) => {
            const child = fork(fileURLToPath(import.meta.url), [`--child=${JSON.stringify(spec)}`], { execArgv: [] });
            let reply;
            child.on('message', (m) => (reply = m));
            child.on('error', reject);
            child.on('exit', (code) => (code === 0 && reply ? resolve(reply) : reject(new Error(`drain child exited with ${code}`))));
          });
          samples[build].push(result);
          const allocated = values.alloc ? `, ${Math.round(result.allocBytesPerJob)} bytes allocated per job` : '';
          console.log(
            `c=${concurrency} round ${round} ${build}: worker ${result.workerCpuMsPer1k.toFixed(2)} ms/1k, redis ${result.redisCpuMsPer1k.toFixed(1)} ms/1k, ${Math.round(result.jobsPerSec)} jobs/s${allocated} (load ${os.loadavg()[0].toFixed(2)})`,
          );
        }
      }
      const row = (build, key) => median(samples[build].map((s) => s[key]));
      const base = row(names[0], 'workerCpuMsPer1k');
      for (const name of names) {
        const cpu = row(name, 'workerCpuMsPer1k');
        console.log(
          `c=${concurrency} median ${name}: worker CPU ${cpu.toFixed(2)} ms/1k (${((cpu / base - 1) * 100).toFixed(1)}% vs ${names[0]}), ` +
            `${Math.round(row(name, 'jobsPerSec'))} jobs/s, redis ${row(name, 'redisCpuMsPer1k').toFixed(1)} ms/1k` +
            (values.alloc ? `, ${Math.round(row(name, 'allocBytesPerJob'))} bytes allocated per job` : ''),
        );
      }
    }
  } finally {
    await redis.stop();
  }
}
