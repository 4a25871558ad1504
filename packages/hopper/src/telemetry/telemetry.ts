/**
 * The telemetry interface Queue, Worker and FlowProducer accept (`telemetry` option), with
 * BullMQ's names and shapes, so an adapter written for BullMQ (`bullmq-otel`, or your own) works
 * unchanged. Hopper does not depend on OpenTelemetry: these are plain interfaces, and any object
 * with these methods will do.
 *
 * @example
 * import { BullMQOtel } from 'bullmq-otel';
 * const queue = new Queue('mail', { connection, telemetry: new BullMQOtel('mail-service') });
 */

/** What a span stands for, with OpenTelemetry's numbering (BullMQ's `SpanKind`). */
export enum SpanKind {
  INTERNAL = 0,
  SERVER = 1,
  CLIENT = 2,
  PRODUCER = 3,
  CONSUMER = 4,
}

/** Attribute names Hopper sets on spans and metrics (BullMQ's, so dashboards built for it keep working). */
export enum TelemetryAttributes {
  QueueName = 'bullmq.queue.name',
  QueueOperation = 'bullmq.queue.operation',
  BulkCount = 'bullmq.job.bulk.count',
  BulkNames = 'bullmq.job.bulk.names',
  JobName = 'bullmq.job.name',
  JobId = 'bullmq.job.id',
  JobKey = 'bullmq.job.key',
  JobIds = 'bullmq.job.ids',
  JobAttemptsMade = 'bullmq.job.attempts.made',
  DeduplicationKey = 'bullmq.job.deduplication.key',
  JobOptions = 'bullmq.job.options',
  JobProgress = 'bullmq.job.progress',
  QueueDrainDelay = 'bullmq.queue.drain.delay',
  QueueGrace = 'bullmq.queue.grace',
  QueueCleanLimit = 'bullmq.queue.clean.limit',
  QueueCleanCount = 'bullmq.queue.clean.count',
  QueueRateLimit = 'bullmq.queue.rate.limit',
  JobType = 'bullmq.job.type',
  QueueOptions = 'bullmq.queue.options',
  QueueEventMaxLength = 'bullmq.queue.event.max.length',
  QueueJobsState = 'bullmq.queue.jobs.state',
  WorkerOptions = 'bullmq.worker.options',
  WorkerName = 'bullmq.worker.name',
  WorkerId = 'bullmq.worker.id',
  WorkerRateLimit = 'bullmq.worker.rate.limit',
  WorkerDoNotWaitActive = 'bullmq.worker.do.not.wait.active',
  WorkerForceClose = 'bullmq.worker.force.close',
  WorkerStalledJobs = 'bullmq.worker.stalled.jobs',
  WorkerFailedJobs = 'bullmq.worker.failed.jobs',
  WorkerJobsToExtendLocks = 'bullmq.worker.jobs.to.extend.locks',
  JobAttemptFinishedTimestamp = 'bullmq.job.attempt_finished_timestamp',
  JobProcessedTimestamp = 'bullmq.job.processed.timestamp',
  JobResult = 'bullmq.job.result',
  JobFailedReason = 'bullmq.job.failed.reason',
  FlowName = 'bullmq.flow.name',
  JobSchedulerId = 'bullmq.job.scheduler.id',
  JobState = 'bullmq.job.state',
}

/** Names of the metric instruments Hopper records through `telemetry.meter` (BullMQ's). */
export enum MetricNames {
  QueueJobsCount = 'bullmq.queue.jobs',
  JobsCompleted = 'bullmq.jobs.completed',
  JobsFailed = 'bullmq.jobs.failed',
  JobsDelayed = 'bullmq.jobs.delayed',
  JobsRetried = 'bullmq.jobs.retried',
  JobsWaiting = 'bullmq.jobs.waiting',
  JobsWaitingChildren = 'bullmq.jobs.waiting_children',
  JobDuration = 'bullmq.job.duration',
}

/** A span or metric attribute value. */
export type AttributeValue =
  string | number | boolean | Array<null | undefined | string> | Array<null | undefined | number> | Array<null | undefined | boolean>;

/** Attributes of a span, event or measurement. */
export interface Attributes {
  [attribute: string]: AttributeValue | undefined;
}

