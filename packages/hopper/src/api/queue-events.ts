/**
 * QueueEvents: the queue's events from every producer and worker, read from its capped Redis
 * stream, with BullMQ's API and event names. Resumable from `lastEventId`; a reader that fell
 * behind the stream's cap gets a `gap` event instead of silently missing events.
 *
 * @example
 * const events = new QueueEvents('mail', { connection });
 * events.on('completed', ({ jobId, returnvalue }) => console.log(jobId, returnvalue));
 * events.on('failed', ({ jobId, failedReason }) => console.error(jobId, failedReason));
 */
import { safeTimeout, sleep, type SafeTimer } from '../clock/timers.js';
import { JobNotFoundError, WaitTimeoutError } from '../job/errors.js';
import type { JobFinishWaiter } from '../job/job.js';
import { CLOSE_GRACE_MS, QueueBase, type QueueBaseOptions } from './queue-base.js';
import type { EventEmitter } from 'node:events';
import { checkArgument, WAIT_TTL } from '../validation/arguments.js';

/** Options of QueueEvents. */
export interface QueueEventsOptions extends QueueBaseOptions {
  /** Start reading at once. Default true; otherwise call `run()`. */
  autorun?: boolean;
  /** Read events after this stream id; default `$` (only new events). Use `0` for all kept events. */
  lastEventId?: string;
  /** Longest blocking read, ms. Default 10,000. */
  blockingTimeout?: number;
}

/** Events read per call. */
const READ_COUNT = 200;

