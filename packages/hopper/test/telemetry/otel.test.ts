/**
 * `hopper/otel` against OpenTelemetry's own SDK (in-memory exporter, AsyncLocalStorage context
 * manager): the processor's spans continue the producer's trace, retries and dead-letter replays
 * stay in it, flows show parent and children, steps are child spans, and baggage set by the
 * producer reaches the processor, with and without a registered W3C propagator.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, propagation, trace, SpanKind as OtelKind } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { FlowProducer } from '../../src/index.js';
import { HopperOtel } from '../../src/telemetry/otel.js';
import { useHopper } from '../helpers/hopper.js';
import { once, until } from '../helpers/wait.js';

const env = useHopper();
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});

afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});

/** The exported spans whose `bullmq.queue.name` attribute is `queue`. */
function spansOf(queue: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.attributes['bullmq.queue.name'] === queue);
}

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** Runs `fn` with `request.id` = `id` in the active baggage (what a web framework's middleware would set). */
function withRequestId<T>(id: string, fn: () => T): T {
  const baggage = propagation.createBaggage({ 'request.id': { value: id } });
  return context.with(propagation.setBaggage(context.active(), baggage), fn);
}

function requestId(): string | undefined {
  return propagation.getBaggage(context.active())?.getEntry('request.id')?.value;
}

describe('hopper/otel: traces on OpenTelemetry', () => {
  it('continues the producer trace in every attempt; steps are child spans; baggage reaches the processor', async () => {
    const telemetry = new HopperOtel({ name: 'test' });
    const name = env.queueName('otel');
    const queue = env.queue(name, { telemetry });
    const seen: { attempt: number; requestId?: string; stepRuns: number }[] = [];
    let stepRuns = 0;
    const worker = env.worker(
      name,
      async (job) => {
        await job.step('charge', () => {
          stepRuns += 1;
          return 'ok';
        });
        seen.push({ attempt: job.attemptsMade + 1, requestId: requestId(), stepRuns });
        if (job.attemptsMade === 0) throw new Error('transient');
        return 'done';
      },
      { telemetry },
    );
    const done = once(worker, 'completed');
    await withRequestId('req-42', () => queue.add('invoice', { n: 1 }, { attempts: 2 }));
    await done;

    expect(seen).toEqual([
      { attempt: 1, requestId: 'req-42', stepRuns: 1 },
      { attempt: 2, requestId: 'req-42', stepRuns: 1 },
    ]);
    const spans = spansOf(name);
    const add = spans.find((s) => s.kind === OtelKind.PRODUCER);
    const attempts = spans.filter((s) => s.kind === OtelKind.CONSUMER);
    const steps = spans.filter((s) => s.name === 'step charge');
    expect(add?.name).toBe(`add ${name}.invoice`);
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) {
      expect(attempt.spanContext().traceId).toBe(add?.spanContext().traceId);
      expect(parentOf(attempt)).toBe(add?.spanContext().spanId);
    }
    // The first attempt failed: its span says so.
    const failed = attempts.find((s) => s.attributes['bullmq.job.attempts.made'] === 1);
    expect(failed?.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(failed?.events.map((e) => e.name)).toContain('job failed');
    // One step span per attempt, each under its attempt; the second came from storage.
    expect(steps).toHaveLength(2);
    expect(steps.map((s) => parentOf(s)).sort()).toEqual(attempts.map((s) => s.spanContext().spanId).sort());
    expect(steps.map((s) => s.attributes['hopper.step.stored']).sort()).toEqual([false, true]);
  });

  it('a dead letter replayed joins the trace of the original add', async () => {
    const telemetry = new HopperOtel();
    const name = env.queueName('otel-dl');
    const dlqName = `${name}-dlq`;
    const queue = env.queue(name, { telemetry, deadLetter: { queue: dlqName } });
    const dlq = env.queue(dlqName);
    let fail = true;
    const ids: (string | undefined)[] = [];
    const worker = env.worker(
      name,
      async () => {
        ids.push(requestId());
        if (fail) throw new Error('broken until fixed');
        return 'fixed';
      },
      { telemetry },
    );
    const failed = once(worker, 'failed');
    const job = await withRequestId('req-dl', () => queue.add('pay', {}));
    await failed;
    await until(async () => (await dlq.getJobCounts('waiting')).waiting === 1, 'the dead letter');
    fail = false;
    const completed = once(worker, 'completed');
    const [letter] = await dlq.getJobs(['waiting']);
    await letter.replay();
    await completed;

    expect(ids).toEqual(['req-dl', 'req-dl']);
    const spans = spansOf(name);
    const add = spans.find((s) => s.kind === OtelKind.PRODUCER);
    const attempts = spans.filter((s) => s.kind === OtelKind.CONSUMER);
    expect(attempts).toHaveLength(2);
    expect(attempts.every((s) => s.attributes['bullmq.job.id'] === job.id)).toBe(true);
    expect(attempts.every((s) => s.spanContext().traceId === add?.spanContext().traceId)).toBe(true);
  });

  it('a flow: the parent and its children are processed in the flow add trace, children name their parent', async () => {
    const telemetry = new HopperOtel();
    const name = env.queueName('otel-flow');
    const flows = env.track(new FlowProducer({ connection: env.url, prefix: env.prefix, telemetry }));
    const worker = env.worker(name, async (job) => `${job.name} done`, { telemetry });
    const parentDone = new Promise<void>((resolve) => {
      worker.on('completed', (job: { name: string }) => {
        if (job.name === 'parent') resolve();
      });
    });
    const tree = await flows.add({
      name: 'parent',
      queueName: name,
      children: [
        { name: 'a', queueName: name },
        { name: 'b', queueName: name },
      ],
    });
    await parentDone;

    const spans = spansOf(name);
    const flowAdd = spans.find((s) => s.name.startsWith('addFlow'));
    const attempts = spans.filter((s) => s.kind === OtelKind.CONSUMER);
    expect(flowAdd).toBeDefined();
    expect(attempts.map((s) => s.attributes['bullmq.job.name']).sort()).toEqual(['a', 'b', 'parent']);
    expect(attempts.every((s) => s.spanContext().traceId === flowAdd?.spanContext().traceId)).toBe(true);
    const parentKey = `${env.prefix}:${name}:${tree.job.id}`;
    for (const child of attempts.filter((s) => s.attributes['bullmq.job.name'] !== 'parent')) {
      expect(child.attributes['hopper.job.parent']).toBe(parentKey);
    }
    expect(attempts.find((s) => s.attributes['bullmq.job.name'] === 'parent')?.attributes['hopper.job.parent']).toBeUndefined();
  });

  it('with the W3C propagators registered, the job carries their headers and the same continuity holds', async () => {
    propagation.setGlobalPropagator(
      new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
    );
    const telemetry = new HopperOtel();
    const name = env.queueName('otel-w3c');
    const queue = env.queue(name, { telemetry });
    let seen: string | undefined;
    const worker = env.worker(
      name,
      async () => {
        seen = requestId();
      },
      { telemetry },
    );
    const done = once(worker, 'completed');
    const job = await withRequestId('req-w3c', () => queue.add('x', {}));
    await done;
    const stored = JSON.parse((await queue.getJob(job.id as string))?.opts.telemetry?.metadata ?? '{}') as Record<string, string>;
    expect(stored.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    expect(stored.baggage).toBe('request.id=req-w3c');
    expect(seen).toBe('req-w3c');
    const spans = spansOf(name);
    const add = spans.find((s) => s.kind === OtelKind.PRODUCER);
    const attempt = spans.find((s) => s.kind === OtelKind.CONSUMER);
    expect(stored.traceparent.split('-')[1]).toBe(add?.spanContext().traceId);
    expect(parentOf(attempt as ReadableSpan)).toBe(add?.spanContext().spanId);
  });

  it('importing hopper does not load OpenTelemetry (only hopper/otel does)', () => {
    const dist = fileURLToPath(new URL('../../dist/cjs/', import.meta.url));
    const count = (entry: string): number =>
      Number(
        execFileSync(process.execPath, [
          '-e',
          `require(${JSON.stringify(dist + entry)}); console.log(Object.keys(require.cache).filter((k) => k.includes('@opentelemetry')).length)`,
        ])
          .toString()
          .trim(),
      );
    expect(count('index.js')).toBe(0);
    expect(count('telemetry/otel.js')).toBeGreaterThan(0);
  });
});
