/**
 * The Queue's observability: its `telemetry` adapter (spans around producer operations), the
 * per-minute metrics workers record (`getMetrics`), job counts as Prometheus text and as a
 * telemetry gauge.
 */
import type { JobCountType } from '../job/states.js';
import { InvalidOptionsError } from '../job/errors.js';
import type { Metrics } from '../telemetry/metrics-recorder.js';
import { LATENCY_BUCKETS_MS } from '../telemetry/latency-recorder.js';
import type { LatencyKind, SchedulerLastRun } from '../backend/backend.js';
import { MetricNames, TelemetryAttributes, type Telemetry } from '../telemetry/telemetry.js';
import type { QueueBaseOptions } from './queue-base.js';
import { QueueGroups } from './queue-groups.js';
import { showValue } from '../validation/kit.js';

/** Escapes a Prometheus label value (backslash, double quote, newline). */
function label(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The outcomes counted exactly per job name (docs/metrics.md). */
export const JOB_OUTCOMES = [
  'completed',
  'failed',
  'retried',
  'stalled',
  'rate-limited',
  'deduplicated',
  'cancelled',
  'timed-out',
  'dead-lettered',
] as const;
/** One of {@link JOB_OUTCOMES}. */
export type JobOutcome = (typeof JOB_OUTCOMES)[number];

/** A latency histogram: wait time, run time (label: job name) or scheduler lateness (label: scheduler id). */
export interface LatencyHistogram {
  kind: LatencyKind;
  label: string;
  /** Sum of the values, ms. */
  sum: number;
  /** How many values. */
  count: number;
  /** Cumulative counts per upper bound `le` (ms; the last is Infinity), as Prometheus buckets. */
  buckets: { le: number; count: number }[];
}

/** A queue's exact counters and histograms, aggregated in Redis across every worker. */
export interface ExactMetrics {
  /** Outcome counts per job name; names past the label limit (50 per queue) are counted as `other`. */
  counters: { outcome: JobOutcome; name: string; count: number }[];
  /**
   * The job names the counters know (at most 50 per queue): admitted when first added or at their
   * first outcome. An exporter shows every outcome's series for each, at 0 until it happens.
   */
  names: string[];
  histograms: LatencyHistogram[];
  /** Each scheduler's last recorded run: when its attempt ended (ms), how long it ran, and how it ended. */
  lastRuns: SchedulerLastRun[];
}

// `any` defaults keep BullMQ's generic signature.
/* eslint-disable @typescript-eslint/no-explicit-any */
export abstract class QueueMetrics<DataType = any, ResultType = any, NameType extends string = string> extends QueueGroups<
  DataType,
  ResultType,
  NameType
> {
  /* eslint-enable @typescript-eslint/no-explicit-any */
  /** @internal the `telemetry` option, checked. */
  protected readonly telemetry: Telemetry | undefined;

  protected constructor(name: string, opts: QueueBaseOptions & { telemetry?: Telemetry }, role: 'command' | 'worker') {
    // Every option is checked by QueueBase before it connects: a refused option leaves nothing running.
    super(name, opts, role, 'Queue');
    this.telemetry = opts.telemetry;
  }

  /**
   * The per-minute metrics of finished jobs, as workers with the `metrics` option recorded them:
   * `data` holds jobs finished per minute, newest minute first, ranks `start..end` (default all);
   * `meta.count` the total counted. Workers write their counts once a minute and when they close,
   * so the last minute may not show yet.
   *
   * @example const { data } = await queue.getMetrics('completed', 0, MetricsTime.ONE_HOUR - 1);
   */
  async getMetrics(type: 'completed' | 'failed', start = 0, end = -1): Promise<Metrics> {
    if (type !== 'completed' && type !== 'failed') {
      throw new InvalidOptionsError(`getMetrics: type must be 'completed' or 'failed', got ${showValue(type)}.`);
    }
    if (!Number.isInteger(start) || !Number.isInteger(end)) {
      throw new InvalidOptionsError(`getMetrics: start and end must be integers (ranks, -1 = the oldest), got ${start} and ${end}.`);
    }
    await this.ready();
    const record = await this.backend.getMetrics(type, start, end);
    return { meta: { count: record.count, prevTS: record.prevTS, prevCount: record.prevCount }, data: record.data, count: record.length };
  }

  /**
   * The queue's exact outcome counters (completed, failed, retried, stalled, rate-limited,
   * deduplicated, cancelled, timed-out, dead-lettered, per job name) and latency histograms
   * (wait time, run time per job name; lateness per scheduler), as every script and worker wrote
   * them: exact across worker processes (docs/metrics.md). One round trip. `hopper-queue-metrics`
   * exports them to Prometheus.
   *
   * @example const { counters } = await queue.getExactMetrics();
   */
  async getExactMetrics(): Promise<ExactMetrics> {
    await this.ready();
    const record = await this.backend.getExactMetrics();
    const known = new Set<string>(JOB_OUTCOMES);
    const counters = record.counters.filter((c) => known.has(c.outcome)) as ExactMetrics['counters'];
    const histograms = record.histograms.map((h): LatencyHistogram => {
      let running = 0;
      const buckets = [...LATENCY_BUCKETS_MS, Infinity].map((le, i) => {
        running += h.counts[i] ?? 0;
        return { le, count: running };
      });
      // Counts past the known buckets (none today) go to +Inf, so count stays exact.
      for (let i = LATENCY_BUCKETS_MS.length + 1; i < h.counts.length; i++) running += h.counts[i];
      buckets[buckets.length - 1].count = running;
      return { kind: h.kind, label: h.label, sum: h.sum, count: running, buckets };
    });
    // Every name with a counter is known, admitted or not (the `other` bucket, names from before admission at add).
    const names = [...new Set([...record.names, ...counters.map((c) => c.name)])].sort();
    return { counters, names, histograms, lastRuns: record.lastRuns };
  }

  /**
   * The queue's job counts per state, and its totals of completed and failed jobs (from the
   * `metrics` workers record), in the Prometheus text format (BullMQ's metric names, so existing
   * scrape configs and dashboards keep working): `bullmq_job_count{queue="q", state="waiting"} 3`.
   * `globalVariables` adds labels to every line (e.g. `{ env: 'prod' }`).
   *
   * @example app.get('/metrics', async (_req, res) => res.type('text/plain').send(await queue.exportPrometheusMetrics({ env: 'prod' })));
   */
  async exportPrometheusMetrics(globalVariables?: Record<string, string>): Promise<string> {
    const extra = Object.entries(globalVariables ?? {})
      .map(([name, value]) => {
        if (!LABEL_NAME.test(name)) {
          throw new InvalidOptionsError(
            `exportPrometheusMetrics: "${name}" is not a valid Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*).`,
          );
        }
        return `, ${name}="${label(String(value))}"`;
      })
      .join('');
    const [counts, completed, failed] = await Promise.all([this.getJobCounts(), this.getMetrics('completed'), this.getMetrics('failed')]);
    const queue = label(this.name);
    const lines = ['# HELP bullmq_job_count Number of jobs in the queue by state', '# TYPE bullmq_job_count gauge'];
    for (const [state, count] of Object.entries(counts))
      lines.push(`bullmq_job_count{queue="${queue}", state="${state}"${extra}} ${count}`);
    lines.push(
      '# HELP bullmq_job_completed_total Total number of completed jobs',
      '# TYPE bullmq_job_completed_total counter',
      `bullmq_job_completed_total{queue="${queue}"${extra}} ${completed.meta.count}`,
      '# HELP bullmq_job_failed_total Total number of failed jobs',
      '# TYPE bullmq_job_failed_total counter',
      `bullmq_job_failed_total{queue="${queue}"${extra}} ${failed.meta.count}`,
    );
    return lines.join('\n');
  }

  /**
   * Reads the job counts of the given states (all by default) and records each on the telemetry
   * meter's `bullmq.queue.jobs` gauge (attributes: queue name, state). Returns the counts. Without
   * a meter, it only reads. Call it on an interval to export queue sizes.
   */
  async recordJobCountsMetric(...types: JobCountType[]): Promise<Record<string, number>> {
    const counts = await this.getJobCounts(...types);
    const meter = this.telemetry?.meter;
    if (meter) {
      const gauge = meter.createGauge(MetricNames.QueueJobsCount, { description: 'Number of jobs in the queue by state', unit: '1' });
      for (const [state, count] of Object.entries(counts)) {
        gauge.record(count, { [TelemetryAttributes.QueueName]: this.name, [TelemetryAttributes.QueueJobsState]: state });
      }
    }
    return counts;
  }
}
