/**
 * Waits longer than one Node timer can take (2^31-1 ms, about 24.8 days) work (issue 34): Node
 * fires a longer `setTimeout`, or Infinity, after 1 ms (with a TimeoutOverflowWarning), so a long
 * wait ended at once: `waitUntilFinished` with a long ttl rejected at once, `worker.delay` resolved
 * at once, a SQLite worker's idle wait with a huge drainDelay looped (~600 warnings a second), and a
 * Redis blocking wait's reply deadline dropped its connection. The runtime's timers go through
 * clock/timers.ts: chained past the limit, never for Infinity.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SystemClock } from '../../src/clock/clock.js';
import { MAX_TIMER_MS, safeTimeout } from '../../src/clock/timers.js';
import { createBackend } from '../../src/backend/create.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

/** Lets every timer due within 1 ms fire (an overflowed timer fires after 1 ms). */
const oneTimerTick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

describe('timers past 2^31-1 ms', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('safeTimeout and the system clock chain a long delay and never fire for Infinity', () => {
    vi.useFakeTimers();
    const fired: string[] = [];
    safeTimeout(() => fired.push('long'), MAX_TIMER_MS + 10);
    new SystemClock().setTimeout(() => fired.push('clock'), MAX_TIMER_MS * 2);
    safeTimeout(() => fired.push('infinity'), Infinity);
    const cancelled = safeTimeout(() => fired.push('cancelled'), MAX_TIMER_MS + 5);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    cancelled.cancel();
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(10);
    expect(fired).toEqual(['long']);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).toEqual(['long', 'clock']);
    vi.advanceTimersByTime(MAX_TIMER_MS * 4);
    expect(fired).toEqual(['long', 'clock']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('an idle wait of more than 2^31 ms (or Infinity) waits for work instead of ending at once', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.waitUntilReady();
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'worker' }));
    await backend.connect();
    for (const timeoutMs of [MAX_TIMER_MS + 1, 1e12, Infinity]) {
      let ended: boolean | undefined;
      const wait = backend.waitForWork(timeoutMs).then((found) => (ended = found));
      await oneTimerTick();
      // A Redis wait is written once its connection is up: wait for that before adding.
      await queue.getJobCounts('waiting');
      await oneTimerTick();
      expect(ended).toBeUndefined();
      await queue.add('wake', {});
      expect(await wait).toBe(true);
      await queue.drain();
    }
    // An events read blocking as long (QueueEvents' blockingTimeout) likewise waits for an event.
    const from = await backend.lastEventId();
    let read: number | undefined;
    const reading = backend.readEvents(from, 1e12, 10, false).then((r) => (read = r.events.length));
    await oneTimerTick();
    await queue.getJobCounts('waiting');
    await oneTimerTick();
    expect(read).toBeUndefined();
    await queue.add('event', {});
    expect(await reading).toBeGreaterThan(0);
  });

  it('waitUntilFinished with a ttl of more than 2^31 ms waits for the job', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const job = await queue.add('slow', {});
    let settled = false;
    const finished = job.waitUntilFinished(events, MAX_TIMER_MS + 1).finally(() => (settled = true));
    await oneTimerTick();
    expect(settled).toBe(false);
    env.worker(name, async () => 'done');
    expect(await finished).toBe('done');
  });

  it('worker.delay of more than 2^31 ms waits until aborted', async () => {
    const worker = env.worker(env.queueName(), null);
    const controller = new AbortController();
    let settled = false;
    const delayed = worker.delay(MAX_TIMER_MS + 1, controller).then(() => (settled = true));
    await oneTimerTick();
    expect(settled).toBe(false);
    controller.abort();
    await delayed;
    expect(settled).toBe(true);
  });
});
