/**
 * A small in-memory implementation of the telemetry interface (tracer, context manager, meter)
 * for tests: it records every span with its kind, attributes, events, exceptions, parent and
 * trace, propagates contexts as JSON, and keeps every measurement. No OpenTelemetry involved.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type {
  Attributes,
  AttributeValue,
  ContextManager,
  Counter,
  Exception,
  Gauge,
  Histogram,
  Meter,
  Span,
  SpanKind,
  SpanOptions,
  Telemetry,
  Tracer,
} from '../../src/index.js';

/** A context: the span it carries (local), or a remote parent read from metadata. */
export interface FakeContext {
  span?: FakeSpan;
  remote?: { traceId: string; spanId: string };
}

let ids = 0;

export class FakeSpan implements Span<FakeContext> {
  readonly spanId = `s${++ids}`;
  readonly traceId: string;
  /** The span id of the parent (local or remote), if any. */
  readonly parentId: string | undefined;
  readonly attributes: Attributes = {};
  readonly events: { name: string; attributes?: Attributes }[] = [];
  readonly exceptions: Exception[] = [];
  ended = 0;

  constructor(
    readonly name: string,
    readonly kind: SpanKind | undefined,
    parent: FakeContext,
  ) {
    const parentRef = parent.span ? { traceId: parent.span.traceId, spanId: parent.span.spanId } : parent.remote;
    this.traceId = parentRef?.traceId ?? `t${++ids}`;
    this.parentId = parentRef?.spanId;
  }

  setSpanOnContext(ctx: FakeContext): FakeContext {
    return { ...ctx, span: this };
  }
  setAttribute(key: string, value: AttributeValue): void {
    this.attributes[key] = value;
  }
  setAttributes(attributes: Attributes): void {
    Object.assign(this.attributes, attributes);
  }
  addEvent(name: string, attributes?: Attributes): void {
    this.events.push({ name, attributes });
  }
  recordException(exception: Exception): void {
    this.exceptions.push(exception);
  }
  end(): void {
    this.ended++;
  }
}

export class FakeContextManager implements ContextManager<FakeContext> {
  private readonly storage = new AsyncLocalStorage<FakeContext>();
  fromMetadataCalls = 0;

  with<A extends (...args: unknown[]) => unknown>(context: FakeContext, fn: A): ReturnType<A> {
    return this.storage.run(context, fn) as ReturnType<A>;
  }
  active(): FakeContext {
    return this.storage.getStore() ?? {};
  }
  getMetadata(context: FakeContext): string {
    return context.span ? JSON.stringify({ traceId: context.span.traceId, spanId: context.span.spanId }) : '';
  }
  fromMetadata(active: FakeContext, metadata: string): FakeContext {
    this.fromMetadataCalls++;
    return { ...active, span: undefined, remote: JSON.parse(metadata) as { traceId: string; spanId: string } };
  }
}

export class FakeTracer implements Tracer<FakeContext> {
  readonly spans: FakeSpan[] = [];
  constructor(private readonly contexts: FakeContextManager) {}

  startSpan(name: string, options?: SpanOptions, context?: FakeContext): FakeSpan {
    const span = new FakeSpan(name, options?.kind, context ?? this.contexts.active());
    this.spans.push(span);
    return span;
  }

  /** The spans named `name`. */
  named(name: string): FakeSpan[] {
    return this.spans.filter((span) => span.name === name);
  }
}

/** One recorded measurement. */
export interface Measurement {
  value: number;
  attributes?: Attributes;
}

export class FakeMeter implements Meter {
  readonly values = new Map<string, Measurement[]>();
  private instrument(name: string): Counter & Histogram & Gauge {
    const list = this.values.get(name) ?? [];
    this.values.set(name, list);
    const push = (value: number, attributes?: Attributes): void => void list.push({ value, attributes });
    return { add: push, record: push };
  }
  createCounter(name: string): Counter {
    return this.instrument(name);
  }
  createHistogram(name: string): Histogram {
    return this.instrument(name);
  }
  createGauge(name: string): Gauge {
    return this.instrument(name);
  }
  /** The measurements recorded on instrument `name`. */
  of(name: string): Measurement[] {
    return this.values.get(name) ?? [];
  }
}

/** A fake telemetry adapter; `withMeter` adds a meter. */
export function fakeTelemetry(withMeter = false): Telemetry<FakeContext> & {
  tracer: FakeTracer;
  contextManager: FakeContextManager;
  meter?: FakeMeter;
} {
  const contextManager = new FakeContextManager();
  return { tracer: new FakeTracer(contextManager), contextManager, meter: withMeter ? new FakeMeter() : undefined };
}
