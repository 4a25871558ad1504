/**
 * Tracing and job metrics through a user's `telemetry` adapter: the option's check, one helper
 * that wraps an operation in a span (with context propagation through the job's options), and
 * the instruments a worker records jobs on. Costs nothing without the option.
 */
import { WriteCode, type Failure } from '../backend/backend.js';
import type { OutcomesOptions } from '../runtime/outcomes.js';
import type { MetricsRecorder } from './metrics-recorder.js';
import { DelayedError, InvalidOptionsError, RateLimitError, WaitingChildrenError, WaitingError } from '../job/errors.js';
import { toError } from '../job/failure.js';
import {
  MetricNames,
  SpanKind,
  TelemetryAttributes,
  type Attributes,
  type Counter,
  type Histogram,
  type Meter,
  type Span,
  type Telemetry,
} from './telemetry.js';

function hasMethods(value: unknown, names: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return names.every((name) => typeof record[name] === 'function');
}

/** Checks the `telemetry` option of a component: an object with a tracer and a context manager (and an optional meter). */
export function validateTelemetry(telemetry: unknown, owner: string): asserts telemetry is Telemetry | undefined {
  if (telemetry === undefined) return;
  const t = telemetry as Partial<Telemetry> | null;
  const ok =
    typeof t === 'object' &&
    t !== null &&
    hasMethods(t.tracer, ['startSpan']) &&
    hasMethods(t.contextManager, ['with', 'active', 'getMetadata', 'fromMetadata']) &&
    (t.meter === undefined || hasMethods(t.meter, ['createCounter', 'createHistogram', 'createGauge']));
  if (!ok) {
    throw new InvalidOptionsError(
      `${owner}: telemetry must be { tracer: { startSpan }, contextManager: { with, active, getMetadata, fromMetadata }, meter? }, ` +
        'as BullMQ defines it (bullmq-otel provides one): check the object passed.',
    );
  }
}

/**
 * Runs `fn` in a span named `<operation> <destination>` (or `<operation>`), with the queue name
 * and operation as attributes. The span is active while `fn` runs (the user's spans nest under
 * it), records what `fn` throws, and always ends.
 *
 * `srcMetadata`: a serialised context to link to (a job's producer context): a consumer span is
 * started under it. `fn` receives the span and, when `propagate` is set, the serialised context
 * of the span, to store with the jobs it adds. Without telemetry, `fn` just runs.
 */
export async function trace<T>(
  telemetry: Telemetry | undefined,
  kind: SpanKind,
  queueName: string,
  operation: string,
  destination: string,
  fn: (span: Span | undefined, metadata: string | undefined) => Promise<T> | T,
  opts: { srcMetadata?: string; propagate?: boolean } = {},
): Promise<T> {
  if (!telemetry) return fn(undefined, undefined);
  const { tracer, contextManager } = telemetry;
  const active: unknown = contextManager.active();
  const linked: unknown = opts.srcMetadata ? contextManager.fromMetadata(active, opts.srcMetadata) : undefined;
  const span = tracer.startSpan(destination ? `${operation} ${destination}` : operation, { kind }, linked);
  try {
    span.setAttributes({ [TelemetryAttributes.QueueName]: queueName, [TelemetryAttributes.QueueOperation]: operation });
    // A consumer continues the producer's trace; anything else continues the caller's.
    const context: unknown = span.setSpanOnContext(kind === SpanKind.CONSUMER && linked !== undefined ? linked : active);
    const metadata = opts.propagate ? contextManager.getMetadata(context) : undefined;
    return await contextManager.with(context, () => fn(span, metadata));
  } catch (err) {
    span.recordException(err instanceof Error ? err : String(err));
    throw err;
  } finally {
    span.end();
  }
}

/** A job's producer context to link its processing span to, unless it was added with `omitContext`. */
export function producerContext(opts: { telemetry?: { metadata?: string; omitContext?: boolean } }): string | undefined {
  const tm = opts.telemetry;
  return tm && !tm.omitContext && typeof tm.metadata === 'string' && tm.metadata !== '' ? tm.metadata : undefined;
}

/** The job fields a processing span reads. */
interface TracedJob {
  id?: string;
  name: string;
  processedOn?: number;
  attemptsMade: number;
  /** `<prefix>:<queue>:<id>` of the flow parent, if the job has one. */
  parentKey?: string;
  opts: { telemetry?: { metadata?: string; omitContext?: boolean } };
}

/** Hopper's own span attributes (beside BullMQ's): the flow parent of a job's attempt. */
export const HopperAttributes = { JobParent: 'hopper.job.parent' } as const;

/**
 * Runs one attempt (`run`: the processor) in a `process <queue>` consumer span, linked to the
 * job's producer context. The span ends when the attempt settles (before its result is written).
 * A failure is recorded as a `job failed` event and an exception; the signals a processor throws
 * after moving its job itself (DelayedError, WaitingError, WaitingChildrenError, RateLimitError) are not failures.
 */
