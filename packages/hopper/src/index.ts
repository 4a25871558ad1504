/**
 * Hopper: a job queue and scheduler for TypeScript on Redis, speaking BullMQ's API.
 * Public exports only.
 */
export {
  Queue,
  type QueueOptions,
  type BulkJob,
  type ReplayDeadLettersOptions,
  type ReplayResult,
  type ReadStreamOptions,
  type StreamChunk,
  DEFAULT_MAX_EVENTS,
} from './api/queue.js';
export { sendStreamAsSSE, type StreamSSEOptions, type StreamSSEOutcome } from './api/output-sse.js';
export type { JobStream } from './job/job-stream.js';
export { QueueGetters, type JobType, type WorkerInfo, type QueueMeta } from './api/queue-getters.js';
export type { JobSchedulerJson, JobSchedulerState, JobSchedulerTemplate } from './api/job-schedulers.js';
export type { RepeatableJob } from './api/legacy-repeat.js';
export type { LegacyRepeatOptions } from './schedule/repeat-options.js';
export { Worker, type WorkerOptions, type Processor, type AdvancedSettings } from './api/worker.js';
export { QueueEvents, type QueueEventsOptions } from './api/queue-events.js';
export {
  SpanKind,
  TelemetryAttributes,
  MetricNames,
  type Telemetry,
  type Tracer,
  type Span,
  type SpanOptions,
  type ContextManager,
  type Attributes,
  type AttributeValue,
  type Exception,
  type Time,
  type Meter,
  type Counter,
  type Histogram,
  type Gauge,
  type MetricOptions,
  type JobTelemetryOptions,
} from './telemetry/telemetry.js';
export { UNSUPPORTED_OPTIONS, IMPLEMENTED_OPTIONS, type OptionsOwner } from './job/compat.js';
export { MetricsTime, type MetricsOptions, type Metrics } from './telemetry/metrics-recorder.js';
export { JOB_OUTCOMES, type JobOutcome, type ExactMetrics, type LatencyHistogram } from './api/queue-metrics.js';
export { LATENCY_BUCKETS_MS, LATENCY_FLUSH_MS } from './telemetry/latency-recorder.js';
export type { LastRunOutcome, LatencyKind, SchedulerLastRun } from './backend/backend.js';
export {
  FlowProducer,
  type FlowProducerOptions,
  type FlowJob,
  type FlowChildJob,
  type FlowOpts,
  type JobNode,
  type NodeOpts,
} from './api/flow-producer.js';
export type { DependenciesOpts, DependenciesResult, DependenciesCount, DependencyPage } from './job/job-flow.js';
export type { StepInfo } from './job/job-steps.js';
export type { RemoveOptions } from './job/job-changes.js';
export { QueueBase, DEFAULT_PREFIX, type QueueBaseOptions } from './api/queue-base.js';
export { Job, type JobJson, type JobJsonRaw, type JobJsonSandbox, type JobProgress } from './job/job.js';
export type { NextJobReply } from './job/job-manual.js';
export type { JobsOptions, DefaultJobOptions, BackoffOptions, KeepJobs, DeduplicationOptions, GroupOptions } from './job/options.js';
export type { GroupInfo, GroupSettings, RateLimiterOptions } from './api/queue-groups.js';
export type { BudgetOptions, BudgetUse } from './api/budget.js';
export type { GroupStatus } from './backend/backend.js';
export { MAX_PRIORITY, DEFAULT_REMOVE_ON_COMPLETE } from './job/options.js';
export type { BackoffStrategy, BackoffJob } from './job/backoff.js';
export { MAX_RETRY_DELAY_MS } from './job/backoff.js';
export { JOB_STATES, type JobState, type FinishedStatus, type JobStateOrUnknown, type JobCountType } from './job/states.js';
export {
  ErrorCode,
  HopperError,
  InvalidOptionsError,
  InvalidDataError,
  InvalidNameError,
  InvalidJobIdError,
  InvalidScheduleError,
  LockLostError,
  ClosedError,
  CloseTimeoutError,
  ConnectionError,
  ConnectionTimeoutError,
  LibraryConflictError,
  DatabaseLostError,
  UnsupportedRedisError,
  CrossSlotError,
  ScriptError,
  JobNotFoundError,
  QueueNotFoundError,
  UnknownBackoffError,
  WaitTimeoutError,
  DatasetResetError,
  UnrecoverableError,
  DelayedError,
  WaitingError,
  WaitingChildrenError,
  RateLimitError,
  JobActiveError,
  InvalidStateError,
  CancelledError,
  TimeoutError,
  ReplayRefusedError,
  FlowConflictError,
  FlowTooLargeError,
  GroupMaxSizeExceededError,
  BudgetExceededError,
  CostAboveRateLimitError,
  UnsupportedOptionError,
  SchedulerJobError,
  RedisFullError,
  BackendUnsupportedError,
  BackendError,
  BackendDriverMissingError,
  MigrationError,
  type MigrationRefusal,
  hopperErrorCode,
} from './job/errors.js';
export { Admin, AUDIT_LOG_MAX, type AdminOptions, type AuditEntry, type QueueOverview } from './admin/admin.js';
export type { DoctorOptions, DoctorReport, Finding, Severity } from './admin/doctor.js';
export type { ServerFacts } from './backend/backend.js';
export type { ConnectionOptions, QueueConnection, RedisClient, RedisOptions } from './backend/create.js';
export { type Clock, type ClockTimer, SystemClock } from './clock/clock.js';
export { FakeClock } from './clock/fake-clock.js';
export { delay } from './clock/delay.js';
export {
  nextFireTimes,
  validateRepeat,
  firstOccurrence,
  type RepeatOptions,
  type ScheduleSpec,
  type OverlapPolicy,
  type CatchupPolicy,
  type NextFireTimesOptions,
  type InvalidScheduleReason,
} from './schedule/index.js';
