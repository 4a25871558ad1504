// The demo's runner: picks a backend, serves the dashboard, starts every scenario, prints a
// summary line per scenario as they run, and shuts down gracefully (Ctrl-C, or the end of
// --duration): producers stop, workers finish their active jobs, and every job the demo added is
// accounted for in the log.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { createDashboard, toNodeListener } from 'hopper-queue-dashboard';
import { FlowProducer, Queue, Worker } from 'hopper-queue';
import { chooseBackend } from './backend.mjs';
import { digest } from './digest.mjs';
import { generation } from './generation.mjs';
import { invoices } from './invoices.mjs';
import { newsletter } from './newsletter.mjs';
import { stock } from './stock.mjs';

/**
 * @typedef {{ name: string, queues: string[], start(ctx: object): Promise<{ summary(): string }> }} Scenario
 */

/** Every scenario, in the order they start. */
export const SCENARIOS = [invoices, stock, digest, newsletter, generation];
/** How many of the latest job ids per queue the shutdown check follows. */
const TRACKED = 500; // under the default retention of completed jobs (the last 1,000 per queue)

/** Listens on 127.0.0.1:`port`; when that port is taken (the default 3000 only), on any free one. */
async function listen(server, port, fixed) {
  try {
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
  } catch (err) {
    if (fixed || err.code !== 'EADDRINUSE') throw err;
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  }
  return server.address().port;
}

/** The run's length when none is asked for: until Ctrl-C in a terminal; 15 s in CI or without a terminal (it must end by itself). */
export function defaultDuration(env = process.env, stdout = process.stdout) {
  return env.CI || !stdout.isTTY ? 15 : 0;
}

/**
 * Runs the demo until `stopSignal` resolves, `duration` seconds pass (0: until Ctrl-C) or SIGINT.
 * Options: duration, port (dashboard; default 3000), redis (URL), sqlite (force it), prefix,
 * print (a line printer). Resolves to the exit code: 0, or 1 when a job went missing.
 */
