/**
 * The one place Hopper reads the time. Due-ness (delays, lock deadlines) is decided by the
 * backend's clock (Redis TIME) in production: `backendNow()` returns undefined and scripts read
 * TIME. Tests inject a {@link FakeClock}, whose time is passed to every operation and whose
 * timers fire only when the test advances it.
 */
import { safeTimeout } from './timers.js';

/** A timer handle returned by {@link Clock.setTimeout}. */
export interface ClockTimer {
  cancel(): void;
}

export interface Clock {
  /** True for the system clock: only then do timer delays measure real event-loop lag. */
  readonly real: boolean;
  /** The time to pass to backend operations, or undefined to let the backend use its own clock. */
  backendNow(): number | undefined;
  /** This process's time in ms, for durations measured locally (never compared with stored times). */
  now(): number;
  /**
   * Runs `fn` after `ms` (unref'd: a pending timer does not keep the process alive). Any delay
   * works: past 2^31-1 ms it is chained, and Infinity never fires.
   */
  setTimeout(fn: () => void, ms: number): ClockTimer;
}

/** Production clock: backend time for due-ness, `performance.now()`-based local durations. */
export class SystemClock implements Clock {
  readonly real = true;

  backendNow(): number | undefined {
    return undefined;
  }

  now(): number {
    return Date.now();
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    // Chained past 2^31-1 ms; Infinity never fires (clock/timers.ts).
    return safeTimeout(fn, ms, { ref: false });
  }
}

/** The clock every component uses unless given another. */
export const systemClock = new SystemClock();
