// A processor process for the fault suite: runs one Hopper Worker (the built package) and
// appends what each execution did to the effects file, which the engine never sees. The parent
// (the row runner) kills, stops or terminates this process; its IPC messages gate the moment
// between a job's side effect and its completion.
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Worker } from 'hopper-queue';
import { connectionFor } from './lib/connect.mjs';

const cfg = JSON.parse(process.argv[2]);
const pid = process.pid;

// Under faketime (the clock rows) Date.now() is this process's faked wall clock; records keep the
// real time, from the monotonic clock (not faked) since the process started (before any jump).
const realNow = cfg.realClock ? () => Math.round(performance.timeOrigin + performance.now()) : () => Date.now();

/** One line per record, O_APPEND: lines from several processes never interleave. */
function record(entry) {
  appendFileSync(cfg.effects, JSON.stringify({ ...entry, pid, at: realNow() }) + '\n');
}
if (cfg.realClock) process.on('warning', (w) => record({ t: 'warning', code: w.code, message: String(w.message).slice(0, 200) }));

// Gated jobs wait for the parent's word after their side effect: the parent may SIGKILL us
// there, exactly between the effect and the completion.
const gates = new Map();
process.on('message', (msg) => {
  if (msg && msg.go) {
    gates.get(msg.go)?.();
    gates.delete(msg.go);
  } else if (msg && msg.close) {
    void closeGracefully();
  }
});

function busyWait(ms) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    /* blocks the event loop on purpose */
  }
}

async function processor(job, token) {
  const d = job.data ?? {};
  // Delayed jobs record when the engine made them due (its clock: Redis TIME), for the clock rows.
  const due = d.delayed ? { due: job.timestamp + (job.opts.delay ?? 0), local: Date.now() } : {};
  record({ t: 'start', id: job.id, attempt: job.attemptsStarted, token, ...due });
  // The scheduler rows may kill the process that just fired an occurrence (before it advances the scheduler).
  if (cfg.reportOccurrences && String(job.id).startsWith('sched:')) process.send?.({ occurrence: job.id, attempt: job.attemptsStarted });
  if (d.poison) process.kill(pid, 'SIGKILL');
  if (d.blockMs && (!d.blockOnce || job.attemptsStarted === 1)) {
    record({ t: 'fault', kind: 'event-loop-block', id: job.id });
    busyWait(d.blockMs);
  }
  if (d.ms) await new Promise((resolve) => setTimeout(resolve, d.ms));
  // Durable steps: each step's side effect, then (once job.step returned) its recorded result.
  for (let s = 1; s <= (d.steps ?? 0); s++) {
    const step = `s${s}`;
    await job.step(step, async () => {
      record({ t: 'step', id: job.id, step, attempt: job.attemptsStarted });
      await new Promise((resolve) => setTimeout(resolve, d.stepMs ?? 50));
      return s;
    });
    record({ t: 'step-recorded', id: job.id, step, attempt: job.attemptsStarted });
  }
  record({ t: 'effect', id: job.id, attempt: job.attemptsStarted, token });
  if (d.gate && process.send) {
    await new Promise((resolve) => {
      gates.set(job.id, resolve);
      process.send({ effect: job.id, attempt: job.attemptsStarted });
    });
  }
  return { pid };
}

const opts = {
  connection: connectionFor(cfg.connection ?? cfg.url),
  prefix: cfg.prefix,
  concurrency: cfg.concurrency,
  lockDuration: cfg.lockDuration,
  stalledInterval: cfg.stalledInterval,
  maxStalledCount: cfg.maxStalledCount,
  closeTimeout: cfg.closeTimeout,
  removeOnComplete: cfg.removeOnComplete,
  drainDelay: 1,
};
const worker = cfg.sandboxFile ? new Worker(cfg.queue, cfg.sandboxFile, opts) : new Worker(cfg.queue, processor, opts);

worker.on('completed', (job) => record({ t: 'completed', id: job.id }));
worker.on('failed', (job, err) => record({ t: 'failed', id: job?.id, reason: String(err?.message ?? err) }));
worker.on('stalled', (id) => record({ t: 'stalled', id }));
worker.on('error', (err) => record({ t: 'error', name: err?.name ?? 'Error', message: String(err?.message ?? err).slice(0, 300) }));
worker.on('ready', () => process.send?.({ ready: pid }));

let closing = false;
async function closeGracefully() {
  if (closing) return;
  closing = true;
  record({ t: 'closing' });
  try {
    await worker.close();
    record({ t: 'closed' });
  } catch (err) {
    record({ t: 'close-error', name: err?.name, message: String(err?.message ?? err) });
  }
  process.exit(0);
}
process.on('SIGTERM', () => void closeGracefully());