/** An exception as a span records it: a string, or an object with a code, name or message. */
export type Exception = string | { code?: string | number; name?: string; message?: string; stack?: string };

/** A point in time: ms since the epoch, a Date, or a high-resolution `[seconds, nanoseconds]`. */
export type Time = [number, number] | number | Date;

/** Options of a new span. */
export interface SpanOptions {
  kind: SpanKind;
}

/** A span: one traced operation. Hopper ends every span it starts. */
// `any` default: the context type is the adapter's (OpenTelemetry's Context, for bullmq-otel).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface Span<Context = any> {
  /** Returns a context carrying this span (what child spans and propagation start from). */
  setSpanOnContext(ctx: Context): Context;
  /** Sets one attribute. */
  setAttribute(key: string, value: AttributeValue): void;
  /** Sets several attributes. */
  setAttributes(attributes: Attributes): void;
  /** Records an event on the span. */
  addEvent(name: string, attributes?: Attributes): void;
  /** Records an exception thrown by the traced operation. */
  recordException(exception: Exception, time?: Time): void;
  /** Ends the span (it is exported then). */
  end(): void;
}

/** Starts spans. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface Tracer<Context = any> {
  /** Starts a span named `name`; under `context` if given, else under the active context. */
  startSpan(name: string, options?: SpanOptions, context?: Context): Span;
}

/** Holds the active context, and turns contexts into strings and back (propagation through Redis). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface ContextManager<Context = any> {
  /** Runs `fn` with `context` active and returns its result. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  with<A extends (...args: any[]) => any>(context: Context, fn: A): ReturnType<A>;
  /** The active context. */
  active(): Context;
  /** Serialises `context` (stored with the job as `opts.telemetry.metadata`). */
  getMetadata(context: Context): string;
  /** A context linked to the serialised one (`metadata`), derived from `activeContext`. */
  fromMetadata(activeContext: Context, metadata: string): Context;
}

/** Options of a metric instrument. */
export interface MetricOptions {
  /** What the metric measures. */
  description?: string;
  /** Its unit ('ms', '1', ...). */
  unit?: string;
}

/** A monotonic counter. */
export interface Counter {
  /** Adds `value` (>= 0). */
  add(value: number, attributes?: Attributes): void;
}

/** A distribution of recorded values (durations). */
export interface Histogram {
  /** Records one value. */
  record(value: number, attributes?: Attributes): void;
}

/** A value that goes up and down (queue sizes). */
export interface Gauge {
  /** Records the current value. */
  record(value: number, attributes?: Attributes): void;
}

/** Creates metric instruments. Hopper asks once per name and instance, and keeps them. */
export interface Meter {
  /** Creates (or returns) the counter `name`. */
  createCounter(name: string, options?: MetricOptions): Counter;
  /** Creates (or returns) the histogram `name`. */
  createHistogram(name: string, options?: MetricOptions): Histogram;
  /** Creates (or returns) the gauge `name`. */
  createGauge(name: string, options?: MetricOptions): Gauge;
}

/**
 * The `telemetry` option: a tracer and context manager (required), and optionally a meter.
 * Spans: `add <queue>.<name>`, `addBulk <queue>`, `clean <queue>` (producer / internal),
 * `process <queue>` (consumer, linked to the context of the add), `addFlow <queue>`,
 * `addBulkFlows`. Metrics (with a meter): jobs completed, failed, delayed, retried, and
 * processing duration, recorded by workers; job counts per state by `queue.recordJobCountsMetric`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface Telemetry<Context = any> {
  /** Creates the spans. */
  tracer: Tracer<Context>;
  /** Manages and propagates the context. */
  contextManager: ContextManager<Context>;
  /** Creates metric instruments; without it, no metric is recorded. */
  meter?: Meter;
}

/**
 * The `telemetry` job option: the serialised context of the add (set by Hopper when the queue has
 * telemetry), or `omitContext` to add the job without it (its processing span then starts a new trace).
 */
export interface JobTelemetryOptions {
  /** The serialised producer context (BullMQ's `tm`); set by Hopper, rarely by hand. */
  metadata?: string;
  /** Do not propagate the producer's context to the worker. Default false. */
  omitContext?: boolean;
}