function parseValue(raw: string | undefined): unknown {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

export class QueueEvents extends QueueBase implements JobFinishWaiter {
  override readonly opts: QueueEventsOptions;
  private lastId: string;
  private running = false;
  private runPromise: Promise<void> | undefined;
  /** Called after each read (waits for the reader to reach a position). */
  private readonly readWaiters = new Set<() => void>();
  /** The waits of `waitForJob`, by job id. */
  private readonly finishWaiters = new FinishWaiters();

  constructor(name: string, opts: QueueEventsOptions = {}) {
    super(name, opts, 'worker', 'QueueEvents');
    this.opts = opts;
    this.lastId = opts.lastEventId ?? '$';
    if (opts.autorun !== false) this.run().catch((err: unknown) => this.emitError(err));
  }

  /**
   * Starting also opens the connection that reads the events (named, so `queue.getQueueEvents()`
   * lists this reader once `waitUntilReady()` resolved, as in BullMQ).
   */
  protected override async init(): Promise<void> {
    await super.init();
    if (this.opts.autorun !== false) await this.backend.openEventsReader();
  }

  /** The id of the last event read (pass it as `lastEventId` to resume after a restart). */
  get lastEventId(): string {
    return this.lastId;
  }

  /**
   * Starts reading events (when created with `autorun: false`). Resolves when closed; rejects
   * (BullMQ's message) when already running.
   */
  run(): Promise<void> {
    if (this.running) return Promise.reject(new Error('Queue Events is already running.'));
    this.running = true;
    this.runPromise = this.loop();
    return this.runPromise;
  }

  private async loop(): Promise<void> {
    try {
      // However long the start takes (a failed one is tried again): reading begins once it succeeds.
      await this.whenStarted();
      if (this.lastId === '$') {
        // Pin the position now, so events between start and the first read are not lost.
        this.lastId = await this.backend.lastEventId();
      }
    } catch (err) {
      // Closed while starting: run() resolves, as it does when closed later.
      if (!this.running) return;
      // Started, then the position could not be read: try the whole start of the reader again.
      this.emitError(err);
      await sleep(1000, { ref: false });
      return this.running ? this.loop() : undefined;
    }
    this.emit('ready');
    let checkGap = this.opts.lastEventId !== undefined;
    while (this.running) {
      let read;
      try {
        read = await this.backend.readEvents(this.lastId, this.opts.blockingTimeout ?? 10_000, READ_COUNT, checkGap);
      } catch (err) {
        if (!this.running) break;
        this.emitError(err);
        await sleep(1000, { ref: false });
        continue;
      }
      if (read.gap) this.emit('gap', { after: this.lastId });
      for (const entry of read.events) {
        this.lastId = entry.id;
        this.dispatch(entry.event, entry.fields, entry.id);
      }
      // A full batch means we may be behind the cap: check for trimmed entries next time.
      checkGap = read.events.length === READ_COUNT;
      for (const check of [...this.readWaiters]) check();
    }
  }

  private dispatch(event: string, fields: Record<string, string>, id: string): void {
    if (fields.ids !== undefined) return this.dispatchBatch(event, fields, id);
    const { event: _name, ...rest } = fields;
    const args: Record<string, unknown> = { ...rest };
    switch (event) {
      case 'added':
        this.emit('added', { jobId: rest.jobId, name: rest.name }, id);
        // An `added` entry without a state means waiting (the common case, left out to save memory).
        if (rest.state === 'delayed') this.emit('delayed', { jobId: rest.jobId, delay: Number(rest.delay) }, id);
        else this.emit('waiting', { jobId: rest.jobId, prev: undefined }, id);
        return;
      case 'waiting':
        this.emit('waiting', { jobId: rest.jobId, prev: rest.prev }, id);
        return;
      case 'delayed':
        this.emit('delayed', { jobId: rest.jobId, delay: Number(rest.delay) }, id);
        return;
      case 'completed':
        this.emit('completed', { jobId: rest.jobId, returnvalue: parseValue(rest.returnvalue), prev: 'active' }, id);
        return;
      case 'failed':
        this.emit('failed', { jobId: rest.jobId, failedReason: rest.failedReason, prev: rest.prev }, id);
        return;
      case 'progress':
        this.emit('progress', { jobId: rest.jobId, data: parseValue(rest.data) }, id);
        return;
      case 'retries-exhausted':
        this.emit('retries-exhausted', { jobId: rest.jobId, attemptsMade: Number(rest.attemptsMade) }, id);
        return;
      case 'active':
        this.emit('active', { jobId: rest.jobId, prev: 'waiting' }, id);
        return;
      case 'stalled':
        this.emit('stalled', { jobId: rest.jobId }, id);
        return;
      case 'drained':
        this.emit(event, id);
        return;
      case 'paused':
      case 'resumed':
        // BullMQ's listener signature: (args: {}, id).
        this.emit(event, {}, id);
        return;
      default:
        this.emit(event, args, id);
    }
  }

  /** Expands an entry that records one call's events for several jobs (see includes/base.lua). */
  private dispatchBatch(event: string, fields: Record<string, string>, id: string): void {
    const ids = JSON.parse(fields.ids) as string[];
    const list = (name: string): unknown[] | undefined =>
      fields[name] === undefined ? undefined : (JSON.parse(fields[name]) as unknown[]);
    if (event === 'added') {
      const names = list('names') ?? [];
      // Without states, every job of the call went to waiting (the common case, kept small).
      const states = list('states');
      const delays = list('delays');
      ids.forEach((jobId, i) => {
        this.emit('added', { jobId, name: names[i] }, id);
        if (states?.[i] === 'delayed') this.emit('delayed', { jobId, delay: Number(delays?.[i]) }, id);
        else if (states?.[i] === 'waiting-children') this.emit('waiting-children', { jobId }, id);
        else this.emit('waiting', { jobId, prev: undefined }, id);
      });
    } else if (event === 'completed') {
      const values = list('returnvalues') ?? [];
      ids.forEach((jobId, i) => this.emit('completed', { jobId, returnvalue: values[i], prev: 'active' }, id));
      // The jobs the same call claimed next share the entry (Redis backend: one entry per call).
      const next = list('active') as string[] | undefined;
      if (next) for (const jobId of next) this.emit('active', { jobId, prev: 'waiting' }, id);
    } else if (event === 'active') {
      for (const jobId of ids) this.emit('active', { jobId, prev: 'waiting' }, id);
    } else {
      for (const jobId of ids) this.emit(event, { jobId }, id);
    }
  }

  /**
   * @internal Resolves with a job's return value when it completes, rejects with its failure
   * reason when it fails for good; checks the stored state too, so a job that finished before
   * the call (or during a gap in the events) settles at once. With `rejectMissing` (a job known to
   * exist: `job.waitUntilFinished`), a job that no longer exists rejects with a JobNotFoundError
   * (`Missing key for job <key>. isFinished`, as in BullMQ); without it, a job not added yet is
   * waited for.
   */
  waitForJob(jobId: string, ttl?: number, rejectMissing = false): Promise<unknown> {
    try {
      // A ttl of 2^31 ms or more would fire at once (Node's timers): refused, as a NaN or a negative one.
      if (ttl !== undefined) checkArgument(WAIT_TTL, ttl, 'waitUntilFinished(queueEvents, ttl)');
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    return new Promise((resolve, reject) => {
      let timer: SafeTimer | undefined;
      let settled = false;
      const cleanup = (): void => {
        settled = true;
        this.finishWaiters.remove(jobId, waiter);
        timer?.cancel();
      };
      const checkStored = (): void => {
        this.ready()
          .then(() => this.backend.getJob(jobId))
          .then((record) => {
            if (settled) return;
            if (record?.state === 'completed') {
              cleanup();
              resolve(record.returnvalue === undefined ? undefined : parseValue(record.returnvalue));
            } else if (record?.state === 'failed') {
              cleanup();
              reject(new Error(record.failedReason ?? 'failed'));
            } else if (record === undefined && rejectMissing) {
              // Gone: removed, or removed on completion or failure. Its finishing event may still be
              // unread: read up to the stream's end first, then report it missing.
              return this.readPastEnd().then(() => {
                if (settled) return;
                cleanup();
                reject(
                  new JobNotFoundError(
                    `Missing key for job ${this.toKey(jobId)}. isFinished: job ${jobId} of queue "${this.name}" no longer exists (removed, or removed on completion or failure), so its outcome is unknown.`,
                  ),
                );
              });
            }
          })
          .catch((err: unknown) => {
            if (settled) return;
            cleanup();
            reject(err instanceof Error ? err : new Error(String(err)));
          });
      };
      const waiter: FinishWaiter = {
        completed: (value) => {
          cleanup();
          resolve(value);
        },
        failed: (reason) => {
          cleanup();
          reject(new Error(reason));
        },
        gap: checkStored,
      };
      // One set of listeners for every wait of this reader (a listener per wait would pass the
      // EventEmitter's limit at 11 waits and print MaxListenersExceededWarning).
      this.finishWaiters.add(jobId, waiter, this);
      if (ttl !== undefined) {
        // Chained past 2^31-1 ms (a plain timer would fire at once): clock/timers.ts.
        timer = safeTimeout(() => {
          cleanup();
          reject(new WaitTimeoutError(`Job ${jobId} did not finish within ${ttl} ms.`));
        }, ttl);
      }
      checkStored();
    });
  }

  private async readPastEnd(): Promise<void> {
    const end = await this.backend.lastEventId();
    if (!this.running || !streamIdBefore(this.lastId, end)) return;
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (this.running && streamIdBefore(this.lastId, end)) return;
        this.readWaiters.delete(check);
        resolve();
      };
      this.readWaiters.add(check);
    });
  }

  /**
   * Stops reading and closes the connections. Settles within about 2 s (CLOSE_GRACE_MS for the
   * connections, as long again for the reader to end), whatever the server does: a reader still
   * waiting to start stops waiting.
   */
  override async close(): Promise<void> {
    if (this.closed) return;
    this.running = false;
    for (const check of [...this.readWaiters]) check();
    this.closed = true;
    await this.closeBackend();
    const ended = this.runPromise?.catch(() => undefined);
    if (ended) await Promise.race([ended, sleep(CLOSE_GRACE_MS, { ref: false })]);
    this.emit('closed');
  }
}

