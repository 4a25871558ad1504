/**
 * Event-based waits for tests: resolve when an emitter emits, or when a condition holds after
 * an event, with a timeout that fails the test with a clear message. No sleeps.
 */
import type { EventEmitter } from 'node:events';

/** Resolves with the arguments of the next `event` that passes `filter`. */
export function once<T extends unknown[] = unknown[]>(
  emitter: EventEmitter,
  event: string,
  filter: (...args: T) => boolean = () => true,
  timeoutMs = 10_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`Timed out after ${timeoutMs} ms waiting for "${event}"`));
    }, timeoutMs);
    const listener = (...args: T): void => {
      if (!filter(...args)) return;
      clearTimeout(timer);
      emitter.off(event, listener);
      resolve(args);
    };
    emitter.on(event, listener);
  });
}

/** Resolves after `count` emissions of `event`; returns the collected argument lists. */
export function collect<T extends unknown[] = unknown[]>(
  emitter: EventEmitter,
  event: string,
  count: number,
  timeoutMs = 20_000,
): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const seen: T[] = [];
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`Timed out after ${timeoutMs} ms: saw ${seen.length} of ${count} "${event}" events`));
    }, timeoutMs);
    const listener = (...args: T): void => {
      seen.push(args);
      if (seen.length === count) {
        clearTimeout(timer);
        emitter.off(event, listener);
        resolve(seen);
      }
    };
    emitter.on(event, listener);
  });
}

/** A promise with its resolve function exposed (a test signal). */
export function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves once `condition()` holds: at once if it already does, else after an `event` that makes it true. */
export async function waitFor(emitter: EventEmitter, event: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  if (condition()) return;
  await once(emitter, event, () => condition(), timeoutMs);
}

/**
 * Resolves once the async `condition()` holds, checking it every `everyMs` (for state only a
 * store can tell, such as a Redis key's own expiry, which emits no event); fails with `what`
 * after `timeoutMs`.
 */
export async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000, everyMs = 10): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (performance.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
