// Tracing Hopper jobs with OpenTelemetry through `hopper/otel`: the SDK (here with an in-memory
// exporter) records one trace from the HTTP-style request that added the job to every attempt of
// its processing, its durable step included; a request id put in the baggage by the producer is
// read back inside the processor.
// Run with `npm run build && node examples/otel.mjs` (uses REDIS_URL or a local Redis).
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Queue, Worker } from 'hopper-queue';
import { HopperOtel } from 'hopper-queue/otel';
import { redisUrl } from './lib/redis.mjs';

// 1. The SDK: what `new NodeSDK(...).start()` does in an application, by hand.
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
trace.setGlobalTracerProvider(provider);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

const telemetry = new HopperOtel({ name: 'billing' });
const { url: connection, stop } = await redisUrl();
const prefix = `otel-example-${process.pid}`;
const queue = new Queue('invoices', { connection, prefix, telemetry });
const worker = new Worker(
  'invoices',
  async (job) => {
    const requestId = propagation.getBaggage(context.active())?.getEntry('request.id')?.value;
    console.log(`attempt ${job.attemptsMade + 1} of ${job.name}: request.id=${requestId}`);
    const pdf = await job.step('render', () => `invoice-${job.data.number}.pdf`);
    if (job.attemptsMade === 0) throw new Error('mail server busy'); // retried
    return pdf;
  },
  { connection, prefix, telemetry },
);

// 2. A "request" adds the job with a request id in its baggage.
const done = new Promise((resolve) => worker.on('completed', resolve));
const baggage = propagation.createBaggage({ 'request.id': { value: 'req-7f3a' } });
await context.with(propagation.setBaggage(context.active(), baggage), () =>
  queue.add('send-invoice', { number: 1042 }, { attempts: 2, backoff: { type: 'fixed', delay: 10 } }),
);
await done;
await worker.close();

// 3. The trace, as a tree.
const spans = exporter.getFinishedSpans();
const children = (id) =>
  spans
    .filter((s) => s.parentSpanContext?.spanId === id)
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
function print(span, depth) {
  const extra = span.status.code === 2 ? ' [error]' : span.attributes['hopper.step.stored'] ? ' [stored]' : '';
  console.log(`${'  '.repeat(depth)}${span.name}${extra}`);
  for (const child of children(span.spanContext().spanId)) print(child, depth + 1);
}
const traces = new Set(spans.map((s) => s.spanContext().traceId));
console.log(`${spans.length} spans in ${traces.size} trace:`);
for (const root of spans.filter((s) => !s.parentSpanContext)) print(root, 1);

await queue.obliterate({ force: true });
await queue.close();
await provider.shutdown();
await stop();