/** A wait of `waitForJob`: told when its job completes or fails, or when a gap may have hidden that. */
interface FinishWaiter {
  completed(value: unknown): void;
  failed(reason: string): void;
  gap(): void;
}

/**
 * The waits of `waitForJob` by job id, behind three listeners of the reader (completed, failed,
 * gap) added with the first wait and removed with the last: any number of waits, no listener
 * warning, and an event finds its job's waits in O(1).
 */
class FinishWaiters {
  private readonly byJob = new Map<string, Set<FinishWaiter>>();
  private detach: (() => void) | undefined;

  add(jobId: string, waiter: FinishWaiter, events: EventEmitter): void {
    let set = this.byJob.get(jobId);
    if (!set) this.byJob.set(jobId, (set = new Set()));
    set.add(waiter);
    if (this.detach) return;
    const onCompleted = (args: { jobId: string; returnvalue: unknown }): void => {
      for (const w of [...(this.byJob.get(args.jobId) ?? [])]) w.completed(args.returnvalue);
    };
    const onFailed = (args: { jobId: string; failedReason: string }): void => {
      for (const w of [...(this.byJob.get(args.jobId) ?? [])]) w.failed(args.failedReason);
    };
    const onGap = (): void => {
      for (const set of [...this.byJob.values()]) for (const w of [...set]) w.gap();
    };
    events.on('completed', onCompleted);
    events.on('failed', onFailed);
    events.on('gap', onGap);
    this.detach = () => {
      events.off('completed', onCompleted);
      events.off('failed', onFailed);
      events.off('gap', onGap);
    };
  }

  remove(jobId: string, waiter: FinishWaiter): void {
    const set = this.byJob.get(jobId);
    if (!set?.delete(waiter)) return;
    if (set.size === 0) this.byJob.delete(jobId);
    if (this.byJob.size === 0) {
      this.detach?.();
      this.detach = undefined;
    }
  }
}

/** Whether stream id `a` (`ms-seq`) comes before `b`. */
function streamIdBefore(a: string, b: string): boolean {
  const [am, as] = a.split('-').map(Number);
  const [bm, bs] = b.split('-').map(Number);
  return am < bm || (am === bm && (as ?? 0) < (bs ?? 0));
}
