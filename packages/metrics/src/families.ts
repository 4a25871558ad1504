/**
 * The metric families Hopper exports, built from one {@link Snapshot}: names, help, types and
 * label sets. docs/metrics.md lists them all; keep the two in step.
 */
import { JOB_OUTCOMES, JOB_STATES, LATENCY_BUCKETS_MS, type LatencyKind } from 'hopper-queue';
import type { Snapshot } from './snapshot.js';

/** One sample of a family (a line of the text format). */
export interface Sample {
  /** The sample's own name when it differs from the family's (a histogram's `_bucket`, `_sum`, `_count`: the suffix, in a spec's read). */
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** A metric family in prom-client's `get()` shape. */
export interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  values: Sample[];
  aggregator: 'sum';
}

/** How a family is declared: its name (after the prefix), help, type and how to read it. */
export interface FamilySpec {
  name: string;
  help: string;
  type: Family['type'];
  read(s: Snapshot): Sample[];
}

const outcomeHelp: Record<(typeof JOB_OUTCOMES)[number], string> = {
  completed: 'Jobs completed',
  failed: 'Jobs failed for good (attempts exhausted, unrecoverable, or too many stalls; cancelled ones are counted as cancelled)',
  retried: 'Failed attempts that will be retried (at once or after a backoff)',
  stalled: 'Jobs whose lock expired and were rescued by the stall check (put back, or failed past maxStalledCount)',
  'rate-limited': 'Jobs put back by their processor because of a rate limit (RateLimitError)',
  deduplicated: 'Adds deduplicated onto an existing job',
  cancelled: 'Jobs cancelled (pending ones at once, active ones when their attempt ended)',
  'timed-out': 'Attempts that ran past their timeout',
  'dead-lettered': 'Jobs copied to their dead-letter queue after failing for good',
};

const histogramHelp: Record<LatencyKind, [string, string, string]> = {
  wait: ['job_wait_seconds', 'Time from a job becoming ready (added, plus its delay) to the start of its first attempt', 'name'],
  run: ['job_run_seconds', 'Time from the start of an attempt to its recorded outcome', 'name'],
  lateness: ['scheduler_lateness_seconds', "Time from a scheduler occurrence's due instant to the start of its first attempt", 'scheduler'],
};

function perQueue(read: (q: Snapshot['queues'][number]) => Sample[]): (s: Snapshot) => Sample[] {
  return (s) => s.queues.flatMap(read);
}

function optional(value: number | undefined): Sample[] {
  return value === undefined ? [] : [{ labels: {}, value }];
}

