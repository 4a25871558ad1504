/**
 * `hopper/testing`: a test kit for users. {@link createTestQueue} gives a Queue (and, with a
 * processor, a Worker) on a process-local SQLite database (`sqlite::memory:`, no Redis) with a
 * {@link FakeClock}, so a processor, a retry policy, a delay or a timeout is tested in
 * milliseconds: {@link TestQueue.advance} moves the clock and runs what fell due,
 * {@link TestQueue.runUntilIdle} waits (woken by the queue's own events, without polling) until
 * nothing is left to run now. Needs the optional
 * dependency `better-sqlite3` (version 12). See docs/testing.md.
 *
 * @example
 * import { createTestQueue } from 'hopper-queue/testing';
 * const t = await createTestQueue('emails', { processor: async (job) => `sent ${job.data.to}` });
 * const job = await t.queue.add('welcome', { to: 'ada' }, { delay: 60_000 });
 * await t.advance(60_000); // no waiting: the clock is fake
 * console.log(await job.getState()); // 'completed'
 * await t.close();
 */
import { randomBytes } from 'node:crypto';
import { Queue, type QueueOptions } from '../api/queue.js';
import { Worker, type Processor, type WorkerOptions } from '../api/worker.js';
import { FakeClock } from '../clock/fake-clock.js';
import { InvalidOptionsError } from '../job/errors.js';

export { FakeClock } from '../clock/fake-clock.js';

/** Options of {@link createTestQueue}. */
export interface TestQueueOptions<DataType, ResultType, NameType extends string> {
  /** The processor of the test's worker; without one, no worker is started (test the producer side, or run `getNextJob` yourself). */
  processor?: Processor<DataType, ResultType, NameType>;
  /** Queue options (the connection, prefix and clock are the kit's). */
  queue?: Omit<QueueOptions, 'connection' | 'prefix' | 'clock'>;
  /** Worker options (the connection, prefix and clock are the kit's). */
  worker?: Omit<WorkerOptions, 'connection' | 'prefix' | 'clock'>;
  /** Where the fake clock starts: ms since the epoch or a Date (default 2026-01-01T00:00:00Z). */
  now?: number | Date;
}

/** A queue under test: see {@link createTestQueue}. */
export interface TestQueue<DataType, ResultType, NameType extends string> {
  readonly queue: Queue<DataType, ResultType, NameType>;
  /** The worker running the processor, when one was given. */
  readonly worker: Worker<DataType, ResultType, NameType> | undefined;
  /** The fake clock every component of this test queue reads. */
  readonly clock: FakeClock;
  /** The connection (`sqlite::memory:`) and prefix, to open more components on the same queue (pass `clock` too). */
  readonly connection: string;
  readonly prefix: string;
  /**
   * Moves the clock forward by `ms`, stopping at each delayed job's due time on the way to run
   * what fell due (delays, retries' backoffs, timeouts, lock and stall checks fire as the clock
   * passes them), then {@link runUntilIdle}. Without a processor, only moves the clock.
   */
  advance(ms: number): Promise<void>;
  /**
   * Resolves once no job is waiting, prioritized or active (delayed jobs wait for the clock: use
   * {@link advance}; with a processor, those already due run first). Event-driven: it wakes on
   * each event the queue's jobs add (claimed, completed, failed, moved), not on a timer. Rejects
   * after `timeoutMs` of real time (default 5,000) with the counts left.
   */
  runUntilIdle(options?: { timeoutMs?: number }): Promise<void>;
  /** Closes the worker and the queue. */
  close(): Promise<void>;
}

/**
 * Longest one wait of runUntilIdle blocks on the queue's events before it reads the counts again
 * (a fallback: every state change it waits for adds an event, which wakes it at once).
 */
const RECHECK_MS = 100;
/** Most due times one advance steps through (a bound on a schedule that keeps adding due jobs). */
const MAX_STEPS = 10_000;

