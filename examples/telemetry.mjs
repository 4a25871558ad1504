// Observability with Hopper: traces through the `telemetry` option (BullMQ's interface; here a
// tiny console tracer stands in for bullmq-otel / OpenTelemetry), counters on its meter, the
// per-minute metrics of the `metrics` worker option, and a Prometheus export. Ends with an
// option Hopper does not implement being refused rather than ignored.
// Run with `npm run build && node examples/telemetry.mjs` (uses REDIS_URL or a local Redis).
import { AsyncLocalStorage } from 'node:async_hooks';
import { Queue, Worker, UnsupportedOptionError } from 'hopper-queue';
import { redisUrl } from './lib/redis.mjs';

// A minimal tracer: contexts are { span } objects, propagated as JSON. Any object with these
// methods works; bullmq-otel's BullMQOtel provides the same for OpenTelemetry.
let nextId = 0;
const kinds = ['internal', 'server', 'client', 'producer', 'consumer'];
const spans = [];
const storage = new AsyncLocalStorage();
const contextManager = {
  with: (context, fn) => storage.run(context, fn),
  active: () => storage.getStore() ?? {},
  getMetadata: (context) => JSON.stringify({ trace: context.span?.trace, span: context.span?.id }),
  fromMetadata: (active, metadata) => ({ ...active, remote: JSON.parse(metadata) }),
};
const tracer = {
  startSpan(name, options, context = contextManager.active()) {
    const parent = context.span ?? (context.remote && { trace: context.remote.trace, id: context.remote.span });
    const span = {
      id: `s${++nextId}`,
      trace: parent?.trace ?? `t${nextId}`,
      parent: parent?.id,
      name,
      kind: kinds[options?.kind ?? 0],
      setSpanOnContext: (ctx) => ({ ...ctx, span }),
      setAttribute: () => {},
      setAttributes: () => {},
      addEvent: () => {},
      recordException: (err) => console.log(`  ${name}: exception ${err.message ?? err}`),
      end: () => {
        const parentName = spans.find((s) => s.id === span.parent)?.name;
        console.log(`span ${name} (${span.kind}) trace=${span.trace}${parentName ? ` parent="${parentName}"` : ''}`);
      },
    };
    spans.push(span);
    return span;
  },
};
const meter = {
  createCounter: (name) => ({ add: (n, attrs) => console.log(`meter ${name} +${n} (job ${attrs['bullmq.job.name']})`) }),
  createHistogram: () => ({ record: () => {} }),
  createGauge: (name) => ({ record: (n, attrs) => console.log(`gauge ${name} ${attrs['bullmq.queue.jobs.state']}=${n}`) }),
};
const telemetry = { tracer, contextManager, meter };

const { url: connection, stop } = await redisUrl();
const prefix = `telemetry-example-${process.pid}`;
const queue = new Queue('emails', { connection, prefix, telemetry });

// 1. A trace from the add to the processing, across processes (the context travels with the job).
const worker = new Worker(
  'emails',
  async (job) => {
    console.log(`processing ${job.name}: active span is "${contextManager.active().span?.name}"`);
    return 'sent';
  },
  { connection, prefix, telemetry, metrics: { maxDataPoints: 60 }, autorun: false },
);
let finished = 0;
const done = new Promise((resolve) => worker.on('completed', () => ++finished === 3 && resolve()));
await queue.add('welcome', { to: 'ada@example.com' });
await queue.addBulk([
  { name: 'digest', data: { to: 'bob@example.com' } },
  { name: 'digest', data: { to: 'eve@example.com' } },
]);
worker.run();
await done;
await worker.close(); // writes this worker's per-minute counts

// 2. Metrics: per-minute counts (the current minute is counted in meta until it closes).
const metrics = await queue.getMetrics('completed');
console.log(`getMetrics('completed'): ${metrics.meta.count} jobs counted, ${metrics.count} closed minute(s) stored`);
await queue.recordJobCountsMetric('waiting', 'completed');

// 3. Prometheus text, e.g. served on /metrics.
console.log(
  (await queue.exportPrometheusMetrics({ env: 'example' }))
    .split('\n')
    .filter((l) => l.includes('completed'))
    .join('\n'),
);

// 4. An option Hopper does not implement is refused, not ignored.
try {
  new Worker('emails', null, { connection, prefix, runRetryDelay: 5000 });
} catch (err) {
  console.log(`${err instanceof UnsupportedOptionError ? 'refused' : 'error'}: ${err.message.split('.')[0]}`);
}

await queue.obliterate({ force: true });
await queue.close();
await stop();
