/**
 * A clock for tests: its time moves only when the test says so, it is passed to every backend
 * operation as `now`, and its timers fire during {@link FakeClock.advance}.
 */
import type { Clock, ClockTimer } from './clock.js';

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

export class FakeClock implements Clock {
  readonly real = false;
  private time: number;
  private seq = 0;
  private timers: PendingTimer[] = [];

  /** Starts at `start` ms (default 2026-01-01T00:00:00Z). */
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.time = start;
  }

  backendNow(): number {
    return this.time;
  }

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    // Infinity never fires (as on the system clock).
    if (ms === Infinity) return { cancel: () => undefined };
    const timer: PendingTimer = { at: this.time + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Moves time forward by `ms`, firing due timers in order. */
  advance(ms: number): void {
    this.set(this.time + ms);
  }

  /** Sets the time (forward or backward), firing timers due by then. */
  set(time: number): void {
    this.time = time;
    for (;;) {
      const due = this.timers.filter((t) => !t.cancelled && t.at <= this.time).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      due.cancelled = true;
      due.fn();
    }
    this.timers = this.timers.filter((t) => !t.cancelled);
  }

  /** Number of timers waiting to fire. */
  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
