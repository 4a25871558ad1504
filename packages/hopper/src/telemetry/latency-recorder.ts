/**
 * LatencyRecorder: the worker side of the exact latency histograms (docs/metrics.md). For each
 * attempt it records, it counts the job's wait time (added, plus its delay, to its first start),
 * its run time (start to the recorded outcome) and, for a scheduler's occurrence, its lateness
 * (due instant to its first start) in fixed buckets, in memory; every few seconds and when the
 * worker closes it adds the counts to the queue's histograms in Redis with one small call
 * (recordLatency), so the histograms are exact across every worker. A worker that crashes loses
 * at most its unflushed window (LATENCY_FLUSH_MS); a flush that fails is kept and retried.
 * All three durations come from Redis's clock (the job's timestamp, processedOn and the `now` of
 * the acknowledging call).
 */
import { BackendUnsupportedError } from '../job/errors.js';
import type { LastRunOutcome, LatencyEntry, LatencyKind, QueueBackend, SchedulerLastRun } from '../backend/backend.js';
import type { Clock, ClockTimer } from '../clock/clock.js';
import { parseOccurrenceId } from '../schedule/occurrence-id.js';

/** Bucket upper bounds, ms (Prometheus `le`, in seconds: 0.005 ... 3600; then +Inf). */
export const LATENCY_BUCKETS_MS: readonly number[] = [
  5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000, 900_000, 3_600_000,
];
/** How often a worker writes its counts, ms. */
export const LATENCY_FLUSH_MS = 5_000;
/** Most labels a worker keeps in memory between flushes (more go under `other`). */
const MAX_LABELS = 190;

/** The bucket of a duration (index into LATENCY_BUCKETS_MS; its length for +Inf). */
export function latencyBucket(ms: number): number {
  let i = 0;
  while (i < LATENCY_BUCKETS_MS.length && ms > LATENCY_BUCKETS_MS[i]) i++;
  return i;
}

/** What the recorder needs of a job whose attempt was recorded. */
export interface LatencySample {
  id?: string;
  name: string;
  timestamp: number;
  delay: number;
  processedOn?: number;
  attemptsStarted: number;
}

/** Counts not yet written, by kind then label (no key string built per job). */
type Pending = Record<LatencyKind, Map<string, LatencyEntry>>;

const noPending = (): Pending => ({ wait: new Map(), run: new Map(), lateness: new Map() });

export class LatencyRecorder {
  private pending = noPending();
  /** Entries in `pending`, all kinds together. */
  private labels = 0;
  private lastRuns = new Map<string, SchedulerLastRun>();
  private timer: ClockTimer | undefined;
  private writing: Promise<void> = Promise.resolve();
  private stopped = false;

  /** Set when the backend cannot keep the histograms and the user did not ask for them. */
  private unsupported = false;

  /** `explicit`: the user set `latencyMetrics: true` (a backend that cannot keep them then reports an error). */
  constructor(private readonly o: { backend: QueueBackend; clock: Clock; explicit?: boolean }) {}

  /**
   * Counts one recorded attempt of `job`, acknowledged at `now` (Redis time), that left the job
   * `outcome` (a scheduler's occurrence: remembered as its scheduler's last run). `heldMs`: how
   * long the attempt waited in its worker after its claim (`prefetch`): its start is that much
   * after `processedOn` (the claim's time).
   */
  note(job: LatencySample, now: number, outcome: LastRunOutcome, heldMs = 0): void {
    if (this.unsupported) return;
    if (job.processedOn === undefined || job.processedOn <= 0) return;
    const started = job.processedOn + heldMs;
    this.add('run', job.name, now - started);
    const occurrence = job.id === undefined ? undefined : parseOccurrenceId(job.id);
    const scheduler = occurrence?.schedulerId;
    if (job.attemptsStarted === 1) {
      this.add('wait', job.name, started - job.timestamp - (job.delay > 0 ? job.delay : 0));
      if (occurrence) this.add('lateness', occurrence.schedulerId, started - occurrence.instant);
    }
    if (scheduler !== undefined) {
      const last = this.lastRuns.get(scheduler);
      if ((last || this.lastRuns.size < MAX_LABELS) && (!last || last.finishedAt <= now)) {
        this.lastRuns.set(scheduler, { scheduler, finishedAt: now, durationMs: Math.max(0, now - started), outcome });
      }
    }
    if (this.stopped || this.timer) return;
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = undefined;
      // A failed write is kept for the next flush (Redis unreachable is reported by the worker's other calls).
      this.flush().catch(() => undefined);
    }, LATENCY_FLUSH_MS);
  }

  /** Writes the counts noted so far (at most one write at a time). */
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

  private add(kind: LatencyKind, label: string, ms: number): void {
    const value = ms > 0 ? ms : 0;
    const byLabel = this.pending[kind];
    let entry = byLabel.get(label);
    if (!entry && this.labels >= MAX_LABELS) {
      label = 'other';
      entry = byLabel.get(label);
    }
    if (!entry) {
      entry = { kind, label, sum: 0, counts: new Array<number>(LATENCY_BUCKETS_MS.length + 1).fill(0) };
      byLabel.set(label, entry);
      this.labels++;
    }
    entry.sum += value;
    entry.counts[latencyBucket(value)]++;
  }

  private async write(): Promise<void> {
    if (this.labels === 0 && this.lastRuns.size === 0) return;
    const counted = this.pending;
    const entries = [...counted.wait.values(), ...counted.run.values(), ...counted.lateness.values()];
    const lastRuns = [...this.lastRuns.values()];
    this.pending = noPending();
    this.labels = 0;
    this.lastRuns = new Map();
    try {
      await this.o.backend.recordLatency(entries, lastRuns);
    } catch (err) {
      if (err instanceof BackendUnsupportedError && !this.o.explicit) {
        // On by default, not by request: a backend without them simply has none (docs/backends.md).
        this.unsupported = true;
        return;
      }
      for (const run of lastRuns) if (!this.lastRuns.has(run.scheduler)) this.lastRuns.set(run.scheduler, run);
      // Kept for the next flush, merged with what was counted meanwhile.
      for (const e of entries) {
        const byLabel = this.pending[e.kind];
        const now = byLabel.get(e.label);
        if (!now) {
          byLabel.set(e.label, e);
          this.labels++;
        } else {
          now.sum += e.sum;
          e.counts.forEach((c, i) => (now.counts[i] += c));
        }
      }
      throw err;
    }
  }
}
