/**
 * hopper-queue-metrics: Hopper's Prometheus metrics. Exact counters and histograms aggregated in Redis
 * by Hopper's scripts and workers, gauges read at scrape time, in your prom-client registry or
 * served on `/metrics`. See docs/metrics.md.
 */
export { HopperMetrics, type HopperMetricsOptions } from './collector.js';
export { metricsHandler, metricsFetchHandler, startMetricsServer, type MetricsServer, type MetricsServerOptions } from './exporter.js';
export { familyNames, BUCKETS_SECONDS, type Family, type Sample } from './families.js';
export { parseRedisInfo, MAX_SCHEDULERS, type Snapshot, type QueueSnapshot, type RedisSnapshot } from './snapshot.js';
