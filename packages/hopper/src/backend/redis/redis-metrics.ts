/**
 * The metrics of finished jobs in Redis (BullMQ's layout, see recordMetrics.lua): the write that
 * adds a worker's per-minute counts, and the read behind `queue.getMetrics`.
 */
import type {
  ExactMetricsRecord,
  LastRunOutcome,
  LatencyEntry,
  LatencyKind,
  MetricsBucket,
  MetricsRecord,
  MetricsType,
  SchedulerLastRun,
} from '../backend.js';
import type { RedisClient } from './connection.js';
import type { QueueKeys } from './keys.js';
import { runScript } from './script-runner.js';
import { SCRIPTS } from './scripts.generated.js';

/** Most buckets one recordMetrics call takes. */
export const METRICS_BUCKETS_PER_CALL = 300;

/** Adds per-minute counts (oldest minute first), in calls of at most 300 buckets. */
export async function recordMetrics(
  client: RedisClient,
  keys: QueueKeys,
  type: MetricsType,
  buckets: MetricsBucket[],
  maxDataPoints: number,
): Promise<void> {
  for (let i = 0; i < buckets.length; i += METRICS_BUCKETS_PER_CALL) {
    const rest = buckets.slice(i, i + METRICS_BUCKETS_PER_CALL).flatMap((b) => [b.minute, b.first, b.count]);
    await runScript(client, SCRIPTS.recordMetrics, { meta: keys.metrics(type), data: keys.metricsData(type) }, { maxDataPoints }, rest);
  }
}

/** Reads the totals and one page of data points (one round trip). */
export async function getMetrics(
  client: RedisClient,
  keys: QueueKeys,
  type: MetricsType,
  start: number,
  end: number,
): Promise<MetricsRecord> {
  const replies = await client
    .multi()
    .hmget(keys.metrics(type), 'count', 'prevTS', 'prevCount')
    .lrange(keys.metricsData(type), start, end)
    .llen(keys.metricsData(type))
    .exec();
  if (!replies) throw new Error('getMetrics: the transaction was aborted');
  for (const [err] of replies) if (err) throw err;
  const meta = replies[0][1] as (string | null)[];
  const data = replies[1][1] as string[];
  return {
    count: Number(meta[0] ?? 0) || 0,
    prevTS: Number(meta[1] ?? 0) || 0,
    prevCount: Number(meta[2] ?? 0) || 0,
    data: data.map((point) => Number(point) || 0),
    length: Number(replies[2][1]),
  };
}

/** Most entries one recordLatency call takes. */
export const LATENCY_ENTRIES_PER_CALL = 200;
const KIND_CODE = { wait: 'w', run: 'r', lateness: 'l' } as const;
const CODE_KIND: Record<string, LatencyKind> = { w: 'wait', r: 'run', l: 'lateness' };

const OUTCOME_CODE = { completed: 1, failed: 2, retried: 3 } as const;
const CODE_OUTCOME: Record<string, LastRunOutcome> = { 1: 'completed', 2: 'failed', 3: 'retried' };

/** Adds latency histogram counts and schedulers' last runs, in calls of at most 200 entries. */
export async function recordLatency(
  client: RedisClient,
  keys: QueueKeys,
  entries: LatencyEntry[],
  lastRuns: SchedulerLastRun[],
): Promise<void> {
  const routing = { histograms: keys.histograms, names: keys.counterNames, schedulers: keys.schedulerLabels };
  const all = [
    ...entries.map((e) => [KIND_CODE[e.kind], e.label, [Math.round(e.sum), ...e.counts].join(',')]),
    ...lastRuns.map((r) => ['x', r.scheduler, `${r.finishedAt},${Math.round(r.durationMs)},${OUTCOME_CODE[r.outcome]}`]),
  ];
  for (let i = 0; i < all.length; i += LATENCY_ENTRIES_PER_CALL) {
    await runScript(client, SCRIPTS.recordLatency, routing, {}, all.slice(i, i + LATENCY_ENTRIES_PER_CALL).flat());
  }
}

/** Reads the queue's exact counters and histograms (one round trip; both hashes are bounded). */
export async function getExactMetrics(client: RedisClient, keys: QueueKeys): Promise<ExactMetricsRecord> {
  const replies = await client.multi().hgetall(keys.counters).hgetall(keys.histograms).hkeys(keys.counterNames).exec();
  if (!replies) throw new Error('getExactMetrics: the transaction was aborted');
  for (const [err] of replies) if (err) throw err;
  const counterFields = replies[0][1] as Record<string, string>;
  const histogramFields = replies[1][1] as Record<string, string>;
  const counters: ExactMetricsRecord['counters'] = [];
  for (const [field, value] of Object.entries(counterFields)) {
    const sep = field.indexOf(':');
    if (sep < 0) continue;
    counters.push({ outcome: field.slice(0, sep), name: field.slice(sep + 1), count: Number(value) || 0 });
  }
  const byLabel = new Map<string, ExactMetricsRecord['histograms'][number]>();
  const lastRuns: SchedulerLastRun[] = [];
  for (const [field, value] of Object.entries(histogramFields)) {
    if (field.startsWith('x:')) {
      const [finishedAt, durationMs, code] = value.split(',');
      const outcome = CODE_OUTCOME[code];
      if (outcome) lastRuns.push({ scheduler: field.slice(2), finishedAt: Number(finishedAt), durationMs: Number(durationMs), outcome });
      continue;
    }
    // `<kind>:<bucket or s>:<label>`: the label is everything after the second colon.
    const first = field.indexOf(':');
    const second = field.indexOf(':', first + 1);
    const kind = CODE_KIND[field.slice(0, first)];
    if (!kind || second < 0) continue;
    const slot = field.slice(first + 1, second);
    const label = field.slice(second + 1);
    const id = `${kind}\u0000${label}`;
    let h = byLabel.get(id);
    if (!h) {
      h = { kind, label, sum: 0, counts: [] };
      byLabel.set(id, h);
    }
    if (slot === 's') h.sum = Number(value) || 0;
    else {
      const index = Number(slot) - 1;
      if (Number.isInteger(index) && index >= 0 && index < 64) {
        while (h.counts.length <= index) h.counts.push(0);
        h.counts[index] = Number(value) || 0;
      }
    }
  }
  const names = (replies[2][1] as string[]).sort();
  return { counters, names, histograms: [...byLabel.values()], lastRuns };
}
