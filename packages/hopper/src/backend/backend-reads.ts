/**
 * The read side of the backend seam (QueueBackend extends it): queries of jobs, states, flows,
 * steps, workers, groups, schedulers and the queue's settings, and the per-minute metrics and
 * exact counters. None of them writes, but `recordMetrics` and `recordLatency`, which add a
 * worker's counts (they live with the reads of the same records).
 */
import type { JobStateOrUnknown, JobState } from '../job/states.js';
import type { ExactMetricsRecord, LatencyEntry, MetricsBucket, MetricsRecord, MetricsType, SchedulerLastRun } from './metrics-records.js';
import type { GroupRecord, JobRecord, QueueSettings, SchedulerRecord, StateCounts, StepRecord } from './records.js';
import type { Dependencies } from './requests.js';

export interface BackendReads {
  getJob(id: string): Promise<JobRecord | undefined>;
  getState(id: string): Promise<JobStateOrUnknown>;
  getStateCounts(): Promise<StateCounts>;
  /** Ready jobs (waiting and prioritized, grouped or not) of each given priority, in order. */
  getCountsPerPriority(priorities: number[]): Promise<number[]>;
  isPaused(): Promise<boolean>;
  getLogs(id: string, start: number, end: number, asc: boolean): Promise<{ logs: string[]; count: number }>;
  /** Job ids in `state`, by rank range; `asc` oldest first. */
  getRange(state: JobState, start: number, end: number, asc: boolean): Promise<string[]>;
  /** Many jobs at once (missing ones are undefined). */
  getJobs(ids: string[]): Promise<(JobRecord | undefined)[]>;
  getDeduplicationJobId(id: string): Promise<string | undefined>;
  /** A parent's children by outcome (all of them; for big parents use getDependencyPage). */
  getDependencies(id: string): Promise<Dependencies>;
  /** One page of a parent's children of one kind: the next cursor ('0' when done) and items (key, value). */
  getDependencyPage(
    id: string,
    kind: keyof Dependencies,
    cursor: string,
    count: number,
  ): Promise<{ cursor: string; items: [string, string][] }>;
  /** How many children a parent has of each kind. */
  getDependencyCounts(id: string): Promise<{ processed: number; unprocessed: number; failed: number; ignored: number }>;
  /** A job's durable steps: step key -> its stored outcome. */
  getSteps(id: string): Promise<Record<string, StepRecord>>;
  getStep(id: string, key: string): Promise<StepRecord | undefined>;
  /** Live workers of the queue (heartbeat within its ttl). */
  getWorkers(): Promise<{ id: string; info: string }[]>;
  /** Opens the connection `readEvents` blocks on (named as an events reader), and waits until it is connected. */
  openEventsReader(): Promise<void>;
  /** The connections reading the queue's events (QueueEvents), as the server lists them (field -> value). */
  getEventsReaders(): Promise<Record<string, string>[]>;
  /** The queue's settings: paused, events cap, layout version, queue-wide limits and group defaults. */
  getQueueSettings(): Promise<QueueSettings>;
  /** Groups by id (lexicographic rank range), with their counts and settings. */
  getGroups(start: number, end: number): Promise<GroupRecord[]>;
  getGroup(id: string): Promise<GroupRecord | undefined>;
  getGroupsCount(): Promise<number>;
  /** Ready job ids of a group in the order they will run (rank range). */
  getGroupJobIds(id: string, start: number, end: number): Promise<string[]>;
  getScheduler(id: string): Promise<SchedulerRecord | undefined>;
  /** Scheduler ids by next due time (rank range; paused and finished ones last). */
  getSchedulerIds(start: number, end: number, asc: boolean): Promise<string[]>;
  getSchedulersCount(): Promise<number>;
  /** The earliest due time of a pending scheduler occurrence, or null. */
  nextSchedulerDue(): Promise<number | null>;
  /** Schedulers waiting for their next occurrence to be computed at `now` (ms), earliest first. */
  getDueSchedulers(limit: number, now: number): Promise<string[]>;
  /** The backend's clock (Redis TIME), ms. */
  time(): Promise<number>;

  // metrics (per-minute counts of finished jobs; see recordMetrics.lua)
  /** Adds a worker's per-minute counts of finished jobs, oldest minute first (at most 300 buckets per call). */
  recordMetrics(type: MetricsType, buckets: MetricsBucket[], maxDataPoints: number): Promise<void>;
  /** Reads the metrics of `type`: the totals and the data points (newest first) of rank range `start..end`. */
  getMetrics(type: MetricsType, start: number, end: number): Promise<MetricsRecord>;
  /** Adds a worker's latency histogram counts and its schedulers' last runs (recordLatency.lua). */
  recordLatency(entries: LatencyEntry[], lastRuns: SchedulerLastRun[]): Promise<void>;
  /** Reads the exact outcome counters and latency histograms every script and worker wrote. */
  getExactMetrics(): Promise<ExactMetricsRecord>;
}
