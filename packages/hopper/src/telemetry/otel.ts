/**
 * `hopper/otel`: Hopper's own OpenTelemetry adapter for the `telemetry` option, written on the
 * OpenTelemetry API alone (`@opentelemetry/api`, an optional peer dependency: only this entry
 * point loads it, so `import 'hopper-queue'` costs nothing when OpenTelemetry is not installed).
 *
 * It is BullMQ's telemetry interface, so it is interchangeable with `bullmq-otel`; what it adds:
 * the job carries the W3C `traceparent`, `tracestate` and `baggage` of the add even when no global
 * propagator is registered (so a request id put in the baggage by the producer reaches the
 * processor), exceptions set the span's status to error, and the processor's spans, steps
 * included, nest under the attempt's span through the context manager the SDK registered
 * (AsyncLocalStorage in Node's SDK).
 *
 * @example
 * import { HopperOtel } from 'hopper-queue/otel';
 * const telemetry = new HopperOtel({ name: 'billing' });
 * const queue = new Queue('invoices', { connection, telemetry });
 * const worker = new Worker('invoices', render, { connection, telemetry });
 */
import {
  context as otelContext,
  metrics as otelMetrics,
  propagation,
  SpanStatusCode,
  trace as otelTrace,
  TraceFlags,
  type Context,
  type Span as OtelSpan,
  type Tracer as OtelTracer,
} from '@opentelemetry/api';
import type {
  AttributeValue,
  Attributes,
  ContextManager,
  Exception,
  Meter,
  Span,
  SpanOptions,
  Telemetry,
  Time,
  Tracer,
} from './telemetry.js';

/** Options of {@link HopperOtel}. */
export interface HopperOtelOptions {
  /** The instrumentation scope's name (the tracer's and meter's). Default `'hopper'`. */
  name?: string;
  /** The instrumentation scope's version. */
  version?: string;
  /** Record counters and durations through OpenTelemetry's global meter provider. Default true. */
  metrics?: boolean;
}

/** The keys of a serialised context (W3C Trace Context and Baggage header names). */
type Carrier = Record<string, string>;

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A Hopper span over an OpenTelemetry span. */
class HopperOtelSpan implements Span<Context> {
  constructor(private readonly span: OtelSpan) {}

  setSpanOnContext(ctx: Context): Context {
    return otelTrace.setSpan(ctx, this.span);
  }

  setAttribute(key: string, value: AttributeValue): void {
    this.span.setAttribute(key, value);
  }

  setAttributes(attributes: Attributes): void {
    this.span.setAttributes(attributes);
  }

  addEvent(name: string, attributes?: Attributes): void {
    this.span.addEvent(name, attributes);
  }

  recordException(exception: Exception, time?: Time): void {
    this.span.recordException(exception as Parameters<OtelSpan['recordException']>[0], time);
    const message = typeof exception === 'string' ? exception : exception.message;
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }

  end(): void {
    this.span.end();
  }
}

/** Starts OpenTelemetry spans for Hopper. */
class HopperOtelTracer implements Tracer<Context> {
  constructor(private readonly tracer: OtelTracer) {}

  startSpan(name: string, options?: SpanOptions, ctx?: Context): Span<Context> {
    return new HopperOtelSpan(this.tracer.startSpan(name, { kind: options?.kind }, ctx ?? otelContext.active()));
  }
}

/**
 * Turns contexts into the string stored with a job and back: a JSON object of W3C headers. The
 * global propagator writes them when the SDK registered one (Node's SDK registers Trace Context
 * and Baggage); when it wrote none, Hopper writes `traceparent` and `baggage` itself.
 */
class HopperOtelContextManager implements ContextManager<Context> {
  // `any`: the signature of ContextManager.with (BullMQ's interface, telemetry.ts), which takes any function.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  with<A extends (...args: any[]) => any>(ctx: Context, fn: A): ReturnType<A> {
    return otelContext.with(ctx, fn as () => ReturnType<A>);
  }

  active(): Context {
    return otelContext.active();
  }

  getMetadata(ctx: Context): string {
    const carrier: Carrier = {};
    propagation.inject(ctx, carrier);
    const span = otelTrace.getSpanContext(ctx);
    if (carrier.traceparent === undefined && span && otelTrace.isSpanContextValid(span)) {
      const flags = (span.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, '0');
      carrier.traceparent = `00-${span.traceId}-${span.spanId}-${flags}`;
      if (span.traceState) carrier.tracestate = span.traceState.serialize();
    }
    const baggage = propagation.getBaggage(ctx);
    if (carrier.baggage === undefined && baggage && baggage.getAllEntries().length > 0) {
      carrier.baggage = baggage
        .getAllEntries()
        .map(([key, entry]) => `${encodeURIComponent(key)}=${encodeURIComponent(entry.value)}`)
        .join(',');
    }
    return JSON.stringify(carrier);
  }

  fromMetadata(activeContext: Context, metadata: string): Context {
    const carrier = parseCarrier(metadata);
    if (!carrier) return activeContext;
    let ctx = propagation.extract(activeContext, carrier);
    const parsed = TRACEPARENT.exec(carrier.traceparent ?? '');
    if (parsed && !otelTrace.getSpanContext(ctx)) {
      const [, traceId, spanId, flags] = parsed;
      const spanContext = { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true };
      if (otelTrace.isSpanContextValid(spanContext)) ctx = otelTrace.setSpanContext(ctx, spanContext);
    }
    if (carrier.baggage && !propagation.getBaggage(ctx)) {
      const entries: Record<string, { value: string }> = {};
      for (const pair of carrier.baggage.split(',')) {
        const eq = pair.indexOf('=');
        if (eq <= 0) continue;
        try {
          const key = decodeURIComponent(pair.slice(0, eq).trim());
          entries[key] = {
            value: decodeURIComponent(
              pair
                .slice(eq + 1)
                .split(';')[0]
                .trim(),
            ),
          };
        } catch {
          // A malformed entry is dropped, as a propagator would.
        }
      }
      if (Object.keys(entries).length > 0) ctx = propagation.setBaggage(ctx, propagation.createBaggage(entries));
    }
    return ctx;
  }
}

/** The stored metadata as a carrier of string headers, or undefined when it is not one. */
function parseCarrier(metadata: string): Carrier | undefined {
  let value: unknown;
  try {
    value = JSON.parse(metadata);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const carrier: Carrier = {};
  for (const [key, header] of Object.entries(value as Record<string, unknown>)) {
    if (typeof header === 'string') carrier[key] = header;
  }
  return carrier;
}

/**
 * The `telemetry` option on OpenTelemetry: spans through the global tracer provider, context
 * through the global context manager and propagator, counters and durations through the global
 * meter provider. Register the SDK first (for example `@opentelemetry/sdk-node`'s `NodeSDK`);
 * without one, OpenTelemetry's API records nothing and costs next to nothing.
 */
export class HopperOtel implements Telemetry<Context> {
  readonly tracer: Tracer<Context>;
  readonly contextManager: ContextManager<Context>;
  readonly meter: Meter | undefined;

  constructor(opts: HopperOtelOptions = {}) {
    const name = opts.name ?? 'hopper';
    this.tracer = new HopperOtelTracer(otelTrace.getTracer(name, opts.version));
    this.contextManager = new HopperOtelContextManager();
    this.meter = opts.metrics === false ? undefined : otelMetrics.getMeter(name, opts.version);
  }
}