const SPECS: FamilySpec[] = [
  {
    name: 'scrape_error',
    help: "1 when this scrape could not read all of Hopper's state within scrapeTimeoutMs (a part failed or did not answer; what was read is exported, the rest left out), else 0.",
    type: 'gauge',
    read: (s) => [{ labels: {}, value: s.error === undefined ? 0 : 1 }],
  },
  ...JOB_OUTCOMES.map((outcome): FamilySpec => ({
    name: `jobs_${outcome.replace('-', '_')}_total`,
    help: `${outcomeHelp[outcome]}, per queue and job name (exact across workers; names past 50 per queue as "other").`,
    type: 'counter',
    // Every known job name (admitted when its first job is added) gets every outcome's series, at 0
    // until it happens: Prometheus needs a series before its first increase to see that increase.
    read: perQueue((q) => {
      const names = new Set(q.exact.names);
      const counts = new Map(q.exact.counters.filter((c) => c.outcome === outcome).map((c) => [c.name, c.count]));
      return [...names].sort().map((name) => ({ labels: { queue: q.name, name }, value: counts.get(name) ?? 0 }));
    }),
  })),
  ...(['wait', 'run', 'lateness'] as const).map((kind): FamilySpec => ({
    name: histogramHelp[kind][0],
    help: `${histogramHelp[kind][1]} (exact across workers, flushed by each worker every 5 s).`,
    type: 'histogram',
    read: perQueue((q) =>
      q.exact.histograms
        .filter((h) => h.kind === kind)
        .flatMap((h) => {
          const labels = { queue: q.name, [histogramHelp[kind][2]]: h.label };
          const out: Sample[] = h.buckets.map((b) => ({
            metricName: '_bucket',
            labels: { ...labels, le: b.le === Infinity ? '+Inf' : b.le / 1000 },
            value: b.count,
          }));
          out.push({ metricName: '_sum', labels, value: h.sum / 1000 }, { metricName: '_count', labels, value: h.count });
          return out;
        }),
    ),
  })),
  {
    name: 'queue_jobs',
    help: 'Jobs per state (waiting, prioritized, delayed, active, waiting-children, completed, failed).',
    type: 'gauge',
    read: perQueue((q) => JOB_STATES.map((state) => ({ labels: { queue: q.name, state }, value: q.counts[state] }))),
  },
  {
    name: 'queue_dead_letters',
    help: 'Jobs waiting in a dead-letter queue for a decision (0 for a queue that is not one).',
    type: 'gauge',
    read: perQueue((q) => [{ labels: { queue: q.name }, value: q.deadLetters }]),
  },
  {
    name: 'queue_oldest_waiting_seconds',
    help: 'Age of the oldest waiting job since it became ready (0 when none waits).',
    type: 'gauge',
    read: perQueue((q) => [{ labels: { queue: q.name }, value: q.oldestWaitingSeconds }]),
  },
  {
    name: 'queue_paused',
    help: '1 when the queue is paused.',
    type: 'gauge',
    read: perQueue((q) => [{ labels: { queue: q.name }, value: q.paused ? 1 : 0 }]),
  },
  {
    name: 'queue_workers',
    help: 'Workers registered on the queue (alive within their heartbeat).',
    type: 'gauge',
    read: perQueue((q) => [{ labels: { queue: q.name }, value: q.workers }]),
  },
  {
    name: 'queue_concurrency',
    help: 'The sum of the registered workers\' configured concurrency (compare with queue_jobs{state="active"}).',
    type: 'gauge',
    read: perQueue((q) => [{ labels: { queue: q.name }, value: q.concurrency }]),
  },
  {
    name: 'scheduler_runs_total',
    help: 'Occurrences a job scheduler ran (including triggered and backfilled ones).',
    type: 'counter',
    read: perQueue((q) => q.schedulers.map((s) => ({ labels: { queue: q.name, scheduler: s.id }, value: s.fired }))),
  },
  {
    name: 'scheduler_missed_total',
    help: 'Occurrences a job scheduler did not run after downtime or a pause (outside the catch-up window, or by policy).',
    type: 'counter',
    read: perQueue((q) => q.schedulers.map((s) => ({ labels: { queue: q.name, scheduler: s.id }, value: s.missed }))),
  },
  {
    name: 'scheduler_skipped_total',
    help: 'Occurrences a job scheduler skipped because the previous run was not finished (overlap policy).',
    type: 'counter',
    read: perQueue((q) => q.schedulers.map((s) => ({ labels: { queue: q.name, scheduler: s.id }, value: s.skippedByOverlap }))),
  },
  {
    name: 'scheduler_paused',
    help: '1 when the job scheduler is paused.',
    type: 'gauge',
    read: perQueue((q) => q.schedulers.map((s) => ({ labels: { queue: q.name, scheduler: s.id }, value: s.paused ? 1 : 0 }))),
  },
  {
    name: 'scheduler_next_run_timestamp_seconds',
    help: "When the job scheduler's pending occurrence is due (Unix seconds).",
    type: 'gauge',
    read: perQueue((q) =>
      q.schedulers.flatMap((s) => (s.next === undefined ? [] : [{ labels: { queue: q.name, scheduler: s.id }, value: s.next / 1000 }])),
    ),
  },
  {
    name: 'scheduler_last_run_timestamp_seconds',
    help: "When the job scheduler's last run ended (Unix seconds; the newest recorded attempt across workers).",
    type: 'gauge',
    read: perQueue((q) => lastRuns(q, (r) => r.finishedAt / 1000)),
  },
  {
    name: 'scheduler_last_run_duration_seconds',
    help: "How long the job scheduler's last run took.",
    type: 'gauge',
    read: perQueue((q) => lastRuns(q, (r) => r.durationMs / 1000)),
  },
  {
    name: 'scheduler_last_run_success',
    help: "1 when the job scheduler's last run completed, 0 when it failed (for good or to be retried).",
    type: 'gauge',
    read: perQueue((q) => lastRuns(q, (r) => (r.outcome === 'completed' ? 1 : 0))),
  },
  {
    name: 'group_jobs',
    help: 'Jobs of the top groups by backlog (only with the groups option), per state (waiting, prioritized, active).',
    type: 'gauge',
    read: perQueue((q) =>
      q.groups.flatMap((g) =>
        (['waiting', 'prioritized', 'active'] as const).map((state) => ({
          labels: { queue: q.name, group: g.id, state },
          value: g[state],
        })),
      ),
    ),
  },
  {
    name: 'redis_used_memory_bytes',
    help: 'Memory Redis uses (INFO used_memory).',
    type: 'gauge',
    read: (s) => optional(s.redis.usedMemory),
  },
  {
    name: 'redis_maxmemory_bytes',
    help: 'Redis maxmemory (0: no limit).',
    type: 'gauge',
    read: (s) => optional(s.redis.maxMemory),
  },
  {
    name: 'redis_mem_fragmentation_ratio',
    help: 'Redis memory fragmentation ratio (INFO mem_fragmentation_ratio).',
    type: 'gauge',
    read: (s) => optional(s.redis.fragmentationRatio),
  },
  {
    name: 'redis_evicted_keys_total',
    help: 'Keys Redis evicted under maxmemory (any eviction can lose jobs: use noeviction).',
    type: 'counter',
    read: (s) => optional(s.redis.evictedKeys),
  },
  {
    name: 'redis_rejected_connections_total',
    help: 'Connections Redis refused (maxclients).',
    type: 'counter',
    read: (s) => optional(s.redis.rejectedConnections),
  },
];

function lastRuns(q: Snapshot['queues'][number], value: (r: Snapshot['queues'][number]['exact']['lastRuns'][number]) => number): Sample[] {
  return [...q.lastRuns.values()].map((r) => ({ labels: { queue: q.name, scheduler: r.scheduler }, value: value(r) }));
}

/** The family names (with `prefix`), in export order. */
export function familyNames(prefix: string): string[] {
  return SPECS.map((s) => prefix + s.name);
}

/** One family's samples from one snapshot, named with `prefix` (a histogram's samples get their suffix). */
export function buildFamily(spec: FamilySpec, prefix: string, snapshot: Snapshot): Family {
  const name = prefix + spec.name;
  const values = spec.read(snapshot).map((v) => (v.metricName === undefined ? v : { ...v, metricName: name + v.metricName }));
  return { name, help: spec.help, type: spec.type, values, aggregator: 'sum' };
}

/** Every family's samples from one snapshot. */
export function buildFamilies(prefix: string, snapshot: Snapshot): Family[] {
  return SPECS.map((spec) => buildFamily(spec, prefix, snapshot));
}

/** The spec of one family (name after the prefix), to read it alone. */
export function familySpecs(): readonly FamilySpec[] {
  return SPECS;
}

/** Bucket upper bounds in seconds, as exported. */
export const BUCKETS_SECONDS = LATENCY_BUCKETS_MS.map((ms) => ms / 1000);
