/**
 * The metrics records the backend seam passes: per-minute buckets, latency histograms, exact
 * counters and the last run of each scheduler (re-exported by backend.ts).
 */
/** The finished jobs metrics are kept for. */
export type MetricsType = 'completed' | 'failed';

/** How many jobs finished in one minute, as a worker counted them. */
export interface MetricsBucket {
  /** The minute: floor(ms / 60,000). */
  minute: number;
  /** When the first of them finished, ms. */
  first: number;
  count: number;
}

/** A latency histogram kind: wait time, run time, scheduler lateness. */
export type LatencyKind = 'wait' | 'run' | 'lateness';

/** One histogram's counts a worker adds: non-cumulative bucket counts and the sum of values, ms. */
export interface LatencyEntry {
  kind: LatencyKind;
  /** The job name (wait, run) or scheduler id (lateness). */
  label: string;
  sum: number;
  /** One count per bucket (LATENCY_BUCKETS_MS, then +Inf). */
  counts: number[];
}

/** How a scheduler's last run ended: its attempt completed, failed for good, or failed and will be retried. */
export type LastRunOutcome = 'completed' | 'failed' | 'retried';

/** A scheduler's last recorded run (the newest by finish time wins across workers). */
export interface SchedulerLastRun {
  scheduler: string;
  /** When its attempt was recorded, ms (Redis time). */
  finishedAt: number;
  durationMs: number;
  outcome: LastRunOutcome;
}

/** The exact counters and histograms stored for a queue (see docs/metrics.md). */
export interface ExactMetricsRecord {
  /** Each scheduler's last recorded run. */
  lastRuns: SchedulerLastRun[];
  /** Outcome counts per job name (`other`: names past the label limit). */
  counters: { outcome: string; name: string; count: number }[];
  /** The job names admitted to the counters (at most 50), including those with no outcome yet. */
  names: string[];
  /** Histograms per label: non-cumulative bucket counts (index: LATENCY_BUCKETS_MS, last = +Inf) and sums in ms. */
  histograms: { kind: LatencyKind; label: string; sum: number; counts: number[] }[];
}

/** Stored metrics: totals (BullMQ's meta) and one page of per-minute data points, newest first. */
export interface MetricsRecord {
  /** Jobs counted in all. */
  count: number;
  /** When the first job of the minute being filled finished, ms (0: none yet). */
  prevTS: number;
  /** `count` when that minute began. */
  prevCount: number;
  /** The page of data points asked for. */
  data: number[];
  /** How many data points are stored. */
  length: number;
}
