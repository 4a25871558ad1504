// The producer of one row: adds jobs with known ids and keeps a ledger of each add's outcome:
// 'ack' (the add returned), 'error' (refused with a typed error: nothing was written), or
// 'unknown' (the connection broke or the call timed out: it may or may not have been applied).
import { Queue } from 'hopper';

const ADD_TIMEOUT_MS = 15_000;

/** A refusal Redis or Hopper gives before writing (typed), as opposed to a broken call. */
function classify(err) {
  const name = err?.name ?? '';
  const message = String(err?.message ?? err);
  if (/OOM command not allowed/.test(message)) return 'error';
  if (['InvalidOptionsError', 'InvalidDataError', 'InvalidJobIdError', 'GroupMaxSizeExceededError'].includes(name)) return 'error';
  return 'unknown';
}

export class Producer {
  constructor({ url, prefix, queue }) {
    this.queue = new Queue(queue, { connection: url, prefix });
    this.queueErrors = {};
    this.queue.on('error', (err) => (this.queueErrors[err?.name] = (this.queueErrors[err?.name] ?? 0) + 1));
    this.ledger = [];
    this.errors = new Map();
  }

  /** Adds one job with id `id`; never throws, records the outcome. */
  async add(id, data, opts = {}) {
    const entry = { id, t0: Date.now(), outcome: 'pending' };
    this.ledger.push(entry);
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('add timed out'), { name: 'AddTimeout' })), ADD_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.queue.add('job', data, { jobId: id, ...opts }), timeout]);
      entry.outcome = 'ack';
    } catch (err) {
      entry.outcome = classify(err);
      entry.error = `${err?.name}: ${String(err?.message ?? err).slice(0, 160)}`;
      const key = `${entry.outcome} ${err?.name}`;
      this.errors.set(key, { count: (this.errors.get(key)?.count ?? 0) + 1, example: entry.error });
    } finally {
      clearTimeout(timer);
      entry.t1 = Date.now();
    }
    return entry.outcome;
  }

  /**
   * Adds `count` jobs, ids `${idPrefix}${i}`, at about `perSecond`, at most `inFlight` adds at once.
   * `data(i)` gives each job's data. Resolves when every add has an outcome.
   */
  async run({ count, perSecond, idPrefix = 'j', data = () => ({}), inFlight = 8, from = 0 }) {
    const start = Date.now();
    const running = new Set();
    for (let i = from; i < from + count; i++) {
      const due = start + ((i - from) * 1000) / perSecond;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      while (running.size >= inFlight) await Promise.race(running);
      const p = this.add(`${idPrefix}${i}`, data(i)).finally(() => running.delete(p));
      running.add(p);
    }
    await Promise.all(running);
  }

  async close() {
    await this.queue.close().catch(() => {});
  }
}