export async function runDemo({ duration, port, redis, sqlite = false, prefix = 'hopper-demo', print = console.log } = {}) {
  const started = Date.now();
  const stamp = () => `${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s`;
  const say = (line) => print(`${stamp()} ${line}`);
  if (duration === undefined) {
    duration = defaultDuration();
    if (duration > 0) say(`CI is set or stdout is not a terminal: a bounded run of ${duration} s (--duration 0 runs until Ctrl-C)`);
  }
  const backend = await chooseBackend({ redis, sqlite });
  say(`backend: ${backend.describe}`);
  const connection = backend.connection;

  // A clean slate: the previous run's queues under this prefix are removed (schedulers included).
  for (const name of SCENARIOS.flatMap((s) => s.queues)) {
    const queue = new Queue(name, { connection, prefix });
    await queue.obliterate({ force: true }).catch(() => {});
    for (const scheduler of await queue.getJobSchedulers().catch(() => [])) await queue.removeJobScheduler(scheduler.key ?? scheduler.id);
    await queue.close();
  }

  const password = randomBytes(9).toString('base64url');
  const dashboard = createDashboard({ connection, prefix, auth: { basic: [{ user: 'demo', password }] }, streamIntervalMs: 1_000 });
  const server = createServer(toNodeListener(dashboard));
  const actualPort = await listen(server, port ?? 3000, port !== undefined);
  say(`dashboard: http://127.0.0.1:${actualPort}/  (sign in with user "demo", password "${password}")`);

  const running = [];
  const timers = new Set();
  let stopping = false;
  for (const scenario of SCENARIOS) {
    const workers = [];
    const closers = [];
    const tracked = new Map();
    const log = (line) => say(`[${scenario.name}] ${line}`);
    const ctx = {
      fast: true,
      log,
      queue(name, opts = {}) {
        const queue = new Queue(name, { connection, prefix, ...opts });
        closers.push(() => queue.close());
        return queue;
      },
      worker(name, processor, opts = {}) {
        const worker = new Worker(name, processor, { connection, prefix, ...opts });
        worker.on('error', (err) => log(`worker error on ${name}: ${err.message}`));
        workers.push(worker);
        return worker;
      },
      flowProducer() {
        const flows = new FlowProducer({ connection, prefix });
        closers.push(() => flows.close());
        return flows;
      },
      /** Follows a job the demo added, for the no-job-lost check at shutdown. */
      track(queue, id) {
        const ids = tracked.get(queue) ?? tracked.set(queue, []).get(queue);
        ids.push(id);
        if (ids.length > TRACKED) ids.shift();
      },
      /** Runs `fn` now, then every `ms` (never two at once) until shutdown. */
      async every(ms, fn) {
        const tick = async () => {
          if (stopping) return;
          try {
            await fn();
          } catch (err) {
            if (!stopping) log(`producer error: ${err.message}`);
          }
          if (!stopping) timers.add(setTimeout(tick, ms));
        };
        await tick();
      },
      /** Runs `fn` once after `ms`, unless the demo is stopping. */
      later(ms, fn) {
        timers.add(setTimeout(() => !stopping && fn().catch((err) => log(`error: ${err.message}`)), ms));
      },
    };
    try {
      const handle = await scenario.start(ctx);
      running.push({ scenario, handle, workers, closers, tracked });
      log(`started (queues: ${scenario.queues.join(', ')})`);
    } catch (err) {
      await Promise.all(workers.map((w) => w.close(true).catch(() => {})));
      for (const close of closers) await close().catch(() => {});
      if (err?.name !== 'BackendUnsupportedError') throw err;
      log(`skipped on this backend (${backend.kind}): ${err.message}`);
    }
  }

  const summaries = () => {
    for (const { scenario, handle } of running) say(`[${scenario.name}] ${handle.summary()}`);
  };
  const ticker = setInterval(summaries, 5_000);

  // Until the duration ends, or Ctrl-C / SIGTERM (a second Ctrl-C exits at once).
  await new Promise((resolve) => {
    if (duration > 0) timers.add(setTimeout(resolve, duration * 1_000));
    const onSignal = (signal) => {
      say(`${signal}: shutting down gracefully (Ctrl-C again to exit at once)`);
      process.once(signal, () => process.exit(130));
      resolve();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });

  stopping = true;
  clearInterval(ticker);
  for (const timer of timers) clearTimeout(timer);
  const workers = running.flatMap((r) => r.workers);
  let active = 0;
  for (const name of running.flatMap((r) => r.scenario.queues)) {
    const queue = new Queue(name, { connection, prefix });
    active += (await queue.getJobCounts('active')).active;
    await queue.close();
  }
  say(`shutdown: producers stopped; closing ${workers.length} workers, which finish the ${active} jobs active now first`);
  await Promise.all(workers.map((w) => w.close()));
  say('shutdown: every worker closed, its jobs finished and recorded');
  summaries();

  // Every job the demo added is in a known state: none active without its worker, none missing.
  const tally = {};
  let total = 0;
  for (const { tracked, closers } of running) {
    for (const [name, ids] of tracked) {
      const queue = new Queue(name, { connection, prefix });
      for (let i = 0; i < ids.length; i += 200) {
        const states = await Promise.all(ids.slice(i, i + 200).map((id) => queue.getJobState(id)));
        for (const state of states) tally[state] = (tally[state] ?? 0) + 1;
        total += states.length;
      }
      await queue.close();
    }
    for (const close of closers) await close().catch(() => {});
  }
  const lost = (tally.unknown ?? 0) + (tally.active ?? 0);
  const parts = Object.entries(tally).map(([state, n]) => `${n} ${state}`);
  say(
    lost === 0
      ? `no job lost: all ${total} jobs the demo added are accounted for (${parts.join(', ')}); the unfinished ones stay in their queues (the next demo run clears them)`
      : `JOBS LOST: ${lost} of ${total} jobs the demo added are active without a worker or missing (${parts.join(', ')})`,
  );

  await dashboard.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await backend.stop();
  say('demo stopped.');
  return lost === 0 ? 0 : 1;
}
