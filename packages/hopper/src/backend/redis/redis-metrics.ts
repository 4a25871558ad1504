/**
 * The metrics of finished jobs in Redis (BullMQ's layout, see recordMetrics.lua): the write that
 * adds a worker's per-minute counts, and the read behind `queue.getMetrics`.
 */
import type { MetricsBucket, MetricsRecord, MetricsType } from '../backend.js';
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
