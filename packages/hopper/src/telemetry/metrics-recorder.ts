/**
 * MetricsRecorder: the worker side of the `metrics` option. It counts the jobs this worker
 * finishes per minute in memory and writes the counts with one small call a minute (and on
 * close), instead of a write per job in the hot path. `queue.getMetrics` reads what all workers
 * wrote.
 */
import type { MetricsBucket, MetricsType, QueueBackend } from '../backend/backend.js';
import type { Clock, ClockTimer } from '../clock/clock.js';
import { InvalidOptionsError } from '../job/errors.js';
import { showValue } from '../validation/kit.js';

/** The `metrics` worker option (BullMQ's). */
export interface MetricsOptions {
  /**
   * How many per-minute data points to keep per type (completed, failed). Default
   * `MetricsTime.ONE_WEEK` (10,080 points: about 80 KB of Redis per type).
   */
  maxDataPoints?: number;
}

/** Durations in minutes for `maxDataPoints` (BullMQ's `MetricsTime`). */
export enum MetricsTime {
  ONE_MINUTE = 1,
  FIVE_MINUTES = 5,
  FIFTEEN_MINUTES = 15,
  THIRTY_MINUTES = 30,
  ONE_HOUR = 60,
  ONE_WEEK = 60 * 24 * 7,
  TWO_WEEKS = 60 * 24 * 7 * 2,
  ONE_MONTH = 60 * 24 * 7 * 2 * 4,
}

/** Per-minute metrics of completed and failed jobs (`queue.getMetrics`). */
export interface Metrics {
  /** `count`: jobs counted in all; `prevTS`/`prevCount`: the minute being filled and the count when it began. */
  meta: { count: number; prevTS: number; prevCount: number };
  /** Jobs finished per minute, newest minute first (the minute being filled is not included). */
  data: number[];
  /** How many data points are stored. */
  count: number;
}

/** How often counts are written, ms. */
export const METRICS_FLUSH_MS = 60_000;
/** Most minutes kept in memory while Redis cannot be reached (older ones are dropped). */
const MAX_PENDING_MINUTES = 10_080;

/** Checks the `metrics` option and returns maxDataPoints. */
export function metricsDataPoints(opts: MetricsOptions | undefined): number | undefined {
  if (opts === undefined) return undefined;
  const max = opts.maxDataPoints ?? MetricsTime.ONE_WEEK;
  if (typeof opts !== 'object' || opts === null || !Number.isInteger(max) || max < 1) {
    throw new InvalidOptionsError(`metrics must be { maxDataPoints?: positive integer (minutes) }, got ${showValue(opts)}.`);
  }
  return max;
}

export class MetricsRecorder {
  private pending: Record<MetricsType, MetricsBucket[]> = { completed: [], failed: [] };
  private timer: ClockTimer | undefined;
  private writing: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly o: { backend: QueueBackend; clock: Clock; maxDataPoints: number; onError: (err: unknown) => void }) {}

  /** Counts one job that finished now. */
  note(type: MetricsType): void {
    const at = this.o.clock.now();
    const minute = Math.floor(at / 60_000);
    const buckets = this.pending[type];
    const last = buckets[buckets.length - 1];
    if (last && last.minute === minute) last.count++;
    else if (last && last.minute > minute)
      last.count++; // the clock went back: count it in the newest minute
    else {
      buckets.push({ minute, first: at, count: 1 });
      if (buckets.length > MAX_PENDING_MINUTES) buckets.shift();
    }
    if (this.stopped) return; // closing: the final flush writes it
    this.timer ??= this.o.clock.setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(this.o.onError);
    }, METRICS_FLUSH_MS);
  }

  /** Writes the counts noted so far (one call per type, at most one write at a time). */
  flush(): Promise<void> {
    this.writing = this.writing.then(() => this.write());
    return this.writing;
  }

  /** Stops the timer for good (the owner flushes once more when it closes). */
  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private async write(): Promise<void> {
    for (const type of ['completed', 'failed'] as const) {
      const buckets = this.pending[type];
      if (buckets.length === 0) continue;
      this.pending[type] = [];
      try {
        await this.o.backend.recordMetrics(type, buckets, this.o.maxDataPoints);
      } catch (err) {
        // Kept for the next flush, merged with what was counted meanwhile.
        this.pending[type] = merge(buckets, this.pending[type]);
        throw err;
      }
    }
  }
}

function merge(older: MetricsBucket[], newer: MetricsBucket[]): MetricsBucket[] {
  const out = older.map((b) => ({ ...b }));
  for (const b of newer) {
    const last = out[out.length - 1];
    if (last && last.minute >= b.minute) last.count += b.count;
    else out.push(b);
  }
  return out.slice(-MAX_PENDING_MINUTES);
}