/**
 * Creates a queue named `name` (and, with `processor`, its worker) on an in-memory SQLite
 * database with its own prefix and a fake clock. Each call is isolated from the others.
 */
// `any` defaults: the same as Queue's and Worker's (BullMQ's generic signature), so an untyped test gets their types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function createTestQueue<DataType = any, ResultType = any, NameType extends string = string>(
  name: string,
  options: TestQueueOptions<DataType, ResultType, NameType> = {},
): Promise<TestQueue<DataType, ResultType, NameType>> {
  const start = options.now instanceof Date ? options.now.getTime() : options.now;
  if (start !== undefined && !Number.isFinite(start)) {
    throw new InvalidOptionsError(`createTestQueue: now must be a Date or ms since the epoch, got ${String(options.now)}.`);
  }
  const clock = new FakeClock(start);
  const connection = 'sqlite::memory:';
  const prefix = `test-${randomBytes(6).toString('hex')}`;
  const queue = new Queue<DataType, ResultType, NameType>(name, { ...options.queue, connection, prefix, clock });
  const worker = options.processor
    ? new Worker<DataType, ResultType, NameType>(name, options.processor, { ...options.worker, connection, prefix, clock })
    : undefined;
  await queue.waitUntilReady();
  if (worker) await worker.waitUntilReady();

  const busy = async (): Promise<Record<string, number>> => {
    const counts = await queue.getJobCounts('waiting', 'prioritized', 'active');
    return Object.values(counts).some((n) => n > 0) ? counts : {};
  };
  // Event-driven: read the counts, and while jobs are left, block on the queue's events stream
  // (the SQLite backend wakes the read in-process the moment a write adds an event: a job
  // claimed, completed, failed, retried, moved) instead of polling. The position in the stream is
  // taken before the counts, so a change between the two wakes the wait at once.
  const runUntilIdle = async ({ timeoutMs = 5_000 } = {}): Promise<void> => {
    const deadline = performance.now() + timeoutMs;
    // With a worker, jobs already due on the fake clock are made ready first (as the worker's
    // next claim would), so they count as work left rather than racing the worker's wake-up.
    if (worker) await queue.backend.claim({ count: 0, lockMs: 1, tokenPrefix: 'test-kit' }, clock.now());
    for (;;) {
      const from = await queue.backend.lastEventId();
      const left = await busy();
      if (Object.keys(left).length === 0) return;
      const wait = deadline - performance.now();
      if (wait <= 0) {
        throw new Error(
          `runUntilIdle: jobs still to run after ${timeoutMs} ms: ${JSON.stringify(left)}${worker ? '' : ' (no processor was given)'}`,
        );
      }
      await queue.backend.readEvents(from, Math.max(1, Math.min(wait, RECHECK_MS)), 1, false);
    }
  };
  return {
    queue,
    worker,
    clock,
    connection,
    prefix,
    runUntilIdle,
    async advance(ms: number): Promise<void> {
      if (!(Number.isFinite(ms) && ms >= 0)) throw new InvalidOptionsError(`advance(ms): ms must be a number >= 0, got ${ms}.`);
      const target = clock.now() + ms;
      // Without a worker nothing runs: the clock just moves (due jobs are promoted by the claims below).
      const settle = worker ? runUntilIdle : async (): Promise<void> => undefined;
      await settle();
      // From one delayed job's due time to the next, so what a job due on the way schedules (a
      // retry's backoff, a moved job) runs within the same advance. A claim of 0 jobs reads the
      // next due time (and promotes what is due) without taking anything.
      for (let step = 0; step < MAX_STEPS; step++) {
        const { nextDue } = await queue.backend.claim({ count: 0, lockMs: 1, tokenPrefix: 'test-kit' }, clock.now());
        if (nextDue === null || nextDue > target) break;
        clock.set(Math.max(nextDue, clock.now()));
        await settle();
      }
      clock.set(target);
      await settle();
    },
    async close(): Promise<void> {
      await worker?.close();
      await queue.close();
    },
  };
}
