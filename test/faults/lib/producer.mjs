// The producer of one row: adds jobs with known ids and keeps a ledger of each add's outcome:
// 'ack' (the add returned), 'error' (refused with a typed error: nothing was written), or
// 'unknown' (the connection broke or the call timed out: it may or may not have been applied).
import { FlowProducer, Queue } from 'hopper-queue';
import { connectionFor, releaseConnection } from './connect.mjs';

const ADD_TIMEOUT_MS = 15_000;

/**
 * A refusal Hopper gives before writing (typed: a full Redis is a RedisFullError), as opposed to a
 * broken call. An untyped OOM reply counts as unknown, so the memory rows fail if the type is lost.
 */
function classify(err) {
  const name = err?.name ?? '';
  if (['RedisFullError', 'InvalidOptionsError', 'InvalidDataError', 'InvalidJobIdError', 'GroupMaxSizeExceededError'].includes(name))
    return 'error';
  return 'unknown';
}

export class Producer {
  /** `connection`: a URL or a connection description (lib/connect.mjs). */
  constructor({ connection, prefix, queue }) {
    this.connection = connectionFor(connection);
    this.prefix = prefix;
    this.queue = new Queue(queue, { connection: this.connection, prefix });
    this.queueErrors = {};
    this.queue.on('error', (err) => (this.queueErrors[err?.name] = (this.queueErrors[err?.name] ?? 0) + 1));
    this.ledger = [];
    this.errors = new Map();
    /** Multiplies every run's count (the quick tier runs fewer jobs per row; see run-row.mjs). */
    this.scale = 1;
  }

  /** Adds one job with id `id`; never throws, records the outcome. */
  async add(id, data, opts = {}) {
    return this.record([id], () => this.queue.add('job', data, { jobId: id, ...opts }));
  }

  /** Adds a parent `id` with one child per entry of `children` (ids), atomically; records each node. */
  async addFlow(id, data, children) {
    this.flows ??= new FlowProducer({ connection: this.connection, prefix: this.prefix });
    const name = this.queue.name;
    return this.record([...children, id], () =>
      this.flows.add({
        name: 'job',
        queueName: name,
        data,
        opts: { jobId: id },
        children: children.map((child) => ({ name: 'job', queueName: name, data, opts: { jobId: child } })),
      }),
    );
  }

  async record(ids, call) {
    const entries = ids.map((id) => ({ id, t0: Date.now(), outcome: 'pending' }));
    this.ledger.push(...entries);
    const entry = {};
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('add timed out'), { name: 'AddTimeout' })), ADD_TIMEOUT_MS);
    });
    try {
      await Promise.race([call(), timeout]);
      entry.outcome = 'ack';
    } catch (err) {
      entry.outcome = classify(err);
      entry.error = `${err?.name}: ${String(err?.message ?? err).slice(0, 160)}`;
      const key = `${entry.outcome} ${err?.name}`;
      this.errors.set(key, { count: (this.errors.get(key)?.count ?? 0) + 1, example: entry.error });
    } finally {
      clearTimeout(timer);
      for (const e of entries) Object.assign(e, entry, { t1: Date.now() });
    }
    return entry.outcome;
  }

  /**
   * Adds `count` jobs (times `scale`), ids `${idPrefix}${i}`, at about `perSecond`, at most `inFlight` adds at once.
   * `data(i)` and `opts(i)` give each job's data and options; `add(id, i)`, when given, replaces
   * the plain add (say, with a flow); `stop()`, when given, ends the run early once it returns
   * true (checked before each add). Resolves when every add has an outcome.
   */
  async run({ count, perSecond, idPrefix = 'j', data = () => ({}), opts = () => ({}), inFlight = 8, from = 0, add, stop }) {
    count = Math.max(1, Math.round(count * this.scale));
    const start = Date.now();
    const running = new Set();
    for (let i = from; i < from + count; i++) {
      const due = start + ((i - from) * 1000) / perSecond;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (stop?.()) break;
      while (running.size >= inFlight) await Promise.race(running);
      const id = `${idPrefix}${i}`;
      const p = (add ? add(id, i) : this.add(id, data(i), opts(i))).finally(() => running.delete(p));
      running.add(p);
    }
    await Promise.all(running);
  }

  async close() {
    await this.flows?.close().catch(() => {});
    await this.queue.close().catch(() => {});
    releaseConnection(this.connection);
  }
}
