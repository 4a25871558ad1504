/**
 * Timers that keep their word for any delay. Node's `setTimeout` takes at most 2^31-1 ms (about
 * 24.8 days): a longer delay, or Infinity, fires after 1 ms with a TimeoutOverflowWarning, so a
 * wait meant to last for ever ends at once (and a loop around it spins). Every timer of the
 * runtime whose delay comes from a caller goes through {@link safeTimeout}: a delay past the limit
 * is chained in steps of at most 2^31-1 ms, and Infinity means "no timer" (it never fires).
 */

/** Longest delay one `setTimeout` can take (ms); longer delays are chained. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timer started by {@link safeTimeout}. */
export interface SafeTimer {
  /** Stops the timer (idempotent). */
  cancel(): void;
}

/** Options of {@link safeTimeout}. */
export interface SafeTimeoutOptions {
  /** Whether a pending timer keeps the process alive. Default true (as Node's `setTimeout`). */
  ref?: boolean;
}

/**
 * Runs `fn` once after `ms`. A delay above {@link MAX_TIMER_MS} is chained; `Infinity` arms
 * nothing (the timer never fires, and holds nothing); NaN or a negative delay runs `fn` on the next
 * timer tick, as Node does (the API refuses such values before they get here).
 *
 * @example const timer = safeTimeout(() => controller.abort(), ttl); ... timer.cancel();
 */
export function safeTimeout(fn: () => void, ms: number, opts: SafeTimeoutOptions = {}): SafeTimer {
  if (ms === Infinity) return { cancel: () => undefined };
  const ref = opts.ref ?? true;
  let handle: NodeJS.Timeout | undefined;
  let cancelled = false;
  const arm = (remaining: number): void => {
    const step = remaining > 0 ? Math.min(remaining, MAX_TIMER_MS) : 0;
    handle = setTimeout(() => {
      handle = undefined;
      if (cancelled) return;
      if (remaining > MAX_TIMER_MS) arm(remaining - MAX_TIMER_MS);
      else fn();
    }, step);
    if (!ref) handle.unref();
  };
  arm(ms);
  return {
    cancel: () => {
      cancelled = true;
      if (handle !== undefined) clearTimeout(handle);
      handle = undefined;
    },
  };
}

/**
 * Resolves after `ms` (chained past {@link MAX_TIMER_MS}; never for Infinity), or at once when
 * `signal` aborts. Never rejects. Unref'd with `ref: false`.
 */
export function sleep(ms: number, opts: SafeTimeoutOptions & { signal?: AbortSignal } = {}): Promise<void> {
  return new Promise<void>((resolve) => {
    const signal = opts.signal;
    if (signal?.aborted) return resolve();
    const done = (): void => {
      timer.cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = safeTimeout(done, ms, opts);
    signal?.addEventListener('abort', done, { once: true });
  });
}
