// The demo's runner: picks a backend, serves the dashboard, starts every scenario, prints a
// summary line per scenario as they run, and shuts down gracefully (Ctrl-C, or the end of
// --duration): producers stop, workers finish their active jobs, and every job the demo added is
// accounted for in the log.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { createDashboard, toNodeListener } from 'hopper-queue-dashboard';
import { FlowProducer, Queue, QueueEvents, Worker } from 'hopper-queue';
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

/** `1 job`, `2 jobs`. */
export const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The no-job-lost check: every job the demo adds is followed from its add to its end. Outcomes are
 * recorded as they happen (a worker's `completed`, a `failed` with no retry left, a `removed` event
 * for a job removed by hand, e.g. from the dashboard), because retention deletes finished jobs
 * (`removeOnComplete`); at shutdown a job still stored is counted by its state, one no longer
 * stored by its recorded outcome, and a job neither stored nor recorded is lost.
 */
export class JobLedger {
  /** queue -> ids added by the demo */
  added = new Map();
  /** queue -> id -> 'completed' | 'failed' | 'removed' */
  outcomes = new Map();

  add(queue, id) {
    (this.added.get(queue) ?? this.added.set(queue, new Set()).get(queue)).add(String(id));
  }

  record(queue, id, outcome) {
    const ids = this.outcomes.get(queue) ?? this.outcomes.set(queue, new Map()).get(queue);
    // A job recorded as finished and then removed by hand keeps its outcome.
    if (outcome !== 'removed' || !ids.has(String(id))) ids.set(String(id), outcome);
  }

  /** Records the outcomes a worker sees. */
  watch(queue, worker) {
    worker.on('completed', (job) => this.record(queue, job.id, 'completed'));
    worker.on('failed', (job) => {
      // `finishedOn` is set when the attempt that failed was the last one (no retry follows).
      if (job?.finishedOn) this.record(queue, job.id, 'failed');
    });
  }

  /**
   * Tallies every added job by state: `stateOf(queue, ids)` reads the stored states. Returns
   * `{ total, tally, lost, gone }`: `gone` counts jobs no longer stored, by recorded outcome.
   */
  async account(stateOf) {
    const tally = {};
    const gone = {};
    let total = 0;
    let lost = 0;
    for (const [queue, set] of this.added) {
      const ids = [...set];
      const recorded = this.outcomes.get(queue) ?? new Map();
      for (let i = 0; i < ids.length; i += 200) {
        const slice = ids.slice(i, i + 200);
        const states = await stateOf(queue, slice);
        states.forEach((state, j) => {
          total++;
          let counted = state;
          if (state === 'unknown') {
            counted = recorded.get(slice[j]) ?? 'lost';
            if (counted !== 'lost') gone[counted] = (gone[counted] ?? 0) + 1;
          }
          if (counted === 'lost' || counted === 'active') lost++;
          tally[counted] = (tally[counted] ?? 0) + 1;
        });
      }
    }
    return { total, tally, lost, gone };
  }
}

/** The final line of the check, from `ledger.account()`'s result. */
export function accountingLine({ total, tally, lost, gone }, backendKind) {
  const parts = Object.entries(tally).map(([state, n]) => {
    if (state === 'removed') return `${n} removed by hand`;
    const deleted = gone[state] && state !== 'removed' ? ` (${gone[state]} of them since deleted by retention)` : '';
    return `${n} ${state === 'lost' ? 'missing' : state}${deleted}`;
  });
  const unfinished =
    backendKind === 'sqlite'
      ? "the unfinished ones are deleted with the demo's temporary database"
      : 'the unfinished ones stay in their queues (the next demo run clears them)';
  return lost === 0
    ? `no job lost: all ${plural(total, 'job')} the demo added are accounted for (${parts.join(', ')}); ${unfinished}`
    : `JOBS LOST: ${lost} of ${plural(total, 'job')} the demo added are active without a worker or missing (${parts.join(', ')})`;
}

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
  const where = backend.connection !== 'redis://127.0.0.1:6379' ? ` --redis ${backend.connection}` : '';
  say(`the CLI, from another terminal: npx hopper queues --prefix ${prefix}${where}`);
  say(duration > 0 ? `running for ${duration} s; Ctrl-C stops it earlier, gracefully` : 'running until Ctrl-C (it stops gracefully)');

  const running = [];
  const timers = new Set();
  const ledger = new JobLedger();
  // One events reader per queue the demo adds jobs to: a job removed by hand (from the dashboard)
  // is accounted for as removed.
  const readers = new Map();
  let stopping = false;
  for (const scenario of SCENARIOS) {
    const workers = [];
    const closers = [];
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
        ledger.watch(name, worker);
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
        ledger.add(queue, id);
        if (!readers.has(queue)) {
          const events = new QueueEvents(queue, { connection, prefix });
          events.on('removed', ({ jobId }) => ledger.record(queue, jobId, 'removed'));
          events.on('error', (err) => log(`events error on ${queue}: ${err.message}`));
          readers.set(queue, events);
        }
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
      running.push({ scenario, handle, workers, closers });
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
  say(
    `shutdown: producers stopped; closing ${plural(workers.length, 'worker')}, which finish the ${plural(active, 'job')} active now first`,
  );
  await Promise.all(workers.map((w) => w.close()));
  say('shutdown: every worker closed, its jobs finished and recorded');
  summaries();

  // Every job the demo added is in a known state: none active without its worker, none missing.
  const queues = new Map();
  const result = await ledger.account(async (name, ids) => {
    const queue = queues.get(name) ?? queues.set(name, new Queue(name, { connection, prefix })).get(name);
    return Promise.all(ids.map((id) => queue.getJobState(id)));
  });
  for (const queue of queues.values()) await queue.close();
  for (const events of readers.values()) await events.close();
  for (const { closers } of running) for (const close of closers) await close().catch(() => {});
  say(accountingLine(result, backend.kind));

  await dashboard.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await backend.stop();
  say('demo stopped.');
  return result.lost === 0 ? 0 : 1;
}
