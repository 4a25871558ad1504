/**
 * BullMQ's `delay` helper: a promise that resolves after a number of milliseconds, or at once when
 * an AbortController passed with it aborts (it resolves then too, as in BullMQ: it never rejects).
 */
import { finite, validate } from '../validation/kit.js';
import { MAX_TIMER_MS } from './timers.js';

/**
 * Resolves after `ms` milliseconds (0 to 2^31 - 1, Node's longest timer), or as soon as
 * `abortController` aborts. The timer keeps the process alive, as a plain `setTimeout` does.
 *
 * @throws InvalidOptionsError when `ms` is not a number in that range.
 * @example await delay(100);
 * @example
 * const stop = new AbortController();
 * setTimeout(() => stop.abort(), 10);
 * await delay(60_000, stop); // resolves after about 10 ms
 */
export function delay(ms: number, abortController?: AbortController): Promise<void> {
  validate(finite(0, MAX_TIMER_MS, 'ms'), ms, 'delay(ms)');
  return new Promise((resolve) => {
    const signal = abortController?.signal;
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