export async function traceAttempt(
  telemetry: Telemetry,
  queueName: string,
  workerId: string,
  workerName: string | undefined,
  job: TracedJob,
  run: () => Promise<unknown>,
): Promise<unknown> {
  const outcome = await trace(
    telemetry,
    SpanKind.CONSUMER,
    queueName,
    'process',
    queueName,
    async (span) => {
      span?.setAttributes({
        [TelemetryAttributes.WorkerId]: workerId,
        [TelemetryAttributes.WorkerName]: workerName,
        [TelemetryAttributes.JobId]: job.id,
        [TelemetryAttributes.JobName]: job.name,
        [TelemetryAttributes.JobProcessedTimestamp]: job.processedOn,
        [HopperAttributes.JobParent]: job.parentKey,
      });
      try {
        const value = await run();
        span?.addEvent('job completed', { [TelemetryAttributes.JobResult]: safeJson(value) });
        return { ok: true as const, value };
      } catch (error) {
        const err = toError(error);
        if (
          err instanceof DelayedError ||
          err instanceof WaitingError ||
          err instanceof WaitingChildrenError ||
          err instanceof RateLimitError
        ) {
          span?.addEvent(`job moved: ${err.name}`);
        } else {
          span?.addEvent('job failed', { [TelemetryAttributes.JobFailedReason]: err.message });
          span?.recordException(err);
        }
        return { ok: false as const, error };
      } finally {
        span?.setAttributes({
          [TelemetryAttributes.JobAttemptFinishedTimestamp]: Date.now(),
          [TelemetryAttributes.JobAttemptsMade]: job.attemptsMade + 1,
        });
      }
    },
    { srcMetadata: producerContext(job.opts) },
  );
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/** A value as a span attribute: its JSON, or '' when it has none. */
function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** What a worker records per finished attempt: the state a job reached. */
export type MeteredState = 'completed' | 'failed' | 'delayed' | 'retried';

/**
 * The state an acknowledged attempt left its job in: `retryDelay` is the failure's (undefined for
 * a completion; < 0 failed for good, 0 retried now, > 0 retried after a backoff).
 */
export function finishedState(retryDelay: number | undefined, cancelled: boolean): MeteredState {
  if (cancelled || (retryDelay !== undefined && retryDelay < 0)) return 'failed';
  if (retryDelay === undefined) return 'completed';
  return retryDelay > 0 ? 'delayed' : 'retried';
}

/**
 * The worker's hook for each recorded attempt (Outcomes' onRecorded): counts it on the telemetry
 * meter and in the per-minute metrics. Undefined when neither is on (nothing to do per job).
 */
export function attemptRecorder(jobMeter: JobMeter | undefined, metrics: MetricsRecorder | undefined): OutcomesOptions['onRecorded'] {
  if (!jobMeter && !metrics) return undefined;
  return (batch, item, code, now) => {
    const state = finishedState(batch.kind === 'fail' ? (item.ack as Failure).retryDelay : undefined, code === WriteCode.Cancelled);
    const processedOn = item.job.processedOn;
    jobMeter?.record(state, item.job.name, processedOn ? now - processedOn : undefined);
    if (state === 'completed' || state === 'failed') metrics?.note(state);
  };
}

const COUNTERS: Record<MeteredState, MetricNames> = {
  completed: MetricNames.JobsCompleted,
  failed: MetricNames.JobsFailed,
  delayed: MetricNames.JobsDelayed,
  retried: MetricNames.JobsRetried,
};

/**
 * The instruments a worker records finished attempts on (created once, on first use): a counter
 * per state reached, and the processing duration of completed and failed attempts.
 */
export class JobMeter {
  private readonly counters = new Map<MeteredState, Counter>();
  private duration: Histogram | undefined;

  constructor(
    private readonly meter: Meter,
    private readonly queueName: string,
  ) {}

  /** Counts one job of `name` reaching `state`; `durationMs` (its attempt's run time) goes to the duration histogram. */
  record(state: MeteredState, name: string, durationMs: number | undefined): void {
    const attributes: Attributes = {
      [TelemetryAttributes.QueueName]: this.queueName,
      [TelemetryAttributes.JobName]: name,
      [TelemetryAttributes.JobState]: state,
    };
    let counter = this.counters.get(state);
    if (!counter) {
      counter = this.meter.createCounter(COUNTERS[state], { description: `Number of jobs ${state}`, unit: '1' });
      this.counters.set(state, counter);
    }
    counter.add(1, attributes);
    if (durationMs !== undefined && (state === 'completed' || state === 'failed')) {
      this.duration ??= this.meter.createHistogram(MetricNames.JobDuration, { description: 'Job processing duration', unit: 'ms' });
      this.duration.record(durationMs, attributes);
    }
  }
}
